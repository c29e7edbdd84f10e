"""How word2vec's quality grows with the corpus and with the vector size: the grid of lesson 09.

Mikolov et al. (2013, "Efficient estimation of word representations", Table 2) trained CBOW
on 24M to 783M words with 50 to 600 dimensions and found that more data and more dimensions
both help, but each with diminishing returns unless the other grows too. This module runs the
same grid at the course's scale: gensim's CBOW on nested random samples of the course corpus
(1/8, 1/4, 1/2 and all of its sentences; each sample contains the smaller ones) times a few
dimensions, every other setting as in lesson 07.

Fair comparison: every cell is scored on the **same words**, the vocabulary of the smallest
sample (min_count 5, so those words are in every larger sample too). Analogy answers are
searched among those words only, and only the questions and word pairs made of them count.
So only the vectors differ between cells, not the test.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from helpers.course.benchmarks import benchmark_halves
from helpers.course.corpus import course_corpus
from helpers.course.data import load_analogies, load_word_similarity
from helpers.infra.artifacts import TreeCodec, timings_from_meta, timings_to_meta
from helpers.infra.cache import with_overrides
from helpers.infra.progress import progress_bar
from helpers.lib.metrics import analogy_accuracy, similarity_correlation
from helpers.lib.word2vec import prepare_corpus, train_gensim

FRACTIONS = (0.125, 0.25, 0.5, 1.0)
DIMS = (10, 25, 50, 100, 200)
SCALING_CONFIG = dict(model="cbow", window=5, negative=5, sample=1e-3, epochs=5, alpha=0.025,
                      min_alpha=1e-4, min_count=5, seed=0, workers=2)
METRICS = {"analogy": "analogy accuracy (3CosAdd)", "wordsim353": "WordSim-353 ρ",
           "simlex999": "SimLex-999 ρ"}


@dataclass
class ScalingGrid:
    """Scores of a fractions x dims grid of word2vec runs.

    fractions (F,), dims (D,), tokens (F,) raw tokens of each sample, scores {metric: (F, D)},
    seconds (F, D) training time of each cell, n_scored {metric: number of questions or pairs
    scored (the same in every cell)}, n_words: size of the shared vocabulary, config: the
    training settings."""

    fractions: tuple
    dims: tuple
    tokens: np.ndarray
    scores: dict
    seconds: np.ndarray
    n_scored: dict
    n_words: int
    config: dict = field(default_factory=dict)

    def to_arrays(self) -> tuple[dict, dict]:
        """(arrays, meta) for the cache (:mod:`helpers.infra.artifacts`, no pickle)."""
        return TreeCodec.to_arrays(asdict(self))

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "ScalingGrid":
        """The grid stored by :meth:`to_arrays`."""
        return cls(**TreeCodec.from_arrays(arrays, meta))


def nested_samples(sentences: Sequence, fractions: Sequence[float], seed: int = 0) -> list[list]:
    """Random samples of ``sentences`` of the given fractions (increasing), each containing
    the previous ones: one seeded shuffle, then its first ``round(f * n)`` sentences."""
    if not len(sentences):
        raise ValueError("cannot sample from an empty corpus")
    fr = list(fractions)
    if not fr or any(not 0 < f <= 1 for f in fr) or fr != sorted(fr):
        raise ValueError(f"fractions must be increasing and in (0, 1], got {fractions}")
    order = np.random.default_rng(seed).permutation(len(sentences))
    return [[sentences[i] for i in order[:max(1, round(f * len(sentences)))]] for f in fr]


def _restrict(vectors: np.ndarray, vocab, words: Sequence[str]) -> np.ndarray:
    """Rows of ``vectors`` for ``words`` (every word must be in ``vocab``)."""
    return vectors[[vocab.stoi[w] for w in words]]


def train_scaling_grid(sentences: Sequence[Sequence[str]], fractions: Sequence[float] = FRACTIONS,
                       dims: Sequence[int] = DIMS, progress: bool = True, **overrides) -> ScalingGrid:
    """Train gensim word2vec for every (fraction, dim) pair and score it on the shared words
    (see the module docstring). ``overrides`` update SCALING_CONFIG. Takes ~35 s with the
    defaults on an idle 2-core machine (gensim with 2 worker threads)."""
    cfg = with_overrides(SCALING_CONFIG, overrides)
    if not dims or any(int(d) < 1 for d in dims):
        raise ValueError(f"dims must be positive integers, got {dims}")
    train_kw = {k: v for k, v in cfg.items() if k != "min_count"}
    corpora = [prepare_corpus(s, min_count=cfg["min_count"]) for s in nested_samples(sentences, fractions, cfg["seed"])]
    words = list(corpora[0].vocab.itos)              # shared by all cells (nested samples)
    tests = {"analogy": load_analogies(), "wordsim353": load_word_similarity("wordsim353"),
             "simlex999": load_word_similarity("simlex999")}
    F, D = len(corpora), len(dims)
    scores = {m: np.full((F, D), np.nan) for m in METRICS}
    seconds, n_scored = np.zeros((F, D)), {}
    bar = progress_bar(total=F * D, desc="word2vec grid", unit="run", disable=not progress)
    for i, corpus in enumerate(corpora):
        for j, dim in enumerate(dims):
            t = time.perf_counter()
            tv = train_gensim(corpus, dim=int(dim), **train_kw)
            seconds[i, j] = time.perf_counter() - t
            E = _restrict(tv.W, tv.vocab, words)
            an = analogy_accuracy(E, words, tests["analogy"], "add")
            scores["analogy"][i, j] = np.nan if an.accuracy is None else an.accuracy
            n_scored["analogy"] = an.answered
            for m in ("wordsim353", "simlex999"):
                r = similarity_correlation(E, words, tests[m], METRICS[m])
                scores[m][i, j] = np.nan if r.rho is None else r.rho
                n_scored[m] = r.n_used
            bar.update(1)
    bar.close()
    return ScalingGrid(tuple(float(f) for f in fractions), tuple(int(d) for d in dims),
                       np.array([c.n_raw_tokens for c in corpora]), scores, seconds, n_scored, len(words), cfg)


# ---------------------------------------------------------------- the shipped grid (make models NAME=wv_scaling_grid)
# Settings of the shipped word vectors (helpers.course.word_vector_models.WORD2VEC, chosen on the
# validation half) except the number of epochs: 5 for every cell of the grid, as in the paper's
# fixed-epoch table. The control trains each sample for epochs / fraction epochs, so every cell of
# a column sees the same number of updates (tokens processed) as the whole corpus does in 5 epochs.
SHIPPED = dict(model="cbow", fractions=list(FRACTIONS), dims=[10, 25, 50, 100], epochs=5, window=5, negative=5,
               sample=1e-4, alpha=0.05, min_alpha=1e-4, min_count=5, sample_seed=0, seeds=[0, 1, 2])
SUBSET_CELL = dict(fraction=0.25, dim=25, seed=0, control=False)    # retrained by the subset metric


def _cells(s: dict) -> list[tuple[int, bool, int, int]]:
    """(seed index, control, fraction index, dim index) in training order: cheapest first within
    each seed, the control only where it differs from the grid (fraction < 1)."""
    out = []
    for k in range(len(s["seeds"])):
        for control in (False, True):
            for i, f in enumerate(s["fractions"]):
                if control and f == 1.0:
                    continue
                out.extend((k, control, i, j) for j in range(len(s["dims"])))
    return out


def cell_epochs(s: dict, fraction: float, control: bool) -> int:
    """Epochs of a cell: ``epochs``, or ``round(epochs / fraction)`` in the equal-updates control."""
    return int(round(s["epochs"] / fraction)) if control else int(s["epochs"])


def _train_cell(sents: list, s: dict, dim: int, seed: int, epochs: int):
    """gensim CBOW/skip-gram with one worker (deterministic); returns (model, gensim's summed
    training loss per corpus word and epoch)."""
    # heavy optional import: gensim is loaded only to train
    from gensim.models import Word2Vec
    m = Word2Vec(vector_size=int(dim), window=s["window"], negative=s["negative"], sample=s["sample"],
                 alpha=s["alpha"], min_alpha=s["min_alpha"], sg=int(s["model"] == "skipgram"), hs=0, workers=1,
                 seed=int(seed), min_count=s["min_count"], epochs=epochs)
    m.build_vocab(sents)
    m.train(sents, total_examples=m.corpus_count, epochs=epochs, compute_loss=True)
    return m, float(m.get_latest_training_loss()) / max(1, m.corpus_total_words * epochs)


def _score_cell(m, words: list[str]) -> dict:
    """Report-half scores of a trained gensim model restricted to ``words`` (the shared test)."""
    h = benchmark_halves()["report"]
    E = np.array(m.wv.vectors[[m.wv.key_to_index[w] for w in words]], dtype=np.float32)
    an = analogy_accuracy(E, words, h.analogies, "add")
    out = {"analogy": (an.accuracy, an.answered)}
    for key, pairs in (("wordsim353", h.wordsim), ("simlex999", h.simlex)):
        r = similarity_correlation(E, words, pairs, METRICS[key])
        out[key] = (r.rho, r.n_used)
    return out


def grid_samples(s: dict) -> tuple[list[list[list[str]]], list[str]]:
    """The nested samples of the course corpus and the shared test words (the smallest sample's
    vocabulary, min_count as in the settings, in its Vocab order)."""
    sents = [list(x) for x in course_corpus().sentences]
    samples = nested_samples(sents, s["fractions"], s["sample_seed"])
    return samples, list(prepare_corpus(samples[0], min_count=s["min_count"]).vocab.itos)


def train_grid_results(settings: dict, log, max_steps: int | None = None, progress: bool = True):
    """Train and score every cell of the shipped grid (``make models NAME=wv_scaling_grid``).

    Cells: seeds x {grid, equal-updates control} x fractions x dims (:func:`_cells`); a step of
    the log is one cell, its value gensim's training loss per corpus word. Every cell is scored
    on the **report half** of the benchmarks, restricted to the shared words (module docstring);
    nothing is tuned on the grid. Returns (arrays, meta, metrics); no vectors are kept."""
    s = settings
    samples, words = grid_samples(s)
    S, F, D = len(s["seeds"]), len(s["fractions"]), len(s["dims"])
    scores = {f"{part}/{m}": np.full((S, F, D), np.nan) for part in ("grid", "control") for m in METRICS}
    seconds = {part: np.full((S, F, D), np.nan) for part in ("grid", "control")}
    n_scored = {}
    cells = _cells(s)[:max_steps] if max_steps is not None else _cells(s)
    bar = progress_bar(total=len(cells), desc="scaling grid", unit="cell", disable=not progress)
    for k, control, i, j in cells:
        part = "control" if control else "grid"
        t = time.process_time()
        m, loss = _train_cell(samples[i], s, s["dims"][j], s["seeds"][k], cell_epochs(s, s["fractions"][i], control))
        seconds[part][k, i, j] = time.process_time() - t
        log.step(loss)
        cell = _score_cell(m, words)
        for key, (value, n) in cell.items():
            scores[f"{part}/{key}"][k, i, j] = np.nan if value is None else value
            n_scored[key] = n
        log.event("eval", part=part, seed=s["seeds"][k], fraction=s["fractions"][i], dim=s["dims"][j],
                  epochs=cell_epochs(s, s["fractions"][i], control), loss=loss, cpu_seconds=seconds[part][k, i, j],
                  **{key: value for key, (value, _) in cell.items()})
        bar.update(1)
    bar.close()
    log.event("stop", reason=f"max_steps={max_steps}" if max_steps is not None else "every cell trained (no early "
              "stopping: a cell's epochs are part of the experiment)", steps=len(cells))
    for key in METRICS:             # the control's last row is the grid's (same cell: whole corpus, 5 epochs)
        scores[f"control/{key}"][:, F - 1] = scores[f"grid/{key}"][:, F - 1]
    seconds["control"][:, F - 1] = seconds["grid"][:, F - 1]
    tokens = np.array([sum(len(x) for x in smp) for smp in samples])
    arrays = {**{f"scores/{k}": v for k, v in scores.items()}, "tokens": tokens}
    meta = {"settings": dict(s), "n_scored": n_scored, "n_words": len(words), "cells": len(cells),
            "timings": timings_to_meta({f"seconds/{part}": seconds[part] for part in ("grid", "control")}),
            "scored_on": "report half of the benchmarks (helpers.course.benchmarks), shared words only",
            "cpu_seconds_cells": float(np.nansum(seconds["grid"]) + np.nansum(seconds["control"][:, :F - 1]))}
    metrics = {"cells": len(cells)}
    if max_steps is None:
        A = scores["grid/analogy"].mean(axis=0)
        metrics.update(analogy_full_best=float(np.nanmax(A[-1])), analogy_eighth_best=float(np.nanmax(A[0])))
    return arrays, meta, metrics


@dataclass
class ShippedGrid:
    """The shipped grid: ``grid`` and ``control`` as :class:`ScalingGrid` (scores (S, F, D):
    seeds x fractions x dims), the epochs of each fraction in the control, and the metadata."""

    grid: ScalingGrid
    control: ScalingGrid
    control_epochs: tuple
    metadata: dict


def load_grid_artifact(artifact) -> ShippedGrid:
    """The results stored by :func:`train_grid_results` (through :func:`helpers.course.models.load_model`)."""
    a, meta = artifact.arrays, artifact.meta
    s = meta["settings"]
    cfg = {k: v for k, v in s.items() if k not in ("fractions", "dims")}
    seconds = timings_from_meta(meta["timings"])

    def part(name, epochs):
        return ScalingGrid(tuple(s["fractions"]), tuple(s["dims"]), a["tokens"],
                           {m: a[f"scores/{name}/{m}"] for m in METRICS}, seconds[f"seconds/{name}"],
                           dict(meta["n_scored"]), int(meta["n_words"]), {**cfg, "epochs": epochs, "part": name})

    ep = tuple(cell_epochs(s, f, True) for f in s["fractions"])
    return ShippedGrid(part("grid", [s["epochs"]] * len(ep)), part("control", list(ep)), ep, meta)


def retrain_cell(settings: dict, fraction: float, dim: int, seed: int, control: bool = False) -> dict:
    """Train and score one cell again from scratch: {metric: score} (the test of the shipped file)."""
    samples, words = grid_samples(settings)
    i = list(settings["fractions"]).index(fraction)
    m, _ = _train_cell(samples[i], settings, dim, seed, cell_epochs(settings, fraction, control))
    return {k: v for k, (v, _) in _score_cell(m, words).items()}


def grid_subset_metric(shipped: ShippedGrid) -> tuple[str, float]:
    """One cell (:data:`SUBSET_CELL`) retrained from scratch: its report-half WordSim-353 ρ."""
    c = SUBSET_CELL
    value = retrain_cell(shipped.metadata["settings"], c["fraction"], c["dim"], c["seed"], c["control"])["wordsim353"]
    return f"wordsim_f{c['fraction']:g}_d{c['dim']}_seed{c['seed']}", float(value)
