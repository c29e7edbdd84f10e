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
    expect_tuple,
)
from helpers.lib.fasttext import (
    FastTextVectors,
    SubwordEmbedding,
    char_ngrams,
    misspelling_test,
    ngram_buckets,
)
from helpers.lib.glove import GloVeNumpy, glove_weight, train_pairwise
from helpers.lib.glove_numpy import PairwiseGloVe, adagrad_glove_c, glove_cell


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
    "GloVe's weighting function", [_worked_values, _capped, _uses_arguments, _matrix], reference=glove_weight,
    step="warm-up", forbidden=(glove_cell, GloVeNumpy.pair_terms),
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
    step="warm-up", forbidden=(char_ngrams, ngram_buckets, SubwordEmbedding),
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


# ----------------------------------------------------------------------------- core: a batch of GloVe cells
NAMES = ("loss", "dw", "dw_t", "db", "db_t")
X_MAX, ALPHA = 10.0, 0.75


def _cell_batch(seed, x=(0.5, 3.0, 7.0, 30.0, 100.0)):
    """Five pairs, D = 4: counts below 1 (log x < 0), below x_max = 10 and above it."""
    rng = np.random.default_rng(seed)
    P = len(x)
    return (rng.normal(0, 0.5, (P, 4)), rng.normal(0, 0.5, (P, 4)), rng.normal(0, 0.3, P), rng.normal(0, 0.3, P),
            np.array(x, dtype=float))


def _call_cell(f, case):
    w, w_t, b, b_t, x = case
    got = f(w.copy(), w_t.copy(), b.copy(), b_t.copy(), x.copy(), X_MAX, ALPHA)
    expect_tuple(got, NAMES)
    return got


def _cell_values(f):
    case = _cell_batch(0)
    got = _call_cell(f, case)
    for name, g, r in zip(NAMES, got, glove_cell(*case, X_MAX, ALPHA), strict=True):
        expect_close(g, r, f"{name} for a batch of 5 cells (x = 0.5, 3, 7, 30, 100; x_max = 10, alpha = 0.75)",
                     rtol=1e-7)


def _cell_finite_differences(f):
    """The student's gradients against central differences of the student's own summed loss."""
    w, w_t, b, b_t, x = _cell_batch(1)
    got = _call_cell(f, (w, w_t, b, b_t, x))
    h = 1e-6

    def loss(*params):
        return float(f(*(p.copy() for p in params), x.copy(), X_MAX, ALPHA)[0])
    params = [w, w_t, b, b_t]
    for k, name in enumerate(NAMES[1:]):
        num = np.zeros_like(params[k])
        for idx in np.ndindex(params[k].shape):
            up, down = [p.copy() for p in params], [p.copy() for p in params]
            up[k][idx] += h
            down[k][idx] -= h
            num[idx] = (loss(*up) - loss(*down)) / (2 * h)
        expect_close(got[k + 1], num, f"{name} against central finite differences of your loss", rtol=1e-5, atol=1e-7)


def _cell_torch(f):
    w, w_t, b, b_t, x = _cell_batch(2)
    got = _call_cell(f, (w, w_t, b, b_t, x))
    t = [torch.tensor(a, requires_grad=True) for a in (w, w_t, b, b_t)]
    fx = torch.tensor(np.where(x < X_MAX, (x / X_MAX) ** ALPHA, 1.0))
    e = (t[0] * t[1]).sum(1) + t[2] + t[3] - torch.log(torch.tensor(x))
    J = (fx * e * e).sum()
    J.backward()
    expect_close(got[0], J.item(), "the loss against PyTorch", rtol=1e-7)
    for name, g, ref in zip(NAMES[1:], got[1:], t, strict=True):
        expect_close(g, ref.grad.numpy(), f"{name} against PyTorch autograd", rtol=1e-7)


def _summed_over_pairs(w, w_t, b, b_t, x, x_max, alpha):
    loss, dw, dwt, db, dbt = glove_cell(w, w_t, b, b_t, x, x_max, alpha)
    return loss, dw.sum(0), dwt.sum(0), db.sum(), dbt.sum()


check_glove_cell = FunctionExercise(
    "GloVe's loss and gradients for a batch of cells", [_cell_values, _cell_finite_differences, _cell_torch],
    reference=glove_cell, step="core",
    forbidden=(glove_weight, GloVeNumpy, GloVeNumpy.forward, GloVeNumpy.backward, GloVeNumpy.pair_terms,
               GloVeNumpy.pair_gradients, train_pairwise),
    mistakes=[
        Mistake("no_factor_two", "the loss is f·e²: its derivative with respect to e is 2·f·e — the factor 2 is "
                "missing from your gradients.",
                like=lambda *a: (lambda r: (r[0], r[1] / 2, r[2] / 2, r[3] / 2, r[4] / 2))(glove_cell(*a))),
        Mistake("count_not_log", "the target is log X_ij, not the count X_ij itself: e = w·w~ + b + b~ - log x.",
                like=lambda w, w_t, b, b_t, x, x_max, alpha: glove_cell(w, w_t, b, b_t, np.exp(x), x_max, alpha)),
        Mistake("weight_missing", "weight each cell by f(x): J = Σ f(x)·e², so every gradient carries f(x) too.",
                like=lambda w, w_t, b, b_t, x, x_max, alpha: glove_cell(w, w_t, b, b_t, x, 1e-12, alpha)),
        Mistake("not_capped", "f(x) is capped at 1 from x_max on: the pairs with x = 30 and 100 (above x_max = 10) "
                "have weight 1, not (x / x_max)^alpha.",
                like=lambda *a: _uncapped(*a)),
        Mistake("vectors_swapped", "dJ/dw_i = 2·f·e·w~_j (the *other* vector) and dJ/dw~_j = 2·f·e·w_i: "
                "yours are swapped.",
                like=lambda *a: (lambda r: (r[0], r[2], r[1], r[3], r[4]))(glove_cell(*a))),
        Mistake("mean_loss", "return the sum of the cells' losses, Σ f e², not their mean (the gradients are "
                "those of the sum).",
                like=lambda *a: (lambda r: (r[0] / len(a[4]),) + r[1:])(glove_cell(*a))),
        Mistake("summed_over_pairs", "return one gradient per pair — dw of shape (P, D), db of shape (P,): the "
                "trainer adds the gradients of a word that occurs in several pairs itself.",
                when=lambda out, *args: np.ndim(out[1]) == 1, example=_summed_over_pairs),
    ])


def _uncapped(w, w_t, b, b_t, x, x_max, alpha):
    f = (np.asarray(x, float) / x_max) ** alpha
    e = np.sum(w * w_t, axis=-1) + b + b_t - np.log(x)
    g = 2 * f * e
    return float(np.sum(f * e * e)), g[:, None] * w_t, g[:, None] * w, g, g


# ----------------------------------------------------------------------------- core: glove.c's AdaGrad step
def _adagrad_case(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, 5), rng.normal(0, 1, 5), rng.uniform(1.0, 3.0, 5)


def _adagrad_values(f):
    p, g, G = _adagrad_case(0)
    got = f(p.copy(), g.copy(), G.copy(), 0.1)
    expect_tuple(got, ("new_param", "new_G"))
    ref = adagrad_glove_c(p, g, G, 0.1)
    expect_close(got[1], ref[1], "the sum G after one step with lr = 0.1 (G + (lr·g)²)", rtol=1e-9)
    expect_close(got[0], ref[0], "the parameter after one step with lr = 0.1 (divided by the √G of before the step)",
                 rtol=1e-9)


def _glove_c_loop(p, grads, lr):
    """glove.c's update of one parameter vector, element by element, from G = 1 (its start)."""
    p, G = [float(v) for v in p], [1.0] * len(p)
    for g in grads:
        for k in range(len(p)):
            step = lr * float(g[k])
            p[k] -= step / G[k] ** 0.5
            G[k] += step * step
    return np.array(p), np.array(G)


def _adagrad_three_steps(f):
    p, g, _ = _adagrad_case(1)
    grads = [g, -2 * g, 0.5 * g]
    mine_p, mine_G = p.copy(), np.ones_like(p)
    for grad in grads:
        mine_p, mine_G = f(mine_p, grad.copy(), mine_G, 0.5)
    ref_p, ref_G = _glove_c_loop(p, grads, 0.5)
    expect_close(mine_G, ref_G, "G after three steps from G = 1 (lr 0.5), against glove.c's loop", rtol=1e-9)
    expect_close(mine_p, ref_p, "the parameter after three steps from G = 1 (lr 0.5), against glove.c's loop",
                 rtol=1e-9)


def _adagrad_in_training(f):
    """One epoch pair by pair with your step: the reference trainer's vectors."""
    rng = np.random.default_rng(3)
    counts = sp.csr_matrix((rng.poisson(3.0, (8, 8)) * (rng.random((8, 8)) < 0.6)).astype(np.float64))
    mine = PairwiseGloVe(counts, dim=3, lr=0.1, x_max=5.0, batch_size=1, seed=3, step=f)
    for _ in range(mine.P):
        mine.step()
    ref = train_pairwise(counts, dim=3, epochs=1, lr=0.1, x_max=5.0, batch_size=1, seed=3, progress=False)
    expect_close(mine.vectors(), ref.W + ref.W_tilde, f"W + W~ after one epoch of {mine.P} pairs, one AdaGrad "
                 "step per pair with your function, against the shipped model's trainer (train_pairwise)",
                 rtol=1e-4, atol=1e-6)


check_adagrad_step = FunctionExercise(
    "glove.c's AdaGrad step", [_adagrad_values, _adagrad_three_steps, _adagrad_in_training],
    reference=adagrad_glove_c, step="core", forbidden=(PairwiseGloVe, train_pairwise),
    mistakes=[
        Mistake("torch_order", "that is torch.optim.Adagrad's order (add g² to G, then divide by the new √G); "
                "glove.c divides the step lr·g by the √G of *before* the step, then adds the step's square "
                "(lr·g)² to G.",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G + grad * grad), G + grad * grad)),
        Mistake("squared_gradient", "glove.c adds the square of the *step*, (lr·g)², to G — not the squared "
                "gradient g².",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G), G + grad * grad)),
        Mistake("new_G_first", "divide by the √G of before the step: glove.c adds (lr·g)² to G only after the "
                "step is taken.",
                like=lambda param, grad, G, lr: (param - lr * grad / np.sqrt(G + (lr * grad) ** 2),
                                                  G + (lr * grad) ** 2)),
        Mistake("no_square_root", "divide by the square root of the sum, √G, not by G.",
                like=lambda param, grad, G, lr: (param - lr * grad / G, G + (lr * grad) ** 2)),
        Mistake("ascent", "step *against* the gradient: param - lr·g/√G (you went uphill).",
                like=lambda param, grad, G, lr: (param + lr * grad / np.sqrt(G), G + (lr * grad) ** 2)),
    ])


# ----------------------------------------------------------------------------- experiment: one n-gram length
LENGTHS = (3, 4, 5, 6)


def _example_fasttext():
    """A small fastText-like model (the measurement without context, and the tests): words whose
    vectors are the mean of their n-gram buckets."""
    rng = np.random.default_rng(0)
    words = ["government", "election", "football", "economy", "minister", "national", "children", "business"]
    ngrams = rng.normal(0, 1, (5000, 8)).astype(np.float32)
    base = FastTextVectors(words, np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32), ngrams, 3, 6, 0.0)
    W = np.stack([base.vector(w + "#") for w in words])
    return FastTextVectors(words, W, W, ngrams, 3, 6, 0.0), words


_MEMO: dict = {}


def single_length_hits(fasttext: FastTextVectors | None = None, words=None, k: int = 5) -> dict[int, float]:
    """The misspelling hit rate of each single n-gram length (min_n = max_n = n over the model's
    buckets): {n: mean hits}. Without a model, the small example model and its words. Raises
    ValueError naming what is wrong with ``fasttext`` or ``words``."""
    if fasttext is None and words is None:
        fasttext, words = _example_fasttext()
    if not isinstance(fasttext, FastTextVectors):
        raise ValueError(f"fasttext must be the lesson's fastText model (FastTextVectors), got "
                         f"{type(fasttext).__name__}")
    if words is None:
        words = list(fasttext.itos[:200])
    if not isinstance(words, (list, tuple)) or not words or not all(isinstance(w, str) for w in words):
        raise ValueError("words must be a non-empty list of words: pass the lesson's `words`, the 200 words of "
                         f"the misspelling test (got {words!r:.60})")
    short = [w for w in words if len(w) < 4]
    if short:
        raise ValueError(f"every word needs at least 4 letters to be misspelled, got {short[:3]}")
    key = (id(fasttext), fasttext.ngram_vectors.shape, tuple(words), k)
    if key not in _MEMO:
        hits = {}
        for n in LENGTHS:
            single = FastTextVectors(fasttext.itos, fasttext.W, fasttext.word_vectors, fasttext.ngram_vectors, n, n, 0.0)
            hits[n] = float(misspelling_test(single, words, k=k)["hits"].mean())
        _MEMO.clear()
        _MEMO[key] = hits
    return _MEMO[key]


def _best_single_n(fasttext: FastTextVectors | None = None, words=None) -> int:
    hits = single_length_hits(fasttext, words)
    return max(hits, key=hits.get)


check_best_ngram_length = ExperimentExercise(
    "the n-gram length that finds misspellings",
    _best_single_n,
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
                like=lambda fasttext=None, words=None: sorted(single_length_hits(fasttext, words).items(),
                                                              key=lambda kv: -kv[1])[1][0]),
    ],
    example_context=dict(zip(("fasttext", "words"), _example_fasttext())),
)

EXERCISES = [check_glove_weight, check_glove_cell, check_adagrad_step, check_char_ngrams, check_best_ngram_length]
