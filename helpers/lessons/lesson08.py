"""Lesson 08 (GloVe and fastText): the live run's display, its baselines and the PMI link
measured on it, the tuning record's figure, neighbours of unseen and misspelled words, and the
explorers' render functions."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from matplotlib.lines import Line2D
from scipy.stats import pearsonr, spearmanr

from helpers.course.benchmarks import benchmark_halves, count_rows_rho, evaluate_vectors
from helpers.infra.live_training import LiveTraining
from helpers.infra.plotting import (
    BLACK,
    COLOURS,
    GREY,
    GREY_DARK,
    LINESTYLES,
    log_axis,
    new_figure,
    set_labels,
)
from helpers.lib.counting import ppmi
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.glove import glove_weight
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


# ---------------------------------------------------------------- GloVe's weighting
def plot_weighting(counts: np.ndarray, shipped_x_max: float):
    """GloVe's f(x) for the paper's x_max = 100 and for ``shipped_x_max`` (α = 0.75) against the
    count x on a log axis, with the share of ``counts`` (the non-zero X_ij) below 1 marked. Returns
    the figure."""
    x = np.logspace(-2, 3, 400)
    fig, ax = new_figure()
    for x_max, ls, who in ((100, "-", "the paper"), (shipped_x_max, "--", "the shipped GloVe")):
        ax.plot(x, glove_weight(x, x_max, 0.75), ls, label=f"x_max = {x_max:.3g}, α = 0.75 ({who})")
    ax.axvline(1, color=GREY, ls=":", lw=1, label=f"x = 1: {np.mean(np.asarray(counts) < 1):.0%} of the counts are below")
    log_axis(ax, "x")
    set_labels(ax, "GloVe's weighting f(x)", "co-occurrence count x (log scale)", "weight f(x)")
    fig.legend(loc="outside lower center", ncols=2, fontsize=8)
    return fig


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
    ax1.plot(xs, glove_weight(xs, x_max, alpha), "-", color=COLOURS["blue"], label=f"x_max = {x_max:.3g}, α = {alpha:g}")
    ax1.axvline(x_max, color=COLOURS["blue"], ls=":", lw=1)
    log_axis(ax1, "x")
    set_labels(ax1, "weighting f(x)", "co-occurrence count x (log scale)", "weight f(x)")
    ax1.set_ylim(0, 1.05)
    ax1.legend(loc="lower right")
    pos = np.arange(len(ranges))
    ax2.bar(pos - 0.2, pair_share, 0.4, color=GREY, label="share of the pairs")
    ax2.bar(pos + 0.2, weight_share, 0.4, color=COLOURS["blue"], label="share of the total weight Σ f")
    ax2.set_xticks(pos, labels)
    set_labels(ax2, f"{x.size:,} word pairs by count", "co-occurrence count x", "share")
    ax2.set_ylim(0, 1)
    ax2.legend()
    rare = x < 10
    summary = (f"x_max = {x_max:.3g}, α = {alpha:g}: f(1) = {float(glove_weight(1.0, x_max, alpha)):.3f}; "
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
    unseen word (None when fewer than 3), 'all_minus_in_vocab': the paired difference ρ(all) −
    ρ(in-vocabulary pairs), both computed on each resample of the pairs, 'n_all', 'n_in_vocab',
    'n_oov'}."""
    a = fasttext.vectors_for([p[0] for p in pairs])
    b = fasttext.vectors_for([p[1] for p in pairs])
    cos = np.einsum("nd,nd->n", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    gold = np.array([p[2] for p in pairs], dtype=float)
    known = np.array([p[0] in fasttext and p[1] in fasttext for p in pairs])

    def rho(x, y):
        return float(spearmanr(x, y).statistic) if np.ptp(x) > 0 and np.ptp(y) > 0 else float("nan")

    def rho_gap(x, y, k):
        k = k.astype(bool)
        return rho(x, y) - rho(x[k], y[k])

    out = {"all": bootstrap_interval(rho, cos, gold, n_boot=n_boot, seed=seed),
           "in_vocab": bootstrap_interval(rho, cos[known], gold[known], n_boot=n_boot, seed=seed),
           "all_minus_in_vocab": bootstrap_interval(rho_gap, cos, gold, known.astype(float), n_boot=n_boot, seed=seed),
           "n_all": len(pairs), "n_in_vocab": int(known.sum())}
    oov = ~known
    out["oov_only"] = bootstrap_interval(rho, cos[oov], gold[oov], n_boot=n_boot, seed=seed) if oov.sum() >= 3 else None
    out["n_oov"] = int(oov.sum())
    return out


# ---------------------------------------------------------------- the live run
def validation_wordsim(vocab):
    """``score(vectors) -> float``: WordSim-353 ρ on the validation half (what the shipped run's
    early stopping watches)."""
    return lambda vectors: evaluate_vectors(vectors, vocab, "validation", analogies=False)["wordsim"]


def count_baselines(counts, vocab, half: str = "validation") -> dict[str, float]:
    """WordSim-353 ρ on one half of the benchmarks of two vectors that need no training: the rows
    of the co-occurrence matrix itself ('raw counts', 15,824 numbers per word) and its PPMI
    (lesson 06: context distribution smoothed with α = 0.75)."""
    pairs = benchmark_halves()[half].wordsim
    return {"raw co-occurrence rows": count_rows_rho(counts, vocab, pairs),
            "PPMI rows (lesson 06)": count_rows_rho(ppmi(counts), vocab, pairs)}


class LiveScore(LiveTraining):
    """:class:`helpers.infra.live_training.LiveTraining` for a score that *rises* (a validation ρ):
    ``evaluate()`` returns the score, recorded where LiveTraining records its held-out loss; the
    figure shows the training loss per pair (left) and the score with the baselines (right)."""

    def __init__(self, step, evaluate, eval_every: int, baselines: dict[str, float] | None = None,
                 name: str = "your GloVe", score: str = "validation WordSim-353 ρ",
                 reference: tuple[str, list, list] | None = None):
        super().__init__(step, evaluate, eval_every, baselines, name, unit="")
        self.score = score
        self.reference = reference        # (label, steps, scores): another run's points, drawn as markers

    def summary(self) -> str:
        """One line: steps, epochs, CPU time, the score, and the baselines it is above."""
        if not self.curve.step:
            return f"{self.name}: not trained yet"
        value = self.curve.heldout_loss[-1]
        text = f"{self.name} after {self.steps:,} steps ({self.cpu_seconds:.0f} CPU-s): {self.score} {value:.3f}"
        if not self.baselines:
            return text
        above = [k for k, v in self.baselines.items() if value > v]
        text += ";\n  " + ", ".join(f"{k} {v:.3f}" for k, v in self.baselines.items())
        return text + (f" — above {', '.join(above)}" if above else " — below every baseline")

    def figure(self, title: str | None = None):
        """Training loss per pair against steps (left); the score against steps, baselines as grey lines (right)."""
        fig, (ax1, ax2) = new_figure(ncols=2)
        c = self.curve
        if len(c.step) > 1:
            ax1.plot(c.step[1:], c.train_loss[1:], color=COLOURS["blue"], marker="o", ms=3)
        set_labels(ax1, "Training loss", "training step (1,024 pairs)", "loss per pair, Σ f e² / pairs")
        ax2.plot(c.step, c.heldout_loss, color=COLOURS["blue"], marker="o", ms=3, label=self.name)
        if self.reference is not None and c.step:
            label, xs, ys = self.reference
            shown = [(x, y) for x, y in zip(xs, ys, strict=True) if x <= max(c.step) * 1.02]
            if shown:
                ax2.plot(*zip(*shown), ls="none", marker="D", ms=7, mfc="none", mec=COLOURS["vermillion"], mew=1.5,
                         label=label)
        for i, (name, v) in enumerate(self.baselines.items()):
            ax2.axhline(v, color=GREY_DARK if i % 2 else BLACK, ls=LINESTYLES[1 + i % 3], lw=1.2, label=name)
        set_labels(ax2, title or f"What {self.name} learns", "training step (1,024 pairs)", self.score)
        ax2.legend(loc="lower right", fontsize=8)
        return fig


# ---------------------------------------------------------------- the PMI link
def pmi_link(params, counts, min_count: float = 20.0, n_pairs: int = 20_000, frequent: float = 1000.0,
             seed: int = 0) -> dict:
    """How far a GloVe model's parts follow the PMI decomposition
    log X_ij = PMI(i, j) + log X_i + log X_j − log X.

    ``params`` = [W, W~, b, b~] of a model trained on ``counts`` (V, V, symmetric). Returns
    {'bias_r': Pearson r of b_i with log X_i (over the words that occur), 'bias_tilde_r': the same
    for b~_j, 'bias_r_frequent' and 'n_frequent': b_i's r over the words with X_i > ``frequent``,
    'dot_r': Pearson r of w_i·w~_j with PMI(i, j) (natural log) over a random sample of ``n_pairs``
    co-occurring pairs with X_ij >= ``min_count``, 'log_x_i', 'b', 'dot', 'pmi' (the sampled
    values, for the figure)}."""
    W, Wt, b, bt = params
    X = sp.coo_matrix(counts)
    row_sums = np.asarray(sp.csr_matrix(counts).sum(axis=1)).ravel()
    total = row_sums.sum()
    seen = row_sums > 0
    log_xi = np.log(row_sums[seen])
    keep = X.data >= min_count
    rows, cols, x = X.row[keep], X.col[keep], X.data[keep]
    pick = np.random.default_rng(seed).choice(len(x), size=min(n_pairs, len(x)), replace=False)
    rows, cols, x = rows[pick], cols[pick], x[pick]
    pmi = np.log(x) + np.log(total) - np.log(row_sums[rows]) - np.log(row_sums[cols])
    dot = np.einsum("pd,pd->p", W[rows].astype(np.float64), Wt[cols].astype(np.float64))
    often = row_sums > frequent
    return {"bias_r": float(pearsonr(b[seen], log_xi).statistic),
            "bias_slope": float(np.polyfit(log_xi, np.asarray(b[seen], dtype=np.float64), 1)[0]),
            "bias_r_frequent": float(pearsonr(b[often], np.log(row_sums[often])).statistic) if often.sum() > 2
            else float("nan"), "n_frequent": int(often.sum()),
            "bias_tilde_r": float(pearsonr(bt[seen], log_xi).statistic),
            "dot_r": float(pearsonr(dot, pmi).statistic), "n_pairs": int(len(x)), "min_count": min_count,
            "log_x_i": log_xi, "b": np.asarray(b[seen], dtype=np.float64), "dot": dot, "pmi": pmi}


def plot_pmi_link(link: dict, name: str = "your GloVe"):
    """Two scatter panels from :func:`pmi_link`: b_i against log X_i, and w_i·w~_j against PMI(i, j)."""
    fig, (ax1, ax2) = new_figure(ncols=2)
    ax1.plot(link["log_x_i"], link["b"], ".", ms=1.5, color=COLOURS["blue"], alpha=0.4)
    set_labels(ax1, f"{name}: the biases took $\\log X_i$ (r = {link['bias_r']:.2f})",
               "$\\log X_i$ (a word's total count)", "bias $b_i$")
    ax2.plot(link["pmi"], link["dot"], ".", ms=1.5, color=COLOURS["orange"], alpha=0.3)
    set_labels(ax2, f"…and the dot products follow PMI (r = {link['dot_r']:.2f})", "PMI(i, j) (natural log)",
               "$w_i^\\top \\tilde{w}_j$")
    return fig


# ---------------------------------------------------------------- the search of GloVe's settings
STAGE_TITLES = {"lr": "learning rate", "x_max": "x_max", "window": "window (words each side)", "dim": "dimensions"}


def plot_glove_search(record: dict):
    """The staged search of GloVe's settings (``record``: :func:`helpers.course.study_records.load_search`),
    one panel per stage: every value's best validation WordSim-353 ρ (up to 50 epochs, early
    stopping), with its 95 % paired interval against the stage's best run (``vs_best``) as a bar,
    the stage's best as a dashed line and the chosen value in black; a diverged run is a cross at
    the bottom. Panels share the y axis. Returns the figure."""
    stages = record["stages"]
    fig, axes = new_figure(ncols=len(stages), width=2.3, height=3.0, sharey=True)
    fine = [r for st in stages for r in st["runs"] if r["best_valid_wordsim"] is not None]
    lows = [r["best_valid_wordsim"] + (r["vs_best"][1] - r["vs_best"][0] if r.get("vs_best") else 0.0) for r in fine]
    highs = [r["best_valid_wordsim"] + (r["vs_best"][2] - r["vs_best"][0] if r.get("vs_best") else 0.0) for r in fine]
    bottom, top = min(lows) - 0.03, max(highs) + 0.02
    for k, (ax, st) in enumerate(zip(axes, stages, strict=True)):
        name = st["setting"]
        runs = sorted(st["runs"], key=lambda r: r["settings"][name])
        xs = [r["settings"][name] for r in runs]
        best = max(r["best_valid_wordsim"] for r in runs if r["best_valid_wordsim"] is not None)
        ax.axhline(best, color=GREY, ls="--", lw=1)
        for x, r in zip(xs, runs, strict=True):
            colour = BLACK if x == st["chosen"] else COLOURS["blue"]
            if r["best_valid_wordsim"] is None:
                ax.plot([x], [bottom + 0.01], "x", color=GREY_DARK, ms=7)
                continue
            y = r["best_valid_wordsim"]
            if r.get("vs_best"):
                est, lo, hi = r["vs_best"]
                ax.errorbar([x], [y], yerr=[[est - lo], [hi - est]], fmt="none", ecolor=colour, elinewidth=1,
                            capsize=3)
            ax.plot([x], [y], "o", color=colour, ms=7 if x == st["chosen"] else 5, zorder=3)
        if name in ("lr", "x_max"):
            log_axis(ax, "x", ticks=xs)
            ax.set_xticks(xs, [f"{x:.3g}" for x in xs])
            pad = (max(xs) / min(xs)) ** 0.15 if len(xs) > 1 else 1.5
            ax.set_xlim(min(xs) / pad, max(xs) * pad)
        else:
            ax.set_xticks(xs, [f"{x:g}" for x in xs])
            pad = 0.15 * (max(xs) - min(xs)) if len(xs) > 1 else 1.0
            ax.set_xlim(min(xs) - pad, max(xs) + pad)
        again = ", again" if any(other["setting"] == name for other in stages[:k]) else ""
        set_labels(ax, f"{k + 1} · {STAGE_TITLES[name].split(' (')[0]}{again}", STAGE_TITLES[name],
                   "best validation WordSim-353 ρ" if k == 0 else "")
    axes[0].set_ylim(bottom, top)
    handles = [Line2D([], [], color=GREY, ls="--", lw=1, label="the stage's best run"),
               Line2D([], [], color=BLACK, marker="o", ms=7, ls="", label="the value chosen"),
               Line2D([], [], color=COLOURS["blue"], marker="o", ms=5, ls="",
                      label="another value, with its 95 % paired interval against the best"),
               Line2D([], [], color=GREY_DARK, marker="x", ms=7, ls="", label="diverged")]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8)
    return fig
