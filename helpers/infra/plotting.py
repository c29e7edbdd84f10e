"""The course's one plot style, applied on import (Okabe–Ito colours), log axes and heat maps."""
from __future__ import annotations

import io
import re

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import cycler
from matplotlib.mathtext import MathTextParser
from matplotlib.ticker import FixedLocator, Formatter, LogLocator, NullFormatter, NullLocator

_OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}


def _tint(hex_colour: str, share: int = 3) -> str:
    """``share`` tenths of the colour mixed with white (integer arithmetic: exact everywhere)."""
    rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{(c * share + 255 * (10 - share) + 5) // 10:02X}" for c in rgb)


#: name -> hex colour: the Okabe-Ito colours, white, three greys and a light tint of each colour
PALETTE = {
    **_OKABE_ITO,
    "white": "#FFFFFF",
    "grey_light": "#EEEEEE",
    "grey": "#999999",
    "grey_dark": "#555555",
    **{f"{name}_light": _tint(hex_colour) for name, hex_colour in _OKABE_ITO.items()
       if name != "black"},
}
#: the Okabe–Ito colours by name (hex strings), in the order lines use them
COLOURS = {name: PALETTE[name]
           for name in ("blue", "orange", "green", "vermillion", "purple", "sky", "black")}
GREY, GREY_DARK, BLACK = PALETTE["grey"], PALETTE["grey_dark"], PALETTE["black"]
#: line styles paired with the colours (the n-th line differs in both), and markers for points
LINESTYLES = ("-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)), (0, (8, 3)), (0, (1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
#: colour maps for heat maps: perceptually uniform (sequential; diverging for signed values)
SEQUENTIAL_CMAP, DIVERGING_CMAP = "viridis", "berlin"

PANEL_WIDTH = {1: 6.4, 2: 5.0, 3: 4.2}   # inches per panel, by the number of panels in a row
PANEL_HEIGHT = 3.6

STYLE = {
    "figure.figsize": (PANEL_WIDTH[1], PANEL_HEIGHT),
    "figure.dpi": 100,
    "figure.facecolor": "white",
    "savefig.dpi": 100,
    "savefig.facecolor": "white",
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.prop_cycle": cycler(color=list(COLOURS.values()), linestyle=list(LINESTYLES)),
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "axes.edgecolor": GREY_DARK,
    "axes.labelcolor": BLACK,
    "axes.titlecolor": BLACK,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": PALETTE["grey_light"],
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "xtick.color": GREY_DARK,
    "ytick.color": GREY_DARK,
    "xtick.labelcolor": BLACK,
    "ytick.labelcolor": BLACK,
    "text.color": BLACK,
    "text.usetex": False,             # mathtext only: no TeX installation needed
    "axes.formatter.use_mathtext": True,
    "patch.edgecolor": "white",
    "hist.bins": 30,
    "image.cmap": SEQUENTIAL_CMAP,
    "scatter.edgecolors": "face",
    "errorbar.capsize": 2,
}


def apply_style() -> None:
    """Set matplotlib's defaults to the course style (:data:`STYLE`). Idempotent; run on import."""
    mpl.rcParams.update(STYLE)


def new_figure(ncols: int = 1, nrows: int = 1, width: float | None = None,
               height: float | None = None, **subplots_kw):
    """A figure of ``nrows x ncols`` panels (``width``/``height`` per panel, inches) in the course
    style: ``(fig, ax)`` for one panel, else ``(fig, axes)`` with ``axes`` flat."""
    if ncols < 1 or nrows < 1:
        raise ValueError("a figure needs at least one row and one column of panels, "
                         f"got {nrows} x {ncols}")
    apply_style()
    width = width or PANEL_WIDTH.get(ncols, 3.6)
    height = height or PANEL_HEIGHT
    subplots_kw.setdefault("layout", "constrained")   # titles, labels and colour bars never overlap
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False,
                             **subplots_kw)
    return fig, (axes[0, 0] if axes.size == 1 else axes.ravel())


_MATH = re.compile(r"(?<!\\)\$(.+?)(?<!\\)\$")
_RAW_TEX = re.compile(r"\\[A-Za-z]+|[_^]\{|(?<!\\)\$")


def tex_problem(text: str) -> str | None:
    """Why ``text`` would not render as written, or None when it is fine."""
    parser = MathTextParser("path")
    for m in _MATH.finditer(text):
        try:
            parser.parse(m.group(0))
        except ValueError as e:
            return f"mathtext {m.group(0)!r} does not parse: {str(e).splitlines()[0]}"
    rest = _MATH.sub("", text)
    bad = _RAW_TEX.search(rest)
    if bad:
        return (f"raw TeX {bad.group(0)!r} outside $...$ in {text!r}: write mathtext between "
                "dollar signs (r'$h_{t-1}$') or plain Unicode (h\u209c, \u03b1)")
    return None


def axis_label(quantity: str, unit: str | None = None) -> str:
    """``"quantity (unit)"``, or the quantity alone for a dimensionless one. Checks for raw TeX."""
    text = f"{quantity} ({unit})" if unit else quantity
    problem = tex_problem(text)
    if problem:
        raise ValueError(problem)
    return text


def set_labels(ax, title: str, x: str, y: str, x_unit: str | None = None,
               y_unit: str | None = None):
    """Title and axis labels "quantity (unit)" of ``ax``; raw TeX is a ValueError. Returns ax."""
    problem = tex_problem(title)
    if problem:
        raise ValueError(problem)
    ax.set_title(title)
    ax.set_xlabel(axis_label(x, x_unit))
    ax.set_ylabel(axis_label(y, y_unit))
    return ax


class _LogTickFormatter(Formatter):
    """Labels of a log axis: plain numbers when every tick is short, else ``base^k``."""

    def __init__(self, base: float):
        self.base = base

    def _plain(self, value: float) -> str:
        return f"{value:g}"

    def _power(self, value: float) -> str:
        k = np.log(value) / np.log(self.base)
        if abs(k - round(k)) < 1e-9:
            return f"${self.base:g}^{{{int(round(k))}}}$"
        mantissa, exponent = f"{value:.1e}".split("e")
        return rf"${mantissa}\times10^{{{int(exponent)}}}$"

    def format_ticks(self, values):
        positive = [v for v in values if v > 0]
        plain = all(1e-3 <= v < 1e5 for v in positive)
        return [("" if v <= 0 else self._plain(v) if plain else self._power(v)) for v in values]

    def __call__(self, value, pos=None):
        return self.format_ticks([value])[0]


class _CleanLogLocator(LogLocator):
    """Major ticks of a log axis: one per power of ``base``, or 1, 2, 5 times each power."""

    def __init__(self, base: float):
        super().__init__(base=base)
        self.course_base = base

    def tick_values(self, vmin, vmax):
        if vmin > 0 and vmax > 0 and vmin != vmax:
            span = abs(np.log(vmax / vmin) / np.log(self.course_base))
            wide = span >= 2.5 or self.course_base != 10
            self.set_params(subs=(1.0,) if wide else (1.0, 2.0, 5.0))
        return super().tick_values(vmin, vmax)


def log_axis(ax, axis: str = "y", base: float = 10, ticks=None):
    """Make ``axis`` ('x' or 'y') of ``ax`` logarithmic with clean labelled major ticks, or
    with ``ticks`` (two or more values, e.g. the measured sizes) labelled. Returns ``ax``."""
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=base)
    which = ax.xaxis if axis == "x" else ax.yaxis
    if ticks is not None and len(ticks) >= 2:
        ticks = [float(t) for t in ticks]
        which.set_major_locator(FixedLocator(ticks))
        which.set_minor_locator(NullLocator())
    else:
        which.set_major_locator(_CleanLogLocator(base))
        which.set_minor_locator(LogLocator(base=base, subs="auto"))
    which.set_major_formatter(_LogTickFormatter(base))
    which.set_minor_formatter(NullFormatter())
    return ax


def heatmap(ax, values, *, title: str, x: str, y: str, colour_label: str | None = None,
            xticklabels=None, yticklabels=None, vmin: float | None = None,
            vmax: float | None = None, signed: bool = False, with_bar: bool = True):
    """Draw the matrix ``values`` (rows, cols) on ``ax`` (diverging colours centred on 0 when
    ``signed``; ``with_bar=False`` when panels share one :func:`colour_bar`); return the image."""
    values = np.asarray(values, dtype=float)
    if with_bar and not colour_label:
        raise ValueError("a heat map's colour bar needs a label "
                         "(colour_label='what the colour shows (unit)')")
    if values.ndim != 2:
        raise ValueError(f"a heat map needs a 2-D matrix, got shape {values.shape}")
    if signed and vmin is None and vmax is None:
        m = float(np.nanmax(np.abs(values))) or 1.0
        vmin, vmax = -m, m
    im = ax.imshow(values, cmap=DIVERGING_CMAP if signed else SEQUENTIAL_CMAP, vmin=vmin, vmax=vmax,
                   aspect="auto", interpolation="nearest")
    ax.grid(False)
    for labels, count, setter, which in ((xticklabels, values.shape[1], ax.set_xticks, "column"),
                                         (yticklabels, values.shape[0], ax.set_yticks, "row")):
        if labels is not None:
            labels = [str(s) for s in labels]
            if len(labels) != count:
                raise ValueError(f"{len(labels)} tick labels for the {count} {which}s "
                                 "of the heat map")
            long = which == "column" and max(map(len, labels), default=0) > 2
            setter(range(count), labels, rotation=90 if long else 0)
    set_labels(ax, title, x, y)
    if with_bar:
        colour_bar(im, ax, colour_label)
    return im


def colour_bar(image, axes, label: str):
    """A labelled colour bar for ``image`` beside ``axes`` (one axes or a list of them)."""
    return image.figure.colorbar(image, ax=axes, label=axis_label(label), shrink=0.9)


def plot_curves(ax, curves: dict[str, list[float]], title: str, xlabel: str, ylabel: str,
                logy: bool = False, smooth: int = 1, x=None):
    """Draw named curves on ``ax`` against 1, 2, ... (or ``x``), smoothed over ``smooth`` points."""
    if not curves:
        raise ValueError("no curves to plot")
    for name, ys in curves.items():
        ys = np.asarray(ys, dtype=float)
        if smooth > 1 and len(ys) >= smooth:
            ys = np.convolve(ys, np.ones(smooth) / smooth, mode="valid")
        xs = np.arange(1, len(ys) + 1) if x is None else np.asarray(x, dtype=float)[-len(ys):]
        ax.plot(xs, ys, label=name)
    set_labels(ax, title, xlabel, ylabel)
    if logy:
        log_axis(ax, "y")
    if len(curves) > 1:
        ax.legend()
    return ax


def figure_to_png(fig, dpi: int = 100) -> bytes:
    """``fig`` as PNG bytes, closed so that it is not also shown inline."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


apply_style()
