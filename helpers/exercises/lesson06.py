"""Checkers for lesson 06 (pointwise mutual information)."""
from __future__ import annotations

import warnings

import numpy as np

from helpers.exercises import ExerciseFailed, FunctionExercise, Mistake, expect_close
from helpers.lib.counting import pmi, pmi_table

# a 3x3 table with zero counts; no row or column is empty
TABLE = np.array([[10.0, 1.0, 0.0], [2.0, 0.0, 4.0], [0.0, 3.0, 1.0]])


# ----------------------------------------------------------------------------- one PMI cell
def _pmi_cell_reference(n_xy, n_x, n_y, n):
    return float(np.log2(n_xy * n / (n_x * n_y)))


def _heaven_hell(f):
    expect_close(f(3, 627, 780, 15871304), np.log2(3 * 15871304 / (627 * 780)),
                 "PMI(heaven, hell) from the notes' counts (n_xy=3, n_x=627, n_y=780, n=15,871,304)", rtol=1e-9)


def _state_the(f):
    ref = pmi_table([[1973]], ["state"], ["the"], [12786], [1047519], 15871304)
    expect_close(f(1973, 12786, 1047519, 15871304), ref["state", "the"],
                 "PMI(state, the) (n_xy=1973, n_x=12,786, n_y=1,047,519, n=15,871,304)", rtol=1e-9)


check_heaven_hell = FunctionExercise(
    "PMI of one cell", [_heaven_hell, _state_the], reference=_pmi_cell_reference, step="warm-up",
    mistakes=[
        Mistake("natural_log", "PMI is measured in bits here: np.log2, not np.log.",
                like=lambda n_xy, n_x, n_y, n: np.log(n_xy * n / (n_x * n_y))),
        Mistake("counts_not_probabilities", "turn counts into probabilities first: P(x, y) / (P(x) P(y)) = "
                "(n_xy / n) / ((n_x / n)(n_y / n)) = n_xy · n / (n_x · n_y) — you left out the total n.",
                like=lambda n_xy, n_x, n_y, n: np.log2(n_xy / (n_x * n_y))),
        Mistake("ratio_upside_down", "PMI = log2 P(x, y) / (P(x) P(y)): the joint probability goes on top "
                "(a pair seen more often than chance gets a positive PMI).",
                like=lambda n_xy, n_x, n_y, n: np.log2(n_x * n_y / (n_xy * n))),
        Mistake("floor_division", "// rounds the ratio down to a whole number before the log; divide with /.",
                like=lambda n_xy, n_x, n_y, n: np.log2(n_xy * n // (n_x * n_y))),
    ])


# ----------------------------------------------------------------------------- PPMI with context smoothing
def _ppmi_reference(counts, alpha):
    return np.maximum(pmi(np.asarray(counts, float), alpha=alpha), 0.0)


def _quiet(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


def _independence(f):
    c = np.outer([1.0, 2.0, 3.0], [2.0, 5.0])
    expect_close(_quiet(f, c.copy(), 1.0), np.zeros((3, 2)), "PPMI of an independent table "
                 "(counts = outer product of marginals) — every PMI is 0", atol=1e-9)


def _table_with_zeros(f):
    got = np.asarray(_quiet(f, TABLE.copy(), 1.0), float)
    if got.shape == TABLE.shape and np.isnan(got).any():
        raise ExerciseFailed(f"PPMI (alpha=1) of a 3x3 table with zeros: expected no NaN, got "
                             f"{np.array2string(got, precision=3)} (a zero count gives PMI = log 0 = -inf, "
                             "and PPMI = max(-inf, 0) = 0)")
    expect_close(got, _ppmi_reference(TABLE, 1.0), "PPMI (alpha=1) of a 3x3 table with zeros")


def _smoothing(f):
    expect_close(_quiet(f, TABLE.copy(), 0.75), _ppmi_reference(TABLE, 0.75),
                 "PPMI with alpha=0.75 (context counts raised to 0.75 and renormalised)")


def _ppmi_variant(counts, alpha, row_alpha=1.0, renormalise=True, clip=True, log=np.log2, mask_by_product=False):
    """PPMI with one thing changed: the wrong answers below."""
    counts = np.asarray(counts, float)
    n = counts.sum()
    rows, cols = counts.sum(axis=1) ** row_alpha, counts.sum(axis=0) ** alpha
    p_w = rows / (rows.sum() if row_alpha != 1.0 else n)
    p_c = cols / (cols.sum() if renormalise else n)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = log((counts / n) / (p_w[:, None] * p_c[None, :]))
    if mask_by_product:
        values = values * (counts > 0)
    elif not clip:
        return np.where(counts > 0, values, 0.0)
    return np.maximum(values, 0.0)


check_ppmi = FunctionExercise(
    "PPMI with context smoothing", [_independence, _table_with_zeros, _smoothing],
    reference=_ppmi_reference, step="core",
    mistakes=[
        Mistake("alpha_ignored", "alpha=0.75 gave the same result as alpha=1: raise the context counts to the "
                "power alpha before normalising them.", like=lambda counts, alpha: _ppmi_variant(counts, 1.0)),
        Mistake("rows_smoothed_too", "only the context distribution is smoothed: P(w) stays count(w) / N; "
                "raise only the column sums to the power alpha.",
                like=lambda counts, alpha: _ppmi_variant(counts, alpha, row_alpha=alpha)),
        Mistake("not_renormalised", "after raising the context counts to the power alpha, divide by their "
                "sum, sum over c' of count(c')^alpha, not by N: P_alpha must still sum to 1.",
                like=lambda counts, alpha: _ppmi_variant(counts, alpha, renormalise=False)),
        Mistake("negatives_kept", "PPMI keeps only the positive part: max(PMI, 0) turns the negative values "
                "into 0 too.", like=lambda counts, alpha: _ppmi_variant(counts, alpha, clip=False)),
        Mistake("natural_log", "PMI is measured in bits here: np.log2, not np.log.",
                like=lambda counts, alpha: _ppmi_variant(counts, alpha, log=np.log)),
        Mistake("mask_by_product", "-inf * 0 is nan: set the zero-count cells with np.where(counts > 0, "
                "pmi, 0) instead of multiplying by a mask.",
                like=lambda counts, alpha: _ppmi_variant(counts, alpha, mask_by_product=True)),
    ])

EXERCISES = [check_heaven_hell, check_ppmi]
