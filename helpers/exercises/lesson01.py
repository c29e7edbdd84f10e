"""Checkers for lesson 01 (feed-forward networks)."""
from __future__ import annotations

import math

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, run_checks


def _softmax_checks():
    def worked_example(f):
        p = f(np.array([[1.0, 2.0, 3.0]]))
        expect_close(p, [[0.09003057, 0.24472847, 0.66524096]], "softmax([[1, 2, 3]])", rtol=1e-6)

    def rows_sum_to_one(f):
        z = np.random.default_rng(0).standard_normal((4, 5))
        expect_close(f(z).sum(axis=1), np.ones(4), "row sums of softmax(z) for a (4, 5) batch")

    def no_overflow(f):
        with np.errstate(over="ignore", invalid="ignore"):
            p = f(np.array([[1000.0, 1001.0, 1002.0]]))
        if not np.all(np.isfinite(p)):
            raise ExerciseFailed("softmax([[1000, 1001, 1002]]): expected finite probabilities, got "
                                 f"{p} — subtract each row's maximum before exp()")
        expect_close(p, [[0.09003057, 0.24472847, 0.66524096]], "softmax([[1000, 1001, 1002]])", rtol=1e-6)

    def shift_invariance(f):
        z = np.array([[0.5, -1.0, 2.0], [3.0, 3.0, 3.0]])
        expect_close(f(z + 7.0), f(z), "softmax(z + 7) vs softmax(z) (adding a constant must not matter)")

    return [worked_example, rows_sum_to_one, no_overflow, shift_invariance]


def check_softmax(softmax) -> bool:
    """``softmax(z)``: z (N, K) -> probabilities (N, K), row-wise, numerically stable."""
    return run_checks("stable softmax", softmax, _softmax_checks())


def check_cross_entropy(cross_entropy) -> bool:
    """``cross_entropy(probs, targets)``: probs (N, K), targets (N,) int -> mean -log p."""

    def notes_example(f):
        got = f(np.array([[0.1, 0.6, 0.3]]), np.array([0]))
        expect_close(got, -math.log(0.1), "cross-entropy of [0.1, 0.6, 0.3] with true class C1 "
                     "(the notes' worked example, -log 0.1)")

    def batch_mean(f):
        p = np.array([[0.1, 0.6, 0.3], [0.2, 0.1, 0.7]])
        expect_close(f(p, np.array([0, 2])), (-math.log(0.1) - math.log(0.7)) / 2,
                     "mean cross-entropy of a batch of two (-log 0.1 and -log 0.7)")

    def scalar(f):
        got = f(np.array([[0.5, 0.5]]), np.array([1]))
        if np.ndim(got) != 0:
            raise ExerciseFailed(f"expected a scalar (the mean over the batch), got an array of shape {np.shape(got)}")

    return run_checks("cross-entropy", cross_entropy, [notes_example, batch_mean, scalar])
