"""Lesson 07 (the embedding layer and word2vec): timing the output layers as the vocabulary
grows (full softmax, negative sampling, hierarchical softmax), the subsampling and dynamic-window
statistics, the live training's bookkeeping (:class:`SimilarityTraining`: its curve, summary and
"Train on" button around the lesson's own step function), the shipped vectors' scores, curves and
neighbours, the measured effect of the two tricks (the shipped ``wv_tricks``), and the challenge's
scoreboard (:func:`challenge_standing`)."""
from __future__ import annotations

import time
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np
from matplotlib.ticker import MaxNLocator
from scipy.stats import rankdata

from helpers.course.benchmarks import benchmark_halves, count_rows_rho, evaluate_vectors
from helpers.course.models import load_model
from helpers.course.study_records import TricksResult, paired_setting_difference
from helpers.course.word_vectors import queen_rank, validated_count_vectors
from helpers.infra.live_training import LiveTraining
from helpers.infra.plotting import (
    BLACK,
    COLOURS,
    GREY_DARK,
    LINESTYLES,
    log_axis,
    new_figure,
    set_labels,
)
from helpers.infra.threads import single_thread_blas
from helpers.lib.counting import cooccurrence_matrix
from helpers.lib.hsoftmax import hs_loss_and_grads, huffman_tree
from helpers.lib.metrics import Interval, nearest_neighbours, normalize_rows
from helpers.lib.negative_sampling import NoiseSampler, SkipGramNS, full_softmax_step
from helpers.lib.word2vec import Corpus, keep_probabilities

# the shipped word2vec models of this lesson, in the order of its table
SHIPPED = {"PyTorch skip-gram": "torch-skipgram", "NumPy skip-gram": "numpy-skipgram",
           "gensim skip-gram": "gensim-skipgram", "gensim CBOW": "gensim-cbow"}


# ---------------------------------------------------------------- section 1/5: cost per batch as |V| grows
def _median_seconds(repeats: int, fn, *args) -> float:
    """Median wall-clock seconds of ``fn(*args)`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _forward_backward(layer, centers, contexts, negatives) -> None:
    layer.forward(centers, contexts, negatives)
    layer.backward()


def _hs_step(W_in, U, tree, centers, contexts) -> None:
    hs_loss_and_grads(W_in[centers], U, tree, contexts)


@single_thread_blas
def time_output_layers(vocab_sizes: Sequence[int], dim: int = 100, batch: int = 128, k: int = 5,
                       repeats: int = 5, seed: int = 0) -> list[dict]:
    """Median seconds of one forward + backward pass over a batch of (centre, context) pairs,
    for each vocabulary size, of four output layers on the same random float32 weights and ids:
    'softmax' (:func:`full_softmax_step`), 'ns_rows' (negative sampling as the NumPy trainer runs
    it: gradients of the rows used only), 'ns_dense' (the same layer filling dense (V, d)
    gradient arrays, zeroed every step) and 'hs' (hierarchical softmax over a Huffman tree of
    Zipf counts, gradients of the rows used only; adding them into the tables is not timed, for
    any layer). NumPy's BLAS runs on one thread here, for every layer (on a busy 2-core machine
    BLAS threads made the full softmax at |V| = 1,000 sixty times slower when we measured). Returns one dict per size with those keys
    (seconds) and 'vocab_size', 'hs_mean_depth' (the mean path length of the batch's targets)."""
    rng = np.random.default_rng(seed)
    out = []
    for V in vocab_sizes:
        W_in = (rng.standard_normal((V, dim)) * 0.1).astype(np.float32)
        W_out = (rng.standard_normal((V, dim)) * 0.1).astype(np.float32)
        zipf = 1.0 / np.arange(1, V + 1)
        # ids drawn from the Zipf distribution, as in text (frequent words are most of the pairs)
        c, o = (rng.choice(V, size=batch, p=zipf / zipf.sum()) for _ in range(2))
        layers = {}
        for scatter in ("rows", "add.at"):
            m = SkipGramNS(V, dim, NoiseSampler(zipf, rng=rng), k=k, rng=rng, dtype=np.float32, scatter=scatter)
            m.params[0][...], m.params[1][...] = W_in, W_out
            layers[scatter] = m
        tree = huffman_tree(zipf)
        U = W_out[: V - 1]
        negatives = layers["rows"].ns.sampler.sample((batch, k))
        row = {"vocab_size": int(V), "hs_mean_depth": float(tree.depth[o].mean())}
        row["softmax"] = _median_seconds(repeats, full_softmax_step, W_in, W_out, c, o)
        for name, scatter in (("ns_rows", "rows"), ("ns_dense", "add.at")):
            row[name] = _median_seconds(repeats, _forward_backward, layers[scatter], c, o, negatives)
        row["hs"] = _median_seconds(repeats, _hs_step, W_in, U, tree, c, o)
        out.append(row)
    return out


TIMING_NAMES = {"softmax": "full softmax", "ns_rows": "neg. sampling (rows)", "ns_dense": "neg. sampling (dense)",
                "hs": "hierarchical softmax"}


def plot_output_layer_timings(timings: list[dict]):
    """Milliseconds per batch of each output layer against the vocabulary size (log-log), from
    :func:`time_output_layers`. Returns the figure."""
    fig, ax = new_figure(width=7)
    sizes = [r["vocab_size"] for r in timings]
    for (key, label), style, colour in zip(TIMING_NAMES.items(), ["o-", "s--", "^-.", "D:"],
                                           [GREY_DARK, COLOURS["blue"], COLOURS["orange"], COLOURS["green"]],
                                           strict=True):
        ax.plot(sizes, [r[key] * 1e3 for r in timings], style, color=colour, label=label)
    ax.set_xscale("log")
    log_axis(ax, "y")
    set_labels(ax, "Forward + backward of one batch as the vocabulary grows (median of repeats)",
               "vocabulary size |V|", "time per batch (ms, log scale)")
    ax.legend(fontsize=8, loc="upper left")
    return fig


# ---------------------------------------------------------------- section 6: the shipped vectors
def shipped_scores(vectors: dict) -> dict:
    """For each shipped model {label: ShippedVectors}: the report-half scores stored at training
    time with their 95 % bootstrap intervals (:class:`Interval` for 'wordsim', 'simlex', 'analogy'),
    the report-half WordSim-353 ρ recomputed here from the vectors ('wordsim_now'), the rank of
    *queen* for king − man + woman recomputed here, the best (validated) epoch and the training
    time. ``vectors`` as loaded by :func:`helpers.course.word_vectors.load_word_vectors`."""
    out = {}
    for label, sv in vectors.items():
        rec = sv.metadata["records"]
        row = {k: Interval(*rec["report_intervals"][k]) for k in ("wordsim", "simlex", "analogy")}
        row["wordsim_now"] = evaluate_vectors(sv.W, sv.vocab, "report", analogies=False)["wordsim"]
        row["queen_rank"] = queen_rank(sv.W, sv.vocab)
        row["best_epoch"] = sv.metadata["best_epoch"]
        row["epochs_run"] = sv.metadata["epochs_run"]
        row["train_seconds"] = sv.metadata["train_seconds"]
        out[label] = row
    return out


def similarity_items(vectors, vocab, pairs: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarities (n,) and human scores (n,) of the ``pairs`` [(w1, w2, score)] whose two
    words are in ``vocab`` (the pairs :func:`helpers.lib.metrics.similarity_correlation` scores)."""
    known = [(vocab.index(a), vocab.index(b), float(score)) for a, b, score in pairs if a in vocab and b in vocab]
    if not known:
        return np.zeros(0), np.zeros(0)
    i, j, gold = (np.array(x) for x in zip(*known, strict=True))
    E = np.asarray(vectors)
    x = np.asarray(normalize_rows(E[i].astype(np.float64)))
    y = np.asarray(normalize_rows(E[j].astype(np.float64)))
    got = np.sum(x * y, axis=1)
    return got, gold.astype(np.float64)


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ of each row pair of two (B, n) arrays (average ranks for ties): (B,)."""
    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))


def paired_difference(vectors_a, vectors_b, vocab, pairs: Sequence, n_boot: int = 1000, seed: int = 0,
                      level: float = 0.95) -> Interval:
    """Spearman ρ(a) − ρ(b) on the same rated ``pairs`` (both sets of vectors share ``vocab``), with
    a paired percentile bootstrap interval: each resample of the pairs scores both. An interval
    that contains 0 is a tie."""
    return paired_differences({"a": vectors_a, "b": vectors_b}, vocab, pairs, n_boot, seed, level)["a", "b"]


def paired_differences(vectors: dict, vocab, pairs: Sequence, n_boot: int = 1000, seed: int = 0,
                       level: float = 0.95) -> dict:
    """:func:`paired_difference` for every pair of ``vectors`` {label: (V, D) array}: {(a, b): Interval}
    for a before b in the dict's order. Every pair is scored on the same resamples of the rated pairs
    (those of one :func:`paired_difference` call with the same seed), and each method's resampled ρ
    is computed once instead of once per pair it is in."""
    items = {label: similarity_items(W, vocab, pairs) for label, W in vectors.items()}
    if len(items) < 2:
        raise ValueError(f"need at least two sets of vectors to compare, got {len(items)}")
    gold = next(iter(items.values()))[1]
    if len(gold) < 3:
        raise ValueError(f"only {len(gold)} of {len(pairs)} pairs have both words in the vocabulary; need >= 3")
    idx = np.random.default_rng(seed).integers(0, len(gold), size=(n_boot, len(gold)))
    boot = {label: _spearman_rows(x[idx], gold[idx]) for label, (x, _) in items.items()}
    est = {label: _spearman_rows(x[None], gold[None])[0] for label, (x, _) in items.items()}
    labels, out = list(items), {}
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            lo, hi = np.nanpercentile(boot[a] - boot[b], [50 * (1 - level), 50 * (1 + level)])
            out[a, b] = Interval(float(est[a] - est[b]), float(lo), float(hi), level, len(gold), n_boot)
    return out


def call_difference(d: Interval) -> str:
    """The course's one rule for a paired difference (lesson 01, "how the course compares models"):
    'ahead' when its 95 % interval lies above 0, 'behind' when it lies below, 'tie' when it contains 0."""
    if d.low > 0:
        return "ahead"
    if d.high < 0:
        return "behind"
    return "tie"


def plot_validation_curves(vectors: dict):
    """Validation-half WordSim-353 ρ after every epoch of each shipped run (the early-stopping
    curve), the kept (best) epoch circled. Returns the figure."""
    fig, ax = new_figure(width=7)
    styles = ["o-", "s--", "^-.", "D:"]
    colours = [COLOURS["vermillion"], COLOURS["blue"], COLOURS["green"], COLOURS["purple"]]
    for (label, sv), style, colour in zip(vectors.items(), styles, colours, strict=False):
        curve = sv.metadata["curve"]
        ax.plot(curve["epoch"], curve["valid_wordsim"], style, color=colour, label=label, markersize=4)
        best = sv.metadata["best_epoch"]
        ax.plot([best], [curve["valid_wordsim"][curve["epoch"].index(best)]], "o", mfc="none", mec=colour,
                markersize=12, markeredgewidth=1.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    set_labels(ax, "Shipped runs: WordSim-353 after each epoch (circle: the epoch kept)",
               "epoch", "Spearman ρ (validation pairs)")
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_epoch_budget(runs: list[dict], chosen: int, title: str):
    """Validation-half WordSim-353 ρ after every epoch on schedules of different lengths, from the
    record of ``training.word2vec_budget`` (``runs``: its runs of one model that change
    only ``max_epochs``, each with ``epoch``, ``valid_wordsim``); the ``chosen`` schedule drawn
    solid, each run's best epoch circled. Returns the figure."""
    fig, ax = new_figure(width=7)
    runs = sorted(runs, key=lambda r: r["change"]["max_epochs"])
    colours = [COLOURS["vermillion"], COLOURS["orange"], COLOURS["blue"], COLOURS["green"], COLOURS["purple"], GREY_DARK]
    for r, colour in zip(runs, colours, strict=False):
        total, epochs, values = r["change"]["max_epochs"], r["epoch"], r["valid_wordsim"]
        mine = total == chosen
        best = int(np.argmax(values))
        ax.plot(epochs, values, "o-" if mine else ".--", color=colour, markersize=4, lw=2 if mine else 1,
                label=f"{total}-epoch schedule" + (" (chosen, shipped)" if mine else ""))
        ax.plot([epochs[best]], [values[best]], "o", mfc="none", mec=colour, markersize=11, markeredgewidth=1.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    set_labels(ax, title, "epoch", "Spearman ρ (validation half)")
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_schedule_choice(runs: list[dict], chosen: dict, labels: dict, tolerance: float):
    """Each model's best validation-half WordSim-353 ρ against the length of its schedule (the
    runs of ``training.word2vec_budget`` that change only ``max_epochs``); ``chosen``
    {model: schedule} circled, with a bar down to the best ρ minus ``tolerance`` (a schedule above
    it ties with the best). ``labels`` {model: name}. Returns the figure."""
    fig, ax = new_figure(width=7)
    colours = [COLOURS["blue"], COLOURS["vermillion"], COLOURS["green"], COLOURS["purple"], COLOURS["orange"]]
    if len(labels) > len(colours):
        raise ValueError(f"plot_schedule_choice draws at most {len(colours)} models, got {len(labels)}")
    for (model, label), colour in zip(labels.items(), colours, strict=False):
        rs = sorted((r for r in runs if r["model"] == model and set(r["change"]) == {"max_epochs"}),
                    key=lambda r: r["change"]["max_epochs"])
        x, y = [r["change"]["max_epochs"] for r in rs], [r["best_valid_wordsim"] for r in rs]
        ax.plot(x, y, "o-", color=colour, markersize=4, label=f"{label} (chosen: {chosen[model]} epochs)")
        ax.plot([chosen[model]], [y[x.index(chosen[model])]], "o", mfc="none", mec=colour, markersize=12,
                markeredgewidth=1.5)
        ax.vlines(x[int(np.argmax(y))], max(y) - tolerance, max(y), color=colour, lw=3, alpha=0.5)
    ax.set_xticks(sorted({r["change"]["max_epochs"] for r in runs}))
    set_labels(ax, "Best validation ρ against the length of the schedule (circle: chosen)", "schedule (epochs)",
               "Spearman ρ (validation half)")
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_dimension_quality(grid) -> tuple:
    """Quality against the dimension d on the whole corpus, from the shipped scaling grid of lesson 09
    (``load_model("wv_scaling_grid").grid``: gensim CBOW, 5 epochs, seeds x fractions x dims scores):
    WordSim-353 ρ and analogy accuracy, the mean of the seeds with min-max bars. Returns
    (figure, {metric: (lo (D,), mean (D,), hi (D,))})."""
    fig, axes = new_figure(ncols=2, width=4.5)
    dims, stats = list(grid.dims), {}
    for ax, (metric, title, ylabel, scale) in zip(axes, [
            ("wordsim353", "WordSim-353 (test pairs)", "Spearman ρ", 1),
            ("analogy", "Analogies (test questions, 3CosAdd)", "accuracy (%)", 100)], strict=True):
        whole = np.asarray(grid.scores[metric])[:, -1, :]          # (seeds, D): the whole corpus
        lo, mean, hi = whole.min(0), whole.mean(0), whole.max(0)
        stats[metric] = (lo, mean, hi)
        ax.errorbar(dims, scale * mean, yerr=[scale * (mean - lo), scale * (hi - mean)], marker="o", capsize=3,
                    color=COLOURS["blue"])
        ax.set_xscale("log", base=2)
        ax.set_xticks(dims, [str(d) for d in dims])
        ax.minorticks_off()
        set_labels(ax, title, "dimension d", ylabel)
    return fig, stats


# ---------------------------------------------------------------- section 6: subsampling and the dynamic window
def keep_probability_paper(counts: np.ndarray, sample: float) -> np.ndarray:
    """The keep probability of Mikolov et al. 2013b: an occurrence of word w is discarded with
    probability 1 − sqrt(t / f(w)), f the word's relative frequency, t = ``sample``; kept with
    min(1, sqrt(t / f)). Returns (V,) float64. (The code's version is
    :func:`helpers.lib.word2vec.keep_probabilities`.)"""
    counts = np.asarray(counts, dtype=np.float64)
    f = counts / counts.sum()
    return np.minimum(1.0, np.sqrt(sample / f))


def pair_statistics(corpus: Corpus, sample: float, dynamic: bool = True, window: int = 5,
                    seeds: Sequence[int] = (0, 1, 2), top: int = 10) -> dict:
    """What subsampling and the dynamic window do to one epoch's skip-gram training data, for each
    of ``seeds`` (the trainers' draws: subsampling, then one window size b per centre, as in
    :func:`helpers.lib.word2vec.skipgram_pairs`): 'tokens' (tokens kept), 'pairs' (training
    pairs), 'top_share' (share of pairs whose context is one of the ``top`` most frequent words),
    'cbow_examples' (CBOW examples: kept tokens with a neighbour in their sentence), each a list over seeds, and 'by_distance' (share of the pairs at distance 1..window, summed
    over seeds). Counts the pairs without building them."""
    counts = corpus.vocab.counts
    is_top = np.zeros(len(counts), dtype=bool)
    is_top[np.argsort(-counts)[:top]] = True
    keep = keep_probabilities(counts, sample)
    out = {"tokens": [], "pairs": [], "top_share": [], "cbow_examples": []}
    by_distance = np.zeros(window)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        kept = rng.random(len(corpus.ids)) < keep[corpus.ids]
        ids, sent = corpus.ids[kept], corpus.sentence[kept]
        b = rng.integers(1, window + 1, size=len(ids))
        if not dynamic:
            b[:] = window
        n_pairs = n_top = 0
        for d in range(1, window + 1):
            same = sent[d:] == sent[:-d]
            right = same & (b[:-d] >= d)            # centre i, context i + d
            left = same & (b[d:] >= d)              # centre i + d, context i
            n_d = int(right.sum() + left.sum())
            n_top += int(is_top[ids[d:]][right].sum() + is_top[ids[:-d]][left].sum())
            n_pairs += n_d
            by_distance[d - 1] += n_d
        out["tokens"].append(int(kept.sum()))
        # CBOW: one example per kept token with at least one context word (a neighbour in its sentence)
        near = np.zeros(len(ids), dtype=bool)
        near[1:] |= sent[1:] == sent[:-1]
        near[:-1] |= sent[:-1] == sent[1:]
        out["cbow_examples"].append(int(near.sum()))
        out["pairs"].append(n_pairs)
        out["top_share"].append(n_top / n_pairs)
    out["by_distance"] = (by_distance / by_distance.sum()).tolist()
    return out


# ---------------------------------------------------------------- section 7: what the two tricks do to the vectors
TRICK_STYLE = {"shipped": ("o", "-", COLOURS["blue"]), "no_subsampling": ("s", "--", COLOURS["orange"]),
               "fixed_window": ("^", "-.", COLOURS["green"])}


def plot_tricks(result: TricksResult):
    """Quality against training CPU time, from the shipped measurement (``load_model("wv_tricks")``):
    report-half WordSim-353 and SimLex-999 ρ after every epoch of every run (one line per run, a
    marker on its last epoch; colour and marker by setting) and each run's final analogy accuracy
    against its total CPU seconds. Returns the figure."""
    fig, axes = new_figure(ncols=3, width=3.6)
    cpu = np.cumsum(result.curves["cpu_seconds"], axis=2)              # (S, V, E)
    for j, name in enumerate(result.variants):
        marker, line, colour = TRICK_STYLE.get(name, ("D", ":", GREY_DARK))
        for k in range(len(result.seeds)):
            label = result.labels[name] if k == 0 else None
            for ax, key in zip(axes[:2], ("report/wordsim", "report/simlex"), strict=True):
                y = result.curves[key][k, j]
                ax.plot(cpu[k, j], y, line, color=colour, lw=1, alpha=0.8)
                ax.plot(cpu[k, j, -1], y[-1], marker, color=colour, label=label, markersize=6)
            axes[2].plot(cpu[k, j, -1], 100 * result.final["report/analogy"][k, j], marker, color=colour,
                         label=label, markersize=7, mfc="none" if k else colour)
    epochs = result.metadata["settings"]["epochs"]
    set_labels(axes[0], f"WordSim-353 after each of {epochs} epochs", "training time (CPU seconds)",
               "Spearman ρ (test pairs)")
    set_labels(axes[1], f"SimLex-999 after each of {epochs} epochs", "training time (CPU seconds)",
               "Spearman ρ (test pairs)")
    set_labels(axes[2], f"Analogies after {epochs} epochs", "training time (CPU seconds)",
               "accuracy (%, test questions)")
    axes[2].legend(fontsize=7, loc="upper left")          # the corner the runs leave empty
    return fig


def tricks_table(result: TricksResult) -> dict:
    """Per setting (in the measurement's order): {'words_per_epoch', 'cpu' (mean, min, max CPU
    seconds of a run), and for each report-half metric 'wordsim', 'simlex', 'analogy' and the
    validation half's 'valid_wordsim': (mean, min, max) over the seeds}."""
    out = {}
    cpu = result.cpu_seconds()
    for j, name in enumerate(result.variants):
        row = {"words_per_epoch": float(result.curves["words_trained"][:, j].mean())}
        for key, values in (("cpu", cpu[:, j]), ("wordsim", result.final["report/wordsim"][:, j]),
                            ("simlex", result.final["report/simlex"][:, j]),
                            ("analogy", result.final["report/analogy"][:, j]),
                            ("valid_wordsim", result.final["validation/wordsim"][:, j])):
            row[key] = (float(values.mean()), float(values.min()), float(values.max()))
        out[name] = row
    return out


def tricks_comparisons(result: TricksResult, n_boot: int = 2000, seed: int = 0) -> dict:
    """{(metric, other): Interval of shipped minus other} for every other setting and the three
    report-half metrics (:func:`helpers.course.study_records.paired_setting_difference`: items
    and seeds resampled, paired)."""
    return {(metric, other): paired_setting_difference(result, metric, "shipped", other, n_boot=n_boot, seed=seed)
            for other in result.variants if other != "shipped" for metric in ("wordsim", "simlex", "analogy")}


# ---------------------------------------------------------------- section 7: neighbours above a frequency floor
@lru_cache(maxsize=8)
def _rare_words(vocab_id: int, counts: tuple, itos: tuple, min_count: int) -> tuple:
    return tuple(w for w, c in zip(itos, counts, strict=True) if c < min_count)


def frequent_neighbours(vectors, vocab, word: str, k: int = 5, min_count: int = 50) -> list[tuple[str, float]]:
    """The ``k`` cosine nearest neighbours of ``word`` among the words seen at least ``min_count``
    times (:func:`helpers.lib.metrics.nearest_neighbours` with the rarer words excluded): a word
    seen five times has a vector estimated from a handful of pairs, and such words crowd the
    neighbour lists of a skip-gram. Returns [(word, cosine)]."""
    rare = _rare_words(id(vocab), tuple(int(c) for c in vocab.counts), tuple(vocab.itos), int(min_count))
    return nearest_neighbours(vectors, vocab, word, k=k, exclude=rare)


# ---------------------------------------------------------------- section 7: the live training's bookkeeping
class SimilarityTraining(LiveTraining):
    """The live word2vec run of lesson 07: :class:`helpers.infra.live_training.LiveTraining` whose
    held-out number is a similarity score (Spearman ρ on held-out word pairs: higher is better).

    ``step() -> training loss`` and ``evaluate() -> ρ`` are the lesson's own functions;
    ``baselines`` {name: ρ} are drawn as reference lines; ``plan(steps)``, if given, is called
    before every :meth:`train` with the number of steps about to run (the lesson's learning-rate
    schedule uses it to fall to zero at the end of the steps planned so far, so "Train on" plans
    more). The curve's ``heldout_loss`` list holds the ρ values."""

    def __init__(self, step: Callable[[], float], evaluate: Callable[[], float], eval_every: int,
                 baselines: dict[str, float] | None = None, name: str = "your skip-gram",
                 plan: Callable[[int], None] | None = None):
        super().__init__(step, evaluate, eval_every, baselines, name, unit="Spearman ρ")
        self.plan = plan

    def train(self, steps: int, progress: bool = True, desc: str | None = None) -> "SimilarityTraining":
        if self.plan is not None:
            self.plan(int(steps))
        return super().train(steps, progress, desc)

    @property
    def rho(self) -> float:
        """The last held-out ρ."""
        return self.heldout_loss

    def summary(self) -> str:
        if not self.curve.step:
            return f"{self.name}: not trained yet"
        rho = self.curve.heldout_loss[-1]
        above = [k for k, v in self.baselines.items() if rho > v]
        text = (f"{self.name} after {self.steps:,} steps ({self.cpu_seconds:.0f} CPU-s of training): "
                f"ρ {rho:.3f} on the validation pairs")
        if self.baselines:
            text += "\n  " + ", ".join(f"{k} {v:.3f}" for k, v in self.baselines.items())
            text += f"\n  — above {', '.join(above)}" if above else "\n  — below every baseline so far"
        return text

    def figure(self, title: str | None = None):
        """Training loss per pair (left) and held-out ρ (right) against steps; baselines as lines."""
        fig, (ax_loss, ax_rho) = new_figure(ncols=2, width=4.6)
        c = self.curve
        if c.step:
            ax_loss.plot(c.step[1:], c.train_loss[1:], color=COLOURS["blue"], marker="o", ms=3)
            ax_rho.plot(c.step, c.heldout_loss, color=COLOURS["vermillion"], marker="o", ms=3, label=self.name)
        for i, (name, v) in enumerate(self.baselines.items()):
            ax_rho.axhline(v, color=GREY_DARK if i % 2 else BLACK, ls=LINESTYLES[1 + i % 3], lw=1.2, label=name)
        ax_rho.set_ylim(-0.1, 1.0)
        set_labels(ax_loss, "Training loss (mean of the batches between points)", "training step",
                   "loss per pair", y_unit="nats")
        set_labels(ax_rho, title or "Similarity on held-out word pairs", "training step",
                   "Spearman ρ (WordSim-353, validation pairs)")
        ax_rho.legend(loc="upper left", fontsize=7, ncol=2)
        return fig


# ---------------------------------------------------------------- section 9: the challenge
CHALLENGE_CPU_MINUTES = 5


@lru_cache(maxsize=1)
def _count_baselines() -> dict:
    """{name: (V, k) vectors} of the count-based baselines at their validated settings (built once, cached)."""
    built = validated_count_vectors()
    return {"PPMI-SVD (lesson 06)": built["PPMI-SVD"][0], "LSA (lesson 05)": built["LSA"][0]}


def raw_count_baseline(corpus: Corpus, window: int = 5, half: str = "validation") -> dict[str, float]:
    """The simplest vectors of all, which need no training: each word's row of co-occurrence
    counts within ±``window`` words (lesson 06, before PPMI), V numbers per word. Returns
    {'raw co-occurrence rows': WordSim-353 ρ on ``half``}."""
    counts = cooccurrence_matrix(corpus.sentence_ids(), len(corpus.vocab), window=window)
    return {"raw co-occurrence rows": count_rows_rho(counts, corpus.vocab, benchmark_halves()[half].wordsim)}


def baseline_scores(half: str = "validation") -> dict[str, float]:
    """WordSim-353 ρ of the count-based baselines on one half of the benchmark, from their shipped
    records (``wv_count_records``): {'PPMI-SVD (lesson 06)': ρ, 'LSA (lesson 05)': ρ}."""
    rec = load_model("wv_count_records")
    return {"PPMI-SVD (lesson 06)": rec["PPMI-SVD"][half]["wordsim"], "LSA (lesson 05)": rec["LSA"][half]["wordsim"]}


def challenge_standing(W: np.ndarray, vocab, cpu_seconds: float, shipped: dict, n_boot: int = 10_000) -> dict:
    """Score the student's vectors ``W`` (V, D; the course vocabulary ``vocab``) on the **test**
    pairs of WordSim-353 (the report half, never used for tuning) beside the count-based baselines
    and the shipped models ``shipped`` {label: (V, D) vectors}, with the paired difference from
    each (95 % interval, 10,000 resamples of the same pairs; the course's tie rule), and whether
    the training stayed within :data:`CHALLENGE_CPU_MINUTES`. Prints the scoreboard; returns
    {'rho': {name: ρ}, 'vs': {name: Interval of yours minus it}, 'calls': {name: call},
    'within_budget': bool, 'beats': [names yours is ahead of]}."""
    W = np.asarray(W, dtype=np.float32)
    if W.ndim != 2 or W.shape[0] != len(vocab):
        raise ValueError(f"W must be (V, D) with V = {len(vocab)} (the course vocabulary), got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("W has NaN or infinite entries: the training diverged (a smaller learning rate?)")
    others = {**shipped, **_count_baselines()}
    vectors = {"yours": W, **others}
    pairs = benchmark_halves()["report"].wordsim
    diffs = paired_differences(vectors, vocab, pairs, n_boot=n_boot, seed=0)
    rho = {name: evaluate_vectors(V_, vocab, "report", analogies=False)["wordsim"] for name, V_ in vectors.items()}
    vs = {name: diffs["yours", name] for name in others}
    calls = {name: call_difference(d) for name, d in vs.items()}
    within = cpu_seconds <= 60 * CHALLENGE_CPU_MINUTES
    n = len(similarity_items(W, vocab, pairs)[1])
    print(f"test pairs of WordSim-353 ({n} scored), Spearman ρ; yours minus each, paired 95 % interval:")
    for name in sorted(vectors, key=lambda k: -rho[k]):
        tail = "" if name == "yours" else f"{str(vs[name]):>28}  {calls[name]}"
        print(f"  {name:<26}{rho[name]:>7.3f}{tail}")
    print(f"your training: {cpu_seconds / 60:.1f} CPU-minutes of {CHALLENGE_CPU_MINUTES} "
          f"({'within' if within else 'OVER'} the budget)")
    beats = [name for name, c in calls.items() if c == "ahead"]
    if within and beats:
        print("you beat: " + ", ".join(beats))
    return {"rho": rho, "vs": vs, "calls": calls, "within_budget": within, "beats": beats}
