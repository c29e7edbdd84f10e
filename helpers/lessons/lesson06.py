"""Lesson 06 (pointwise mutual information): the explorers of collocations and of the
co-occurrence window, and the bridge to lesson 07 (skip-gram's w·c against the shifted PMI)."""
from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from helpers.infra.plotting import COLOURS, new_figure, set_labels
from helpers.lib.counting import cooccurrence_matrix, ppmi, top_pmi_pairs
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.stats import bootstrap_interval, spearman_interval


def render_collocations(min_count: int, measure: str = "PMI", *, bigrams: sp.spmatrix,
                        itos: Sequence[str], n: int = 12):
    """The explorer's view: the ``n`` bigrams of highest PMI (or NPMI) seen ``min_count`` times."""
    if measure not in ("PMI", "NPMI"):
        raise ValueError(f"measure must be 'PMI' or 'NPMI', got {measure!r}")
    rows = top_pmi_pairs(bigrams, itos, n=n, min_count=min_count, measure=measure.lower())
    fig, ax = new_figure()
    ax.barh([f"{a} {b} ({int(c)})" for a, b, _, c in rows][::-1], [r[2] for r in rows][::-1],
            color=COLOURS["purple"])
    set_labels(ax, f"Top bigrams by {measure}, pairs seen >= {min_count} times", measure,
               "bigram (times seen)", x_unit="bits" if measure == "PMI" else "in [−1, 1]")
    ax.tick_params(axis="y", labelsize=8)
    if not rows:
        return fig, f"min count {min_count}: no bigram is that frequent"
    summary = f"min count {min_count}: " + ", ".join(f"{a} {b} ({s:.2f})" for a, b, s, _ in rows)
    return fig, textwrap.fill(summary, 100, break_long_words=False)


def render_contexts(window: int, weighting: str, cross_sentences: bool, word: str, *, sentences_ids,
                    vocab, alpha: float = 0.75, n: int = 10):
    """The explorer's view: PPMI with these window choices, and ``word``'s ``n`` neighbours."""
    counts = cooccurrence_matrix(sentences_ids, len(vocab), window=window, weighting=weighting,
                                 cross_sentences=cross_sentences)
    neighbours = nearest_neighbours(ppmi(counts, alpha=alpha), vocab, word, k=n)
    where = "across" if cross_sentences else "within"
    fig, ax = new_figure()
    words, cosines = [w for w, _ in neighbours][::-1], [c for _, c in neighbours][::-1]
    ax.barh(words, cosines, color=COLOURS["orange"])
    set_labels(ax, f"PPMI neighbours of '{word}' (±{window}, {weighting}, {where} sentences)",
               "cosine similarity of PPMI rows", "neighbour")
    ax.set_xlim(0, max(0.5, neighbours[0][1] * 1.1))
    summary = (f"window ±{window}, {weighting}, {where} sentences: {counts.nnz:,} distinct pairs; "
               f"neighbours of '{word}': " + ", ".join(f"{w} ({c:.2f})" for w, c in neighbours))
    return fig, textwrap.fill(summary, 100, break_long_words=False)


def shifted_pmi_fit(W: np.ndarray, C: np.ndarray, pairs: sp.spmatrix, noise: dict, k: int,
                    word_counts, min_word_count: int = 50, min_pair_count: int = 10) -> dict:
    """How closely a skip-gram's dot products w·c follow SGNS's optimum log(n_wc / (n_w p(c))) −
    log k for each context distribution p of ``noise`` (lesson 06 §9): {"pairs", "dot",
    "targets", "fits": {name: {"pearson", "spearman", "gap"}}}."""
    W, C = np.asarray(W, np.float64), np.asarray(C, np.float64)
    counts = np.asarray(word_counts, np.float64)
    if W.shape != C.shape or pairs.shape != (len(W), len(W)) or counts.shape != (len(W),):
        raise ValueError(f"W, C (V, d), pairs (V, V) and word_counts (V,) must agree; got "
                         f"{W.shape}, {C.shape}, {pairs.shape} and {counts.shape}")
    p = sp.csr_matrix(pairs, dtype=np.float64)
    p.eliminate_zeros()
    n_w = np.asarray(p.sum(axis=1)).ravel()
    p = p.tocoo()
    frequent = counts >= min_word_count
    keep = frequent[p.row] & frequent[p.col] & (p.data >= min_pair_count)
    rows, cols, n_wc = p.row[keep], p.col[keep], p.data[keep]
    if rows.size < 3:
        raise ValueError(f"only {rows.size} pairs pass the thresholds; lower them")
    dot = np.einsum("ij,ij->i", W[rows], C[cols])
    out = {"pairs": int(rows.size), "dot": dot, "targets": {}, "fits": {}}
    for name, p_c in noise.items():
        target = np.log(n_wc / (n_w[rows] * np.asarray(p_c)[cols])) - np.log(k)
        out["targets"][name] = target
        pearson = bootstrap_interval(lambda a, b: np.corrcoef(a, b)[0, 1], dot, target)
        out["fits"][name] = {"pearson": pearson, "spearman": spearman_interval(dot, target),
                             "gap": float(np.mean(dot - target))}
    return out
