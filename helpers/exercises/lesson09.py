"""Checkers for lesson 09 (evaluating word vectors)."""
from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from helpers.exercises import ExerciseFailed, expect_close, expect_equal, run_checks


def _toy_space():
    words = ["man", "woman", "king", "queen", "apple", "banana"]
    E = np.array([[1.0, 0.0, 0.1], [1.0, 1.0, 0.1], [0.1, 0.0, 1.0], [0.1, 1.0, 1.0],
                  [-1.0, 0.2, -0.3], [-1.0, 0.3, -0.2]])
    return E, words


def check_three_cos_add(candidate) -> bool:
    """``candidate(vectors (V, D), words list, a, b, c) -> word``: the answer to
    a : b :: c : ? by 3CosAdd on unit-length vectors, never one of a, b, c."""
    E, words = _toy_space()

    def king_queen(f):
        expect_equal(f(E, words, "man", "woman", "king"), "queen", "man : woman :: king : ?")

    def excludes_queries(f):
        # b - a + c is closest to c itself here; the answer must not be a query word
        E2 = E.copy()
        E2[words.index("woman")] = E2[words.index("man")] + 1e-3
        got = f(E2, words, "man", "woman", "king")
        if got in ("man", "woman", "king"):
            raise ExerciseFailed(f"the answer {got!r} is one of the query words; exclude a, b and c")

    def normalises(f):
        E3 = E.copy()
        E3[words.index("banana")] *= 50      # a long vector must not win by its length
        expect_equal(f(E3, words, "man", "woman", "king"), "queen", "with a very long 'banana' vector")

    return run_checks("3CosAdd", candidate, [king_queen, excludes_queries, normalises])


def check_spearman_with_oov(candidate) -> bool:
    """``candidate(sims dict {(w1, w2): cosine}, pairs [(w1, w2, human)]) -> (rho, n_oov)``:
    Spearman correlation over the pairs that have a cosine; the others are counted."""
    pairs = [("a", "b", 9.0), ("a", "c", 5.0), ("b", "c", 7.0), ("a", "z", 3.0), ("c", "d", 1.0)]
    sims = {("a", "b"): 0.8, ("a", "c"): 0.1, ("b", "c"): 0.5, ("c", "d"): 0.2}

    def values(f):
        rho, n_oov = f(sims, pairs)
        expect_equal(int(n_oov), 1, "number of out-of-vocabulary pairs")
        exp = spearmanr([0.8, 0.1, 0.5, 0.2], [9.0, 5.0, 7.0, 1.0]).statistic
        expect_close(rho, exp, "Spearman rho over the 4 known pairs")

    def rank_not_pearson(f):
        s2 = dict(sims)
        s2[("a", "b")] = 100.0               # a monotone change: Spearman must not move
        rho1, _ = f(sims, pairs)
        rho2, _ = f(s2, pairs)
        expect_close(rho2, rho1, "rho after making the top cosine much larger (ranks unchanged)")

    def all_oov(f):
        rho, n_oov = f({}, pairs)
        if rho is not None and not (isinstance(rho, float) and np.isnan(rho)):
            raise ExerciseFailed(f"with no known pair rho must be None (or NaN), got {rho!r}")
        expect_equal(int(n_oov), 5, "number of OOV pairs when none is known")

    return run_checks("Spearman with OOV pairs", candidate, [values, rank_not_pearson, all_oov])
