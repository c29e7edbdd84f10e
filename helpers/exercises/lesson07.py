"""Checkers for lesson 07 (the embedding layer and word2vec)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, expect_equal, run_checks


def check_embedding_backward(candidate) -> bool:
    """``candidate(ids (N,) int, dout (N, D), vocab_size) -> dW (vocab_size, D)``: the
    gradient of an embedding lookup, which must add up the rows of repeated ids."""
    def shapes(f):
        dW = f(np.array([1, 3]), np.ones((2, 4)), 5)
        expect_equal(np.shape(dW), (5, 4), "shape of dW for vocab_size=5, D=4")

    def no_repeats(f):
        dout = np.arange(6.0).reshape(3, 2)
        exp = np.zeros((4, 2))
        exp[[2, 0, 3]] = dout
        expect_close(f(np.array([2, 0, 3]), dout, 4), exp, "dW when every id appears once")

    def repeats(f):
        # the notes' example: ids [0, 2, 0, 4]; row 0 receives the sum of two rows of dout
        dout = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
        exp = np.zeros((5, 2))
        exp[0], exp[2], exp[4] = [6.0, 8.0], [3.0, 4.0], [7.0, 8.0]
        got = f(np.array([0, 2, 0, 4]), dout, 5)
        if np.allclose(np.asarray(got)[0], [5.0, 6.0]):
            raise ExerciseFailed("row 0 holds only the last gradient [5, 6]: repeated ids must be "
                                 "summed (np.add.at), not assigned")
        expect_close(got, exp, "dW for the repeated ids [0, 2, 0, 4]")

    return run_checks("embedding backward", candidate, [shapes, no_repeats, repeats])


def check_noise_distribution(candidate) -> bool:
    """``candidate(counts (V,), power) -> probabilities (V,)``: P(w)^power, renormalised."""
    def notes_example(f):
        got = f(np.array([0.8, 0.15, 0.05]), 0.75)
        expect_close(np.sum(got), 1.0, "sum of the probabilities")
        expect_close(np.round(got, 3), [0.709, 0.202, 0.089], "the notes' example rounded to 3 decimals")

    def counts_not_probs(f):
        got = f(np.array([30, 10, 0, 60]), 0.75)
        p = np.array([0.3, 0.1, 0.0, 0.6]) ** 0.75
        expect_close(got, p / p.sum(), "probabilities from raw counts [30, 10, 0, 60]")

    def power_one(f):
        expect_close(f(np.array([1.0, 3.0]), 1.0), [0.25, 0.75], "power 1 (plain unigram)")

    return run_checks("noise distribution", candidate, [notes_example, counts_not_probs, power_one])
