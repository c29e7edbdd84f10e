"""Checkers for lesson 06 (pointwise mutual information)."""
from __future__ import annotations

import tracemalloc

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
)
from helpers.lib.counting import (
    cooccurrence_matrix,
    flatten_sentences,
    npmi,
    pmi,
    ppmi,
    top_pmi_pairs,
)
from helpers.lib.word2vec import skipgram_pairs


def _dense(m):
    return m.toarray() if sp.issparse(m) else np.asarray(m, float)


# ----------------------------------------------------------------------------- one PMI cell
def _pmi_cell_reference(n_xy, n_x, n_y, n):
    return float(np.log2(n_xy * n / (n_x * n_y)))


def _heaven_hell(f):
    expect_close(f(3, 627, 780, 15871304), _pmi_cell_reference(3, 627, 780, 15871304),
                 "PMI(heaven, hell) (n_xy=3, n_x=627, n_y=780, n=15,871,304)", rtol=1e-9)


def _state_the(f):
    args = (1973, 12786, 1047519, 15871304)
    expect_close(f(*args), _pmi_cell_reference(*args),
                 "PMI(state, the) (n_xy=1973, n_x=12,786, n_y=1,047,519, n=15,871,304)", rtol=1e-9)


check_heaven_hell = FunctionExercise(
    "PMI of one cell", [_heaven_hell, _state_the], reference=_pmi_cell_reference, step="warm-up",
    mistakes=[
        Mistake("natural_log", "PMI is measured in bits here: np.log2, not np.log.",
                like=lambda n_xy, n_x, n_y, n: np.log(n_xy * n / (n_x * n_y))),
        Mistake("counts_not_probabilities", "turn counts into probabilities first (each count over "
                "the total n) and simplify: you left out the total n.",
                like=lambda n_xy, n_x, n_y, n: np.log2(n_xy / (n_x * n_y))),
        Mistake("ratio_upside_down", "PMI = log2 P(x, y) / (P(x) P(y)): the joint probability goes "
                "on top.", like=lambda n_xy, n_x, n_y, n: np.log2(n_x * n_y / (n_xy * n))),
        Mistake("floor_division", "// rounds the ratio down to a whole number before the log; "
                "divide with /.", like=lambda n_xy, n_x, n_y, n: np.log2(n_xy * n // (n_x * n_y))),
    ],
    forbidden=(pmi, npmi, ppmi))


# ----------------------------------------------------------------------------- the counter
def _counter_reference(sentences_ids, vocab_size, window):
    return cooccurrence_matrix(sentences_ids, vocab_size, window)


def _counts(f, sentences, vocab_size, window, what):
    got = f([np.asarray(s, dtype=np.int64) for s in sentences], vocab_size, window)
    if not sp.issparse(got):
        raise ExerciseFailed(f"{what}: expected a scipy.sparse matrix, got {type(got).__name__} (a "
                             "dense 10,002 x 10,002 matrix takes 800 MB)")
    expect_close(_dense(got), _dense(_counter_reference(sentences, vocab_size, window)), what)


def _by_hand(f):
    for window in (1, 2):
        _counts(f, [[0, 1, 2], [0, 1]], 3, window, f"counts of [0, 1, 2], [0, 1], window {window}")


def _holes(f):
    what = "counts of [0, -1, 1, 2] (-1 is a hole), window 2"
    try:
        _counts(f, [[0, -1, 1, 2]], 3, 2, what)
    except (ValueError, IndexError) as e:
        raise ExerciseFailed(f"{what}: your code raised {type(e).__name__}: {e}; drop every pair "
                             "in which either id is negative") from None


def _random_corpus(f):
    rng = np.random.default_rng(3)
    sentences = [rng.integers(-1, 12, size=rng.integers(1, 12)) for _ in range(60)]
    for window in (1, 3, 5):
        _counts(f, sentences, 12, window, f"counts of 60 random sentences, window {window}")


def _counter_variant(cross=False, symmetric=True, close_holes=False, shorter=False):
    def wrong(sentences_ids, vocab_size, window):
        sentences = [np.asarray(s)[np.asarray(s) >= 0] if close_holes else s for s in sentences_ids]
        if shorter and window == 1:
            return sp.csr_matrix((vocab_size, vocab_size))
        return cooccurrence_matrix(sentences, vocab_size, window - shorter, cross_sentences=cross,
                                   symmetric=symmetric)
    return wrong


def _mistake(name, hint, variant, reference):
    """A mistake recognised when the output equals ``variant``'s on a call and not the right one."""
    def when(out, *args):
        got, ref, wrong = _dense(out), _dense(reference(*args)), _dense(variant(*args))
        return got.shape == ref.shape and np.allclose(got, wrong) and not np.allclose(got, ref)
    return Mistake(name, hint, when=when, example=variant)


check_cooccurrence = FunctionExercise(
    "the co-occurrence counter", [_by_hand, _holes, _random_corpus], reference=_counter_reference,
    step="core",
    mistakes=[
        _mistake("across_sentences", "a window stops at the end of its sentence: keep a pair only "
                 "when both tokens have the same sentence number.", _counter_variant(cross=True),
                 _counter_reference),
        _mistake("one_direction", "count both directions: w sees c and c sees w, so add the "
                 "transpose (the matrix is symmetric).", _counter_variant(symmetric=False),
                 _counter_reference),
        _mistake("holes_closed", "a hole keeps its place: drop the pairs that touch it, not the "
                 "token itself, or words two apart become neighbours.",
                 _counter_variant(close_holes=True), _counter_reference),
        _mistake("window_too_short", "the offsets run from 1 to window inclusive: "
                 "range(1, window + 1).", _counter_variant(shorter=True), _counter_reference),
    ],
    forbidden=(cooccurrence_matrix, flatten_sentences, skipgram_pairs, CountVectorizer))


# ----------------------------------------------------------------------------- sparse PPMI
def _ppmi_reference(counts, alpha):
    return ppmi(sp.csr_matrix(counts, dtype=float), alpha=alpha)


def _sparse_result(f, counts, alpha, what):
    with np.errstate(all="ignore"):
        got = f(counts.copy(), alpha)
    if not sp.issparse(got):
        raise ExerciseFailed(f"{what}: expected a scipy.sparse matrix, got {type(got).__name__} (a "
                             "50,000-word vocabulary would need 20 GB as a dense matrix)")
    values = got.tocsr().data
    if not np.all(np.isfinite(values)):
        raise ExerciseFailed(f"{what}: expected finite stored values, got nan or inf (a zero count "
                             "is simply not stored)")
    if np.any(values == 0):
        raise ExerciseFailed(f"{what}: expected no stored zeros, got {int(np.sum(values == 0))} (a "
                             "PPMI of 0 is not stored)")
    expect_close(_dense(got), _dense(_ppmi_reference(counts, alpha)), what, atol=1e-9)


def _independence(f):
    _sparse_result(f, sp.csr_matrix(np.outer([1.0, 2.0, 3.0], [2.0, 5.0])), 1.0,
                   "PPMI of an independent table (counts = outer product of marginals): all 0")


def _table_with_zeros(f):
    table = sp.csr_matrix(np.array([[10.0, 1, 0], [2, 0, 4], [0, 3, 1]]))
    _sparse_result(f, table, 1.0, "PPMI (alpha = 1) of a 3x3 sparse table with zeros")
    _sparse_result(f, table, 0.75, "PPMI with alpha = 0.75 (context counts raised to 0.75)")


def _random_counts(n, density, seed):
    rng = np.random.default_rng(seed)
    return sp.random(n, n, density=density, random_state=seed, format="csr",
                     data_rvs=lambda size: rng.integers(1, 20, size).astype(float))


def _larger(f):
    _sparse_result(f, _random_counts(300, 0.02, 6), 0.75, "PPMI (alpha = 0.75) of a 300 x 300 "
                   "sparse count matrix")


def _never_dense(f):
    """3,000 x 3,000 with 9,000 counts is 72 MB dense: building it shows in the memory taken."""
    counts = _random_counts(3000, 0.001, 11)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with np.errstate(all="ignore"):
            f(counts, 0.75)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if peak > 16e6:
        raise ExerciseFailed(f"PPMI of a 3,000 x 3,000 sparse matrix with 9,000 counts: expected a "
                             f"computation on the stored entries (under 16 MB), got a peak of "
                             f"{peak / 1e6:.0f} MB: the dense matrix was built")


def _ppmi_variant(alpha_used=None, rows_smoothed=False, renormalise=True, clip=True, log=np.log2,
                  keep_zeros=False):
    """Sparse PPMI with one thing changed: the wrong answers below."""
    def wrong(counts, alpha):
        a = alpha if alpha_used is None else alpha_used
        c = sp.csr_matrix(counts, dtype=float)
        n = c.sum()
        rows = np.asarray(c.sum(axis=1)).ravel() ** (a if rows_smoothed else 1.0)
        cols = np.asarray(c.sum(axis=0)).ravel() ** a
        p_w = rows / (rows.sum() if rows_smoothed else n)
        p_c = cols / (cols.sum() if renormalise else n)
        out = c.tocoo()
        with np.errstate(divide="ignore", invalid="ignore"):
            out.data = log((out.data / n) / (p_w[out.row] * p_c[out.col]))
        out.data = np.maximum(out.data, 0.0) if clip else out.data
        out = out.tocsr()
        if not keep_zeros:
            out.eliminate_zeros()
        return out
    return wrong


check_sparse_ppmi = FunctionExercise(
    "sparse PPMI with context smoothing", [_independence, _table_with_zeros, _larger, _never_dense],
    reference=_ppmi_reference, step="core",
    mistakes=[
        Mistake("densified", "the result must stay a scipy.sparse matrix: compute PMI only for the "
                "stored entries (counts.tocoo() gives .row, .col and .data), never .toarray().",
                when=lambda out, counts, alpha: not sp.issparse(out),
                example=lambda counts, alpha: _ppmi_variant()(counts, alpha).toarray()),
        _mistake("alpha_ignored", "alpha = 0.75 gave the same result as alpha = 1: raise the "
                 "context counts (the column sums) to the power alpha before normalising.",
                 _ppmi_variant(alpha_used=1.0), _ppmi_reference),
        _mistake("rows_smoothed_too", "only the context distribution is smoothed: P(w) stays "
                 "count(w) / N; raise only the column sums to the power alpha.",
                 _ppmi_variant(rows_smoothed=True), _ppmi_reference),
        _mistake("not_renormalised", "after raising the context counts to the power alpha, "
                 "divide by their sum, not by N: P_alpha must still sum to 1.",
                 _ppmi_variant(renormalise=False), _ppmi_reference),
        _mistake("negatives_kept", "PPMI keeps only the positive part: set the negative values "
                 "to 0 (np.maximum(data, 0)) and drop them with eliminate_zeros().",
                 _ppmi_variant(clip=False), _ppmi_reference),
        _mistake("natural_log", "PMI is measured in bits here: np.log2, not np.log.",
                 _ppmi_variant(log=np.log), _ppmi_reference),
        Mistake("stored_zeros", "the pairs whose PMI was clipped to 0 are still stored: call "
                "eliminate_zeros() on the result.",
                when=lambda out, counts, alpha: sp.issparse(out) and bool(np.any(out.data == 0)),
                example=_ppmi_variant(keep_zeros=True)),
    ],
    forbidden=(ppmi, pmi, npmi, top_pmi_pairs))


# ----------------------------------------------------------------------------- one pair's optimum
def _example_pair():
    """The pair counts of a small corpus and one frequent pair of it, k = 5 negatives."""
    counts = np.random.default_rng(2).poisson(np.random.default_rng(3).gamma(0.5, 6.0, (30, 30)))
    return {"counts": sp.csr_matrix(counts + counts.T, dtype=float), "w": 3, "c": 7, "k": 5}


def _optimum(counts=None, w=None, c=None, k=None, alpha=0.75, log=np.log, shift=True):
    """ln(n+ / n-) for the pair (w, c): n+ = #(w, c), n- = k #(w) P_alpha(c)."""
    if counts is None and w is None and c is None and k is None:
        return _optimum(**_example_pair(), alpha=alpha, log=log, shift=shift)
    m = sp.csr_matrix(counts, dtype=np.float64)
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise ValueError(f"k must be a whole number of negatives >= 1, got {k!r}")
    if not all(isinstance(i, (int, np.integer)) and 0 <= i < m.shape[0] for i in (w, c)):
        raise ValueError(f"w and c must be row ids of the count matrix, in [0, {m.shape[0]})")
    if not m[w, c] > 0:
        raise ValueError("the pair was never seen: its optimum is at -infinity")
    col = np.asarray(m.sum(axis=0)).ravel() ** alpha
    n_neg = (k if shift else 1) * m[w].sum() * col[c] / col.sum()
    return float(log(m[w, c] / n_neg))


check_pair_optimum = ExperimentExercise(
    "where one pair's loss is smallest", _optimum, atol=0.005,
    explanation=("Right. dL/dx = 0 gives n+ σ(−x) = n− σ(x), so e^x = n+ / n−, and x* = "
                 "ln(n+ / n−) = PMI_0.75(w, c) − ln k in nats: the dot product SGNS would give "
                 "this pair if its vectors were free."),
    example_context=_example_pair(),
    mistakes=[
        Mistake("bits", "SGNS's sigmoid works in nats: x* = ln(n+ / n−), the natural log.",
                like=lambda **context: _optimum(**context, log=np.log2)),
        Mistake("no_shift", "n− = k #(w) P_0.75(c) counts the k negatives drawn for each pair: "
                "that k shifts the optimum down by ln k.",
                like=lambda **context: _optimum(**context, shift=False)),
        Mistake("plain_context", "the negatives come from the smoothed P_0.75(c) = #(c)^0.75 / sum "
                "of #(c')^0.75, not from #(c) / N.",
                like=lambda **context: _optimum(**context, alpha=1.0)),
        Mistake("upside_down", "the loss is smallest where e^x = n+ / n−: the pair's count on top.",
                like=lambda **context: -_optimum(**context)),
    ])

EXERCISES = [check_heaven_hell, check_cooccurrence, check_sparse_ppmi, check_pair_optimum]
