"""Checkers for lesson 05 (TF-IDF and SVD)."""
from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp
import torch
from scipy.optimize import minimize
from sklearn.decomposition import TruncatedSVD

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_tuple,
)
from helpers.lib.lowrank import lowrank_loss_grad
from helpers.lib.lsa import (
    DocumentIndex,
    energy_kept,
    inverse_document_frequency,
    term_frequency,
    tfidf,
    tfidf_matrix,
    truncated_svd,
)
from helpers.lib.retrieval import lsa_document_vectors, topic_precision
from helpers.lib.text import Vocab

# The lesson's worked example: documents 425-427, words the/country/hell, |D| = 500.
NOTES_TF = np.array([[43, 5, 1], [24, 1, 0], [37, 0, 3]], dtype=float)
NOTES_DF = np.array([500, 14, 7], dtype=float)


# ----------------------------------------------------------------------------- TF-IDF
def _tfidf_reference(tf, df, n_documents):
    return np.asarray(tf, float) * np.log2(n_documents / np.asarray(df, float))


def _notes_example(f):
    got = f(NOTES_TF.copy(), NOTES_DF.copy(), 500)
    expect_close(got, _tfidf_reference(NOTES_TF, NOTES_DF, 500),
                 "tf-idf of the worked example (|D|=500, log base 2)", rtol=1e-9)


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
        Mistake("natural_log", "the exercise's idf is log2(|D| / df), in bits: use np.log2, not np.log.",
                like=lambda tf, df, n: tf * np.log(n / df)),
        Mistake("ratio_upside_down", "idf = log2(|D| / df): the number of documents over the document "
                "frequency, so that rare words weigh more (yours is negative).",
                like=lambda tf, df, n: tf * np.log2(df / n)),
        Mistake("smoothed_idf", "that is scikit-learn's smoothed idf, ln((1 + |D|) / (1 + df)) + 1; the exercise "
                "asks for log2(|D| / df) without smoothing.",
                like=lambda tf, df, n: tf * (np.log((1 + n) / (1 + df)) + 1)),
        Mistake("relative_tf", "use the raw counts as the term frequency; you divided them by the document's "
                "length.", like=lambda tf, df, n: tf / tf.sum(axis=1, keepdims=True) * np.log2(n / df)),
    ],
    forbidden=(tfidf, tfidf_matrix, inverse_document_frequency, term_frequency))


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
    ],
    forbidden=(energy_kept,))



# ----------------------------------------------------------------------------- LSA retrieval from an SVD
def _unit(a):
    a = np.asarray(a, float)
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    return a / np.where(n == 0, 1.0, n)


def _lsa_cosines_reference(X, q, vt, k):
    docs = _unit(np.asarray(X, float) @ np.asarray(vt, float)[:k].T)
    return docs @ _unit(np.asarray(q, float) @ np.asarray(vt, float)[:k].T)


def _hand_example(f):
    # 4 documents x 5 words (not unit rows), SVD by numpy, keep k = 2 of its 4 directions
    X = np.array([[2.0, 1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 1.0, 0.0, 0.0],
                  [0.0, 0.0, 1.0, 2.0, 1.0], [0.0, 0.0, 0.0, 1.0, 3.0]])
    q = np.array([1.0, 0.0, 0.0, 0.0, 1.0])
    vt = np.linalg.svd(X, full_matrices=False)[2]
    got = f(X.copy(), q.copy(), vt.copy(), 2)
    expect_close(got, _lsa_cosines_reference(X, q, vt, 2),
                 "cosines of a 4x5 matrix's documents with the query [1, 0, 0, 0, 1] at k = 2 (vt has 4 rows)")


def _random_case(f):
    rng = np.random.default_rng(7)
    X = rng.poisson(0.8, size=(12, 9)).astype(float)
    X[X.sum(axis=1) == 0, 0] = 1.0
    q = rng.poisson(0.8, size=9).astype(float) + np.eye(9)[3]
    vt = np.linalg.svd(X, full_matrices=False)[2]
    got = f(X.copy(), q.copy(), vt.copy(), 3)
    expect_close(np.shape(got), (12,), "shape of the result for 12 documents")
    expect_close(got, _lsa_cosines_reference(X, q, vt, 3), "cosines of a random 12x9 count matrix at k = 3")


_DOCS = [t.split() for t in [
    "the striker scored a late goal", "the keeper saved a penalty late in the game",
    "shares fell as the bank cut rates", "the central bank raised interest rates",
    "a new phone with a faster chip", "the chip maker sold more phones", "the coach praised the striker",
    "rates and shares moved as markets fell"]]


def _against_document_index(f):
    vocab = Vocab.build([w for d in _DOCS for w in d], specials=())
    index = DocumentIndex.build(_DOCS, vocab, k=3, seed=0)
    X, _ = tfidf_matrix(_DOCS, vocab, tf_scheme="sublinear")
    query = ["bank", "rates", "goal"]
    q = np.zeros(len(vocab))
    for w in set(query):
        q[vocab.index(w)] = (1.0 + np.log(query.count(w))) * index.idf[vocab.index(w)]
    got = f(X.toarray(), q, index.projection.T.copy(), 3)
    expect_close(got, index.doc_vectors @ index.query_vector(query).ravel(),
                 "cosines of 8 short documents with 'bank rates goal' against DocumentIndex.build(k=3)", atol=1e-8)


def _against_sklearn(f):
    rng = np.random.default_rng(11)
    X = rng.poisson(0.6, size=(15, 10)).astype(float)
    X[X.sum(axis=1) == 0, 1] = 1.0
    q = np.zeros(10)
    q[[2, 5]] = 1.0
    svd = TruncatedSVD(n_components=4, algorithm="arpack", random_state=0).fit(X)
    got = f(X.copy(), q.copy(), svd.components_.copy(), 4)
    want = _unit(svd.transform(X)) @ _unit(svd.transform(q[None, :]))[0]
    expect_close(got, want, "cosines against scikit-learn's TruncatedSVD(n_components=4).transform", atol=1e-8)


def _dot_not_cosine(X, q, vt, k):
    return (np.asarray(X) @ vt[:k].T) @ (np.asarray(q) @ vt[:k].T)


def _query_not_normalised(X, q, vt, k):
    return _unit(np.asarray(X) @ vt[:k].T) @ (np.asarray(q) @ vt[:k].T)


def _all_rows(X, q, vt, k):
    return _unit(np.asarray(X) @ vt.T) @ _unit(np.asarray(q) @ vt.T)


def _normalised_before_projection(X, q, vt, k):
    return (_unit(X) @ vt[:k].T) @ (_unit(q) @ vt[:k].T)


check_lsa_cosines = FunctionExercise(
    "LSA retrieval from an SVD", [_hand_example, _random_case, _against_document_index, _against_sklearn],
    reference=_lsa_cosines_reference, step="core",
    mistakes=[
        Mistake("dot_not_cosine", "you ranked by dot products: divide each projected document and the projected "
                "query by its length (cosine), or long documents win whatever they say.", like=_dot_not_cosine),
        Mistake("query_not_normalised", "the projected query must be unit length too: the ranking is right but "
                "the values are not cosines (they are scaled by the query's length).", like=_query_not_normalised),
        Mistake("all_rows", "keep only the first k rows of vt (the top-k directions): vt[:k]; you projected onto "
                "all of them.", like=_all_rows),
        Mistake("normalised_before_projection", "normalise *after* projecting: a unit vector in word space is "
                "not unit length once projected onto k directions.", like=_normalised_before_projection),
    ],
    forbidden=(DocumentIndex, lsa_document_vectors))


# ----------------------------------------------------------------------------- experiment: choose k on validation
def _example_collection():
    """A small collection with three topics: 90 documents of 40 tokens over 150 words (8 tokens drawn
    from the 30 words of the document's topic, 32 from 60 shared words), unit TF-IDF rows (sublinear tf), the topics, no
    copies, 45 validation queries, k = 1..10. Its best k on validation is small."""
    rng = np.random.default_rng(8)
    topics = np.repeat(np.array(["a", "b", "c"]), 30)
    counts = np.zeros((90, 150))
    for d, t in enumerate(topics):
        own = 30 * "abc".index(t) + rng.integers(0, 30, 8)
        shared = 90 + rng.integers(0, 60, 32)
        np.add.at(counts[d], np.r_[own, shared], 1.0)
    x = tfidf(sp.csr_matrix(counts), tf_scheme="sublinear")[0]
    validation = np.sort(rng.permutation(90)[:45])
    return {"x": x, "topics": topics, "groups": np.arange(90), "validation": validation, "ks": list(range(1, 11))}


_MEASURED: dict[str, int] = {}


def _digest(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes() if a.dtype.kind != "O" else repr(a.tolist()).encode())
    return h.hexdigest()


def _best_k(x=None, topics=None, groups=None, validation=None, ks=None):
    """The k of the grid ``ks`` with the highest mean topic precision@10 over the ``validation`` query
    ids, measured here: one truncated SVD of the TF-IDF rows ``x`` (|D|, |W|) with max(ks) directions
    (seed 0), the LSA document vectors of its first k directions, each document's 10 nearest other
    documents outside its near-duplicate group (``groups``). Without any setting: the checker's own
    example collection."""
    given = [v is not None for v in (x, topics, validation, ks)]
    if not any(given) and groups is None:
        return _best_k(**_example_collection())
    if not all(given):
        raise ValueError("give all of x, topics, validation and ks (and groups), as the lesson's cell does")
    if not sp.issparse(x) and np.ndim(x) != 2:
        raise ValueError(f"x must be the (documents, words) TF-IDF matrix, got {type(x).__name__}")
    x = sp.csr_matrix(x, dtype=np.float64)
    n_docs = x.shape[0]
    topics = np.asarray(topics)
    groups = np.arange(n_docs) if groups is None else np.asarray(groups)
    validation = np.asarray(validation)
    ks = [int(k) for k in np.atleast_1d(np.asarray(ks)).ravel()] if np.size(ks) else []
    if n_docs < 12 or x.nnz == 0:
        raise ValueError(f"x has {n_docs} documents and {x.nnz} non-zeros: too few to rank 10 neighbours")
    if topics.shape != (n_docs,) or groups.shape != (n_docs,):
        raise ValueError(f"topics and groups need one entry per document ({n_docs},), got {topics.shape} and "
                         f"{groups.shape}")
    if validation.ndim != 1 or validation.size == 0 or validation.dtype.kind not in "iu" \
            or validation.min() < 0 or validation.max() >= n_docs:
        raise ValueError(f"validation must be a non-empty array of document ids in [0, {n_docs})")
    if not ks or min(ks) < 1 or max(ks) > min(x.shape) - 1:
        raise ValueError(f"ks must be a non-empty list of numbers of dimensions in [1, {min(x.shape) - 1}]")
    key = _digest(x.data, x.indices, x.indptr, topics, groups, validation, np.array(ks))
    if key not in _MEASURED:
        vt = truncated_svd(x, max(ks), seed=0)[2]
        curve = [topic_precision(lsa_document_vectors(x, vt, k), topics, queries=validation, groups=groups).mean()
                 for k in ks]
        _MEASURED[key] = ks[int(np.argmax(curve))]
    return _MEASURED[key]


def _next_to_the_peak(answer, **context):
    ks = [int(k) for k in (context.get("ks") if context else _example_collection()["ks"])]
    best = ks.index(_best_k(**context))
    return float(answer) in {ks[i] for i in (best - 1, best + 1) if 0 <= i < len(ks)}


check_best_k = ExperimentExercise(
    "the k with the best validation precision", _best_k, atol=0,
    explanation=("Right. That k was chosen on the validation queries only; the test queries, which played no "
                 "part in the choice, then give its honest number once. Choosing on the test queries would "
                 "report an optimistic figure: the best of 20 noisy measurements."),
    example_context=_example_collection(),
    mistakes=[
        Mistake("largest_k", "more dimensions is not always better: the curve falls again after its peak. Read "
                "where the validation curve is highest.", like=lambda **context: int(max(context.get("ks") or [0]))),
        Mistake("next_to_the_peak", "close, but that is a neighbour of the best k on the grid: the curve is nearly "
                "flat near its top, so compare the printed precisions (the explorer's summary gives them to three "
                "decimals), and on a tie take the smaller k.", when=_next_to_the_peak, example=4),
        Mistake("section_five_k", "100 is the k that section 5 used before any choice was made; read the k where "
                "the validation curve is highest.", like=100),
        Mistake("gave_precision", "give the number of dimensions k (an integer on the slider), not the precision "
                "it reaches.", when=lambda answer, **context: 0 < float(answer) < 1, example=0.95),
    ])


# ----------------------------------------------------------------------------- the rank-k factorisation's gradient
def _lowrank_reference(X, U, V):
    """Loss 1/2 ||X - U V^T||_F^2 and its gradients: (loss, dU (m, k), dV (n, k))."""
    R = X - U @ V.T                                       # the residual, (m, n)
    return float(0.5 * np.sum(R * R)), -R @ V, -R.T @ U


def _lowrank_problem(seed, m=5, n=4, k=2):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, n)), rng.normal(size=(m, k)), rng.normal(size=(n, k))


def _unpack_lowrank(out, what):
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        raise ExerciseFailed(f"{what}: expected a tuple (loss, dU, dV), got {type(out).__name__}")
    return out


def _lowrank_hand_example(f):
    X, U, V = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0]]), np.array([[1.0], [0.0]]), np.array([[1.0], [1.0], [0.0]])
    loss, dU, dV = _unpack_lowrank(f(X, U, V), "X (2, 3), k = 1")
    expect_equal(np.shape(dU), (2, 1), "shape of dU for X (2, 3), U (2, 1), V (3, 1)")
    expect_equal(np.shape(dV), (3, 1), "shape of dV for X (2, 3), U (2, 1), V (3, 1)")
    # R = X - U V^T = [[0, 1, 0], [0, 1, 3]]: loss = (1 + 1 + 9) / 2
    expect_close(loss, 5.5, "loss 1/2 ||X - U V^T||^2 with residual [[0, 1, 0], [0, 1, 3]]")
    expect_close(dU, [[-1.0], [-1.0]], "dU = -R V")
    expect_close(dV, [[0.0], [-1.0], [0.0]], "dV = -R^T U")


def _lowrank_loss_value(f):
    X, U, V = _lowrank_problem(1)
    loss, _, _ = _unpack_lowrank(f(X, U, V), "a random problem")
    expect_close(loss, _lowrank_reference(X, U, V)[0], "the loss 1/2 ||X - U V^T||^2 of a random 5 x 4 matrix, k = 2")


def _lowrank_finite_differences(f):
    X, U, V = _lowrank_problem(2)
    _, dU, dV = _unpack_lowrank(f(X, U, V), "a random problem")
    eps = 1e-6
    for name, A, got in (("dU", U, dU), ("dV", V, dV)):
        num = np.zeros_like(A)
        for idx in np.ndindex(A.shape):
            plus, minus = A.copy(), A.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args_p = (X, plus, V) if name == "dU" else (X, U, plus)
            args_m = (X, minus, V) if name == "dU" else (X, U, minus)
            num[idx] = (_lowrank_reference(*args_p)[0] - _lowrank_reference(*args_m)[0]) / (2 * eps)
        expect_close(got, num, f"{name} against central finite differences of the loss", rtol=1e-5, atol=1e-7)


def _lowrank_matches_pytorch(f):
    X, U, V = _lowrank_problem(3, m=30, n=12, k=4)
    loss, dU, dV = _unpack_lowrank(f(X, U, V), "a random 30 x 12 matrix, k = 4")
    Ut, Vt = torch.tensor(U, requires_grad=True), torch.tensor(V, requires_grad=True)
    ref = 0.5 * ((torch.tensor(X) - Ut @ Vt.T) ** 2).sum()
    ref.backward()
    expect_close(loss, ref.item(), "the loss against PyTorch")
    expect_close(dU, Ut.grad.numpy(), "dU against PyTorch's autograd")
    expect_close(dV, Vt.grad.numpy(), "dV against PyTorch's autograd")


def _lowrank_reaches_the_svd(f):
    """Minimising with the function's gradient (L-BFGS) reaches the truncated SVD's error: the
    Eckart-Young theorem says no rank-k matrix does better than 1/2 of the sum of the dropped
    squared singular values."""
    X, U, V = _lowrank_problem(4, m=20, n=15, k=3)
    m, n, k = X.shape[0], X.shape[1], U.shape[1]

    def objective(theta):
        loss, dU, dV = _unpack_lowrank(f(X, theta[: m * k].reshape(m, k), theta[m * k:].reshape(n, k)), "the fit")
        return loss, np.concatenate([np.ravel(dU), np.ravel(dV)])

    res = minimize(objective, np.concatenate([U.ravel(), V.ravel()]) * 0.1, jac=True, method="L-BFGS-B",
                   options=dict(maxiter=5000, gtol=1e-10, ftol=1e-15))
    s = np.linalg.svd(X, compute_uv=False)
    expect_close(res.fun, 0.5 * np.sum(s[k:] ** 2), "the loss reached by L-BFGS with your gradient, against the "
                 "truncated SVD's 1/2 * (sum of the dropped squared singular values), 20 x 15 matrix, k = 3",
                 rtol=1e-6, atol=1e-8)


def _lowrank_sign(X, U, V):
    loss, dU, dV = _lowrank_reference(X, U, V)
    return loss, -dU, -dV


def _lowrank_doubled(X, U, V):
    loss, dU, dV = _lowrank_reference(X, U, V)
    return loss, 2 * dU, 2 * dV


def _lowrank_no_half(X, U, V):
    loss, dU, dV = _lowrank_reference(X, U, V)
    return 2 * loss, dU, dV


def _lowrank_untransposed(X, U, V):
    R = X - U @ V.T
    return float(0.5 * np.sum(R * R)), -R @ V, -R @ U      # R @ U: (m, n) @ (m, k) fails unless m = n


check_lowrank_gradient = FunctionExercise(
    "the rank-k factorisation's gradient",
    [_lowrank_hand_example, _lowrank_loss_value, _lowrank_finite_differences, _lowrank_matches_pytorch,
     _lowrank_reaches_the_svd],
    reference=_lowrank_reference,
    mistakes=[
        Mistake("sign", "the residual is R = X - U V^T, so the loss grows when U V^T moves away from X: dU = -R V "
                "and dV = -R^T U (with the minus sign).", like=_lowrank_sign),
        Mistake("doubled", "the loss has the factor 1/2, which cancels the 2 of the square: dU = -R V, not -2 R V.",
                like=_lowrank_doubled),
        Mistake("no_half", "the loss is HALF the squared Frobenius norm of the residual: 0.5 * np.sum(R * R).",
                like=_lowrank_no_half),
        Mistake("untransposed", "V multiplies from the right (U V^T), so its gradient takes the residual "
                "transposed: dV = -R.T @ U, shape (n, k).", like=_lowrank_untransposed),
    ],
    explanation="The factors gradient descent finds are not the SVD's (any U A, V A^-T give the same product), "
                "but their product is the truncated SVD's best rank-k approximation: Eckart and Young's theorem.",
    forbidden=(lowrank_loss_grad,),
)

EXERCISES = [check_tfidf, check_energy, check_lsa_cosines, check_best_k, check_lowrank_gradient]
