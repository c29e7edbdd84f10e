"""The word-vector benchmarks in two fixed seeded halves: settings are chosen on **validation**,
lessons report on **report**; an item with an unknown word is skipped and counted."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from helpers.course.data import load_analogies, load_word_similarity
from helpers.lib.metrics import analogy_accuracy, similarity_correlation, vocab_maps
from helpers.lib.stats import spearman

SPLIT_SEED = 14
HALVES = ("validation", "report")


@dataclass(frozen=True)
class BenchmarkHalf:
    """One half of the three benchmarks: ``wordsim`` and ``simlex`` [(w1, w2, score)],
    ``analogies`` {category: [(a, b, c, d)]} (all 14 categories, in the file's order)."""

    name: str
    wordsim: tuple
    simlex: tuple
    analogies: dict


def _halve(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    perm = rng.permutation(n)
    return np.sort(perm[: n // 2]), np.sort(perm[n // 2:])


@lru_cache(maxsize=4)
def benchmark_halves(seed: int = SPLIT_SEED) -> dict[str, BenchmarkHalf]:
    """{'validation': BenchmarkHalf, 'report': BenchmarkHalf}: the seeded, disjoint halves."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
    out = {h: {} for h in HALVES}
    for i, (key, name) in enumerate((("wordsim", "wordsim353"), ("simlex", "simlex999"))):
        pairs = load_word_similarity(name)
        for h, idx in zip(HALVES, _halve(len(pairs), np.random.default_rng(seed + i)), strict=True):
            out[h][key] = tuple(pairs[j] for j in idx)
    for h in HALVES:
        out[h]["analogies"] = {}
    for c, (cat, qs) in enumerate(load_analogies().items()):
        halves = _halve(len(qs), np.random.default_rng(seed + 2 + c))
        for h, idx in zip(HALVES, halves, strict=True):
            out[h]["analogies"][cat] = [qs[j] for j in idx]
    return {h: BenchmarkHalf(h, **parts) for h, parts in out.items()}


def evaluate_vectors(vectors, vocab, half: str = "validation", analogies: bool = True) -> dict:
    """Scores of ``vectors`` (V, D) on one half: {'wordsim', 'simlex' (ρ), 'wordsim_oov',
    'simlex_oov'}, with ``analogies`` also 'analogy' (3CosAdd), '_semantic', '_syntactic', '_oov'
    and 'analogy_by_category' {category: [correct, answered, skipped]}."""
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, got {half!r}")
    h = benchmark_halves()[half]
    out = {}
    for key in ("wordsim", "simlex"):
        r = similarity_correlation(vectors, vocab, getattr(h, key), f"{key} ({half} half)")
        out[key], out[f"{key}_oov"] = r.rho, r.n_oov
    if analogies:
        a = analogy_accuracy(vectors, vocab, h.analogies, "add")
        out.update(analogy=a.accuracy, analogy_semantic=a.subset_accuracy(False),
                   analogy_syntactic=a.subset_accuracy(True), analogy_oov=a.oov,
                   analogy_by_category={k: list(v) for k, v in a.per_category.items()})
    return out


def count_row_cosines(M, vocab, pairs) -> tuple[np.ndarray, np.ndarray]:
    """(cosines (n,), human scores (n,)) between rows of a sparse (V, V) matrix for the ``pairs``
    [(word, word, score)] whose words are in ``vocab`` (lessons 07-08: count rows as vectors)."""
    stoi, _ = vocab_maps(vocab)
    M = sp.csr_matrix(M)
    norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
    cos, gold = [], []
    for a, b, score in pairs:
        if a in stoi and b in stoi:
            i, j = stoi[a], stoi[b]
            cos.append(float(M[i].multiply(M[j]).sum()) / max(norms[i] * norms[j], 1e-12))
            gold.append(score)
    return np.array(cos), np.array(gold, dtype=np.float64)


def count_rows_rho(M, vocab, pairs) -> float:
    """Spearman ρ of :func:`count_row_cosines` with the human scores (lessons 07-08)."""
    return spearman(*count_row_cosines(M, vocab, pairs))
