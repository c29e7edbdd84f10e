"""Lesson 08 (GloVe and fastText): the ratio table, the baselines of the live GloVe, the PMI link
measured on a trained model, the weighting explorer, and neighbours of unseen words."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.stats import pearsonr

from helpers.course.benchmarks import benchmark_halves, count_row_cosines, count_rows_rho
from helpers.course.shipped_vectors import load_word_vectors
from helpers.infra.plotting import COLOURS, GREY, log_axis, new_figure, set_labels
from helpers.lib.counting import ppmi
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.glove import glove_weight
from helpers.lib.metrics import nearest_neighbours, pair_cosines, vocab_maps
from helpers.lib.stats import interval, paired_spearman_difference, resamples, spearman_rows


def load_shipped_fasttext() -> FastTextVectors:
    """The shipped fastText as a :class:`helpers.lib.fasttext.FastTextVectors` (``word_vectors``
    holds W: the words' own vectors are not shipped)."""
    W, _, vocab, meta = load_word_vectors("fasttext")
    s = meta["settings"]
    return FastTextVectors(vocab.itos, W, W, meta["ngram_vectors"], s["min_n"], s["max_n"],
                           meta["train_seconds"], s)


def ratio_table(counts, vocab, a: str, b: str, contexts: Sequence[str]) -> list[dict]:
    """GloVe's motivating table: for each probe k, X_ak, X_bk, P(k|a) = X_ak / X_a, P(k|b) and their
    ratio (inf where X_bk = 0). ``counts`` (V, V) over ``vocab``; a missing word is a KeyError."""
    stoi, _ = vocab_maps(vocab)
    missing = [w for w in (a, b, *contexts) if w not in stoi]
    if missing:
        raise KeyError(f"ratio_table: not in the vocabulary: {missing}")
    X = sp.csr_matrix(counts)
    row = {w: np.asarray(X[stoi[w]].todense()).ravel() for w in (a, b)}
    out = []
    for k in contexts:
        xa, xb = float(row[a][stoi[k]]), float(row[b][stoi[k]])
        pa, pb = xa / row[a].sum(), xb / row[b].sum()
        out.append({"k": k, "X_a": xa, "X_b": xb, "P_a": pa, "P_b": pb,
                    "ratio": pa / pb if pb > 0 else np.inf})
    return out


def count_baselines(counts, vocab, half: str = "validation") -> dict[str, float]:
    """WordSim-353 ρ on ``half`` of the raw co-occurrence rows and of their PPMI (α = 0.75)."""
    pairs = benchmark_halves()[half].wordsim
    return {"raw co-occurrence rows": count_rows_rho(counts, vocab, pairs),
            "PPMI rows (lesson 06)": count_rows_rho(ppmi(counts), vocab, pairs)}


def versus_count_rows(vectors, counts, vocab, half: str = "report") -> dict[str, dict]:
    """ρ(``vectors``) − ρ(rows) for the raw and the PPMI rows of ``counts`` on WordSim, SimLex and
    both, each an :class:`Interval` of a paired bootstrap."""
    stoi, _ = vocab_maps(vocab)
    baselines = {"raw rows": counts, "PPMI rows": ppmi(counts)}
    out = {name: {} for name in baselines}
    boots = {name: 0.0 for name in baselines}
    for seed, key in enumerate(("wordsim", "simlex")):
        pairs = [p for p in getattr(benchmark_halves()[half], key) if p[0] in stoi and p[1] in stoi]
        sims = pair_cosines(vectors, vocab, pairs)
        mine = np.array([sims[a, b] for a, b, _ in pairs])
        idx = resamples(len(pairs), seed=seed)
        for name, M in baselines.items():
            rows, gold = count_row_cosines(M, vocab, pairs)
            out[name][key] = paired_spearman_difference(mine, rows, gold, seed=seed)
            boots[name] = boots[name] + (spearman_rows(mine[idx], gold[idx])
                                         - spearman_rows(rows[idx], gold[idx])) / 2
    for name, d in out.items():
        d["both"] = interval((d["wordsim"].estimate + d["simlex"].estimate) / 2, boots[name])
        d["both"].n_items = d["wordsim"].n_items + d["simlex"].n_items
    return out


def pmi_link(params, counts, min_count: float = 20.0, n_pairs: int = 20_000, seed: int = 0) -> dict:
    """How far a GloVe model follows log X_wc = PMI(w, c) + log X_w + log X_c − log X: Pearson r
    of b_w with log X_w ('bias_r') and of v_w·u_c with PMI ('dot_r'), with the values drawn."""
    W, Wt, b, _ = params
    X = sp.coo_matrix(counts)
    row_sums = np.asarray(sp.csr_matrix(counts).sum(axis=1)).ravel()
    seen = row_sums > 0
    keep = X.data >= min_count
    n_keep = int(keep.sum())
    pick = np.random.default_rng(seed).choice(n_keep, size=min(n_pairs, n_keep), replace=False)
    rows, cols, x = X.row[keep][pick], X.col[keep][pick], X.data[keep][pick]
    pmi = np.log(x) + np.log(row_sums.sum()) - np.log(row_sums[rows]) - np.log(row_sums[cols])
    dot = np.einsum("pd,pd->p", W[rows].astype(np.float64), Wt[cols].astype(np.float64))
    log_x = np.log(row_sums[seen])
    return {"bias_r": float(pearsonr(b[seen], log_x).statistic),
            "dot_r": float(pearsonr(dot, pmi).statistic), "n_pairs": len(x), "log_x": log_x,
            "b": np.asarray(b[seen], np.float64), "dot": dot, "pmi": pmi}


def plot_pmi_link(link: dict, name: str):
    """Two scatter panels from :func:`pmi_link`: b_w against log X_w, v_w·u_c against PMI(w, c)."""
    fig, (ax1, ax2) = new_figure(ncols=2)
    ax1.plot(link["log_x"], link["b"], ".", ms=1.5, color=COLOURS["blue"], alpha=0.4)
    set_labels(ax1, f"{name}: the biases took $\\log X_w$ (r = {link['bias_r']:.2f})",
               "$\\log X_w$ (a word's total count)", "bias $b_w$")
    ax2.plot(link["pmi"], link["dot"], ".", ms=1.5, color=COLOURS["orange"], alpha=0.3)
    set_labels(ax2, f"…and the dot products follow PMI (r = {link['dot_r']:.2f})",
               "PMI(w, c) (natural log)",
               "$v_w^\\top u_c$")
    return fig


COUNT_RANGES = ((0, 1), (1, 10), (10, 100), (100, 1000), (1000, np.inf))


def render_glove_weight(x_max: float = 100.0, alpha: float = 0.75, *, counts: np.ndarray):
    """Explorer: GloVe's f(x) with ``x_max`` and ``alpha``, and how Σ f(X_wc) splits by count."""
    x = np.asarray(counts, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or np.any(x <= 0):
        raise ValueError("render_glove_weight: counts must be the positive entries of a "
                         f"co-occurrence matrix, a non-empty 1-D array; got shape {x.shape}")
    f = glove_weight(x, x_max, alpha)
    ranges = [(lo, hi) for lo, hi in COUNT_RANGES if np.any((x >= lo) & (x < hi))]
    fig, (ax1, ax2) = new_figure(ncols=2)
    xs = np.logspace(np.log10(x.min()), np.log10(x.max()), 400)
    ax1.plot(xs, glove_weight(xs, 100.0, 0.75), "--", color=GREY,
             label="x_max = 100, α = 0.75 (GloVe)")
    ax1.plot(xs, glove_weight(xs, x_max, alpha), "-", color=COLOURS["blue"],
             label=f"x_max = {x_max:.3g}, α = {alpha:g}")
    log_axis(ax1, "x")
    set_labels(ax1, "weighting f(x)", "co-occurrence count x (log scale)", "weight f(x)")
    ax1.set_ylim(0, 1.05)
    ax1.legend(loc="lower right")
    pos = np.arange(len(ranges))
    ax2.bar(pos - 0.2, [np.mean((x >= lo) & (x < hi)) for lo, hi in ranges], 0.4, color=GREY,
            label="share of the pairs")
    ax2.bar(pos + 0.2, [f[(x >= lo) & (x < hi)].sum() / f.sum() for lo, hi in ranges], 0.4,
            color=COLOURS["blue"],
            label="share of the total weight Σ f")
    ax2.set_xticks(pos, [f"{lo:g}–{hi:g}" if np.isfinite(hi) else f"≥ {lo:g}"
                         for lo, hi in ranges])
    set_labels(ax2, f"{x.size:,} word pairs by count", "co-occurrence count x", "share")
    ax2.set_ylim(0, 1)
    ax2.legend()
    rare = x < 10
    f1 = float(glove_weight(1.0, x_max, alpha))
    return fig, (f"x_max = {x_max:.3g}, α = {alpha:g}: f(1) = {f1:.3f}; {np.mean(x >= x_max):.1%} "
                 f"of the {x.size:,} pairs reach the cap f = 1; the pairs seen fewer than 10 times "
                 f"are {np.mean(rare):.0%} of the pairs and carry {f[rare].sum() / f.sum():.0%} of "
                 "the weight")


def oov_neighbours(words: Sequence[str], fasttext: FastTextVectors, vectors: np.ndarray, vocab,
                   k: int = 5) -> list:
    """For each word: [{'word', 'in_vocab', 'fasttext': its k fastText neighbours, 'other': its k
    neighbours in ``vectors`` over ``vocab``, None when it has no vector there}]."""
    stoi, _ = vocab_maps(vocab)
    return [{"word": w, "in_vocab": w in stoi, "fasttext": fasttext.neighbours(w, k),
             "other": nearest_neighbours(vectors, vocab, w, k=k) if w in stoi else None}
            for w in words]
