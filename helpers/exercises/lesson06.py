"""Checkers for lesson 06 (pointwise mutual information)."""
from __future__ import annotations

import warnings

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, run_checks
from helpers.lib.counting import pmi, pmi_table


def _reference_ppmi(counts, alpha):
    return np.maximum(pmi(np.asarray(counts, float), alpha=alpha), 0.0)


def check_ppmi(candidate) -> bool:
    """Exercise: ``candidate(counts, alpha) -> ppmi`` for a dense (W, C) count matrix:
    log base 2, context probabilities smoothed as count(c)^alpha / sum count^alpha,
    zero counts and negative PMI become 0, no NaN, same shape."""

    def independence(f):
        c = np.outer([1.0, 2.0, 3.0], [2.0, 5.0])
        expect_close(f(c.copy(), 1.0), np.zeros((3, 2)), "PPMI of an independent table "
                     "(counts = outer product of marginals) — every PMI is 0", atol=1e-9)

    def notes_like(f):
        c = np.array([[10.0, 1.0, 0.0], [2.0, 0.0, 4.0], [0.0, 3.0, 1.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = np.asarray(f(c.copy(), 1.0), float)
        if got.shape != c.shape:
            raise ExerciseFailed(f"expected shape {c.shape}, got {got.shape}")
        if np.isnan(got).any():
            raise ExerciseFailed("the result contains NaN: zero counts must give PPMI 0 "
                                 "(PMI = log 0 = -inf, then max(-inf, 0) = 0)")
        expect_close(got, _reference_ppmi(c, 1.0), "PPMI (alpha=1) of a 3x3 table with zeros")

    def smoothing(f):
        c = np.array([[10.0, 1.0, 0.0], [2.0, 0.0, 4.0], [0.0, 3.0, 1.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = np.asarray(f(c.copy(), 0.75), float)
        if np.allclose(got, _reference_ppmi(c, 1.0)) :
            raise ExerciseFailed("alpha=0.75 gave the same result as alpha=1: "
                                 "raise the context counts to the power alpha")
        expect_close(got, _reference_ppmi(c, 0.75), "PPMI with alpha=0.75")

    return run_checks("PPMI with context smoothing", candidate, [independence, notes_like, smoothing])


def check_heaven_hell(candidate) -> bool:
    """Exercise: ``candidate(n_xy, n_x, n_y, n) -> PMI in bits`` for one cell."""

    def heaven_hell(f):
        expect_close(f(3, 627, 780, 15871304), np.log2(3 * 15871304 / (627 * 780)),
                     "PMI(heaven, hell) from the notes' counts", rtol=1e-9)

    def table(f):
        ref = pmi_table([[1973]], ["state"], ["the"], [12786], [1047519], 15871304)
        expect_close(f(1973, 12786, 1047519, 15871304), ref["state", "the"], "PMI(state, the)")

    return run_checks("PMI of one cell", candidate, [heaven_hell, table])
