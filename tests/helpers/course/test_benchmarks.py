"""helpers.course.benchmarks: the fixed validation and report halves, and scores on one half."""
import numpy as np
import pytest

from helpers.course.benchmarks import SPLIT_SEED, benchmark_halves, evaluate_vectors
from helpers.course.data import load_analogies, load_word_similarity
from helpers.lib.metrics import analogy_accuracy, similarity_correlation


def test_the_halves_partition_every_benchmark_disjointly():
    h = benchmark_halves()
    v, r = h["validation"], h["report"]
    for key, name in (("wordsim", "wordsim353"), ("simlex", "simlex999")):
        full = load_word_similarity(name)
        a, b = getattr(v, key), getattr(r, key)
        assert len(a) == len(full) // 2 and len(a) + len(b) == len(full)
        assert sorted(a + b) == sorted(full)         # together exactly the full list
        assert not set(a) & set(b) or len(set(full)) < len(full)
    analogies = load_analogies()
    assert list(v.analogies) == list(r.analogies) == list(analogies)
    for cat, qs in analogies.items():
        a, b = v.analogies[cat], r.analogies[cat]
        assert len(a) == len(qs) // 2 and sorted(a + b) == sorted(qs), cat
        assert not set(a) & set(b), cat


def test_the_halves_are_stable_and_seeded():
    h = benchmark_halves()
    perm = np.random.default_rng(SPLIT_SEED).permutation(353)
    ws = load_word_similarity("wordsim353")
    assert h["validation"].wordsim == tuple(ws[j] for j in np.sort(perm[:176]))
    # pinned: a changed seed, loader or algorithm changes every number the lessons report
    assert SPLIT_SEED == 14 and [p[:2] for p in h["validation"].wordsim[:3]] == [
        ("tiger", "tiger"), ("computer", "keyboard"), ("computer", "internet")]
    assert benchmark_halves(15)["validation"].wordsim != h["validation"].wordsim
    assert benchmark_halves.__wrapped__(SPLIT_SEED)["report"].simlex == h["report"].simlex


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="seed must be an int, got str"):
        benchmark_halves("14")
    with pytest.raises(ValueError, match=r"half must be one of \('validation', 'report'\)"):
        evaluate_vectors(np.ones((2, 2)), ["a", "b"], "test")


def _toy_vectors(seed=0):
    """Vectors for every word of the benchmarks (random), so nothing is out of vocabulary."""
    h = benchmark_halves()
    words = sorted({w for half in h.values() for p in half.wordsim + half.simlex for w in p[:2]}
                   | {w for half in h.values() for qs in half.analogies.values()
                      for q in qs for w in q})
    return np.random.default_rng(seed).standard_normal((len(words), 20)).astype(np.float32), words


def test_evaluate_vectors_scores_one_half_as_the_metrics_do():
    W, words = _toy_vectors()
    h = benchmark_halves()["validation"]
    got = evaluate_vectors(W, words, "validation")
    assert got["wordsim"] == similarity_correlation(W, words, h.wordsim).rho
    assert got["analogy"] == analogy_accuracy(W, words, h.analogies).accuracy
    assert got["wordsim_oov"] == got["simlex_oov"] == got["analogy_oov"] == 0
    answered = sum(c[1] for c in got["analogy_by_category"].values())
    assert answered == sum(len(q) for q in h.analogies.values())
