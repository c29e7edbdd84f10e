"""Checkers for lesson 01 (feed-forward networks)."""
from __future__ import annotations

import math

import numpy as np

from helpers.exercises import ExerciseFailed, FunctionExercise, Mistake, expect_close
from helpers.lib.layers import softmax as _softmax_reference

NOTES_PROBS = [[0.09003057, 0.24472847, 0.66524096]]     # softmax([1, 2, 3])


# ----------------------------------------------------------------------------- softmax
def _worked_example(f):
    expect_close(f(np.array([[1.0, 2.0, 3.0]])), NOTES_PROBS, "softmax([[1, 2, 3]])")


def _rows_sum_to_one(f):
    z = np.random.default_rng(0).standard_normal((4, 5))
    p = np.asarray(f(z))
    expect_close(p.sum(axis=1) if p.ndim == 2 else p, np.ones(4), "row sums of softmax(z) for a (4, 5) batch")
    expect_close(p, _softmax_reference(z), "softmax(z) for a random (4, 5) batch")


def _no_overflow(f):
    with np.errstate(over="ignore", invalid="ignore"):
        p = f(np.array([[1000.0, 1001.0, 1002.0]]))
    expect_close(p, NOTES_PROBS, "softmax([[1000, 1001, 1002]]) (the same as softmax([[1, 2, 3]]))")


def _rows_at_different_scales(f):
    z = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -999.0, -998.0]])
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        p = f(z)
    expect_close(p, NOTES_PROBS * 2, "softmax of the rows [1000, 1001, 1002] and [-1000, -999, -998] "
                 "(each row is shifted by its own maximum)")


def _shift_invariance(f):
    z = np.array([[0.5, -1.0, 2.0], [3.0, 3.0, 3.0]])
    expect_close(f(z + 7.0), f(z), "softmax(z + 7) vs softmax(z) (adding a constant must not matter)")


def _naive_softmax(z):
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _global_max_softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum(axis=1, keepdims=True)


def _batch_normalised_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum()


def _column_softmax(z):
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def _no_keepdims_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1)


check_softmax = FunctionExercise(
    "stable softmax",
    [_worked_example, _rows_sum_to_one, _no_overflow, _rows_at_different_scales, _shift_invariance],
    reference=_softmax_reference, step="warm-up",
    mistakes=[
        Mistake("no_max_shift", "np.exp(1000) overflows to inf, and inf / inf is nan: subtract each row's "
                "maximum before np.exp (softmax(z - c) = softmax(z) for any constant c).", like=_naive_softmax),
        Mistake("one_max_for_the_batch", "you subtract one maximum for the whole batch: the row "
                "[-1000, -999, -998] then underflows to exp(-2000) = 0 and 0 / 0 = nan. Shift each row by "
                "its own maximum: z.max(axis=1, keepdims=True).", like=_global_max_softmax),
        Mistake("normalised_over_the_batch", "you divide by the sum over the whole batch: each row must sum "
                "to 1 on its own — e.sum(axis=1, keepdims=True).", like=_batch_normalised_softmax),
        Mistake("over_columns", "axis=0 works down the columns, across the examples of the batch; softmax "
                "runs along each row (the K classes of one example): use axis=1.", like=_column_softmax),
        Mistake("no_keepdims", "e.sum(axis=1) has shape (N,), which NumPy lines up with the K columns, "
                "not with the rows: keep the summed axis with keepdims=True, shape (N, 1).",
                like=_no_keepdims_softmax),
    ])


# ----------------------------------------------------------------------------- cross-entropy
def _cross_entropy_reference(probs, targets):
    return float(-np.mean(np.log(probs[np.arange(len(targets)), targets])))


def _notes_example(f):
    got = f(np.array([[0.1, 0.6, 0.3]]), np.array([0]))
    expect_close(got, -math.log(0.1), "cross-entropy of [0.1, 0.6, 0.3] with true class C1 "
                 "(the notes' worked example, -log 0.1)")


def _batch_mean(f):
    p = np.array([[0.1, 0.6, 0.3], [0.2, 0.1, 0.7]])
    expect_close(f(p, np.array([0, 2])), (-math.log(0.1) - math.log(0.7)) / 2,
                 "mean cross-entropy of a batch of two (-log 0.1 and -log 0.7)")


def _random_batch(f):
    rng = np.random.default_rng(3)
    p = _softmax_reference(rng.standard_normal((6, 4)))
    t = rng.integers(0, 4, 6)
    got = f(p, t)
    if np.ndim(got) != 0:
        raise ExerciseFailed(f"expected a scalar (the mean over the batch), got an array of shape {np.shape(got)}")
    expect_close(got, _cross_entropy_reference(p, t), "mean cross-entropy of a random batch of 6, K = 4")


check_cross_entropy = FunctionExercise(
    "cross-entropy", [_notes_example, _batch_mean, _random_batch],
    reference=_cross_entropy_reference, step="warm-up",
    mistakes=[
        Mistake("sum_not_mean", "you return the sum over the batch; the loss is the mean, so that it does not "
                "grow with the batch size: divide by N (or use .mean()).",
                like=lambda p, t: float(-np.log(p[np.arange(len(t)), t]).sum())),
        Mistake("column_indexing", "probs[:, targets] picks whole columns, an (N, N) block; pick one entry per "
                "row with probs[np.arange(N), targets].",
                like=lambda p, t: float(-np.log(p[:, t]).mean())),
        Mistake("no_minus_sign", "the log of a probability is negative: the loss is -log p, a positive number.",
                like=lambda p, t: float(np.log(p[np.arange(len(t)), t]).mean())),
        Mistake("log_base_10", "cross-entropy uses the natural logarithm (np.log), not np.log10.",
                like=lambda p, t: float(-np.log10(p[np.arange(len(t)), t]).mean())),
        Mistake("per_example", "you return one loss per example; average them into one number (.mean()).",
                like=lambda p, t: -np.log(p[np.arange(len(t)), t])),
    ])

EXERCISES = [check_softmax, check_cross_entropy]
