"""Plotting helpers: consistent figures, loss curves, and figures as PNG bytes."""
from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np


def new_figure(ncols: int = 1, width: float = 5.0, height: float = 3.6, nrows: int = 1):
    """A figure with ``nrows x ncols`` axes, sized for a notebook. Returns (fig, axes)."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, (axes[0, 0] if axes.size == 1 else axes.ravel())


def plot_curves(ax, curves: dict[str, list[float]], title: str, xlabel: str, ylabel: str,
                logy: bool = False, smooth: int = 1):
    """Draw named curves on ``ax`` (optionally moving-averaged over ``smooth`` points)."""
    for name, ys in curves.items():
        ys = np.asarray(ys, dtype=float)
        if smooth > 1 and len(ys) >= smooth:
            ys = np.convolve(ys, np.ones(smooth) / smooth, mode="valid")
        ax.plot(np.arange(1, len(ys) + 1), ys, label=name)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if len(curves) > 1:
        ax.legend()
    ax.grid(alpha=0.3)
    return ax


def figure_to_png(fig, dpi: int = 90) -> bytes:
    """Render ``fig`` to PNG bytes and close it (so it is not also shown inline)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
