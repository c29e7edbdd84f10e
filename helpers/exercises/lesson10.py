"""Checkers for lesson 10 (contextual representations)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import ExerciseFailed, expect_equal, run_checks
from helpers.lib.mlm import apply_80_10_10

MASK_ID = 4


def _call_rule(fn, ids, chosen, u, random_ids):
    before = ids.copy()
    out = fn(ids, chosen, u, random_ids, MASK_ID)
    if not np.array_equal(ids, before):
        raise ExerciseFailed("your function changed its input `ids` in place; work on a copy "
                             "(`out = ids.copy()`) so the original tokens stay available as labels")
    return np.asarray(out)


def _rule_worked_example(fn):
    ids = np.array([10, 11, 12, 13, 14, 15])
    chosen = np.array([True, True, True, False, True, True])
    u = np.array([0.30, 0.85, 0.95, 0.05, 0.80, 0.90])
    random_ids = np.array([50, 51, 52, 53, 54, 55])
    # u < 0.8 -> [MASK]; 0.8 <= u < 0.9 -> random; u >= 0.9 -> unchanged; unchosen -> unchanged
    expect_equal(_call_rule(fn, ids, chosen, u, random_ids), np.array([MASK_ID, 51, 12, 13, 54, 15]),
                 "tokens after the 80/10/10 rule for u = [0.30, 0.85, 0.95, 0.05 (not chosen), "
                 "0.80, 0.90]")


def _rule_unchosen_untouched(fn):
    ids = np.arange(20, 32).reshape(3, 4)
    chosen = np.zeros_like(ids, dtype=bool)
    u = np.full(ids.shape, 0.1)
    out = _call_rule(fn, ids, chosen, u, np.full(ids.shape, 99))
    expect_equal(out, ids, "with no position chosen (u = 0.1 everywhere) nothing may change")


def _rule_matches_reference(fn):
    rng = np.random.default_rng(9)
    ids = rng.integers(5, 1000, size=(8, 30))
    chosen = rng.random(ids.shape) < 0.15
    u = rng.random(ids.shape)
    random_ids = rng.integers(5, 1000, size=ids.shape)
    expect_equal(_call_rule(fn, ids, chosen, u, random_ids), apply_80_10_10(ids, chosen, u, random_ids, MASK_ID),
                 "tokens of a random (8, 30) batch")


def check_80_10_10(fn) -> bool:
    """Check ``fn(ids, chosen, u, random_ids, mask_id) -> new ids`` (BERT's replacement rule)."""
    return run_checks("80/10/10 replacement rule", fn,
                      [_rule_worked_example, _rule_unchosen_untouched, _rule_matches_reference])


def _sense_by_cosine(fn):
    # the 'money' vectors are long, the 'river' ones short: a dot product would pick 'money'
    support = np.array([[10.0, 1.0], [9.0, 2.0], [0.1, 1.0], [0.2, 0.9]])
    senses = ["money", "money", "river", "river"]
    got = fn(np.array([0.5, 3.0]), support, senses)
    expect_equal(got, "river", "sense of the query [0.5, 3.0] (compare directions: cosine, not dot product)")


def _sense_uses_centroids(fn):
    support = np.array([[1.0, 0.0], [-0.2, 1.0], [0.9, 0.5], [0.9, 0.6]])
    senses = ["a", "a", "b", "b"]
    # the nearest single example is [1, 0] ('a'), but the 'b' centroid is nearer than the 'a' centroid
    got = fn(np.array([1.0, 0.1]), support, senses)
    expect_equal(got, "b", "sense of [1.0, 0.1]: compare with each sense's centroid, not the nearest example")


def _sense_returns_label(fn):
    rng = np.random.default_rng(3)
    support = np.concatenate([rng.normal([5, 0, 0], 0.3, (4, 3)), rng.normal([0, 5, 0], 0.3, (4, 3))])
    senses = np.array(["finance"] * 4 + ["river"] * 4)
    got = fn(np.array([0.2, 4.0, 0.1]), support, senses)
    if not isinstance(got, str):
        raise ExerciseFailed(f"return the sense label as a str, got {type(got).__name__} {got!r}")
    expect_equal(got, "river", "sense of a query next to the 'river' examples")


def check_nearest_sense(fn) -> bool:
    """Check ``fn(query (d,), support (n, d), senses (n,)) -> sense label``."""
    return run_checks("nearest sense centroid", fn, [_sense_returns_label, _sense_by_cosine, _sense_uses_centroids])
