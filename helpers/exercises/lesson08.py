"""Checkers for lesson 08 (GloVe and fastText)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import FunctionExercise, Mistake, expect_close, expect_equal
from helpers.lib.fasttext import char_ngrams
from helpers.lib.glove import glove_weight


# ----------------------------------------------------------------------------- GloVe's weighting function
def _worked_values(f):
    x = np.array([0.0, 1.0, 10.0, 50.0, 100.0])
    expected = np.array([0.0, 0.01 ** 0.75, 0.1 ** 0.75, 0.5 ** 0.75, 1.0])
    expect_close(f(x, 100.0, 0.75), expected, "f([0, 1, 10, 50, 100]) with x_max=100, alpha=0.75")


def _capped(f):
    expect_close(f(np.array([100.0, 250.0, 1e6]), 100.0, 0.75), [1.0, 1.0, 1.0],
                 "f([100, 250, 1e6]) with x_max=100 (f is 1 from x_max on)")


def _uses_arguments(f):
    expect_close(f(np.array([5.0, 10.0, 20.0]), 10.0, 0.5), [0.5 ** 0.5, 1.0, 1.0],
                 "f([5, 10, 20]) with x_max=10, alpha=0.5")


def _matrix(f):
    x = np.array([[1.0, 200.0], [30.0, 0.5]])
    expect_close(f(x, 100.0, 0.75), glove_weight(x, 100.0, 0.75), "f(x) for a (2, 2) matrix of counts")


def _if_on_an_array(x, x_max, alpha):
    if x < x_max:
        return (x / x_max) ** alpha
    return 1.0


check_glove_weight = FunctionExercise(
    "GloVe weighting f(x)", [_worked_values, _capped, _uses_arguments, _matrix], reference=glove_weight,
    step="warm-up",
    mistakes=[
        Mistake("not_capped", "f must be capped at 1 for x >= x_max (very frequent pairs must not dominate "
                "the loss): use np.where(x < x_max, (x / x_max) ** alpha, 1.0).",
                like=lambda x, x_max, alpha: (np.asarray(x, float) / x_max) ** alpha),
        Mistake("hard_coded", "use the arguments x_max and alpha; do not hard-code the paper's values "
                "x_max=100, alpha=0.75.", like=lambda x, x_max, alpha: glove_weight(x)),
        Mistake("zero_above_x_max", "above x_max f is 1 — frequent pairs count fully — not 0.",
                like=lambda x, x_max, alpha: np.where(np.asarray(x) < x_max, (np.asarray(x, float) / x_max) ** alpha, 0.0)),
        Mistake("python_if", "`if x < x_max` on an array raises 'the truth value of an array ... is ambiguous': "
                "choose element-wise with np.where (or np.minimum(x / x_max, 1) ** alpha).", like=_if_on_an_array),
    ])


# ----------------------------------------------------------------------------- fastText's character n-grams
def _where(f):
    expect_equal(list(f("where", 3)), ["<wh", "whe", "her", "ere", "re>"], "3-grams of 'where'")


def _four_grams(f):
    expect_equal(list(f("where", 4)), ["<whe", "wher", "here", "ere>"], "4-grams of 'where'")


def _repeats(f):
    expect_equal(list(f("banana", 3)), ["<ba", "ban", "ana", "nan", "ana", "na>"],
                 "3-grams of 'banana' (the repeated 'ana' is listed twice)")


def _short_word(f):
    expect_equal(list(f("a", 3)), ["<a>"], "3-grams of 'a'")
    expect_equal(list(f("a", 4)), [], "4-grams of 'a' (the marked word '<a>' is shorter than 4)")


def _ngrams_reference(word, n):
    return char_ngrams(word, n, n)


check_char_ngrams = FunctionExercise(
    "character n-grams", [_where, _four_grams, _repeats, _short_word], reference=_ngrams_reference,
    step="warm-up",
    mistakes=[
        Mistake("no_markers", "add the boundary markers before cutting: the n-grams of '<where>', so that "
                "'<wh' (a prefix) differs from 'wh' inside a word.",
                like=lambda word, n: [word[i:i + n] for i in range(len(word) - n + 1)]),
        Mistake("repeats_dropped", "keep repeated n-grams: 'banana' has 'ana' twice, and fastText adds its "
                "vector twice.", like=lambda word, n: list(dict.fromkeys(char_ngrams(word, n, n)))),
        Mistake("last_one_missing", "the last n-gram starts at len(w) - n: range(len(w) - n + 1), "
                "so that 're>' is included.",
                like=lambda word, n: [("<" + word + ">")[i:i + n] for i in range(len("<" + word + ">") - n)]),
        Mistake("whole_word_added", "return only the n-grams: fastText adds the whole word '<where>' as a "
                "separate feature, not as one of its n-grams.",
                like=lambda word, n: char_ngrams(word, n, n, include_word=True)),
    ])

EXERCISES = [check_glove_weight, check_char_ngrams]
