"""Checkers for lesson 05 (TF-IDF and SVD)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, run_checks

# The notes' worked example: documents 425-427, words the/country/hell, |D| = 500.
NOTES_TF = np.array([[43, 5, 1], [24, 1, 0], [37, 0, 3]], dtype=float)
NOTES_DF = np.array([500, 14, 7], dtype=float)


def _reference_tfidf(tf, df, n_documents):
    return np.asarray(tf, float) * np.log2(n_documents / np.asarray(df, float))


def check_tfidf(candidate) -> bool:
    """Exercise: ``candidate(tf, df, n_documents) -> tfidf`` with raw tf and
    ``idf = log2(n_documents / df)``; tf is (D, V), df is (V,), the result is (D, V)."""

    def notes_example(f):
        got = f(NOTES_TF.copy(), NOTES_DF.copy(), 500)
        expect_close(got, _reference_tfidf(NOTES_TF, NOTES_DF, 500),
                     "tf-idf of the notes' example (|D|=500, log base 2)", rtol=1e-9)

    def common_word_is_zero(f):
        got = np.asarray(f(np.array([[7.0, 1.0], [3.0, 0.0]]), np.array([2.0, 1.0]), 2), float)
        if got.shape != (2, 2):
            raise ExerciseFailed(f"expected shape (2, 2), got {got.shape}")
        if not np.allclose(got[:, 0], 0):
            raise ExerciseFailed("a word that occurs in every document must get weight 0 "
                                 f"(idf = log2(|D|/|D|) = 0); got {got[:, 0]}")
        if not np.isclose(got[0, 1], 1.0):
            raise ExerciseFailed(f"tf=1 of a word in 1 of 2 documents: expected 1.0 "
                                 f"(log2(2/1)), got {got[0, 1]:.4f} — is the log base 2?")

    def random_matrix(f):
        rng = np.random.default_rng(5)
        tf = rng.poisson(1.0, size=(6, 5)).astype(float)
        df = rng.integers(1, 40, size=5).astype(float)
        expect_close(f(tf.copy(), df.copy(), 40), _reference_tfidf(tf, df, 40),
                     "tf-idf of a random 6x5 count matrix with |D|=40", rtol=1e-9)

    return run_checks("tf-idf", candidate, [notes_example, common_word_is_zero, random_matrix])


def check_energy(candidate) -> bool:
    """Exercise: ``candidate(singular_values, k) -> (energy, relative_error)`` where
    energy = sum of the top-k squared singular values / sum of all of them and
    relative_error = ||A - A_k||_F / ||A||_F."""

    def against_numpy(f):
        rng = np.random.default_rng(2)
        a = rng.normal(size=(9, 6))
        s = np.linalg.svd(a, compute_uv=False)
        u, s_full, vt = np.linalg.svd(a, full_matrices=False)
        for k in (1, 3, 6):
            ak = (u[:, :k] * s_full[:k]) @ vt[:k]
            energy, err = f(s.copy(), k)
            expect_close(energy, (s[:k] ** 2).sum() / (s ** 2).sum(), f"energy kept at k={k}")
            expect_close(err, np.linalg.norm(a - ak) / np.linalg.norm(a), f"relative error at k={k}",
                         atol=1e-7)

    def not_plain_sum(f):
        energy, _ = f(np.array([3.0, 1.0]), 1)
        if np.isclose(energy, 0.75):
            raise ExerciseFailed("energy is measured with *squared* singular values "
                                 "(||A||_F^2 = sum of s_i^2): expected 0.9, got 0.75")
        expect_close(energy, 0.9, "energy kept by s=[3, 1] at k=1")

    return run_checks("energy kept by a rank-k SVD", candidate, [not_plain_sum, against_numpy])
