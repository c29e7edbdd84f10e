"""The benchmark-split protocol (helpers.course.benchmarks) and the bootstrap helpers of helpers.lib.metrics."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from helpers.course.benchmarks import (
    SPLIT_SEED,
    benchmark_halves,
    evaluate_vectors,
    report_intervals,
)
from helpers.course.data import load_analogies, load_word_similarity
from helpers.lib.metrics import (
    Interval,
    analogy_accuracy,
    analogy_hits,
    analogy_rank,
    bootstrap_interval,
    similarity_correlation,
    similarity_interval,
)


def _key(item):
    return tuple(item)


def test_the_halves_partition_every_benchmark_disjointly():
    h = benchmark_halves()
    v, r = h["validation"], h["report"]
    for key, name in (("wordsim", "wordsim353"), ("simlex", "simlex999")):
        full = load_word_similarity(name)
        a, b = getattr(v, key), getattr(r, key)
        assert len(a) == len(full) // 2 and len(a) + len(b) == len(full)
        # as multisets: together exactly the full list, no item in both (by position)
        assert sorted(map(_key, a + b)) == sorted(map(_key, full))
        assert not set(map(_key, a)) & set(map(_key, b)) or len(set(map(_key, full))) < len(full)
    analogies = load_analogies()
    assert list(v.analogies) == list(r.analogies) == list(analogies)
    for cat, qs in analogies.items():
        a, b = v.analogies[cat], r.analogies[cat]
        assert len(a) == len(qs) // 2 and sorted(a + b) == sorted(qs), cat
        assert not set(a) & set(b), cat


def test_the_halves_are_stable_and_seeded():
    h = benchmark_halves()
    assert SPLIT_SEED == 14
    # fixed: the first validation pairs of the course's split (a changed seed or loader breaks this)
    rng = np.random.default_rng(14)
    perm = rng.permutation(353)
    ws = load_word_similarity("wordsim353")
    assert h["validation"].wordsim == tuple(ws[j] for j in np.sort(perm[:176]))
    assert benchmark_halves() is h                                 # cached: the same object
    # pinned: a changed seed, loader or algorithm changes every number the lessons report
    assert [p[:2] for p in h["validation"].wordsim[:3]] == [("tiger", "tiger"), ("computer", "keyboard"), ("computer", "internet")]
    other = benchmark_halves(15)
    assert other["validation"].wordsim != h["validation"].wordsim
    assert benchmark_halves.__wrapped__(SPLIT_SEED)["report"].simlex == h["report"].simlex   # recomputed: the same


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="seed must be an int, got str"):
        benchmark_halves("14")
    with pytest.raises(ValueError, match=r"half must be one of \('validation', 'report'\), got 'test'"):
        evaluate_vectors(np.ones((2, 2)), ["a", "b"], "test")


def _toy_vectors(seed=0):
    """Vectors for every word of the benchmarks (random), so nothing is out of vocabulary."""
    h = benchmark_halves()
    words = sorted({w for half in h.values() for p in half.wordsim + half.simlex for w in p[:2]}
                   | {w for half in h.values() for qs in half.analogies.values() for q in qs for w in q})
    return np.random.default_rng(seed).standard_normal((len(words), 20)).astype(np.float32), words


def test_evaluate_vectors_scores_one_half_as_the_metrics_do():
    W, words = _toy_vectors()
    h = benchmark_halves()["validation"]
    got = evaluate_vectors(W, words, "validation")
    assert got["wordsim"] == similarity_correlation(W, words, h.wordsim).rho
    assert got["analogy"] == analogy_accuracy(W, words, h.analogies).accuracy
    assert got["wordsim_oov"] == got["simlex_oov"] == got["analogy_oov"] == 0
    assert sum(c[1] for c in got["analogy_by_category"].values()) == sum(len(q) for q in h.analogies.values())


def test_bootstrap_interval_contains_the_estimate_and_is_seeded():
    x = np.random.default_rng(1).normal(2.0, 1.0, 400)
    iv = bootstrap_interval(np.mean, x, n_boot=500, seed=3)
    assert isinstance(iv, Interval) and iv.low < iv.estimate < iv.high and iv.estimate == pytest.approx(x.mean())
    # the 95 % interval of a mean is about +-1.96 standard errors
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert iv.high - iv.low == pytest.approx(2 * 1.96 * se, rel=0.2)
    assert bootstrap_interval(np.mean, x, n_boot=500, seed=3) == iv
    assert bootstrap_interval(np.mean, x, n_boot=500, seed=4) != iv
    narrow = bootstrap_interval(np.mean, x, n_boot=500, seed=3, level=0.5)
    assert iv.low < narrow.low < narrow.high < iv.high
    assert not Interval(0.1, 0.0, 0.2).overlaps(Interval(0.5, 0.3, 0.7))
    assert Interval(0.1, 0.0, 0.35).overlaps(Interval(0.5, 0.3, 0.7))


def test_bootstrap_keeps_pairs_together():
    x = np.arange(50.0)
    iv = bootstrap_interval(lambda a, b: float(spearmanr(a, b).statistic), x, 2 * x, n_boot=200)
    assert iv.estimate == pytest.approx(1) and iv.low == pytest.approx(1) and iv.high == pytest.approx(1)         # resampled pairs stay perfectly correlated


def test_bootstrap_bad_input():
    with pytest.raises(ValueError, match=r"the same length, got \[3, 2\]"):
        bootstrap_interval(np.mean, [1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2 items, got 1"):
        bootstrap_interval(np.mean, [1.0])
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\), got 95"):
        bootstrap_interval(np.mean, [1.0, 2.0], level=95)


def test_similarity_interval_and_analogy_hits_agree_with_the_point_estimates():
    W, words = _toy_vectors(2)
    h = benchmark_halves()["report"]
    iv = similarity_interval(W, words, h.wordsim, n_boot=200)
    assert iv.estimate == pytest.approx(similarity_correlation(W, words, h.wordsim).rho)
    assert iv.low < iv.estimate < iv.high and iv.n_items == len(h.wordsim)
    hits = analogy_hits(W, words, h.analogies)
    assert hits.mean() == pytest.approx(analogy_accuracy(W, words, h.analogies).accuracy)
    r = report_intervals(W, words, n_boot=100)
    assert r["wordsim"][0] == pytest.approx(iv.estimate) and r["analogy"][0] == pytest.approx(hits.mean())


def test_analogy_rank():
    words = ["man", "king", "woman", "queen", "apple"]
    W = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [0.9, 0.1, 0.0]], dtype=np.float32)
    assert analogy_rank(W, words, "man", "king", "woman", "queen") == 1
    assert analogy_rank(W, words, "man", "king", "woman", "apple") == 2
