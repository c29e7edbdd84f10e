"""Checkers for lesson 08 (GloVe and fastText)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from helpers.exercises import (
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_gradients_match_numerical,
    expect_tuple,
)
from helpers.lib.fasttext import FastTextVectors, char_ngrams, misspelling_test, ngram_buckets
from helpers.lib.glove import PairwiseGloVe, adagrad_glove_c, glove_cell, glove_weight

GLOVE = (glove_weight, glove_cell, PairwiseGloVe)


def _f(x, x_max, alpha):
    x = np.asarray(x, float)
    return np.where(x < x_max, (np.minimum(x, x_max) / x_max) ** alpha, 1.0)


# ------------------------------------------------------------- warm-up: the weighting function
def _worked_values(f):
    expect_close(f(np.array([0.0, 1.0, 10.0, 50.0, 100.0]), 100.0, 0.75),
                 [0.0, 0.01 ** 0.75, 0.1 ** 0.75, 0.5 ** 0.75, 1.0],
                 "f([0, 1, 10, 50, 100]), x_max=100, alpha=0.75")


def _capped(f):
    expect_close(f(np.array([100.0, 250.0, 1e6]), 100.0, 0.75), [1.0, 1.0, 1.0],
                 "f([100, 250, 1e6]) with x_max=100 (f is 1 from x_max on)")


def _uses_arguments(f):
    expect_close(f(np.array([[5.0, 10.0], [20.0, 0.5]]), 10.0, 0.5),
                 [[0.5 ** 0.5, 1.0], [1.0, 0.05 ** 0.5]],
                 "f of a (2, 2) matrix of counts with x_max=10, alpha=0.5")


def _if_on_an_array(x, x_max, alpha):
    if x < x_max:
        return (x / x_max) ** alpha
    return 1.0


check_glove_weight = FunctionExercise(
    "GloVe's weighting function", [_worked_values, _capped, _uses_arguments], reference=_f,
    step="warm-up", forbidden=GLOVE,
    mistakes=[
        Mistake("not_capped", "f must be capped at 1 for x >= x_max, so that very frequent pairs "
                "cannot dominate: np.where(x < x_max, (x / x_max) ** alpha, 1.0).",
                like=lambda x, x_max, alpha: (np.asarray(x, float) / x_max) ** alpha),
        Mistake("hard_coded",
                "use the arguments x_max and alpha; do not hard-code the paper's 100 and 0.75.",
                like=lambda x, x_max, alpha: _f(x, 100.0, 0.75)),
        Mistake("zero_above_x_max", "above x_max f is 1 (frequent pairs count fully), not 0.",
                like=lambda x, x_max, alpha: np.where(np.asarray(x) < x_max, _f(x, x_max, alpha),
                                                      0.0)),
        Mistake("python_if", "if x < x_max on an array raises 'the truth value of an array ... is "
                "ambiguous': choose element-wise with np.where.", like=_if_on_an_array),
    ])


# ------------------------------------------------------------- warm-up: one cell's gradient
X_MAX, ALPHA = 10.0, 0.75


def _cell_loss(v, u, b_w, b_c, x):
    return float(_f(x, X_MAX, ALPHA) * (v @ u + b_w + b_c - np.log(x)) ** 2)


def _word_gradient_reference(v, u, b_w, b_c, x, x_max, alpha):
    return 2 * _f(x, x_max, alpha) * (v @ u + b_w + b_c - np.log(x)) * u


def _one_cell(seed, x):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 0.5, 4), rng.normal(0, 0.5, 4), 0.3, -0.2, x


def _word_gradient_check(seed, x):
    def check(f):
        v, u, b_w, b_c, x_ = _one_cell(seed, x)
        got = f(v.copy(), u.copy(), b_w, b_c, x_, X_MAX, ALPHA)
        expect_gradients_match_numerical(
            [got], lambda a: _cell_loss(a, u, b_w, b_c, x_), [v],
            [f"dJ/dv for one cell with X_wc = {x} (x_max = 10, alpha = 0.75)"])
    return check


check_word_gradient = FunctionExercise(
    "the gradient of one cell", [_word_gradient_check(0, 3.0), _word_gradient_check(1, 0.4),
                                 _word_gradient_check(2, 40.0)],
    reference=_word_gradient_reference, step="warm-up", forbidden=GLOVE,
    explanation=("J = f e² and e = v·u + b_w + b_c - log X, so dJ/dv = 2 f e · de/dv = 2 f e u: "
                 "the word's vector moves along its context's vector, scaled by the weighted "
                 "error. By symmetry dJ/du = 2 f e v, and since de/db = 1 both biases get 2 f e."),
    mistakes=[
        Mistake("own_vector", "de/dv is the *other* vector: e = v·u + ..., so the derivative of "
                "v·u with respect to v is u, not v.",
                like=lambda v, u, b_w, b_c, x, x_max, a: 2 * _f(x, x_max, a)
                * (v @ u + b_w + b_c - np.log(x)) * v),
        Mistake("no_factor_two", "the derivative of e² is 2e: the factor 2 is missing.",
                like=lambda *a: _word_gradient_reference(*a) / 2),
        Mistake("weight_missing", "the cell's loss is f(X)·e²: its gradient carries f(X) too.",
                like=lambda v, u, b_w, b_c, x, x_max, a: 2 * (v @ u + b_w + b_c - np.log(x)) * u),
        Mistake("count_not_log",
                "the target is log X_wc, not X_wc itself: e = v·u + b_w + b_c - log x.",
                like=lambda v, u, b_w, b_c, x, x_max, a: 2 * _f(x, x_max, a)
                * (v @ u + b_w + b_c - x) * u),
    ])


# ------------------------------------------------------------- core: a batch of cells
NAMES = ("loss", "dv", "du", "db_w", "db_c")


def _cell_batch(seed, x=(0.5, 3.0, 7.0, 30.0, 100.0)):
    """Five pairs, D = 4: counts below 1 (log x < 0), below x_max = 10 and above it."""
    rng = np.random.default_rng(seed)
    return (rng.normal(0, 0.5, (5, 4)), rng.normal(0, 0.5, (5, 4)), rng.normal(0, 0.3, 5),
            rng.normal(0, 0.3, 5), np.array(x))


def _call_cell(f, case):
    got = f(*(a.copy() for a in case), X_MAX, ALPHA)
    expect_tuple(got, NAMES)
    return got


def _cell_values(f):
    case = _cell_batch(0)
    for name, g, r in zip(NAMES, _call_cell(f, case), glove_cell(*case, X_MAX, ALPHA), strict=True):
        expect_close(g, r, f"{name} for 5 cells (x = 0.5, 3, 7, 30, 100; x_max = 10, alpha = 0.75)",
                     rtol=1e-7)


def _cell_finite_differences(f):
    case = _cell_batch(1)
    got = _call_cell(f, case)
    def loss(*params):
        return float(f(*(a.copy() for a in params), case[4].copy(), X_MAX, ALPHA)[0])

    expect_gradients_match_numerical(
        got[1:], loss, list(case[:4]),
        [f"{n} against finite differences of your loss" for n in NAMES[1:]])


def _cell_torch(f):
    case = _cell_batch(2)
    got = _call_cell(f, case)
    t = [torch.tensor(a, requires_grad=True) for a in case[:4]]
    e = (t[0] * t[1]).sum(1) + t[2] + t[3] - torch.log(torch.tensor(case[4]))
    J = (torch.tensor(_f(case[4], X_MAX, ALPHA)) * e * e).sum()
    J.backward()
    expect_close(got[0], J.item(), "the loss against PyTorch", rtol=1e-7)
    for name, g, ref in zip(NAMES[1:], got[1:], t, strict=True):
        expect_close(g, ref.grad.numpy(), f"{name} against PyTorch autograd", rtol=1e-7)


def _uncapped(v, u, b_w, b_c, x, x_max, alpha):
    f = (np.asarray(x, float) / x_max) ** alpha
    e = np.sum(v * u, axis=-1) + b_w + b_c - np.log(x)
    g = 2 * f * e
    return float(np.sum(f * e * e)), g[:, None] * u, g[:, None] * v, g, g


def _summed_over_pairs(*a):
    loss, dv, du, db, dc = glove_cell(*a)
    return loss, dv.sum(0), du.sum(0), db.sum(), dc.sum()


check_glove_cell = FunctionExercise(
    "GloVe's loss and gradients for a batch of cells",
    [_cell_values, _cell_finite_differences, _cell_torch],
    reference=glove_cell, step="core", forbidden=GLOVE,
    mistakes=[
        Mistake("no_factor_two", "the loss is f·e²: its derivative with respect to e is 2·f·e — "
                "the factor 2 is missing from your gradients.",
                like=lambda *a: (lambda r: (r[0],) + tuple(g / 2 for g in r[1:]))(glove_cell(*a))),
        Mistake("count_not_log", "the target is log X_wc, not the count itself: "
                "e = v·u + b_w + b_c - log x.",
                like=lambda v, u, b_w, b_c, x, x_max, alpha: glove_cell(v, u, b_w, b_c, np.exp(x),
                                                                        x_max, alpha)),
        Mistake("not_capped", "f(x) is 1 from x_max on: the pairs with x = 30 and 100 (above "
                "x_max = 10) have weight 1, not (x / x_max)^alpha.", like=_uncapped),
        Mistake("vectors_swapped", "dJ/dv = 2·f·e·u (the *other* vector) and dJ/du = 2·f·e·v: "
                "yours are swapped.",
                like=lambda *a: (lambda r: (r[0], r[2], r[1], r[3], r[4]))(glove_cell(*a))),
        Mistake("mean_loss", "return the sum of the cells' losses, Σ f e², not their mean.",
                like=lambda *a: (lambda r: (r[0] / len(a[4]),) + r[1:])(glove_cell(*a))),
        Mistake("summed_over_pairs", "return one gradient per pair — dv of shape (P, D), db_w of "
                "shape (P,): the trainer adds the gradients of a word that occurs in several pairs "
                "itself.",
                when=lambda out, *args: np.ndim(out[1]) == 1, example=_summed_over_pairs),
    ])


# ------------------------------------------------------------- core: glove.c's AdaGrad step
def _adagrad_values(f):
    rng = np.random.default_rng(0)
    p, g, G = rng.normal(0, 1, 5), rng.normal(0, 1, 5), rng.uniform(1.0, 3.0, 5)
    got = f(p.copy(), g.copy(), G.copy(), 0.1)
    expect_tuple(got, ("new_param", "new_G"))
    ref = adagrad_glove_c(p, g, G, 0.1)
    expect_close(got[1], ref[1], "G after one step with lr = 0.1 (G + (lr·g)²)", rtol=1e-9)
    expect_close(got[0], ref[0],
                 "the parameter after one step with lr = 0.1 "
                 "(divided by the √G of before the step)",
                 rtol=1e-9)


def _glove_c(rows, cols, x, params, lr):
    """glove.c's loop over the pairs, transcribed one number at a time (its G starts at 1)."""
    W, Wt, b, bt = (p.astype(float).tolist() for p in params)
    G = [[[1.0] * len(W[0]) for _ in W], [[1.0] * len(W[0]) for _ in W],
         [1.0] * len(b), [1.0] * len(b)]
    for i, j, x_ij in zip(rows, cols, x, strict=True):
        diff = sum(a * c for a, c in zip(W[i], Wt[j], strict=True)) + b[i] + bt[j] - np.log(x_ij)
        fdiff = lr * float(_f(x_ij, 5.0, 0.75)) * diff
        for k in range(len(W[i])):
            temp1, temp2 = fdiff * Wt[j][k], fdiff * W[i][k]
            W[i][k] -= temp1 / G[0][i][k] ** 0.5
            Wt[j][k] -= temp2 / G[1][j][k] ** 0.5
            G[0][i][k] += temp1 ** 2
            G[1][j][k] += temp2 ** 2
        b[i] -= fdiff / G[2][i] ** 0.5
        bt[j] -= fdiff / G[3][j] ** 0.5
        G[2][i] += fdiff ** 2
        G[3][j] += fdiff ** 2
    return np.array(W) + np.array(Wt)


def _adagrad_in_training(f):
    rng = np.random.default_rng(3)
    dense = rng.poisson(3.0, (8, 8)) * (rng.random((8, 8)) < 0.6)
    counts = sp.csr_matrix(dense.astype(np.float64))
    mine = PairwiseGloVe(counts, dim=3, lr=0.1, x_max=5.0, batch_size=1, seed=3, step=f)
    start = [p.copy() for p in mine.params]
    for _ in range(mine.P):
        mine.step()
    order = mine.order                                       # the epoch's order of the pairs
    ref = _glove_c(mine.rows[order], mine.cols[order], mine.x[order].astype(float), start, 0.1)
    expect_close(mine.vectors(), ref,
                 f"W + W~ after one epoch of {mine.P} pairs with your step, one pair at a time, "
                 "against glove.c's loop", rtol=1e-4, atol=1e-6)


check_adagrad_step = FunctionExercise(
    "glove.c's AdaGrad step", [_adagrad_values, _adagrad_in_training], reference=adagrad_glove_c,
    step="core", forbidden=GLOVE + (adagrad_glove_c,),
    mistakes=[
        Mistake("torch_order", "that is torch.optim.Adagrad's order (add g² to G, then divide by "
                "the new √G); glove.c divides the step lr·g by the √G of *before* the step, then "
                "adds (lr·g)² to G.",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G + grad * grad),
                                                  G + grad * grad)),
        Mistake("squared_gradient",
                "glove.c adds the square of the *step*, (lr·g)², to G — not g².",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G), G + grad * grad)),
        Mistake("new_G_first",
                "divide by the √G of before the step: glove.c adds (lr·g)² only after the step.",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G + (lr * grad) ** 2),
                                                  G + (lr * grad) ** 2)),
        Mistake("no_square_root", "divide by the square root of the sum, √G, not by G.",
                like=lambda param, grad, G, lr: (param - lr * grad / G, G + (lr * grad) ** 2)),
    ])


# --------------------------------------------------------- warm-up: fastText's character n-grams
def _where(f):
    expect_equal(list(f("where", 3)), ["<wh", "whe", "her", "ere", "re>"], "3-grams of 'where'")
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
    "character n-grams", [_where, _repeats, _short_word], reference=_ngrams_reference,
    step="warm-up", forbidden=(char_ngrams, ngram_buckets, FastTextVectors),
    mistakes=[
        Mistake("no_markers", "add the boundary markers before cutting: the n-grams of '<where>', "
                "so that '<wh' (a prefix) differs from 'wh' inside a word.",
                like=lambda word, n: [word[i:i + n] for i in range(len(word) - n + 1)]),
        Mistake("repeats_dropped", "keep repeated n-grams: 'banana' has 'ana' twice, and fastText "
                "adds its vector twice.",
                like=lambda word, n: list(dict.fromkeys(char_ngrams(word, n, n)))),
        Mistake("last_one_missing", "the last n-gram starts at len(w) - n: range(len(w) - n + 1), "
                "so that 're>' is included.",
                like=lambda word, n: [("<" + word + ">")[i:i + n]
                                      for i in range(len(word) + 2 - n)]),
    ])


# ------------------------------------------------------------- experiment: one n-gram length
LENGTHS = (3, 4, 5, 6)


def _example_fasttext():
    """A small fastText-like model (the measurement without context, and the tests)."""
    rng = np.random.default_rng(0)
    words = ["government", "election", "football", "economy", "minister", "national", "children",
             "business"]
    ngrams = rng.normal(0, 1, (5000, 8)).astype(np.float32)
    zeros = np.zeros((8, 8), np.float32)
    base = FastTextVectors(words, zeros, zeros, ngrams, 3, 6, 0.0)
    W = np.stack([base.vector(w + "#") for w in words])
    return FastTextVectors(words, W, W, ngrams, 3, 6, 0.0), words


_MEMO: dict = {}


def single_length_hits(fasttext: FastTextVectors | None = None, words=None, k: int = 5
                       ) -> dict[int, float]:
    """The misspelling hit rate of each single n-gram length: {n: mean hits}."""
    if fasttext is None and words is None:
        fasttext, words = _example_fasttext()
    if not isinstance(fasttext, FastTextVectors):
        raise ValueError("fasttext must be the lesson's fastText model, got "
                         f"{type(fasttext).__name__}")
    if (not isinstance(words, (list, tuple)) or not words
            or not all(isinstance(w, str) and len(w) >= 4 for w in words)):
        raise ValueError("words must be the lesson's list of words of 4 letters or more "
                         f"(got {words!r:.60})")
    key = (id(fasttext), tuple(words), k)
    if key not in _MEMO:
        _MEMO.clear()
        hits = {}
        for n in LENGTHS:
            one_length = FastTextVectors(fasttext.itos, fasttext.W, fasttext.word_vectors,
                                         fasttext.ngram_vectors, n, n, 0.0)
            hits[n] = float(misspelling_test(one_length, words, k=k)["hits"].mean())
        _MEMO[key] = hits
    return _MEMO[key]


def _best_single_n(fasttext: FastTextVectors | None = None, words=None) -> int:
    hits = single_length_hits(fasttext, words)
    return max(hits, key=hits.get)


check_best_ngram_length = ExperimentExercise(
    "the n-gram length that finds misspellings", _best_single_n,
    explanation=("A slip breaks every n-gram that spans it, so the shorter the n-grams, the larger "
                 "the share that survive. Short n-grams are also shared by many unrelated words, "
                 "which is why fastText uses all lengths from 3 to 6 together: the long ones carry "
                 "the word's identity, the short ones survive."),
    mistakes=[
        Mistake("longest", "the longest n-grams are the most specific, but a slip breaks most of "
                "them: compare the hit rates of the four lengths you measured.", like=6),
        Mistake("hit_rate", "the answer is the length n (3, 4, 5 or 6), not its hit rate.",
                when=lambda answer, **_: 0 < float(answer) < 1, example=0.4),
        Mistake("second_best",
                "that length comes second: look again at which n gives the most hits.",
                like=lambda fasttext=None, words=None: sorted(
                    single_length_hits(fasttext, words).items(), key=lambda kv: -kv[1])[1][0]),
    ],
    example_context=dict(zip(("fasttext", "words"), _example_fasttext())),
)

EXERCISES = [check_glove_weight, check_word_gradient, check_glove_cell, check_adagrad_step,
             check_char_ngrams, check_best_ngram_length]
