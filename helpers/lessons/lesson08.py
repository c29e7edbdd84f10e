"""Lesson 08 (GloVe and fastText): neighbours of unseen and misspelled words, and the
explorers' render functions."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from scipy.stats import spearmanr

from helpers.course.benchmarks import evaluate_vectors
from helpers.infra.plotting import (
    COLOURS,
    GREY,
    GREY_DARK,
    MARKERS,
    log_axis,
    new_figure,
    set_labels,
)
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.glove import glove_weight, train_pairwise
from helpers.lib.metrics import bootstrap_interval, nearest_neighbours, vocab_maps


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


# ---------------------------------------------------------------- ratios of co-occurrence probabilities
def ratio_table(counts, vocab, a: str, b: str, contexts: Sequence[str]) -> list[dict]:
    """GloVe's motivating table: for each context word k, the counts X_ak and X_bk, the
    probabilities P(k|a) = X_ak / Σ_j X_aj and P(k|b), and their ratio P(k|a) / P(k|b)
    (inf where X_bk = 0). ``counts``: the (V, V) co-occurrence matrix (sparse or dense) over
    ``vocab``. Raises KeyError naming a word missing from the vocabulary."""
    stoi, _ = vocab_maps(vocab)
    missing = [w for w in (a, b, *contexts) if w not in stoi]
    if missing:
        raise KeyError(f"not in the vocabulary: {missing}")
    X = counts.tocsr() if hasattr(counts, "tocsr") else np.asarray(counts)
    row = {w: np.asarray(X[stoi[w]].todense()).ravel() if hasattr(X, "todense") else X[stoi[w]] for w in (a, b)}
    total = {w: float(row[w].sum()) for w in (a, b)}
    out = []
    for k in contexts:
        xa, xb = float(row[a][stoi[k]]), float(row[b][stoi[k]])
        pa, pb = xa / total[a], xb / total[b]
        out.append({"k": k, "X_a": xa, "X_b": xb, "P_a": pa, "P_b": pb, "ratio": pa / pb if pb > 0 else np.inf})
    return out


# ---------------------------------------------------------------- misspellings and coverage
def coverage_correlations(fasttext: FastTextVectors, pairs: Sequence[tuple[str, str, float]], n_boot: int = 1000,
                          seed: int = 0) -> dict:
    """Spearman ρ of fastText's cosines with human scores on all ``pairs`` (an unseen word gets
    its n-gram vector) and on the pairs whose two words are in the vocabulary (the only ones a
    word-level model can score), each with a 95 % bootstrap interval over the pairs.

    Returns {'all': Interval, 'in_vocab': Interval, 'oov_only': Interval over the pairs with an
    unseen word (None when fewer than 3), 'n_all', 'n_in_vocab', 'n_oov'}."""
    a = fasttext.vectors_for([p[0] for p in pairs])
    b = fasttext.vectors_for([p[1] for p in pairs])
    cos = np.einsum("nd,nd->n", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    gold = np.array([p[2] for p in pairs], dtype=float)
    known = np.array([p[0] in fasttext and p[1] in fasttext for p in pairs])

    def rho(x, y):
        return float(spearmanr(x, y).statistic) if np.ptp(x) > 0 and np.ptp(y) > 0 else float("nan")

    out = {"all": bootstrap_interval(rho, cos, gold, n_boot=n_boot, seed=seed),
           "in_vocab": bootstrap_interval(rho, cos[known], gold[known], n_boot=n_boot, seed=seed),
           "n_all": len(pairs), "n_in_vocab": int(known.sum())}
    oov = ~known
    out["oov_only"] = bootstrap_interval(rho, cos[oov], gold[oov], n_boot=n_boot, seed=seed) if oov.sum() >= 3 else None
    out["n_oov"] = int(oov.sum())
    return out


# ---------------------------------------------------------------- GloVe's validation curves
def plot_glove_validation(tuning: dict, curve: dict, best_epoch: int):
    """Static figure: left, the short tuning runs (validation WordSim-353 per epoch, one line per
    learning rate and x_max; diverged runs listed in the legend); right, the shipped run's
    validation WordSim-353 and SimLex-999 per epoch with its best (kept) epoch marked.
    ``tuning``: the record of :mod:`helpers.course.glove_tuning`; ``curve``: the shipped model's
    ``metadata['curve']``. Returns the figure."""
    fig, (ax1, ax2) = new_figure(ncols=2)
    for i, run in enumerate(tuning["runs"]):
        label = f"lr {run['lr']:g}, x_max {run['x_max']:g}"
        if run["diverged"]:
            ax1.plot([], [], color=GREY, ls=":", label=label + ": diverged")
            continue
        epochs = np.arange(1, len(run["valid_wordsim"]) + 1)
        ax1.plot(epochs, run["valid_wordsim"], marker=MARKERS[i % len(MARKERS)], label=label)
    ax1.set_xticks(np.arange(1, max(r["epochs"] for r in tuning["runs"]) + 1))
    set_labels(ax1, "Short tuning runs (validation half)", "epoch", "validation WordSim-353 ρ")
    ax1.legend(fontsize=7)
    ax2.plot(curve["epoch"], curve["valid_wordsim"], "-o", ms=3, color=COLOURS["blue"], label="WordSim-353")
    ax2.plot(curve["epoch"], curve["valid_simlex"], "--s", ms=3, color=COLOURS["orange"], label="SimLex-999")
    ax2.axvline(best_epoch, color=GREY_DARK, ls=":", lw=1, label=f"kept: epoch {best_epoch}")
    set_labels(ax2, "The shipped run (validation half)", "epoch", "validation Spearman ρ")
    ax2.legend()
    return fig


def validation_wordsim(vocab):
    """``score(vectors) -> float``: WordSim-353 ρ on the validation half (the shipped run's curve)."""
    return lambda vectors: evaluate_vectors(vectors, vocab, "validation", analogies=False)["wordsim"]


def render_live_glove(epochs: float = 0.2, *, counts, score, settings: dict, shipped_curve: dict):
    """Explorer: train GloVe from scratch with the shipped settings (same seed, so the same pair
    order as the shipped run) for ``epochs`` epochs (fractions allowed), scoring W + W~ with
    ``score(vectors) -> float`` (:func:`validation_wordsim`: the shipped curve's evaluation) every
    tenth of an epoch, drawn over the shipped run's curve. Returns (figure, summary)."""
    P = counts.nnz
    target = max(1, int(round(epochs * P)))
    live = {"epoch": [], "wordsim": []}

    def checkpoint(seen, vectors):
        live["epoch"].append(seen / P)
        live["wordsim"].append(score(vectors))
        return seen >= target

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train_pairwise(counts, dim=settings["dim"], epochs=int(np.ceil(epochs)) or 1, lr=settings["lr"],
                       x_max=settings["x_max"], alpha=settings["alpha"], batch_size=settings["batch_size"],
                       seed=settings["seed"], progress=False, checkpoint=checkpoint,
                       checkpoint_every=max(1, P // 10))
    finally:
        torch.set_num_threads(before)
    fig, ax = new_figure()
    ax.plot(shipped_curve["epoch"], shipped_curve["valid_wordsim"], "o-", ms=3, color=GREY_DARK,
            label="shipped run (make models NAME=wv_glove)")
    ax.plot(live["epoch"], live["wordsim"], "s--", color=COLOURS["vermillion"], label=f"live run, {epochs:g} epochs")
    set_labels(ax, "GloVe from scratch: validation WordSim-353 (validation half)", "epoch", "Spearman ρ")
    ax.legend()
    return fig, (f"live run: validation WordSim-353 ρ {live['wordsim'][-1]:.3f} after {live['epoch'][-1]:.2f} "
                 f"epochs (the shipped run: {shipped_curve['valid_wordsim'][0]:.3f} after 1 epoch, "
                 f"{max(shipped_curve['valid_wordsim']):.3f} at its best)")
