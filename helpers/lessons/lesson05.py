"""Lesson 05 (TF-IDF and SVD): the explorer of LSA's number of dimensions, and the cosines of
rated word pairs (used by lesson 06 too)."""
from __future__ import annotations

import textwrap

import numpy as np
import scipy.sparse as sp

from helpers.infra.plotting import BLACK, COLOURS, new_figure, set_labels
from helpers.lib.lsa import energy_kept
from helpers.lib.metrics import nearest_neighbours, normalize_rows
from helpers.lib.text import Vocab


def render_lsa(k: int, word: str, *, singular_values: np.ndarray, frobenius_sq: float,
               u: np.ndarray, vocab: Vocab, n_neighbours: int = 8):
    """The LSA explorer's view: energy kept and error against k, and ``word``'s neighbours."""
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
    set_labels(ax1, f"Truncated SVD of the TF-IDF matrix (k = {k})", "k (dimensions kept)",
               "share of ‖A‖²_F (%)")
    ax1.set_ylim(0, 100)
    ax1.legend(loc="center right")
    words, cosines = [w for w, _ in neighbours][::-1], [c for _, c in neighbours][::-1]
    ax2.barh(words, cosines, color=COLOURS["green"])
    set_labels(ax2, f"nearest neighbours of '{word}' (LSA, k = {k})", "cosine", "neighbour")
    ax2.set_xlim(0, 1)
    summary = (f"k = {k}: energy kept {100 * energy[k - 1]:.1f} %, relative error "
               f"{err[k - 1]:.3f}; "
               f"neighbours of '{word}': " + ", ".join(f"{w} ({c:.2f})" for w, c in neighbours))
    return fig, textwrap.fill(summary, 100, break_long_words=False)


def pair_cosines(vectors, vocab: Vocab, pairs) -> tuple[np.ndarray, np.ndarray, int]:
    """The cosines of the rated pairs [(w1, w2, score)] whose two words are in ``vocab``:
    ``(cosines (P,), human scores (P,), pairs skipped)``. ``vectors`` (V, d) dense or sparse."""
    stoi = vocab.stoi
    kept = [(stoi[a], stoi[b], g) for a, b, g in pairs if a in stoi and b in stoi]
    if len(kept) < 3:
        raise ValueError(f"pair_cosines: only {len(kept)} of {len(pairs)} pairs are in the "
                         "vocabulary")
    i, j, gold = (np.array(c) for c in zip(*kept))
    unit = normalize_rows(vectors)
    if sp.issparse(unit):
        cos = np.asarray(unit[i].multiply(unit[j]).sum(axis=1)).ravel()
    else:
        cos = np.einsum("pd,pd->p", unit[i], unit[j])
    return cos.astype(np.float64), gold.astype(np.float64), len(pairs) - len(kept)
