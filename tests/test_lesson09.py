"""Lesson 09's measurements: WEAT, neighbour overlap, antonyms, the comparison records and tie groups."""
import math

import numpy as np
import pytest

from helpers.lessons.lesson09 import (
    antonym_table,
    comparison_records,
    extrinsic_interval,
    neighbour_overlap,
    tie_groups,
)
from helpers.lib.metrics import weat
from helpers.lib.text import Vocab


def _space():
    # X words point towards A, Y words towards B (2-D), plus noise words
    words = ["x1", "x2", "x3", "y1", "y2", "y3", "a1", "a2", "b1", "b2"]
    E = np.array([[1, 0.1], [1, 0.2], [1, 0.3], [0.1, 1], [0.2, 1], [0.3, 1], [1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]])
    return E, words


def test_weat_effect_size_and_exact_p_value():
    E, words = _space()
    r = weat(E, words, ["x1", "x2", "x3"], ["y1", "y2", "y3"], ["a1", "a2"], ["b1", "b2"])
    assert r.exact and r.n_partitions == math.comb(6, 3) == 20
    assert r.effect_size > 1.5
    assert r.p_value == pytest.approx(1 / 20)        # only the observed split scores this high
    swapped = weat(E, words, ["y1", "y2", "y3"], ["x1", "x2", "x3"], ["a1", "a2"], ["b1", "b2"])
    assert swapped.effect_size == pytest.approx(-r.effect_size) and swapped.p_value == pytest.approx(1.0)


def test_weat_sampled_matches_exact_and_reports_missing():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    E = rng.normal(size=(30, 5))
    X, Y, A, B = words[:6], words[6:12], words[12:16], words[16:20]
    exact = weat(E, words, X, Y, A, B)
    sampled = weat(E, words, X, Y, A, B, max_exact=10, n_perm=20_000, seed=1)
    assert not sampled.exact and sampled.n_partitions == 20_001
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.02)
    r = weat(E, words, X + ["nope"], Y, A, B)
    assert r.missing == ["nope"] and r.effect_size == pytest.approx(exact.effect_size)
    with pytest.raises(ValueError, match="set A has 1 word"):
        weat(E, words, X, Y, ["w12", "zz"], B)


def _vocab(n=200, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    counts = np.sort(rng.integers(5, 5000, size=n))[::-1]
    return Vocab(words, counts, ()), rng.normal(size=(n, 8)) * np.log(counts)[:, None]


def test_neighbour_overlap_is_total_for_unit_vectors():
    vocab, W = _vocab()
    unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    rows = neighbour_overlap(unit, vocab, bands=((5, 1000), (1000, None)), k=5, per_band=20)
    assert all(r["overlap"] == pytest.approx(1.0) for r in rows)     # same length: the same neighbours
    rows = neighbour_overlap(W, vocab, bands=((5, 1000), (1000, None)), k=5, per_band=20)
    assert all(0 <= r["overlap"] < 1 for r in rows) and rows[0]["n_words"] == 20


def test_antonym_table_finds_pairs_in_either_order():
    vocab = Vocab(["hot", "cold", "warm", "tea"], [10, 10, 10, 10], ())
    W = np.array([[1.0, 0.1], [0.9, 0.2], [0.5, 0.5], [0.0, 1.0]])
    pairs = [("cold", "hot", 1.0), ("hot", "warm", 8.0), ("tea", "warm", 3.0), ("ice", "fire", 1.0)]
    rows = antonym_table(W, vocab, {"toy": pairs}, antonyms=[("hot", "cold")])
    assert len(rows) == 1 and rows[0]["pair"] == ("cold", "hot")
    assert rows[0]["human_pct"] == 0 and rows[0]["cosine_pct"] == pytest.approx(100 * 2 / 3)


def test_comparison_records_and_tie_groups():
    rec = lambda ws, acc: {"report_intervals": {"wordsim": ws}, "bbc_topic_accuracy": {"logreg": acc}}   # noqa: E731
    methods = {"a": (None, None, 10.0), "b": (None, None, 20.0)}
    shipped = {"a": rec([0.5, 0.4, 0.6], [0.9, 0.91, 0.92]), "b": rec([0.3, 0.25, 0.35], [0.95, 0.95, 0.96])}
    counts = {"c": {**rec([0.45, 0.35, 0.55], [0.8, 0.8, 0.8]), "build_seconds": 1.5}}
    recs = comparison_records(methods, shipped, counts)
    assert list(recs) == ["a", "b", "c"] and recs["c"]["seconds"] == 1.5 and recs["a"]["kind"] == "shipped"
    assert tie_groups(recs, lambda r: r["report_intervals"]["wordsim"]) == [["a", "c"], ["b"]]
    assert extrinsic_interval(recs["a"], "logreg") == pytest.approx((0.91, 0.9, 0.92))
    assert tie_groups(recs, lambda r: extrinsic_interval(r, "logreg")) == [["b"], ["a"], ["c"]]
    with pytest.raises(KeyError, match="no records shipped"):
        comparison_records({"z": (None, None, 1.0)}, shipped, counts)
