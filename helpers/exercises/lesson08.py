"""Checkers for lesson 08 (GloVe and fastText)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, expect_equal, run_checks


def check_glove_weight(candidate) -> bool:
    """``candidate(x (array of counts), x_max, alpha) -> f(x)``: GloVe's weighting function
    f(x) = (x / x_max)^alpha for x < x_max, else 1 (element-wise, same shape as x)."""
    def worked_values(f):
        x = np.array([0.0, 1.0, 10.0, 50.0, 100.0])
        expected = np.array([0.0, 0.01 ** 0.75, 0.1 ** 0.75, 0.5 ** 0.75, 1.0])
        expect_close(f(x, 100.0, 0.75), expected, "f([0, 1, 10, 50, 100]) with x_max=100, alpha=0.75")

    def capped(f):
        got = np.asarray(f(np.array([100.0, 250.0, 1e6]), 100.0, 0.75), dtype=float)
        if np.any(got > 1 + 1e-12):
            raise ExerciseFailed(f"f must be capped at 1 for x >= x_max, got {np.round(got, 4)} for "
                                 "x = [100, 250, 1e6]: use 1 where x >= x_max")
        expect_close(got, [1.0, 1.0, 1.0], "f(x) for x >= x_max")

    def uses_arguments(f):
        got = f(np.array([5.0, 10.0, 20.0]), 10.0, 0.5)
        expect_close(got, [0.5 ** 0.5, 1.0, 1.0], "f([5, 10, 20]) with x_max=10, alpha=0.5 "
                     "(do not hard-code x_max=100 or alpha=0.75)")

    def shape(f):
        x = np.array([[1.0, 200.0], [30.0, 0.5]])
        expect_equal(np.shape(f(x, 100.0, 0.75)), (2, 2), "shape of f(x) for a (2, 2) matrix of counts")

    return run_checks("GloVe weighting f(x)", candidate, [worked_values, capped, uses_arguments, shape])


def check_char_ngrams(candidate) -> bool:
    """``candidate(word, n) -> list[str]``: the character n-grams of ``'<' + word + '>'``
    (boundary markers added), left to right, repeats kept."""
    def where(f):
        got = list(f("where", 3))
        if got and not got[0].startswith("<"):
            raise ExerciseFailed(f"expected the first 3-gram of 'where' to be '<wh', got {got[0]!r}: "
                                 "add the boundary markers '<' and '>' before cutting")
        expect_equal(got, ["<wh", "whe", "her", "ere", "re>"], "3-grams of 'where'")

    def four_grams(f):
        expect_equal(list(f("where", 4)), ["<whe", "wher", "here", "ere>"], "4-grams of 'where'")

    def repeats(f):
        expect_equal(list(f("banana", 3)), ["<ba", "ban", "ana", "nan", "ana", "na>"],
                     "3-grams of 'banana' (the repeated 'ana' is listed twice)")

    def short_word(f):
        expect_equal(list(f("a", 3)), ["<a>"], "3-grams of 'a'")
        expect_equal(list(f("a", 4)), [], "4-grams of 'a' (the marked word '<a>' is shorter than 4)")

    return run_checks("character n-grams", candidate, [where, four_grams, repeats, short_word])
