"""Lesson 07 (word2vec): output layers timed, subsampling and the dynamic window counted, the live
skip-gram and its dimension explorer, gensim beside it, the challenge's scoreboard."""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from helpers.course.benchmarks import benchmark_halves, count_rows_rho, evaluate_vectors
from helpers.course.models import load_model
from helpers.course.word_vectors import validated_count_vectors
from helpers.infra.live_training import ScoreTraining
from helpers.infra.plotting import COLOURS, GREY_DARK, log_axis, new_figure, set_labels
from helpers.infra.threads import single_thread_blas
from helpers.lib.counting import cooccurrence_matrix
from helpers.lib.hsoftmax import hs_loss_and_grads, huffman_tree
from helpers.lib.layers import SoftmaxCrossEntropy
from helpers.lib.metrics import nearest_neighbours, paired_similarity_difference
from helpers.lib.sgns import ns_loss_and_gradients, scatter_rows
from helpers.lib.stats import verdict
from helpers.lib.word2vec import Corpus, keep_probabilities, skipgram_pairs

# the shipped word2vec models of this lesson, in the order of its table
SHIPPED = {"PyTorch skip-gram": "torch-skipgram", "NumPy skip-gram": "numpy-skipgram",
           "gensim skip-gram": "gensim-skipgram", "gensim CBOW": "gensim-cbow"}


# ---------------------------------------------------------------- §6: the cost of the output layers
def _softmax(W, C, words, contexts, negatives):
    h = W[words]
    loss = SoftmaxCrossEntropy()
    loss.forward(h @ C.T, contexts)                      # (B, V): the bottleneck
    dz = loss.backward()
    return dz.T @ h, dz @ C


def _ns_rows(W, C, words, contexts, negatives):
    _, dv, du, dU = ns_loss_and_gradients(W[words], C[contexts], C[negatives])
    rows = np.r_[contexts, negatives.ravel()]
    return (scatter_rows(words, dv, len(W)),
            scatter_rows(rows, np.r_[du, dU.reshape(-1, du.shape[1])], len(C)))


def _ns_dense(W, C, words, contexts, negatives):
    _, dv, du, dU = ns_loss_and_gradients(W[words], C[contexts], C[negatives])
    dW, dC = np.zeros_like(W), np.zeros_like(C)          # the layer protocol's dense gradients
    np.add.at(dW, words, dv)
    np.add.at(dC, np.r_[contexts, negatives.ravel()], np.r_[du, dU.reshape(-1, du.shape[1])])
    return dW, dC


TIMING_NAMES = {"softmax": "full softmax", "ns_rows": "neg. sampling (rows)",
                "ns_dense": "neg. sampling (dense)", "hs": "hierarchical softmax"}


@single_thread_blas
def time_output_layers(vocab_sizes: Sequence[int], dim: int = 100, batch: int = 128, k: int = 5,
                       repeats: int = 5, seed: int = 0) -> list[dict]:
    """Median seconds of one batch's loss and gradients for each output layer and vocabulary size.
    """
    rng = np.random.default_rng(seed)
    out = []
    for V in vocab_sizes:
        W, C = ((rng.standard_normal((V, dim)) * 0.1).astype(np.float32) for _ in range(2))
        zipf = 1.0 / np.arange(1, V + 1)
        words, contexts = (rng.choice(V, size=batch, p=zipf / zipf.sum()) for _ in range(2))
        negatives = rng.choice(V, size=(batch, k), p=zipf ** 0.75 / np.sum(zipf ** 0.75))
        tree = huffman_tree(zipf)
        batch_args = (W, C, words, contexts, negatives)
        calls = {"softmax": (_softmax, batch_args), "ns_rows": (_ns_rows, batch_args),
                 "ns_dense": (_ns_dense, batch_args),
                 "hs": (hs_loss_and_grads, (W[words], C[:V - 1], tree, contexts))}
        row = {"vocab_size": int(V), "hs_mean_depth": float(tree.depth[contexts].mean())}
        for name, (fn, args) in calls.items():
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                fn(*args)
                times.append(time.perf_counter() - t)
            row[name] = float(np.median(times))
        out.append(row)
    return out


def plot_output_layer_timings(timings: list[dict]):
    """Milliseconds per batch of each output layer against |V| (log-log)."""
    fig, ax = new_figure(width=7)
    sizes = [r["vocab_size"] for r in timings]
    colours = [GREY_DARK, COLOURS["blue"], COLOURS["orange"], COLOURS["green"]]
    for (key, label), style, colour in zip(TIMING_NAMES.items(), ["o-", "s--", "^-.", "D:"],
                                           colours, strict=True):
        ax.plot(sizes, [r[key] * 1e3 for r in timings], style, color=colour, label=label)
    ax.set_xscale("log")
    log_axis(ax, "y")
    set_labels(ax, "Loss and gradients of one batch as the vocabulary grows (median of repeats)",
               "vocabulary size |V|", "time per batch (ms, log scale)")
    ax.legend(fontsize=8, loc="upper left")
    return fig


# ---------------------------------------------------------------- §7: subsampling, dynamic window
def keep_probability_paper(counts: np.ndarray, sample: float) -> np.ndarray:
    """The paper's keep probability min(1, sqrt(t / f)) of each word (V,), f its frequency."""
    counts = np.asarray(counts, dtype=np.float64)
    return np.minimum(1.0, np.sqrt(sample / (counts / counts.sum())))


def pair_statistics(corpus: Corpus, sample: float, dynamic: bool = True, window: int = 5,
                    seeds: Sequence[int] = (0, 1, 2), top: int = 10) -> dict:
    """One epoch's skip-gram data per seed, counted: 'tokens' kept, 'pairs', 'top_share' (context
    among the ``top`` most frequent words), and 'by_distance' (share at distance 1..window)."""
    counts = corpus.vocab.counts
    is_top = np.zeros(len(counts), dtype=bool)
    is_top[np.argsort(-counts)[:top]] = True
    keep = keep_probabilities(counts, sample)
    out = {"tokens": [], "pairs": [], "top_share": []}
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
            right, left = same & (b[:-d] >= d), same & (b[d:] >= d)  # i sees i + d; i + d sees i
            n_pairs += int(right.sum() + left.sum())
            by_distance[d - 1] += right.sum() + left.sum()
            n_top += int(is_top[ids[d:]][right].sum() + is_top[ids[:-d]][left].sum())
        out["tokens"].append(int(kept.sum()))
        out["pairs"].append(n_pairs)
        out["top_share"].append(n_top / n_pairs)
    out["by_distance"] = (by_distance / by_distance.sum()).tolist()
    return out


# ---------------------------------------------------------------- §7.1: the live skip-gram
class LiveSkipGram:
    """The lesson's live skip-gram: W uniform in ±0.5/d, C zero; :meth:`step` trains one batch
    with ``step(W, C, words, contexts, negatives, lr, gradients)``, lr falling linearly to 0."""

    def __init__(self, corpus: Corpus, noise: Callable, gradients: Callable, step: Callable,
                 dim: int = 100, k: int = 5, window: int = 5, sample: float = 1e-4,
                 batch: int = 1024, alpha: float = 0.1, seed: int = 0):
        self.corpus, self.gradients, self.step_fn = corpus, gradients, step
        self.k, self.window, self.batch, self.alpha = k, window, batch, alpha
        self.rng = np.random.default_rng(seed)
        V = len(corpus.vocab)
        self.W = ((self.rng.random((V, dim)) - 0.5) / dim).astype(np.float32)
        self.C = np.zeros((V, dim), np.float32)
        p = np.asarray(noise(corpus.vocab.counts, 0.75))
        repeats = np.maximum(np.round(p * 1_000_000), p > 0).astype(np.int64)
        self.table = np.repeat(np.arange(V), repeats)
        self.keep = keep_probabilities(corpus.vocab.counts, sample)
        self.pairs, self.at, self.steps, self.planned, self.pairs_done = self.one_pass(), 0, 0, 0, 0

    def one_pass(self) -> tuple[np.ndarray, np.ndarray]:
        """(words, contexts) of one pass over the corpus, shuffled."""
        kept = self.rng.random(len(self.corpus.ids)) < self.keep[self.corpus.ids]
        w, c = skipgram_pairs(self.corpus.ids[kept], self.corpus.sentence[kept], self.window,
                              self.rng)
        order = self.rng.permutation(len(w))
        return w[order], c[order]

    def plan(self, steps: int) -> None:
        """``steps`` more steps are coming: the rate now falls to zero at their end."""
        self.planned = self.steps + steps

    def step(self) -> float:
        words, contexts = self.pairs
        if self.at + self.batch > len(words):                   # the pass is used up: a fresh one
            self.pairs, self.at = self.one_pass(), 0
            words, contexts = self.pairs
        batch = slice(self.at, self.at + self.batch)
        self.at += self.batch
        lr = self.alpha * max(1e-3, 1 - self.steps / max(self.planned, 1))
        self.steps += 1
        self.pairs_done += self.batch
        negatives = self.table[self.rng.integers(0, len(self.table), size=(self.batch, self.k))]
        loss, self.W, self.C = self.step_fn(self.W, self.C, words[batch], contexts[batch],
                                            negatives, lr, self.gradients)
        return loss

    def passes(self) -> float:
        """Passes over the corpus trained so far."""
        return self.pairs_done / len(self.pairs[0])

    def validation_rho(self) -> float:
        """WordSim-353 ρ of W on the validation pairs."""
        return evaluate_vectors(self.W, self.corpus.vocab, "validation", analogies=False)["wordsim"]


def frequent_neighbours(vectors, vocab, word: str, k: int = 5,
                        min_count: int = 50) -> list[tuple[str, float]]:
    """The ``k`` cosine neighbours of ``word`` among the words seen at least ``min_count`` times."""
    rare = [w for w, c in zip(vocab.itos, vocab.counts, strict=True) if c < min_count]
    return nearest_neighbours(vectors, vocab, word, k=k, exclude=rare)


def baselines(corpus: Corpus, window: int = 5, half: str = "validation") -> dict[str, float]:
    """WordSim-353 ρ on ``half`` of raw co-occurrence rows and of lessons 05-06's vectors."""
    counts = cooccurrence_matrix(corpus.sentence_ids(), len(corpus.vocab), window=window)
    rec = load_model("wv_count_records")
    raw = count_rows_rho(counts, corpus.vocab, benchmark_halves()[half].wordsim)
    return {"raw co-occurrence rows": raw, "PPMI-SVD (lesson 06)": rec["PPMI-SVD"][half]["wordsim"],
            "LSA (lesson 05)": rec["LSA"][half]["wordsim"]}


# ---------------------------------------------------------------- §7.2: the dimension, and gensim
class DimensionRuns:
    """The dimension explorer: validation ρ and CPU ms per step of ``make(dim)`` against d."""

    def __init__(self, make: Callable[[int], LiveSkipGram], steps: int):
        self.make, self.steps, self.results = make, steps, {}

    def add(self, dim: int, run: LiveSkipGram, training: ScoreTraining) -> None:
        """Record a run already trained (the lesson's own, at d = 100)."""
        money = frequent_neighbours(run.W, run.corpus.vocab, "money", k=4)
        self.results[dim] = dict(rho=training.curve.valid[-1],
                                 ms=1e3 * training.cpu_seconds / training.steps,
                                 money=[w for w, _ in money])

    def render(self, dim: int):
        if dim not in self.results:
            run = self.make(dim)
            training = ScoreTraining(run.step, run.validation_rho, self.steps, plan=run.plan)
            self.add(dim, run, training.train(self.steps, progress=False))
        dims = sorted(self.results)
        fig, (ax1, ax2) = new_figure(ncols=2, width=4.2)
        ax1.plot(dims, [self.results[d]["rho"] for d in dims], "o-", color=COLOURS["vermillion"])
        ax2.plot(dims, [self.results[d]["ms"] for d in dims], "s-", color=COLOURS["blue"])
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xticks(dims, [str(d) for d in dims])
            ax.minorticks_off()
        set_labels(ax1, f"Validation ρ after {self.steps:,} steps", "dimension d",
                   "Spearman ρ (WordSim-353)")
        set_labels(ax2, "Cost of a step", "dimension d", "CPU time per step", y_unit="ms")
        r = self.results[dim]
        return fig, (f"d = {dim}: ρ {r['rho']:.3f} after {self.steps:,} steps, {r['ms']:.1f} "
                     f"CPU-ms per step; money → {', '.join(r['money'])}")


def gensim_skipgram(corpus: Corpus, epochs: int, dim: int = 100, window: int = 5,
                    negative: int = 5, sample: float = 1e-4, alpha: float = 0.1,
                    seed: int = 0) -> tuple[np.ndarray, float]:
    """gensim's skip-gram (one worker) at the live run's settings: (W, CPU seconds)."""
    from gensim.models import Word2Vec  # imported only here: the rest of the lesson does without
    t0 = time.process_time()
    model = Word2Vec(corpus.sentences, vector_size=dim, window=window, negative=negative,
                     sample=sample, alpha=alpha, min_alpha=1e-4, sg=1, hs=0, min_count=5, workers=1,
                     seed=seed, epochs=epochs)
    cpu = time.process_time() - t0
    return np.stack([model.wv[w] for w in corpus.vocab.itos]), cpu


# ---------------------------------------------------------------- §9: the challenge
CHALLENGE_CPU_MINUTES = 5


def challenge_standing(W: np.ndarray, vocab, cpu_seconds: float, rivals: dict,
                       n_boot: int = 10_000) -> dict:
    """Print the scoreboard of ``W`` (V, D) against ``rivals`` and the count-based vectors on
    WordSim-353's test pairs; returns {'rho', 'vs', 'calls', 'within_budget', 'beats'}."""
    W = np.asarray(W, dtype=np.float32)
    if W.ndim != 2 or W.shape[0] != len(vocab):
        raise ValueError(f"challenge_standing: W must be (V, D) with V = {len(vocab)} (the course "
                         f"vocabulary), got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("challenge_standing: W has NaN or infinite entries: the training "
                         "diverged (a smaller learning rate?)")
    built = validated_count_vectors()
    others = {**rivals, "PPMI-SVD (lesson 06)": built["PPMI-SVD"][0],
              "LSA (lesson 05)": built["LSA"][0]}
    pairs = benchmark_halves()["report"].wordsim
    rho = {name: evaluate_vectors(V_, vocab, "report", analogies=False)["wordsim"]
           for name, V_ in {"yours": W, **others}.items()}
    vs = {name: paired_similarity_difference(W, V_, vocab, pairs, n_boot=n_boot)
          for name, V_ in others.items()}
    calls = {name: verdict(d, "yours", name) for name, d in vs.items()}
    within = cpu_seconds <= 60 * CHALLENGE_CPU_MINUTES
    print("test pairs of WordSim-353, Spearman ρ; yours minus each, paired 95 % interval:")
    for name in sorted(rho, key=lambda n: -rho[n]):
        tail = "" if name == "yours" else f"{str(vs[name]):>28}  {calls[name]}"
        print(f"  {name:<26}{rho[name]:>7.3f}{tail}")
    print(f"your training: {cpu_seconds / 60:.1f} CPU-minutes of {CHALLENGE_CPU_MINUTES} "
          f"({'within' if within else 'OVER'} the budget)")
    beats = [name for name, c in calls.items() if c == "yours ahead"]
    if within and beats:
        print("you beat: " + ", ".join(beats))
    return {"rho": rho, "vs": vs, "calls": calls, "within_budget": within, "beats": beats}
