"""Checkers for lesson 08 (GloVe and fastText)."""
from __future__ import annotations

import numpy as np
import torch

from helpers.exercises import (
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_tuple,
)
from helpers.lib.fasttext import FastTextVectors, char_ngrams, misspelling_test
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


# ----------------------------------------------------------------------------- core: one GloVe cell and one AdaGrad step
def _glove_cell_reference(w, w_t, b, b_t, x, x_max, alpha):
    f = float(glove_weight(x, x_max, alpha))
    e = float(w @ w_t + b + b_t - np.log(x))
    g = 2.0 * f * e
    return f * e * e, g * w_t, g * w, g, g


def _cell_case(seed, x=7.0):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 0.5, 4), rng.normal(0, 0.5, 4), float(rng.normal(0, 0.3)), float(rng.normal(0, 0.3)), x


NAMES = ("loss", "dw", "dw_t", "db", "db_t")


def _call_cell(f, case, x_max=10.0, alpha=0.75):
    w, w_t, b, b_t, x = case
    got = f(w.copy(), w_t.copy(), b, b_t, x, x_max, alpha)
    expect_tuple(got, NAMES)
    return got


def _cell_values(f):
    case = _cell_case(0)
    got = _call_cell(f, case)
    for name, g, r in zip(NAMES, got, _glove_cell_reference(*case, 10.0, 0.75), strict=True):
        expect_close(g, r, f"{name} for one cell with x = 7, x_max = 10, alpha = 0.75", rtol=1e-7)


def _cell_finite_differences(f):
    """The student's gradients against central differences of the student's own loss."""
    w, w_t, b, b_t, x = _cell_case(1, x=30.0)           # x above x_max: f = 1
    got = _call_cell(f, (w, w_t, b, b_t, x))
    h = 1e-6

    def loss(w_, wt_, b_, bt_):
        return float(f(w_, wt_, b_, bt_, x, 10.0, 0.75)[0])
    num_w = np.array([(loss(w + h * e, w_t, b, b_t) - loss(w - h * e, w_t, b, b_t)) / (2 * h) for e in np.eye(4)])
    num_wt = np.array([(loss(w, w_t + h * e, b, b_t) - loss(w, w_t - h * e, b, b_t)) / (2 * h) for e in np.eye(4)])
    num_b = (loss(w, w_t, b + h, b_t) - loss(w, w_t, b - h, b_t)) / (2 * h)
    num_bt = (loss(w, w_t, b, b_t + h) - loss(w, w_t, b, b_t - h)) / (2 * h)
    for name, g, n in (("dw", got[1], num_w), ("dw_t", got[2], num_wt), ("db", got[3], num_b), ("db_t", got[4], num_bt)):
        expect_close(g, n, f"{name} against central finite differences of your loss (x = 30 > x_max)", rtol=1e-5,
                     atol=1e-7)


def _cell_torch(f):
    w, w_t, b, b_t, x = _cell_case(2, x=0.5)            # a harmonic count below 1: log x < 0
    got = _call_cell(f, (w, w_t, b, b_t, x))
    tw, twt = torch.tensor(w, requires_grad=True), torch.tensor(w_t, requires_grad=True)
    tb, tbt = torch.tensor(b, dtype=torch.float64, requires_grad=True), torch.tensor(b_t, dtype=torch.float64,
                                                                                     requires_grad=True)
    fx = float(glove_weight(x, 10.0, 0.75))
    J = fx * (tw @ twt + tb + tbt - np.log(x)) ** 2
    J.backward()
    for name, g, r in (("loss", got[0], J.item()), ("dw", got[1], tw.grad.numpy()), ("dw_t", got[2], twt.grad.numpy()),
                       ("db", got[3], tb.grad.item()), ("db_t", got[4], tbt.grad.item())):
        expect_close(g, r, f"{name} against PyTorch autograd (x = 0.5)", rtol=1e-7)


check_glove_cell = FunctionExercise(
    "GloVe's loss and gradients for one (i, j) cell", [_cell_values, _cell_finite_differences, _cell_torch],
    reference=_glove_cell_reference, step="core",
    mistakes=[
        Mistake("no_factor_two", "the loss is f·e²: its derivative with respect to e is 2·f·e — the factor 2 is "
                "missing from your gradients.",
                like=lambda *a: (lambda r: (r[0], r[1] / 2, r[2] / 2, r[3] / 2, r[4] / 2))(_glove_cell_reference(*a))),
        Mistake("count_not_log", "the target is log X_ij, not the count X_ij itself: e = w·w~ + b + b~ - log x.",
                like=lambda w, w_t, b, b_t, x, x_max, alpha: _glove_cell_reference(w, w_t, b, b_t, np.exp(x), x_max,
                                                                                    alpha)),
        Mistake("weight_missing", "weight the cell by f(x): J = f(x)·e², so every gradient carries f(x) too.",
                like=lambda w, w_t, b, b_t, x, x_max, alpha: _glove_cell_reference(w, w_t, b, b_t, x, 1e-12, alpha)),
        Mistake("vectors_swapped", "dJ/dw_i = 2·f·e·w~_j (the *other* vector) and dJ/dw~_j = 2·f·e·w_i: "
                "yours are swapped.",
                like=lambda *a: (lambda r: (r[0], r[2], r[1], r[3], r[4]))(_glove_cell_reference(*a))),
    ])


def _adagrad_reference(param, grad, G, lr):
    G = G + grad * grad
    return param - lr * grad / np.sqrt(G), G


def _adagrad_case(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, 5), rng.normal(0, 1, 5), rng.uniform(0.5, 3.0, 5)


def _adagrad_values(f):
    p, g, G = _adagrad_case(0)
    got = f(p.copy(), g.copy(), G.copy(), 0.1)
    expect_tuple(got, ("param", "G"))
    ref = _adagrad_reference(p, g, G, 0.1)
    expect_close(got[1], ref[1], "the accumulator G after one step (G + g²)", rtol=1e-9)
    expect_close(got[0], ref[0], "the parameter after one step with lr = 0.1", rtol=1e-9)


def _adagrad_torch(f):
    """Two steps, checked against torch.optim.Adagrad started from the same accumulator."""
    p, g, G = _adagrad_case(1)
    t = torch.tensor(p, requires_grad=True)
    opt = torch.optim.Adagrad([t], lr=0.5, eps=0.0)
    opt.state[t]["sum"] = torch.tensor(G)
    mine_p, mine_G = p.copy(), G.copy()
    for k in range(2):
        grad = g * (1 + k)
        t.grad = torch.tensor(grad)
        opt.step()
        mine_p, mine_G = f(mine_p, grad, mine_G, 0.5)
        expect_close(mine_p, t.detach().numpy(), f"the parameter after step {k + 1} against torch.optim.Adagrad "
                     "(lr 0.5, started from the same G)", rtol=1e-9)


check_adagrad_step = FunctionExercise(
    "one AdaGrad step", [_adagrad_values, _adagrad_torch], reference=_adagrad_reference, step="core",
    mistakes=[
        Mistake("glove_c_order", "add g² to G *before* dividing (G_new = G + g², step lr·g/√G_new), as "
                "torch.optim.Adagrad does; you divided by the old G (the order of GloVe's C code).",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G), G + grad * grad)),
        Mistake("no_square_root", "divide by the square root of the accumulated squares, √G, not by G.",
                like=lambda param, grad, G, lr: (param - lr * grad / (G + grad * grad), G + grad * grad)),
        Mistake("accumulate_gradient", "G accumulates the *squared* gradients, g², element by element (not |g|).",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G + np.abs(grad)), G + np.abs(grad))),
        Mistake("ascent", "step *against* the gradient: param - lr·g/√G (you went uphill).",
                like=lambda param, grad, G, lr: (param + lr * grad / np.sqrt(G + grad * grad), G + grad * grad)),
    ])


# ----------------------------------------------------------------------------- experiment: one n-gram length
def _best_single_n(fasttext: FastTextVectors, words, k: int = 5, lengths=(3, 4, 5, 6)) -> int:
    """The n (min_n = max_n = n over the shipped buckets) whose misspelling test finds most right words."""
    hits = []
    for n in lengths:
        single = FastTextVectors(fasttext.itos, fasttext.W, fasttext.word_vectors, fasttext.ngram_vectors, n, n, 0.0)
        hits.append(misspelling_test(single, words, k=k)["hits"].mean())
    return int(lengths[int(np.argmax(hits))])


def _example_fasttext():
    """A small fastText-like model for the tests: words whose vectors are the mean of their 3-gram buckets."""
    rng = np.random.default_rng(0)
    words = ["government", "election", "football", "economy", "minister", "national", "children", "business"]
    ngrams = rng.normal(0, 1, (5000, 8)).astype(np.float32)
    base = FastTextVectors(words, np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32), ngrams, 3, 6, 0.0)
    W = np.stack([base.vector(w + "#") for w in words])
    return FastTextVectors(words, W, W, ngrams, 3, 6, 0.0), words


check_best_ngram_length = ExperimentExercise(
    "the n-gram length that finds misspellings",
    lambda fasttext, words: _best_single_n(fasttext, words),
    explanation=("A typing slip breaks every n-gram that spans it: one slip inside a word of length L breaks up to n "
                 "of its n-grams, so the shorter the n-grams, the larger the share that survive and still point to "
                 "the right word. Short n-grams are also shared by many unrelated words, which is why fastText uses "
                 "all lengths from 3 to 6 together: the long ones carry the word's identity, the short ones survive "
                 "the slip — and the full range finds the right word more often than any single length."),
    mistakes=[
        Mistake("longest", "the longest n-grams are the most specific, but a slip breaks most of them: compare "
                "the hit rates of the four lengths you measured.", like=6),
        Mistake("hit_rate", "the answer is the n-gram length n (3, 4, 5 or 6), not its hit rate: put the n "
                "whose misspelling test found the right word most often.",
                when=lambda answer, **_: 0 < float(answer) < 1, example=0.4),
        Mistake("second_best", "that length comes second: look again at which n gives the most hits.",
                like=lambda fasttext, words: 4 if _best_single_n(fasttext, words) == 3 else 3),
    ],
    example_context=dict(zip(("fasttext", "words"), _example_fasttext())),
)

EXERCISES = [check_glove_weight, check_char_ngrams, check_glove_cell, check_adagrad_step, check_best_ngram_length]
