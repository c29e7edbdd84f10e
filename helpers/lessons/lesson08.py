"""Lesson 08 (GloVe and fastText): neighbours of unseen and misspelled words, and the
explorers' render functions."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from helpers.infra.plotting import COLOURS, GREY, log_axis, new_figure, set_labels
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.glove import glove_weight
from helpers.lib.metrics import nearest_neighbours, vocab_maps


def oov_neighbours(words: Sequence[str], fasttext: FastTextVectors, vectors: np.ndarray, vocab,
                   k: int = 5) -> list[dict]:
    """For each word: is it in the word2vec-style vocabulary, its ``k`` fastText neighbours,
    and its ``k`` neighbours from ``vectors``/``vocab`` (None when it has no vector there).

    Returns [{'word', 'in_fasttext_vocab', 'in_vocab', 'fasttext', 'other'}] with neighbour
    lists of (word, cosine). Shows what subwords buy: unseen and misspelled words get
    neighbours from fastText and none from a word-level model.
    """
    stoi, _ = vocab_maps(vocab)
    out = []
    for w in words:
        out.append({"word": w, "in_fasttext_vocab": w in fasttext, "in_vocab": w in stoi,
                    "fasttext": fasttext.neighbours(w, k),
                    "other": nearest_neighbours(vectors, vocab, w, k=k) if w in stoi else None})
    return out


# ---------------------------------------------------------------- explorer: GloVe's weighting
COUNT_RANGES = ((0, 1), (1, 10), (10, 100), (100, 1000), (1000, np.inf))


def render_glove_weight(x_max: float = 100.0, alpha: float = 0.75, *, counts: np.ndarray):
    """Explorer: GloVe's weighting f(x) with the chosen ``x_max`` and ``alpha``, against the
    paper's 100 and 0.75 (left), and how the total weight sum f(X_ij) of a real co-occurrence
    matrix splits over its pairs by count (right).

    ``counts``: the non-zero entries X_ij (n,) of the matrix (``X.data`` of a sparse matrix).
    Returns (figure, summary).
    """
    x = np.asarray(counts, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or np.any(x <= 0):
        raise ValueError(f"counts must be the positive entries of a co-occurrence matrix, a non-empty "
                         f"1-D array; got shape {x.shape}" + (" with entries <= 0" if x.size and np.any(x <= 0) else ""))
    f = glove_weight(x, x_max, alpha)
    ranges = [(lo, hi) for lo, hi in COUNT_RANGES if np.any((x >= lo) & (x < hi))]
    pair_share = [float(np.mean((x >= lo) & (x < hi))) for lo, hi in ranges]
    weight_share = [float(f[(x >= lo) & (x < hi)].sum() / f.sum()) for lo, hi in ranges]
    labels = [f"{lo:g}–{hi:g}" if np.isfinite(hi) else f"≥ {lo:g}" for lo, hi in ranges]

    fig, (ax1, ax2) = new_figure(ncols=2)
    xs = np.logspace(np.log10(x.min()), np.log10(x.max()), 400)
    ax1.plot(xs, glove_weight(xs, 100.0, 0.75), "--", color=GREY, label="x_max = 100, α = 0.75 (GloVe)")
    ax1.plot(xs, glove_weight(xs, x_max, alpha), "-", color=COLOURS["blue"], label=f"x_max = {x_max:g}, α = {alpha:g}")
    ax1.axvline(x_max, color=COLOURS["blue"], ls=":", lw=1)
    log_axis(ax1, "x")
    set_labels(ax1, "weighting f(x)", "co-occurrence count x (log scale)", "weight f(x)")
    ax1.set_ylim(0, 1.05)
    ax1.legend(loc="upper left")
    pos = np.arange(len(ranges))
    ax2.bar(pos - 0.2, pair_share, 0.4, color=GREY, label="share of the pairs")
    ax2.bar(pos + 0.2, weight_share, 0.4, color=COLOURS["blue"], label="share of the total weight Σ f")
    ax2.set_xticks(pos, labels)
    set_labels(ax2, f"{x.size:,} word pairs by count", "co-occurrence count x", "share")
    ax2.set_ylim(0, 1)
    ax2.legend()
    rare = x < 10
    summary = (f"x_max = {x_max:g}, α = {alpha:g}: f(1) = {float(glove_weight(1.0, x_max, alpha)):.3f}; "
               f"{np.mean(x >= x_max):.1%} of the {x.size:,} pairs reach the cap f = 1; the pairs seen "
               f"fewer than 10 times are {np.mean(rare):.0%} of the pairs and carry {f[rare].sum() / f.sum():.0%} "
               f"of the total weight")
    return fig, summary
