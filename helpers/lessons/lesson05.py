"""Lesson 05 (TF-IDF and SVD): the explorer of LSA's number of dimensions."""
from __future__ import annotations

import numpy as np

from helpers.infra.plotting import BLACK, COLOURS, new_figure, set_labels
from helpers.lib.lsa import energy_kept
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.text import Vocab


def render_lsa(k: int, word: str, *, singular_values: np.ndarray, frobenius_sq: float,
               u: np.ndarray, vocab: Vocab, n_neighbours: int = 8):
    """Explorer view for lesson 05: energy kept / reconstruction error vs k, and the nearest
    neighbours of ``word`` with k-dimensional LSA vectors ``U_k Σ_k``.

    ``singular_values`` (K,) and ``u`` (V, K) come from one truncated SVD with K >= k;
    ``frobenius_sq`` is ``‖A‖_F²`` of the full matrix. Returns ``(figure, summary)``.
    """
    K = len(singular_values)
    if not 1 <= k <= K:
        raise ValueError(f"k must be in [1, {K}], got {k}")
    energy, err = energy_kept(singular_values, frobenius_sq)
    neighbours = nearest_neighbours(u[:, :k] * singular_values[:k], vocab, word, k=n_neighbours)
    fig, (ax1, ax2) = new_figure(ncols=2)
    ks = np.arange(1, K + 1)
    ax1.plot(ks, 100 * energy, label="energy kept (%)")
    ax1.plot(ks, 100 * err, label="relative error ‖A−A_k‖/‖A‖ (%)")
    ax1.axvline(k, color=BLACK, ls="--", lw=1)
    ax1.scatter([k, k], [100 * energy[k - 1], 100 * err[k - 1]], color=BLACK, zorder=3)
    set_labels(ax1, f"Truncated SVD of the TF-IDF matrix (k = {k})", "k (dimensions kept)", "percent of ‖A‖_F")
    ax1.set_ylim(0, 100)
    ax1.legend()
    words = [w for w, _ in neighbours][::-1]
    ax2.barh(words, [c for _, c in neighbours][::-1], color=COLOURS["green"])
    set_labels(ax2, f"nearest neighbours of '{word}' (LSA, k = {k})", "cosine similarity", "neighbour")
    ax2.set_xlim(0, 1)
    summary = (f"k = {k}: energy kept {100 * energy[k - 1]:.1f} %, relative reconstruction error "
               f"{err[k - 1]:.3f}; neighbours of '{word}': "
               + ", ".join(f"{w} ({c:.2f})" for w, c in neighbours))
    return fig, summary
