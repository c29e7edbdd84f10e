"""The shipped scaling grid (``make models NAME=wv_scaling_grid``): gensim CBOW on nested samples
of the corpus x dimensions x seeds, and the equal-updates control.

Every setting is that of the shipped word vectors (chosen on the validation half) except the
epochs: 5 in every cell, as in the paper's fixed-epoch table. The control trains each sample for
5 / fraction epochs, so every cell of a column sees as many updates as the whole corpus in 5.
Lesson 09 reads the scores (:mod:`helpers.course.vector_studies`); no vectors are kept. The
samples, one cell's training and its scoring live here too (the replay test retrains a cell).
"""
from __future__ import annotations

import time

import numpy as np

from helpers.course.benchmarks import benchmark_halves
from helpers.course.corpus import course_corpus
from helpers.course.vector_studies import METRICS, ShippedGrid, cell_epochs
from helpers.infra.progress import progress_bar
from helpers.lib.metrics import analogy_accuracy, similarity_correlation
from helpers.lib.word2vec import prepare_corpus
from training.loop import timings_to_meta

SHIPPED = dict(model="cbow", fractions=[0.125, 0.25, 0.5, 1.0], dims=[10, 25, 50, 100], epochs=5,
               window=5, negative=5, sample=1e-4, alpha=0.05, min_alpha=1e-4, min_count=5,
               sample_seed=0, seeds=[0, 1, 2])
SUBSET_CELL = dict(fraction=0.25, dim=25, seed=0, control=False)    # the cell the replay retrains


def nested_samples(sentences, fractions, seed: int = 0) -> list[list]:
    """Random samples of ``sentences`` of increasing ``fractions``, each holding the ones
    before: one seeded shuffle, then its first ``round(f * n)`` sentences."""
    if not len(sentences):
        raise ValueError("cannot sample from an empty corpus")
    fr = list(fractions)
    if not fr or any(not 0 < f <= 1 for f in fr) or fr != sorted(fr):
        raise ValueError(f"fractions must be increasing and in (0, 1], got {fractions}")
    order = np.random.default_rng(seed).permutation(len(sentences))
    return [[sentences[i] for i in order[:max(1, round(f * len(sentences)))]] for f in fr]


def grid_samples(s: dict) -> tuple[list[list[list[str]]], list[str]]:
    """The nested samples of the course corpus and the shared test words (the smallest sample's
    vocabulary at ``min_count``)."""
    sents = [list(x) for x in course_corpus().sentences]
    samples = nested_samples(sents, s["fractions"], s["sample_seed"])
    return samples, list(prepare_corpus(samples[0], min_count=s["min_count"]).vocab.itos)


def train_cell(sents: list, s: dict, dim: int, seed: int, epochs: int):
    """gensim CBOW (or skip-gram) with one worker, deterministic: (model, gensim's training loss
    per corpus word and epoch)."""
    from gensim.models import Word2Vec
    m = Word2Vec(vector_size=int(dim), window=s["window"], negative=s["negative"],
                 sample=s["sample"], alpha=s["alpha"], min_alpha=s["min_alpha"],
                 sg=int(s["model"] == "skipgram"), hs=0, workers=1, seed=int(seed),
                 min_count=s["min_count"], epochs=epochs)
    m.build_vocab(sents)
    m.train(sents, total_examples=m.corpus_count, epochs=epochs, compute_loss=True)
    return m, float(m.get_latest_training_loss()) / max(1, m.corpus_total_words * epochs)


def score_cell(m, words: list[str]) -> dict:
    """Report-half scores of a gensim model on ``words`` only: {metric: (score, items scored)}."""
    h = benchmark_halves()["report"]
    E = np.array(m.wv.vectors[[m.wv.key_to_index[w] for w in words]], dtype=np.float32)
    an = analogy_accuracy(E, words, h.analogies, "add")
    out = {"analogy": (an.accuracy, an.answered)}
    for key, pairs in (("wordsim353", h.wordsim), ("simlex999", h.simlex)):
        r = similarity_correlation(E, words, pairs, METRICS[key])
        out[key] = (r.rho, r.n_used)
    return out


def retrain_cell(settings: dict, fraction: float, dim: int, seed: int,
                 control: bool = False) -> dict:
    """One cell of the grid trained again from scratch (a few CPU-seconds): {metric: score}."""
    samples, words = grid_samples(settings)
    i = list(settings["fractions"]).index(fraction)
    m, _ = train_cell(samples[i], settings, dim, seed, cell_epochs(settings, fraction, control))
    return {k: v for k, (v, _) in score_cell(m, words).items()}


def _cells(s: dict) -> list[tuple[int, bool, int, int]]:
    """(seed index, control, fraction index, dim index) in training order; the control only
    where it differs from the grid (fraction < 1)."""
    out = []
    for k in range(len(s["seeds"])):
        for control in (False, True):
            for i, f in enumerate(s["fractions"]):
                if control and f == 1.0:
                    continue
                out.extend((k, control, i, j) for j in range(len(s["dims"])))
    return out


def train_grid_results(settings: dict, log, max_steps: int | None = None, progress: bool = True):
    """Train and score every cell. A log step is one cell, its value gensim's training loss per
    corpus word; every cell is scored on the report half, shared words only. Returns (arrays,
    meta, metrics)."""
    s = settings
    samples, words = grid_samples(s)
    S, F, D = len(s["seeds"]), len(s["fractions"]), len(s["dims"])
    scores = {f"{part}/{m}": np.full((S, F, D), np.nan) for part in ("grid", "control")
              for m in METRICS}
    seconds = {part: np.full((S, F, D), np.nan) for part in ("grid", "control")}
    n_scored = {}
    cells = _cells(s)[:max_steps] if max_steps is not None else _cells(s)
    bar = progress_bar(total=len(cells), desc="scaling grid", unit="cell", disable=not progress)
    for k, control, i, j in cells:
        part = "control" if control else "grid"
        epochs = cell_epochs(s, s["fractions"][i], control)
        t = time.process_time()
        m, loss = train_cell(samples[i], s, s["dims"][j], s["seeds"][k], epochs)
        seconds[part][k, i, j] = time.process_time() - t
        log.step(loss)
        cell = score_cell(m, words)
        for key, (value, n) in cell.items():
            scores[f"{part}/{key}"][k, i, j] = np.nan if value is None else value
            n_scored[key] = n
        log.event("eval", part=part, seed=s["seeds"][k], fraction=s["fractions"][i],
                  dim=s["dims"][j], epochs=epochs, loss=loss, cpu_seconds=seconds[part][k, i, j],
                  **{key: value for key, (value, _) in cell.items()})
        bar.update(1)
    bar.close()
    log.event("stop", reason=f"max_steps={max_steps}" if max_steps is not None else
              "every cell trained (no early stopping: a cell's epochs are part of the experiment)",
              steps=len(cells))
    for key in METRICS:        # the control's last row is the grid's (whole corpus, 5 epochs)
        scores[f"control/{key}"][:, F - 1] = scores[f"grid/{key}"][:, F - 1]
    seconds["control"][:, F - 1] = seconds["grid"][:, F - 1]
    tokens = np.array([sum(len(x) for x in smp) for smp in samples])
    arrays = {**{f"scores/{k}": v for k, v in scores.items()}, "tokens": tokens}
    cpu = float(np.nansum(seconds["grid"]) + np.nansum(seconds["control"][:, :F - 1]))
    meta = {"settings": dict(s), "n_scored": n_scored, "n_words": len(words), "cells": len(cells),
            "timings": timings_to_meta({f"seconds/{p}": seconds[p] for p in ("grid", "control")}),
            "scored_on": "report half of the benchmarks (helpers.course.benchmarks), "
                         "shared words only",
            "cpu_seconds_cells": cpu}
    metrics = {"cells": len(cells)}
    if max_steps is None:
        A = scores["grid/analogy"].mean(axis=0)
        metrics.update(analogy_full_best=float(np.nanmax(A[-1])),
                       analogy_eighth_best=float(np.nanmax(A[0])))
    return arrays, meta, metrics


def grid_subset_metric(shipped: ShippedGrid) -> tuple[str, float]:
    """One cell (SUBSET_CELL) retrained from scratch: its report-half WordSim-353 ρ."""
    c = SUBSET_CELL
    value = retrain_cell(shipped.metadata["settings"], c["fraction"], c["dim"], c["seed"],
                         c["control"])["wordsim353"]
    return f"wordsim_f{c['fraction']:g}_d{c['dim']}_seed{c['seed']}", float(value)
