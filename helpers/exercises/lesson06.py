"""Checkers for lesson 06 (pointwise mutual information)."""
from __future__ import annotations

import hashlib
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
import torch
from scipy.special import expit

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.lib.counting import npmi, pmi, pmi_table, ppmi
from helpers.lib.negative_sampling import sgns_pair_gradients

# a 3x3 table with zero counts; no row or column is empty
TABLE = np.array([[10.0, 1.0, 0.0], [2.0, 0.0, 4.0], [0.0, 3.0, 1.0]])


# ----------------------------------------------------------------------------- one PMI cell
def _pmi_cell_reference(n_xy, n_x, n_y, n):
    return float(np.log2(n_xy * n / (n_x * n_y)))


def _heaven_hell(f):
    expect_close(f(3, 627, 780, 15871304), np.log2(3 * 15871304 / (627 * 780)),
                 "PMI(heaven, hell) from the worked example's counts (n_xy=3, n_x=627, n_y=780, n=15,871,304)",
                 rtol=1e-9)


def _state_the(f):
    ref = pmi_table([[1973]], ["state"], ["the"], [12786], [1047519], 15871304)
    expect_close(f(1973, 12786, 1047519, 15871304), ref["state", "the"],
                 "PMI(state, the) (n_xy=1973, n_x=12,786, n_y=1,047,519, n=15,871,304)", rtol=1e-9)


check_heaven_hell = FunctionExercise(
    "PMI of one cell", [_heaven_hell, _state_the], reference=_pmi_cell_reference, step="warm-up",
    mistakes=[
        Mistake("natural_log", "PMI is measured in bits here: np.log2, not np.log.",
                like=lambda n_xy, n_x, n_y, n: np.log(n_xy * n / (n_x * n_y))),
        Mistake("counts_not_probabilities", "turn counts into probabilities first: P(x, y) / (P(x) P(y)) = "
                "(n_xy / n) / ((n_x / n)(n_y / n)) = n_xy · n / (n_x · n_y) — you left out the total n.",
                like=lambda n_xy, n_x, n_y, n: np.log2(n_xy / (n_x * n_y))),
        Mistake("ratio_upside_down", "PMI = log2 P(x, y) / (P(x) P(y)): the joint probability goes on top "
                "(a pair seen more often than chance gets a positive PMI).",
                like=lambda n_xy, n_x, n_y, n: np.log2(n_x * n_y / (n_xy * n))),
        Mistake("floor_division", "// rounds the ratio down to a whole number before the log; divide with /.",
                like=lambda n_xy, n_x, n_y, n: np.log2(n_xy * n // (n_x * n_y))),
    ],
    forbidden=(pmi, pmi_table, npmi, ppmi))


# ----------------------------------------------------------------------------- sparse PPMI with context smoothing
def _ppmi_reference(counts, alpha):
    return ppmi(sp.csr_matrix(counts, dtype=float), alpha=alpha)


def _quiet(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


def _dense(m):
    return m.toarray() if sp.issparse(m) else np.asarray(m, float)


def _sparse_result(f, counts, alpha, what):
    got = _quiet(f, counts.copy(), alpha)
    if not sp.issparse(got):
        raise ExerciseFailed(f"{what}: expected a scipy.sparse matrix, got {type(got).__name__} (keep the result "
                             "sparse: a 50,000-word vocabulary would need 20 GB as a dense float64 matrix)")
    if got.shape != counts.shape:
        raise ExerciseFailed(f"{what}: expected shape {counts.shape}, got {got.shape}")
    values = got.tocsr().data
    if np.isnan(values).any() or np.isinf(values).any():
        raise ExerciseFailed(f"{what}: expected finite stored values, got {int(np.isnan(values).sum())} NaN and "
                             f"{int(np.isinf(values).sum())} inf (a zero count is simply not stored)")
    if np.any(values == 0):
        raise ExerciseFailed(f"{what}: expected no stored zeros, got {int(np.sum(values == 0))} explicit zeros "
                             "(a PPMI of 0 is not stored: a sparse matrix's size is its number of stored values)")
    return got


def _independence(f):
    c = sp.csr_matrix(np.outer([1.0, 2.0, 3.0], [2.0, 5.0]))
    got = _sparse_result(f, c, 1.0, "PPMI of an independent table (counts = outer product of marginals)")
    expect_close(_dense(got), np.zeros((3, 2)), "PPMI of an independent table (counts = outer product of "
                 "marginals) — every PMI is 0", atol=1e-9)


def _table_with_zeros(f):
    c = sp.csr_matrix(TABLE)
    got = _sparse_result(f, c, 1.0, "PPMI (alpha=1) of a 3x3 sparse table with zeros")
    expect_close(_dense(got), _dense(_ppmi_reference(c, 1.0)), "PPMI (alpha=1) of a 3x3 sparse table with zeros")


def _smoothing(f):
    c = sp.csr_matrix(TABLE)
    got = _sparse_result(f, c, 0.75, "PPMI with alpha=0.75")
    expect_close(_dense(got), _dense(_ppmi_reference(c, 0.75)),
                 "PPMI with alpha=0.75 (context counts raised to 0.75 and renormalised)")


def _larger(f):
    c = sp.random(300, 200, density=0.02, random_state=6, format="csr",
                  data_rvs=lambda n: np.random.default_rng(6).integers(1, 20, n).astype(float))
    got = _sparse_result(f, c, 0.75, "PPMI (alpha=0.75) of a 300x200 sparse count matrix")
    expect_close(_dense(got), _dense(_ppmi_reference(c, 0.75)), "PPMI (alpha=0.75) of a 300x200 sparse count matrix")


def _never_dense(f):
    """A 3,000 x 3,000 count matrix with 9,000 stored counts: as a dense float64 array it takes 72 MB, so
    a computation that builds one (``.toarray()``, ``np.zeros((V, C))``) is seen in the memory it
    allocates (tracemalloc), whatever it returns."""
    rng = np.random.default_rng(11)
    c = sp.random(3000, 3000, density=0.001, random_state=11, format="csr",
                  data_rvs=lambda n: rng.integers(1, 30, n).astype(float))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        got = _quiet(f, c.copy(), 0.75)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if peak > 16e6:
        raise ExerciseFailed(f"PPMI of a 3,000 x 3,000 sparse matrix with 9,000 counts: expected a computation on "
                             f"the stored entries (well under 16 MB of memory), got a peak of {peak / 1e6:.0f} MB: "
                             "the dense matrix was built (never call .toarray() or allocate (V, C) arrays)")
    if not sp.issparse(got):
        raise ExerciseFailed("PPMI of a 3,000 x 3,000 sparse matrix: expected a scipy.sparse matrix, got "
                             f"{type(got).__name__}")
    expect_close(_dense(got[:200, :200]), _dense(_ppmi_reference(c, 0.75)[:200, :200]),
                 "PPMI (alpha=0.75) of a 3,000 x 3,000 sparse count matrix (its first 200 x 200 block)")


def _ppmi_variant(counts, alpha, row_alpha=1.0, renormalise=True, clip=True, log=np.log2):
    """Sparse PPMI with one thing changed: the wrong answers below."""
    c = sp.csr_matrix(counts, dtype=float)
    n = c.sum()
    rows, cols = np.asarray(c.sum(axis=1)).ravel() ** row_alpha, np.asarray(c.sum(axis=0)).ravel() ** alpha
    p_w = rows / (rows.sum() if row_alpha != 1.0 else n)
    p_c = cols / (cols.sum() if renormalise else n)
    out = c.tocoo()
    with np.errstate(divide="ignore", invalid="ignore"):
        out.data = log((out.data / n) / (p_w[out.row] * p_c[out.col]))
    if clip:
        out.data = np.maximum(out.data, 0.0)
    out = out.tocsr()
    out.eliminate_zeros()
    return out


def _looks_like(variant):
    """A predicate: the student's output matches ``variant`` on this call and not the right answer."""
    def when(out, counts, alpha):
        if not sp.issparse(out) and np.shape(out) != counts.shape:
            return False
        got, ref = _dense(out), _dense(_ppmi_reference(counts, alpha))
        wrong = _dense(variant(counts, alpha))
        return np.allclose(got, wrong) and not np.allclose(got, ref)
    return when


def _example(variant):
    return lambda counts, alpha: variant(counts, alpha)


_alpha_ignored = lambda counts, alpha: _ppmi_variant(counts, 1.0)                      # noqa: E731
_rows_smoothed = lambda counts, alpha: _ppmi_variant(counts, alpha, row_alpha=alpha)   # noqa: E731
_not_renormalised = lambda counts, alpha: _ppmi_variant(counts, alpha, renormalise=False)  # noqa: E731
_negatives_kept = lambda counts, alpha: _ppmi_variant(counts, alpha, clip=False)      # noqa: E731
_natural_log = lambda counts, alpha: _ppmi_variant(counts, alpha, log=np.log)          # noqa: E731


def _zeros_kept(counts, alpha):
    """Right values, but the pairs clipped to 0 stay stored as explicit zeros."""
    c = sp.csr_matrix(counts, dtype=float)
    n = c.sum()
    p_w = np.asarray(c.sum(axis=1)).ravel() / n
    cols = np.asarray(c.sum(axis=0)).ravel() ** alpha
    out = c.tocoo()
    with np.errstate(divide="ignore", invalid="ignore"):
        out.data = np.maximum(np.log2((out.data / n) / (p_w[out.row] * (cols / cols.sum())[out.col])), 0.0)
    return out.tocsr()


def _has_stored_zeros(out, counts, alpha):
    return sp.issparse(out) and bool(np.any(sp.csr_matrix(out).data == 0))


check_sparse_ppmi = FunctionExercise(
    "sparse PPMI with context smoothing", [_independence, _table_with_zeros, _smoothing, _larger, _never_dense],
    reference=_ppmi_reference, step="core",
    mistakes=[
        Mistake("densified", "the result must stay a scipy.sparse matrix: compute PMI only for the stored "
                "entries (counts.tocoo() gives .row, .col and .data) and never call .toarray().",
                when=lambda out, counts, alpha: not sp.issparse(out),
                example=lambda counts, alpha: _ppmi_variant(counts, alpha).toarray()),
        Mistake("alpha_ignored", "alpha=0.75 gave the same result as alpha=1: raise the context counts (the "
                "column sums) to the power alpha before normalising them.",
                when=_looks_like(_alpha_ignored), example=_example(_alpha_ignored)),
        Mistake("rows_smoothed_too", "only the context distribution is smoothed: P(w) stays count(w) / N; "
                "raise only the column sums to the power alpha.",
                when=_looks_like(_rows_smoothed), example=_example(_rows_smoothed)),
        Mistake("not_renormalised", "after raising the context counts to the power alpha, divide by their "
                "sum, sum over c' of count(c')^alpha, not by N: P_alpha must still sum to 1.",
                when=_looks_like(_not_renormalised), example=_example(_not_renormalised)),
        Mistake("negatives_kept", "PPMI keeps only the positive part: set the negative stored values to 0 "
                "(np.maximum(data, 0)) and drop them with eliminate_zeros().",
                when=_looks_like(_negatives_kept), example=_example(_negatives_kept)),
        Mistake("natural_log", "PMI is measured in bits here: np.log2, not np.log.",
                when=_looks_like(_natural_log), example=_example(_natural_log)),
        Mistake("stored_zeros", "the pairs whose PMI was clipped to 0 are still stored: call eliminate_zeros() on "
                "the result, so that only positive values are kept.", when=_has_stored_zeros, example=_zeros_kept),
    ],
    forbidden=(ppmi, pmi, npmi))


# ----------------------------------------------------------------------------- experiment: ties and minimum counts
def _smallest_count_without_ties(bigrams, n: int = 20, decimals: int = 9, largest: int = 1000):
    """The smallest minimum count at which the top ``n`` bigrams by plain PMI have ``n`` distinct scores."""
    if not sp.issparse(bigrams) and np.ndim(bigrams) != 2:
        raise ValueError(f"bigrams must be the (V, V) matrix of bigram counts, got {type(bigrams).__name__}")
    c = sp.csr_matrix(bigrams, dtype=float)
    if c.shape[0] != c.shape[1]:
        raise ValueError(f"bigrams must be a square (V, V) count matrix, got shape {c.shape}")
    if not np.all(np.isfinite(c.data)) or np.any(c.data < 0):
        raise ValueError("bigram counts must be finite and non-negative")
    c.eliminate_zeros()
    if c.nnz < n:
        raise ValueError(f"the matrix holds {c.nnz} observed bigrams; at least {n} are needed to rank {n}")
    scores, counts = pmi(c).tocoo(), c.tocoo()
    off = scores.row != scores.col
    score, count = np.round(scores.data[off], decimals), counts.data[off]
    for min_count in range(1, largest + 1):
        top = np.sort(score[count >= min_count])[::-1][:n]
        if top.size < n:
            break
        if np.unique(top).size == n:
            return min_count
    raise ValueError(f"no minimum count up to {largest} leaves {n} pairs with distinct scores")


def _example_bigrams():
    """A test corpus's bigram counts: 150 words with random counts, and 40 words that form 20 exclusive
    pairs seen 1, 2, 3 or 4 times (the pairs that tie at the top of plain PMI)."""
    rng = np.random.default_rng(3)
    c = np.zeros((190, 190))
    c[:150, :150] = rng.poisson(rng.gamma(0.2, 4.0, size=(150, 150)))
    for j, count in enumerate([1] * 6 + [2] * 6 + [3] * 4 + [4] * 4):
        c[150 + 2 * j, 151 + 2 * j] = count
    return sp.csr_matrix(c)


_MEASURED: dict[str, int] = {}


def _min_count_measured(bigrams=None):
    """The measurement, made here on the bigram counts given (the lesson's), or on the checker's own
    example corpus when none are given; memoized by the counts' content."""
    if bigrams is None:
        bigrams = _example_bigrams()
    if not sp.issparse(bigrams) and np.ndim(bigrams) != 2:
        raise ValueError(f"bigrams must be the (V, V) matrix of bigram counts, got {type(bigrams).__name__}")
    c = sp.csr_matrix(bigrams, dtype=float)
    h = hashlib.sha1(str(c.shape).encode())
    for a in (c.data, c.indices, c.indptr):
        h.update(np.ascontiguousarray(a).tobytes())
    key = h.hexdigest()
    if key not in _MEASURED:
        _MEASURED[key] = _smallest_count_without_ties(c)
    return _MEASURED[key]


check_min_count_ties = ExperimentExercise(
    "minimum count without ties",
    _min_count_measured,
    explanation=("At the top of plain PMI the ties are pairs of words that occur *only* in that pair: for them "
                 "PMI = log2(N / count), the same number for every such pair with the same count. A minimum count "
                 "first removes the one-off pairs, then the pairs seen twice, and so on; only when it is larger "
                 "than the counts of these exclusive pairs that reach the top do the top scores depend on the "
                 "words' other occurrences, and become distinct. Below it, the list's order is the tie-break's."),
    mistakes=[
        Mistake("two_is_enough", "a minimum count of 2 removes the pairs seen once, but pairs seen exactly twice "
                "whose words occur only there still tie at log2(N / 2): keep raising it.", like=2),
        Mistake("strictly_greater", "the minimum count keeps pairs seen *at least* min_count times (count >= "
                "min_count); your answer is one too small, as if pairs had to be seen more than min_count times.",
                like=lambda bigrams=None: _min_count_measured(bigrams) - 1),
        Mistake("table_value", "20 is the minimum count the table used, not the smallest one that leaves no "
                "ties in the top 20: try the counts below it, one by one.", like=20),
    ],
    example_context={"bigrams": _example_bigrams()},
)


# ----------------------------------------------------------------------------- core: the SGNS gradient of a pair
PAIR_NAMES = ("dw", "dc")


def _pair_case(seed: int, B: int, D: int):
    """B word-context vector pairs and their corpus counts (seen n_pos times, drawn n_neg times as a negative)."""
    rng = np.random.default_rng(seed)
    w, c = rng.standard_normal((B, D)) * 0.5, rng.standard_normal((B, D)) * 0.5
    return w, c, rng.integers(1, 50, B).astype(float), rng.uniform(0.5, 20.0, B)


def _pair_torch_loss(n_pos, n_neg):
    def loss(w, c):
        x = (w * c).sum(dim=1)
        return -(torch.tensor(n_pos) * torch.nn.functional.logsigmoid(x)
                 + torch.tensor(n_neg) * torch.nn.functional.logsigmoid(-x)).sum()
    return loss


def _pair_numpy_loss(n_pos, n_neg):
    def loss(w, c):
        x = np.einsum("bd,bd->b", w, c)
        return float(np.sum(n_pos * np.logaddexp(0, -x) + n_neg * np.logaddexp(0, x)))
    return loss


def _pair_against_torch(seed, B, D):
    def check(f):
        w, c, n_pos, n_neg = _pair_case(seed, B, D)
        got = f(w, c, n_pos, n_neg)
        expect_tuple(got, PAIR_NAMES)
        expect_gradients_match_torch(got, _pair_torch_loss(n_pos, n_neg), [w, c],
                                     [f"{n} ({B} pairs, {D} dimensions)" for n in PAIR_NAMES])
    return check


def _pair_against_finite_differences(f):
    w, c, n_pos, n_neg = _pair_case(5, 3, 4)
    got = f(w, c, n_pos, n_neg)
    expect_tuple(got, PAIR_NAMES)
    expect_gradients_match_numerical(got, _pair_numpy_loss(n_pos, n_neg), [w, c],
                                     [f"{n} (finite differences, 3 pairs, 4 dimensions)" for n in PAIR_NAMES])


def _pair_vanishes_at_the_shifted_pmi(f):
    """Vectors whose dot product is ln(n_pos / n_neg): both gradients are zero there."""
    rng = np.random.default_rng(9)
    n_pos, n_neg = np.array([30.0, 4.0]), np.array([3.0, 40.0])
    w, c = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    w *= (np.log(n_pos / n_neg) / np.einsum("bd,bd->b", w, c))[:, None]      # now w·c = ln(n_pos / n_neg)
    got = f(w, c, n_pos, n_neg)
    expect_tuple(got, PAIR_NAMES)
    for name, g in zip(PAIR_NAMES, got, strict=True):
        expect_close(g, np.zeros_like(w), f"{name} at w·c = ln(n_pos / n_neg) (the optimum)", atol=1e-9)


def _pair_sign_flipped(w, c, n_pos, n_neg):
    dw, dc = sgns_pair_gradients(w, c, n_pos, n_neg)
    return -dw, -dc


def _pair_log_sigmoid_derivative(w, c, n_pos, n_neg):
    x = np.einsum("bd,bd->b", w, c)
    g = -n_pos * expit(x) + n_neg * expit(-x)
    return g[:, None] * c, g[:, None] * w


def _pair_vectors_swapped(w, c, n_pos, n_neg):
    dw, dc = sgns_pair_gradients(w, c, n_pos, n_neg)
    return dc, dw


def _pair_no_negatives(w, c, n_pos, n_neg):
    return sgns_pair_gradients(w, c, n_pos, np.zeros_like(np.asarray(n_neg, dtype=float)))


def _pair_averaged(w, c, n_pos, n_neg):
    dw, dc = sgns_pair_gradients(w, c, n_pos, n_neg)
    return dw / len(w), dc / len(w)


def _pair_reference(w, c, n_pos, n_neg):
    """dL/dw, dL/dc of L = sum_b -n_pos log σ(w·c) - n_neg log σ(-w·c): (B, D) each."""
    x = np.einsum("bd,bd->b", w, c)
    g = np.asarray(n_neg, float) * expit(x) - np.asarray(n_pos, float) * expit(-x)
    return g[:, None] * c, g[:, None] * w


check_sgns_pair_backward = FunctionExercise(
    "the SGNS gradient of a word-context pair",
    [_pair_against_torch(0, 4, 3), _pair_against_torch(1, 1, 6), _pair_against_torch(2, 7, 5),
     _pair_against_finite_differences, _pair_vanishes_at_the_shifted_pmi],
    reference=_pair_reference, step="core", forbidden=(sgns_pair_gradients,),
    explanation=("Both vectors meet only in x = w·c, so the chain rule gives dL/dw = (dL/dx) · c and dL/dc = "
                 "(dL/dx) · w, with dL/dx = n_neg · σ(x) − n_pos · σ(−x). Gradient descent stops where that "
                 "vanishes, at x = ln(n_pos / n_neg) = PMI_0.75(w, c) − ln k: with free vectors, SGNS would "
                 "write the shifted PMI into every dot product."),
    mistakes=[
        Mistake("sign_flipped", "you returned the gradient of the objective that SGNS maximises; the loss is "
                "its negative, L = −n_pos log σ(x) − n_neg log σ(−x), and gradient descent needs dL.",
                like=_pair_sign_flipped),
        Mistake("log_sigmoid_derivative", "d/dx log σ(x) = 1 − σ(x) = σ(−x), not σ(x); and d/dx log σ(−x) = "
                "−σ(x).", like=_pair_log_sigmoid_derivative),
        Mistake("vectors_swapped", "x = w·c: the derivative in w is c (times dL/dx), and the derivative in c "
                "is w — you swapped them.", like=_pair_vectors_swapped),
        Mistake("no_negatives", "the negatives are part of the loss: add the n_neg · σ(x) term, which pushes "
                "w·c down (without it the gradient never vanishes).", like=_pair_no_negatives),
        Mistake("averaged", "the loss is a sum over the pairs, each row a separate pair: do not divide by the "
                "number of rows.", like=_pair_averaged),
    ])

EXERCISES = [check_heaven_hell, check_sparse_ppmi, check_min_count_ties, check_sgns_pair_backward]
