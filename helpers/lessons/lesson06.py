"""Lesson 06 (pointwise mutual information): the explorers of collocations and of the
co-occurrence window."""
from __future__ import annotations

from typing import Sequence

import scipy.sparse as sp

from helpers.infra.plotting import COLOURS, new_figure, set_labels
from helpers.lib.counting import cooccurrence_matrix, ppmi, top_pmi_pairs
from helpers.lib.metrics import nearest_neighbours


def render_collocations(min_count: int, measure: str = "PMI", *, bigrams: sp.spmatrix,
                        itos: Sequence[str], n: int = 12):
    """Explorer view for lesson 06: the ``n`` bigrams with the highest PMI (or NPMI) among
    those seen at least ``min_count`` times. ``bigrams``: (V, V) ordered bigram counts.
    Returns ``(figure, summary)``."""
    if measure not in ("PMI", "NPMI"):
        raise ValueError(f"measure must be 'PMI' or 'NPMI', got {measure!r}")
    rows = top_pmi_pairs(bigrams, itos, n=n, min_count=min_count, measure=measure.lower())
    fig, ax = new_figure()
    if rows:
        labels = [f"{a} {b} ({int(cnt)})" for a, b, _, cnt in rows][::-1]
        ax.barh(labels, [r[2] for r in rows][::-1], color=COLOURS["purple"])
    set_labels(ax, f"Top bigrams by {measure}, pairs seen >= {min_count} times",
               measure, "bigram (times seen)", x_unit="bits" if measure == "PMI" else "in [−1, 1]")
    ax.tick_params(axis="y", labelsize=8)
    if not rows:
        return fig, f"min count {min_count}: no bigram is that frequent"
    summary = (f"min count {min_count}: " + ", ".join(f"{a} {b} ({s:.2f})" for a, b, s, _ in rows))
    return fig, summary


def render_contexts(window: int, weighting: str, cross_sentences: bool, word: str, *,
                    sentences_ids, vocab, alpha: float = 0.75, n: int = 10):
    """Explorer view for lesson 06: count co-occurrences with the given window choices, take
    PPMI, and show the ``n`` nearest neighbours of ``word`` by cosine of PPMI rows.
    ``sentences_ids``: encoded sentences (negative ids = filtered words); ``vocab``: a
    helpers.lib.text.Vocab. Returns ``(figure, summary)``."""

    counts = cooccurrence_matrix(sentences_ids, len(vocab), window=window, weighting=weighting,
                                 cross_sentences=cross_sentences)
    vectors = ppmi(counts, alpha=alpha)
    neighbours = nearest_neighbours(vectors, vocab, word, k=n)
    fig, ax = new_figure()
    ax.barh([w for w, _ in neighbours][::-1], [c for _, c in neighbours][::-1], color=COLOURS["orange"])
    set_labels(ax, f"PPMI neighbours of '{word}' (window ±{window}, {weighting}, "
                   f"{'across' if cross_sentences else 'within'} sentences)",
               "cosine similarity of PPMI rows", "neighbour")
    ax.set_xlim(0, max(0.5, neighbours[0][1] * 1.1))
    summary = (f"window ±{window}, {weighting}, {'across' if cross_sentences else 'within'} sentences: "
               f"{counts.nnz:,} distinct pairs, total weight {counts.sum():,.0f}; neighbours of "
               f"'{word}': " + ", ".join(f"{w} ({c:.2f})" for w, c in neighbours))
    return fig, summary
