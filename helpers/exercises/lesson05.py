"""Checkers for lesson 05 (TF-IDF and SVD)."""
from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
import torch
from scipy.stats import pearsonr, spearmanr
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfTransformer, TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.preprocessing import normalize
from sklearn.utils.extmath import randomized_svd

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.lib.lowrank import fit_lowrank, lowrank_loss_grad, power_iteration
from helpers.lib.lsa import lsa_word_vectors, svd_vectors, tfidf, truncated_svd
from helpers.lib.metrics import nearest_neighbours, normalize_rows


# ----------------------------------------------------------------------------- TF-IDF by hand
def _tfidf_reference(tf, df, n_documents):
    return np.asarray(tf, float) * np.log2(n_documents / np.asarray(df, float))


def _tfidf_case(f, tf, df, n, what):
    expect_close(f(tf.copy(), df.copy(), n), _tfidf_reference(tf, df, n), what, rtol=1e-9)


def _worked_example(f):
    tf, df = np.array([[43.0, 5, 1], [24, 1, 0], [37, 0, 3]]), np.array([500.0, 14, 7])
    _tfidf_case(f, tf, df, 500, "tf-idf of the worked example (|D| = 500, log base 2)")


def _common_word_is_zero(f):
    _tfidf_case(f, np.array([[7.0, 1.0], [3.0, 0.0]]), np.array([2.0, 1.0]), 2,
                "tf-idf of 2 documents: the word in both gets idf log2(2/2) = 0, the other 1")


def _stored_entries(f):
    rng = np.random.default_rng(5)
    tf, df = rng.integers(1, 9, size=(1, 12)) * 1.0, rng.integers(1, 40, size=12) * 1.0
    _tfidf_case(f, tf, df, 40, "12 stored counts as one row, each with its document frequency")


check_tfidf = FunctionExercise(
    "tf-idf", [_worked_example, _common_word_is_zero, _stored_entries],
    reference=_tfidf_reference, step="warm-up",
    mistakes=[
        Mistake("natural_log", "the exercise's idf is log2(|D| / df), in bits: use np.log2.",
                like=lambda tf, df, n: tf * np.log(n / df)),
        Mistake("ratio_upside_down", "idf = log2(|D| / df): the number of documents over the "
                "document frequency, so that rare words weigh more (yours is negative).",
                like=lambda tf, df, n: tf * np.log2(df / n)),
        Mistake("smoothed_idf", "that is scikit-learn's smoothed idf, ln((1 + |D|) / (1 + df)) "
                "+ 1; the exercise asks for log2(|D| / df) without smoothing.",
                like=lambda tf, df, n: tf * (np.log((1 + n) / (1 + df)) + 1)),
        Mistake("relative_tf", "use the counts as the term frequency; you divided them by the "
                "document's length.",
                like=lambda tf, df, n: tf / tf.sum(axis=1, keepdims=True) * np.log2(n / df)),
    ],
    forbidden=(tfidf, TfidfTransformer, TfidfVectorizer))


# ----------------------------------------------------------------------------- power iteration
def _singular_pair(f, A, x0, n_steps, what, tol=1e-6):
    """Run f and compare (σ₁, u₁) with NumPy's SVD of A, u₁ up to its sign."""
    out = f(A, x0.copy(), n_steps)
    expect_tuple(out, ("sigma", "u"))
    u_ref, s_ref, _ = np.linalg.svd(A.toarray() if sp.issparse(A) else A)
    expect_close(out[0], s_ref[0], f"σ₁ of {what}", rtol=tol)
    u = np.asarray(out[1], float).ravel()
    expect_equal(u.shape, (A.shape[0],), f"shape of u₁ of {what} (one entry per row of A)")
    expect_close(u * np.sign(u @ u_ref[:, 0] or 1.0), u_ref[:, 0], f"u₁ of {what} (up to its sign)",
                 rtol=tol, atol=tol)


def _rotate_scale_rotate(f):
    def rotation(a):
        return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    A = rotation(0.9) @ np.diag([3.0, 1.0]) @ rotation(0.3).T
    _singular_pair(f, A, np.array([1.0, 0.5]), 50, "R(0.9) diag(3, 1) R(0.3)ᵀ, 50 steps")


def _random_matrix(f):
    A = np.random.default_rng(2).normal(size=(7, 4))
    _singular_pair(f, A, np.ones(4), 300, "a random 7 x 4 matrix, 300 steps from ones")


def _sparse_matrix(f):
    A = sp.random(40, 25, density=0.2, random_state=3, format="csr") + sp.eye(40, 25)
    _singular_pair(f, sp.csr_matrix(A), np.ones(25), 300, "a 40 x 25 sparse matrix, 300 steps")


def _power_variant(step=lambda A, v: A.T @ (A @ v), normalise=True, sigma=None, u=None):
    """Power iteration with one thing changed (the wrong answers below)."""
    def wrong(A, x0, n_steps):
        v = np.asarray(x0, float) / np.linalg.norm(x0)
        for _ in range(n_steps):
            v = step(A, v)
            v = v / np.linalg.norm(v) if normalise else v
        Av = A @ v
        return (np.linalg.norm(Av) if sigma is None else sigma(A, v),
                Av / np.linalg.norm(Av) if u is None else u(A, v))
    return wrong


check_power_iteration = FunctionExercise(
    "power iteration for σ₁ and u₁", [_rotate_scale_rotate, _random_matrix, _sparse_matrix],
    reference=power_iteration, step="core",
    mistakes=[
        Mistake("sigma_squared", "‖AᵀA v‖ is σ₁², not σ₁: AᵀA scales v₁ by σ₁ twice. Take "
                "σ₁ = ‖A v‖.",
                like=_power_variant(sigma=lambda A, v: np.linalg.norm(A.T @ (A @ v)))),
        Mistake("not_normalised", "scale v back to length 1 after every step: without it v grows "
                "like σ₁^(2t), and ‖A v‖ is no longer σ₁.", like=_power_variant(normalise=False)),
        Mistake("returned_v", "return u₁ = A v / σ₁, one entry per row of A; v is the right "
                "singular vector, one entry per column.", like=_power_variant(u=lambda A, v: v)),
        Mistake("u_not_unit", "divide A v by σ₁: u₁ is a unit vector.",
                like=_power_variant(u=lambda A, v: A @ v)),
        Mistake("multiplied_by_A_only", "repeat v ← Aᵀ(A v), not v ← A v: A maps columns to rows "
                "(and need not be square), while AᵀA stretches v₁ the most, by σ₁².",
                like=_power_variant(step=lambda A, v: A @ v)),
    ],
    forbidden=(truncated_svd, svd_vectors, lsa_word_vectors, fit_lowrank, np.linalg.svd,
               np.linalg.eig, np.linalg.eigh, scipy.linalg.svd, scipy.linalg.eigh,
               scipy.sparse.linalg.svds, scipy.sparse.linalg.eigsh, randomized_svd, TruncatedSVD))


# ----------------------------------------------------------------------------- u₁ and frequency
def _example_matrix():
    """A word-document matrix whose rows grow with the words' counts: 60 words, 80 documents."""
    rng = np.random.default_rng(4)
    counts = np.round(1000 / np.arange(1, 61) ** 1.1)
    A = rng.poisson(counts[:, None] / 80 * rng.uniform(0.5, 1.5, (60, 80)))
    return {"A": sp.csr_matrix(np.log1p(A)), "word_counts": counts}


def _u1_frequency(A=None, word_counts=None, measure=spearmanr):
    """Spearman's rho between |u₁| of A and the words' counts, over the words with a count > 0."""
    if A is None and word_counts is None:
        return _u1_frequency(**_example_matrix(), measure=measure)
    A = sp.csr_matrix(A, dtype=np.float64)
    counts = np.asarray(word_counts, np.float64).ravel()
    if counts.shape != (A.shape[0],) or A.nnz == 0 or min(A.shape) < 2:
        raise ValueError(f"A must be a non-empty (words, documents) matrix and word_counts hold "
                         f"one count per row; got {A.shape} and {counts.shape}")
    u1 = truncated_svd(A, 1, n_iter=20)[0][:, 0]
    seen = counts > 0
    return float(measure(np.abs(u1[seen]), counts[seen]).statistic)


check_first_direction = ExperimentExercise(
    "how much of u₁ is frequency", _u1_frequency, atol=0.005,
    explanation=("Right: the first direction orders the words by how often they occur, almost "
                 "exactly. The first dimension of LSA says how frequent a word is; what the words "
                 "are about sits in the directions after it."),
    example_context=_example_matrix(),
    mistakes=[
        Mistake("pearson", "that is Pearson's correlation, which the few very frequent words "
                "dominate; the exercise asks for Spearman's (scipy.stats.spearmanr).",
                like=lambda **context: _u1_frequency(**context, measure=pearsonr)),
        Mistake("ranks_not_counts", "correlate with the counts themselves: a frequency rank of 1 "
                "is the most frequent word, so ranks turn the sign around.",
                like=lambda **context: -_u1_frequency(**context)),
        Mistake("percent", "a correlation lies between -1 and 1: enter it, not a percentage.",
                when=lambda answer, **context: abs(float(answer)) > 1, example=98.0),
    ])


# ----------------------------------------------------------------------------- LSA cosines
def _unit(a):
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    return a / np.where(n == 0, 1.0, n)


def _lsa_cosines_reference(X, Q, vt, k):
    """(n_queries, |D|) cosines of the queries with the documents, both projected on vt[:k]."""
    return _unit(np.asarray(Q @ vt[:k].T, float)) @ _unit(np.asarray(X @ vt[:k].T, float)).T


def _lsa_case(f, X, Q, vt, k, what):
    expect_close(f(X.copy(), Q.copy(), vt.copy(), k), _lsa_cosines_reference(X, Q, vt, k), what,
                 atol=1e-8)


def _hand_example(f):
    X = np.array([[2.0, 1, 0, 0, 0], [1, 2, 1, 0, 0], [0, 0, 1, 2, 1], [0, 0, 0, 1, 3]])
    _lsa_case(f, X, np.array([[1.0, 0, 0, 0, 1]]), np.linalg.svd(X, full_matrices=False)[2], 2,
              "cosines (1, 4) of a 4 x 5 matrix's documents with the query [1, 0, 0, 0, 1], k = 2")


def _random_case(f):
    rng = np.random.default_rng(7)
    X, Q = rng.poisson(0.8, size=(12, 9)) + np.eye(12, 9), rng.poisson(0.8, size=(3, 9)) + 1.0
    _lsa_case(f, X, Q, np.linalg.svd(X, full_matrices=False)[2], 3,
              "cosines (3, 12) of 3 queries with a random 12 x 9 count matrix, k = 3")


def _sparse_and_empty(f):
    rng = np.random.default_rng(11)
    empty = np.ones(15)
    empty[3] = 0.0                                  # an empty document: cosine 0, not nan
    X = sp.csr_matrix(sp.diags(empty) @ sp.random(15, 10, density=0.4, random_state=11))
    Q = sp.csr_matrix(rng.poisson(0.5, size=(2, 10)) + np.eye(2, 10))
    vt = TruncatedSVD(n_components=4, algorithm="arpack", random_state=0).fit(X).components_
    _lsa_case(f, X, Q, vt, 4, "cosines (2, 15), scipy.sparse X and Q, document 3 empty, k = 4")


def _lsa_variant(project_all=False, unit_docs=True, unit_queries=True, before=False):
    def wrong(X, Q, vt, k):
        P = vt if project_all else vt[:k]
        X, Q = (normalize(X), normalize(Q)) if before else (X, Q)
        D, q = np.asarray(X @ P.T, float), np.asarray(Q @ P.T, float)
        D = D / np.linalg.norm(D, axis=1, keepdims=True) if unit_docs else D
        q = q / np.linalg.norm(q, axis=1, keepdims=True) if unit_queries else q
        return q @ D.T
    return wrong


check_lsa_cosines = FunctionExercise(
    "LSA cosines", [_hand_example, _random_case, _sparse_and_empty],
    reference=_lsa_cosines_reference, step="core",
    mistakes=[
        Mistake("dot_not_cosine", "you ranked by dot products: divide each projected document and "
                "query by its length (cosine), or long documents win whatever they say.",
                like=_lsa_variant(unit_docs=False, unit_queries=False)),
        Mistake("query_not_normalised", "the projected queries must be unit length too: the "
                "ranking is right but the values are not cosines.",
                like=_lsa_variant(unit_queries=False)),
        Mistake("all_rows", "keep only the first k rows of vt (the top k directions): vt[:k].",
                like=_lsa_variant(project_all=True)),
        Mistake("normalised_before_projection", "normalise after projecting: a unit vector in word "
                "space is not unit length once projected on k directions.",
                like=_lsa_variant(unit_docs=False, unit_queries=False, before=True)),
        Mistake("empty_document_nan", "a row that projects to zero has length 0: divide by its "
                "length only where it is above 0, so its cosines are 0, not nan.",
                like=_lsa_variant()),
    ],
    forbidden=(normalize_rows, nearest_neighbours, cosine_similarity, normalize,
               TruncatedSVD))


# ----------------------------------------------------------------------------- the rank-k gradient
def _lowrank_reference(X, U, V):
    R = X - U @ V.T
    return float(0.5 * np.sum(R * R)), -R @ V, -R.T @ U


def _lowrank_case(seed, m=5, n=4, k=2):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, n)), rng.normal(size=(m, k)), rng.normal(size=(n, k))


def _unpack(out, what):
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        raise ExerciseFailed(f"{what}: expected a tuple (loss, dU, dV), got {type(out).__name__}")
    return out


def _lowrank_hand_example(f):
    X = np.array([[1.0, 2, 0], [0, 1, 3]])
    U, V = np.array([[1.0], [0]]), np.array([[1.0], [1], [0]])
    loss, dU, dV = _unpack(f(X, U, V), "X (2, 3), k = 1")
    expect_equal(np.shape(dU), (2, 1), "shape of dU for X (2, 3), U (2, 1), V (3, 1)")
    expect_equal(np.shape(dV), (3, 1), "shape of dV for X (2, 3), U (2, 1), V (3, 1)")
    expect_close(loss, 5.5, "loss 1/2 ||X - U V^T||^2 with residual [[0, 1, 0], [0, 1, 3]]")
    expect_close(dU, [[-1.0], [-1.0]], "dU for the residual [[0, 1, 0], [0, 1, 3]]")
    expect_close(dV, [[0.0], [-1.0], [0.0]], "dV for the residual [[0, 1, 0], [0, 1, 3]]")


def _lowrank_gradients(f):
    X, U, V = _lowrank_case(2)
    loss, dU, dV = _unpack(f(X, U, V), "a random 5 x 4 matrix, k = 2")
    expect_close(loss, _lowrank_reference(X, U, V)[0], "the loss of a random 5 x 4 matrix, k = 2")
    expect_gradients_match_numerical([dU, dV], lambda U, V: _lowrank_reference(X, U, V)[0], [U, V],
                                     ["dU (finite differences)", "dV (finite differences)"],
                                     tol=1e-5)
    X, U, V = _lowrank_case(3, m=30, n=12, k=4)
    _, dU, dV = _unpack(f(X, U, V), "a random 30 x 12 matrix, k = 4")
    def torch_loss(U, V):
        return ((torch.tensor(X) - U @ V.T) ** 2).sum() / 2
    expect_gradients_match_torch([dU, dV], torch_loss, [U, V], ["dU (30 x 12, k = 4)", "dV"])


def _lowrank_reaches_the_svd(f):
    """L-BFGS with f's gradient reaches ½ Σ_{i>k} σ_i², the least loss of any rank-k matrix."""
    X = _lowrank_case(4, m=20, n=15, k=3)[0]
    fit = fit_lowrank(X, 3, loss_grad=lambda *args: _unpack(f(*args), "the fit"), seed=4,
                      max_iter=5000)
    s = np.linalg.svd(X, compute_uv=False)
    expect_close(fit["loss"], 0.5 * np.sum(s[3:] ** 2), "the loss L-BFGS reaches with your "
                 "gradient (20 x 15, k = 3), against the truncated SVD's", rtol=1e-6, atol=1e-8)


def _lowrank_scaled(loss_factor, grad_factor):
    def wrong(X, U, V):
        loss, dU, dV = _lowrank_reference(X, U, V)
        return loss_factor * loss, grad_factor * dU, grad_factor * dV
    return wrong


def _lowrank_untransposed(X, U, V):
    R = X - U @ V.T
    return float(0.5 * np.sum(R * R)), -R @ V, -R @ U


check_lowrank_gradient = FunctionExercise(
    "the rank-k factorisation's gradient",
    [_lowrank_hand_example, _lowrank_gradients, _lowrank_reaches_the_svd],
    reference=_lowrank_reference, step="core",
    mistakes=[
        Mistake("sign", "the loss grows when U Vᵀ moves away from X, so with R = X − U Vᵀ both "
                "gradients carry a minus sign.", like=_lowrank_scaled(1, -1)),
        Mistake("doubled", "the loss has the factor 1/2, which cancels the 2 of the square.",
                like=_lowrank_scaled(1, 2)),
        Mistake("no_half", "the loss is HALF the squared Frobenius norm of the residual.",
                like=_lowrank_scaled(2, 1)),
        Mistake("untransposed", "V multiplies from the right (U Vᵀ), so its gradient takes the "
                "residual transposed: shape (n, k), the shape of V.", like=_lowrank_untransposed),
    ],
    explanation="The factors L-BFGS finds are not the SVD's (any U M and V M^-T give the same "
                "product), but their product is the truncated SVD's: Eckart and Young's theorem.",
    forbidden=(lowrank_loss_grad,))

EXERCISES = [check_tfidf, check_power_iteration, check_first_direction, check_lsa_cosines,
             check_lowrank_gradient]
