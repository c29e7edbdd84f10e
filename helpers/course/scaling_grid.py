"""Lesson 09's grid of word2vec quality against corpus size and dimension: the shipped scores,
and one cell trained again live.

Mikolov et al. (2013, Table 2) trained CBOW on 24M-783M words with 50-600 dimensions: more data
and more dimensions both help, each with diminishing returns unless the other grows too. The
shipped grid (``make models NAME=wv_scaling_grid``, :mod:`training.scaling_grid`) repeats it at
the course's scale: gensim's CBOW on nested random samples of the corpus (each holds the smaller
ones) times a few dimensions, 3 seeds, and a control that trains every sample for as many
updates as the whole corpus gets. Every cell is scored on the **same words**, the vocabulary of
the smallest sample, on the report half of the benchmarks, so only the vectors differ.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from helpers.course.benchmarks import benchmark_halves
from helpers.course.corpus import course_corpus
from helpers.infra.artifacts import Artifact, timings_from_meta
from helpers.lib.metrics import analogy_accuracy, similarity_correlation
from helpers.lib.word2vec import prepare_corpus

METRICS = {"analogy": "analogy accuracy (3CosAdd)", "wordsim353": "WordSim-353 ρ",
           "simlex999": "SimLex-999 ρ"}
SUBSET_CELL = dict(fraction=0.25, dim=25, seed=0, control=False)    # the cell a test retrains


@dataclass
class ScalingGrid:
    """Scores of a fractions x dims grid of word2vec runs.

    fractions (F,), dims (D,), tokens (F,) raw tokens of each sample, scores {metric: (F, D) or
    (S, F, D) with S seeds}, seconds of each cell (same shape), n_scored {metric: questions or
    pairs scored in every cell}, n_words: the shared vocabulary's size, config."""

    fractions: tuple
    dims: tuple
    tokens: np.ndarray
    scores: dict
    seconds: np.ndarray
    n_scored: dict
    n_words: int
    config: dict


@dataclass
class ShippedGrid:
    """The shipped grid: ``grid`` and ``control`` (:class:`ScalingGrid`), the control's epochs
    of each fraction, and the metadata."""

    grid: ScalingGrid
    control: ScalingGrid
    control_epochs: tuple
    metadata: dict


def cell_epochs(s: dict, fraction: float, control: bool) -> int:
    """A cell's epochs: ``epochs``, or ``round(epochs / fraction)`` in the equal-updates control."""
    return int(round(s["epochs"] / fraction)) if control else int(s["epochs"])


def load_grid_artifact(artifact: Artifact) -> ShippedGrid:
    """The ``wv_scaling_grid`` artefact as a :class:`ShippedGrid`."""
    a, meta = artifact.arrays, artifact.meta
    s = meta["settings"]
    cfg = {k: v for k, v in s.items() if k not in ("fractions", "dims")}
    seconds = timings_from_meta(meta["timings"])

    def part(name, epochs):
        scores = {m: a[f"scores/{name}/{m}"] for m in METRICS}
        return ScalingGrid(tuple(s["fractions"]), tuple(s["dims"]), a["tokens"], scores,
                           seconds[f"seconds/{name}"],
                           dict(meta["n_scored"]), int(meta["n_words"]),
                           {**cfg, "epochs": epochs, "part": name})

    ep = tuple(cell_epochs(s, f, True) for f in s["fractions"])
    return ShippedGrid(part("grid", [s["epochs"]] * len(ep)), part("control", list(ep)), ep, meta)


# ---------------------------------------------------------------- one cell
def nested_samples(sentences: Sequence, fractions: Sequence[float], seed: int = 0) -> list[list]:
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
    from gensim.models import Word2Vec  # heavy optional import: loaded only to train
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
