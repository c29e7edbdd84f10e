"""Checkers for lesson 05 (TF-IDF and SVD)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import FunctionExercise, Mistake, expect_close, expect_tuple

# The notes' worked example: documents 425-427, words the/country/hell, |D| = 500.
NOTES_TF = np.array([[43, 5, 1], [24, 1, 0], [37, 0, 3]], dtype=float)
NOTES_DF = np.array([500, 14, 7], dtype=float)


# ----------------------------------------------------------------------------- TF-IDF
def _tfidf_reference(tf, df, n_documents):
    return np.asarray(tf, float) * np.log2(n_documents / np.asarray(df, float))


def _notes_example(f):
    got = f(NOTES_TF.copy(), NOTES_DF.copy(), 500)
    expect_close(got, _tfidf_reference(NOTES_TF, NOTES_DF, 500),
                 "tf-idf of the notes' example (|D|=500, log base 2)", rtol=1e-9)


def _common_word_is_zero(f):
    tf, df = np.array([[7.0, 1.0], [3.0, 0.0]]), np.array([2.0, 1.0])
    expect_close(f(tf, df, 2), [[0.0, 1.0], [0.0, 0.0]],
                 "tf-idf of 2 documents: the word in both gets idf log2(2/2) = 0, the other log2(2/1) = 1")


def _random_matrix(f):
    rng = np.random.default_rng(5)
    tf = rng.poisson(1.0, size=(6, 5)).astype(float)
    df = rng.integers(1, 40, size=5).astype(float)
    expect_close(f(tf.copy(), df.copy(), 40), _tfidf_reference(tf, df, 40),
                 "tf-idf of a random 6x5 count matrix with |D|=40", rtol=1e-9)


check_tfidf = FunctionExercise(
    "tf-idf", [_notes_example, _common_word_is_zero, _random_matrix], reference=_tfidf_reference, step="warm-up",
    mistakes=[
        Mistake("natural_log", "the notes' idf is log2(|D| / df), in bits: use np.log2, not np.log.",
                like=lambda tf, df, n: tf * np.log(n / df)),
        Mistake("ratio_upside_down", "idf = log2(|D| / df): the number of documents over the document "
                "frequency, so that rare words weigh more (yours is negative).",
                like=lambda tf, df, n: tf * np.log2(df / n)),
        Mistake("smoothed_idf", "that is scikit-learn's smoothed idf, ln((1 + |D|) / (1 + df)) + 1; the notes "
                "use log2(|D| / df) without smoothing.",
                like=lambda tf, df, n: tf * (np.log((1 + n) / (1 + df)) + 1)),
        Mistake("relative_tf", "use the raw counts as the term frequency; you divided them by the document's "
                "length.", like=lambda tf, df, n: tf / tf.sum(axis=1, keepdims=True) * np.log2(n / df)),
    ])


# ----------------------------------------------------------------------------- energy kept by a rank-k SVD
def _energy_reference(singular_values, k):
    s2 = np.asarray(singular_values, float) ** 2
    kept = s2[:k].sum() / s2.sum()
    return kept, np.sqrt(1.0 - kept)


def _small_example(f):
    got = f(np.array([3.0, 1.0]), 1)
    expect_tuple(got, ("energy", "relative_error"))
    expect_close(got[0], 0.9, "energy kept by s=[3, 1] at k=1 (9 / (9 + 1))")
    expect_close(got[1], np.sqrt(0.1), "relative error of s=[3, 1] at k=1 (sqrt(1 / (9 + 1)))")


def _against_numpy(f):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(9, 6))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    for k in (1, 3, 6):
        ak = (u[:, :k] * s[:k]) @ vt[:k]
        got = f(s.copy(), k)
        expect_tuple(got, ("energy", "relative_error"))
        expect_close(got[0], (s[:k] ** 2).sum() / (s ** 2).sum(), f"energy kept at k={k} (a random 9x6 matrix)")
        expect_close(got[1], np.linalg.norm(a - ak) / np.linalg.norm(a),
                     f"relative error ||A - A_k||_F / ||A||_F at k={k} (a random 9x6 matrix)", atol=1e-7)


def _unsquared(s, k):
    e = np.sum(s[:k]) / np.sum(s)
    return e, np.sqrt(1 - e)


def _error_without_root(s, k):
    s2 = np.asarray(s, float) ** 2
    e = s2[:k].sum() / s2.sum()
    return e, 1 - e


def _error_from_the_kept_part(s, k):
    s2 = np.asarray(s, float) ** 2
    e = s2[:k].sum() / s2.sum()
    return e, np.sqrt(e)


def _one_too_many(s, k):
    s2 = np.asarray(s, float) ** 2
    e = s2[:k + 1].sum() / s2.sum()
    return e, np.sqrt(1 - e)


check_energy = FunctionExercise(
    "energy kept by a rank-k SVD", [_small_example, _against_numpy], reference=_energy_reference, step="warm-up",
    mistakes=[
        Mistake("unsquared", "energy is measured with *squared* singular values (||A||_F^2 = sum of s_i^2): "
                "s=[3, 1] keeps 9 / 10 at k=1, not 3 / 4.", like=_unsquared),
        Mistake("error_without_root", "||A - A_k||_F is the square root of the discarded squared singular "
                "values: relative error = sqrt(1 - energy), not 1 - energy.", like=_error_without_root),
        Mistake("error_from_the_kept_part", "the error comes from the singular values you drop, s[k:]: "
                "sqrt(1 - energy), not sqrt(energy).", like=_error_from_the_kept_part),
        Mistake("one_too_many", "the top k singular values are s[:k] (a slice stops before its end index); "
                "s[:k + 1] keeps k + 1 of them.", like=_one_too_many),
    ])

EXERCISES = [check_tfidf, check_energy]
