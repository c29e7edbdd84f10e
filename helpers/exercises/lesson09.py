"""Checkers for lesson 09 (evaluating word vectors)."""
from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr

from helpers.exercises import ExerciseFailed, FunctionExercise, Mistake, expect_close, expect_equal

# a toy space: dimensions "female", "royal", "fruit"
WORDS = ["man", "woman", "king", "queen", "lord", "apple", "banana"]
VECTORS = np.array([[-1.0, 0.0, 0.1], [1.0, 0.0, 0.1], [-1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [-2.0, 1.0, 0.1],
                    [0.0, -0.2, 1.0], [0.1, -0.3, 1.0]])


# ----------------------------------------------------------------------------- 3CosAdd
def _three_cos_add_reference(vectors, words, a, b, c):
    E = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    idx = {w: i for i, w in enumerate(words)}
    scores = E @ (E[idx[b]] - E[idx[a]] + E[idx[c]])
    scores[[idx[a], idx[b], idx[c]]] = -np.inf
    return words[int(np.argmax(scores))]


def _king_queen(f):
    expect_equal(f(VECTORS, WORDS, "man", "woman", "king"), "queen", "man : woman :: king : ?")


def _excludes_queries(f):
    # woman is almost man, so b - a + c is closest to c (king) itself; the answer must not be a query word
    E = VECTORS.copy()
    E[WORDS.index("woman")] = E[WORDS.index("man")] + 1e-3
    got = f(E, WORDS, "man", "woman", "king")
    if got in ("man", "woman", "king"):
        raise ExerciseFailed(f"man : woman :: king : ? with woman almost equal to man: expected a word other "
                             f"than the three query words, got {got!r}")


def _normalises(f):
    E = VECTORS.copy()
    E[WORDS.index("banana")] = [10.0, 50.0, 15.0]   # long, and only roughly in the direction of queen
    expect_equal(f(E, WORDS, "man", "woman", "king"), "queen", "man : woman :: king : ? with a very long "
                 "'banana' vector [10, 50, 15] (its cosine with woman - man + king is 0.62, queen's 0.96)")


def _cosadd_variant(vectors, words, a, b, c, normalise=True, exclude=True, sign=1, as_index=False):
    E = vectors / np.linalg.norm(vectors, axis=1, keepdims=True) if normalise else vectors
    idx = {w: i for i, w in enumerate(words)}
    scores = E @ (sign * (E[idx[b]] - E[idx[a]]) + E[idx[c]])
    if exclude:
        scores[[idx[a], idx[b], idx[c]]] = -np.inf
    best = int(np.argmax(scores))
    return best if as_index else words[best]


check_three_cos_add = FunctionExercise(
    "3CosAdd", [_king_queen, _excludes_queries, _normalises], reference=_three_cos_add_reference,
    step="warm-up",
    mistakes=[
        Mistake("query_words_kept", "exclude the three query words a, b and c from the candidates (set their "
                "scores to -inf before the argmax): b - a + c is often closest to c itself.",
                like=lambda *args: _cosadd_variant(*args, exclude=False)),
        Mistake("not_normalised", "normalise every vector to unit length first: with raw dot products a long "
                "vector (a frequent word) wins by its length, not its direction.",
                like=lambda *args: _cosadd_variant(*args, normalise=False)),
        Mistake("wrong_direction", "a : b :: c : ? looks for b - a + c (woman - man + king), not a - b + c.",
                like=lambda *args: _cosadd_variant(*args, sign=-1)),
        Mistake("index_not_word", "return the word, words[i], not its row index i.",
                like=lambda *args: _cosadd_variant(*args, as_index=True)),
    ])


# ----------------------------------------------------------------------------- Spearman with OOV pairs
PAIRS = [("a", "b", 9.0), ("a", "c", 5.0), ("b", "c", 7.0), ("a", "z", 3.0), ("c", "d", 1.0)]
SIMS = {("a", "b"): 0.8, ("a", "c"): 0.1, ("b", "c"): 0.5, ("c", "d"): 0.2}


def _spearman_reference(sims, pairs):
    known = [(sims[(a, b)], s) for a, b, s in pairs if (a, b) in sims]
    n_oov = len(pairs) - len(known)
    if len(known) < 2:
        return None, n_oov
    return float(spearmanr([k[0] for k in known], [k[1] for k in known]).statistic), n_oov


def _values(f):
    rho, n_oov = f(SIMS, PAIRS)
    expect_equal(int(n_oov), 1, "number of out-of-vocabulary pairs")
    expect_close(rho, spearmanr([0.8, 0.1, 0.5, 0.2], [9.0, 5.0, 7.0, 1.0]).statistic,
                 "Spearman rho over the 4 known pairs")


def _ranks_only(f):
    s2 = dict(SIMS)
    s2[("a", "b")] = 100.0               # a monotone change: Spearman must not move
    rho1, _ = f(SIMS, PAIRS)
    rho2, _ = f(s2, PAIRS)
    expect_close(rho2, rho1, "rho after making the top cosine much larger (ranks unchanged)")


def _all_oov(f):
    rho, n_oov = f({}, PAIRS)
    if rho is not None:
        raise ExerciseFailed(f"with no known pair: expected rho None (as the task says), got {rho!r}")
    expect_equal(int(n_oov), 5, "number of OOV pairs when none is known")


def _pearson(sims, pairs):
    known = [(sims[(a, b)], s) for a, b, s in pairs if (a, b) in sims]
    if len(known) < 2:
        return None, len(pairs) - len(known)
    return float(pearsonr([k[0] for k in known], [k[1] for k in known]).statistic), len(pairs) - len(known)


def _oov_scored_zero(sims, pairs):
    n_oov = sum((a, b) not in sims for a, b, _ in pairs)
    if n_oov == len(pairs):
        return None, n_oov
    return float(spearmanr([sims.get((a, b), 0.0) for a, b, _ in pairs], [s for _, _, s in pairs]).statistic), n_oov


def _nan_for_none(sims, pairs):
    known = [(sims[(a, b)], s) for a, b, s in pairs if (a, b) in sims]
    if len(known) < 2:
        return float("nan"), len(pairs) - len(known)
    return _spearman_reference(sims, pairs)


def _known_counted(sims, pairs):
    rho, n_oov = _spearman_reference(sims, pairs)
    return rho, len(pairs) - n_oov


check_spearman_with_oov = FunctionExercise(
    "Spearman with OOV pairs", [_values, _ranks_only, _all_oov], reference=_spearman_reference, step="warm-up",
    mistakes=[
        Mistake("pearson", "Spearman's rho correlates the RANKS (scipy.stats.spearmanr); Pearson's r "
                "correlates the values and moves when one cosine grows.", like=_pearson),
        Mistake("oov_scored_zero", "leave the out-of-vocabulary pairs out of the correlation and count them; "
                "scoring them 0 invents a similarity.", like=_oov_scored_zero),
        Mistake("nan_for_none", "with no known pair return None for rho, as the task says: a NaN would slip "
                "silently into an average.", like=_nan_for_none),
        Mistake("known_counted", "n_oov counts the pairs NOT found in sims; you returned the number found.",
                like=_known_counted),
    ])

EXERCISES = [check_three_cos_add, check_spearman_with_oov]
