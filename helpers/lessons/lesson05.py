"""Lesson 05 (TF-IDF and SVD): the explorer of LSA's number of dimensions."""
from __future__ import annotations

import textwrap

import numpy as np
from scipy.stats import rankdata, spearmanr

from helpers.infra.plotting import BLACK, COLOURS, GREY, new_figure, set_labels
from helpers.lib.lsa import energy_kept
from helpers.lib.metrics import nearest_neighbours, normalize_rows
from helpers.lib.retrieval import (  # noqa: F401  (re-exported: the lesson and its tests use them from here)
    known_item_scores,
    lsa_document_vectors,
    target_ranks,
    topic_precision,
)
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
    ax1.legend(loc="center right")
    words = [w for w, _ in neighbours][::-1]
    ax2.barh(words, [c for _, c in neighbours][::-1], color=COLOURS["green"])
    set_labels(ax2, f"nearest neighbours of '{word}' (LSA, k = {k})", "cosine similarity", "neighbour")
    ax2.set_xlim(0, 1)
    summary = (f"k = {k}: energy kept {100 * energy[k - 1]:.1f} %, relative reconstruction error "
               f"{err[k - 1]:.3f}; neighbours of '{word}': "
               + ", ".join(f"{w} ({c:.2f})" for w, c in neighbours))
    return fig, textwrap.fill(summary, 100, break_long_words=False)


# ----------------------------------------------------------------------------- retrieval, measured per query
def bootstrap_mean(values: np.ndarray, n_boot: int = 2000, seed: int = 0, level: float = 0.95):
    """Mean of per-item ``values`` and its percentile bootstrap interval over the items:
    ``(mean, low, high)``. For a paired comparison pass the per-item differences."""
    values = np.asarray(values, np.float64)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"bootstrap_mean: expected a 1-D array of at least 2 per-item values, got shape {values.shape}")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(n_boot, values.size))].mean(axis=1)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(values.mean()), float(low), float(high)


def verdict(low: float, high: float, better: str, worse: str) -> str:
    """'A better' / 'B better' / 'tie' from a bootstrap interval of the difference A − B."""
    if low > 0:
        return f"{better} better"
    if high < 0:
        return f"{worse} better"
    return "tie (the interval contains 0)"


def render_retrieval(k: int, *, ks, valid_curve, tfidf_valid: float, doc_vectors_at,
                     query_doc: int, titles, topics, test_curve=None):
    """Explorer view for lesson 05 section 6: topic precision@10 vs k on the validation queries
    (TF-IDF as a line) and the 5 nearest articles of ``query_doc`` at the chosen k.

    ``ks`` the k values measured, ``valid_curve`` their validation precision; ``test_curve`` (optional)
    the test queries' precision, drawn only when given (the lesson draws it only after k is chosen);
    ``doc_vectors_at(k)`` returns unit (|D|, k) LSA document vectors. Returns ``(figure, summary)``."""
    ks = list(ks)
    if k not in ks:
        raise ValueError(f"k must be one of the measured values {ks[0]}…{ks[-1]}, got {k}")
    fig, ax = new_figure()
    ax.plot(ks, valid_curve, marker="o", label="LSA, validation queries")
    if test_curve is not None:
        ax.plot(ks, test_curve, label="LSA, test queries")
    ax.axhline(tfidf_valid, color=GREY, ls=":", label="TF-IDF, validation queries")
    ax.axvline(k, color=BLACK, ls="--", lw=1)
    set_labels(ax, f"Topic precision@10 vs k (k = {k})", "k (dimensions kept)", "topic precision@10")
    ax.legend(loc="upper right")
    docs = doc_vectors_at(k)
    sims = docs @ docs[query_doc]
    sims[query_doc] = -np.inf
    top = np.argsort(-sims, kind="stable")[:5]
    i = ks.index(k)
    test = "" if test_curve is None else f", {test_curve[i]:.3f} (test)"
    summary = (f"k = {k}: topic precision@10 {valid_curve[i]:.3f} (validation){test}; "
               f"nearest to [{topics[query_doc]}] '{titles[query_doc]}': "
               + "; ".join(f"[{topics[j]}] {titles[j]} ({sims[j]:.2f})" for j in top))
    return fig, textwrap.fill(summary, 100, break_long_words=False)


# ----------------------------------------------------------------------------- what LSA neighbours are
def pair_cosines(vectors, vocab: Vocab, pairs) -> tuple[np.ndarray, np.ndarray, int]:
    """Cosines of the in-vocabulary pairs of a rated list ``pairs`` [(w1, w2, score)]:
    ``(cosines (P,), human scores (P,), number of pairs skipped)``. ``vectors`` (V, d) ndarray or
    sparse rows (cosines of sparse rows are computed without densifying the matrix)."""
    stoi = vocab.stoi
    kept = [(stoi[a], stoi[b], g) for a, b, g in pairs if a in stoi and b in stoi]
    if len(kept) < 3:
        raise ValueError(f"pair_cosines: only {len(kept)} of {len(pairs)} pairs are in the vocabulary")
    i, j, gold = (np.array(c) for c in zip(*kept))
    unit = normalize_rows(vectors)
    if hasattr(unit, "multiply"):
        cos = np.asarray(unit[i].multiply(unit[j]).sum(axis=1)).ravel()
    else:
        cos = np.einsum("pd,pd->p", unit[i], unit[j])
    return cos.astype(np.float64), gold.astype(np.float64), len(pairs) - len(kept)


def bootstrap_spearman(x: np.ndarray, y: np.ndarray, n_boot: int = 1000, seed: int = 0, level: float = 0.95):
    """Spearman rho of paired samples and its percentile bootstrap interval over the pairs:
    ``(rho, low, high)``."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError(f"bootstrap_spearman: expected two 1-D arrays of the same length >= 3, got {x.shape} and {y.shape}")
    idx = np.random.default_rng(seed).integers(0, x.size, size=(n_boot, x.size))
    rx, ry = rankdata(x[idx], axis=1), rankdata(y[idx], axis=1)   # Spearman = Pearson of the ranks
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):       # a resample of constant values has no rho
        rhos = (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))
    tail = 100 * (1 - level) / 2
    low, high = np.nanpercentile(rhos, [tail, 100 - tail])
    return float(spearmanr(x, y).statistic), float(low), float(high)
