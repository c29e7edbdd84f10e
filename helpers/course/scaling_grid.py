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

from helpers.course.corpus import modern_english_sentences
from helpers.course.data import load_analogies, load_word_similarity
from helpers.infra.artifacts import TreeCodec
from helpers.infra.cache import cached, settings_version, with_overrides
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


# ---------------------------------------------------------------- the course's grid
def course_scaling_key() -> tuple[str, str]:
    """The cache entry (name, version) of :func:`course_scaling_grid`."""
    grid = "f" + "_".join(f"{f:g}" for f in FRACTIONS) + "-d" + "_".join(map(str, DIMS))
    return "word2vec-scaling", settings_version(SCALING_CONFIG, f"v1-{grid}")


def course_scaling_grid(progress: bool = True) -> ScalingGrid:
    """The grid on the course corpus (:func:`helpers.course.corpus.modern_english_sentences`),
    trained once and cached (:mod:`helpers.infra.cache`)."""
    return cached(*course_scaling_key(), lambda: train_scaling_grid(modern_english_sentences(), progress=progress),
                  codec=ScalingGrid)


