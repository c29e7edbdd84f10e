"""Checkers for lesson 07 (word2vec): the embedding layer's backward, one score's gradient, the
noise distribution, a batch's negative-sampling gradients, the SGD step, and subsampling."""
from __future__ import annotations

import numpy as np
import torch

from helpers.exercises import (
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.lib.hsoftmax import hs_loss_and_grads
from helpers.lib.layers import Embedding, SigmoidCrossEntropy
from helpers.lib.negative_sampling import (
    EmbeddingDot,
    NoiseSampler,
    sgns_pair_gradients,
    unigram_noise,
    unigram_table,
)
from helpers.lib.optim import SGD
from helpers.lib.sgns import ns_loss_and_gradients, one_hot_sums, scatter_rows, sgd_step
from helpers.lib.word2vec import keep_probabilities

NS_FORBIDDEN = (ns_loss_and_gradients, sgns_pair_gradients, hs_loss_and_grads, EmbeddingDot,
                SigmoidCrossEntropy)


def _sig(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))      # σ(x) without overflow


# ---------------------------------------------------------------- warm-up: the embedding's backward
def _embedding_backward_reference(ids, dout, vocab_size):
    dW = np.zeros((vocab_size, dout.shape[1]))
    np.add.at(dW, ids, dout)
    return dW


def _repeats(f):
    expect_equal(np.shape(f(np.array([1, 3]), np.ones((2, 4)), 5)), (5, 4),
                 "shape of dW for ids [1, 3], dout (2, 4), vocab_size=5")
    dout = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    expect_close(f(np.array([0, 2, 0, 4]), dout, 5), [[6, 8], [0, 0], [3, 4], [0, 0], [7, 8]],
                 "dW for the repeated ids [0, 2, 0, 4] (the lesson's example)")


def _many_repeats(f):
    rng = np.random.default_rng(7)
    ids, dout = rng.integers(0, 6, size=40), rng.standard_normal((40, 3))
    expect_close(f(ids, dout, 9), _embedding_backward_reference(ids, dout, 9),
                 "dW for 40 random ids among 9 words (most repeated, three never used)")


def _assigned(ids, dout, vocab_size):
    dW = np.zeros((vocab_size, dout.shape[1]))
    dW[ids] = dout
    return dW


check_embedding_backward = FunctionExercise(
    "embedding backward", [_repeats, _many_repeats], reference=_embedding_backward_reference,
    step="warm-up", forbidden=(Embedding, EmbeddingDot, scatter_rows, one_hot_sums),
    mistakes=[
        Mistake("assigned", "dW[ids] = dout keeps only the last gradient of a repeated id: "
                "repeated ids must be summed, with np.add.at(dW, ids, dout).", like=_assigned),
        Mistake("rows_not_scattered", "dout holds one gradient per looked-up row (N, D); dW is "
                "the gradient of the whole table (vocab_size, D): start from zeros and add each "
                "row of dout into row ids[i].", like=lambda ids, dout, vocab_size: dout),
        Mistake("one_hot_wrong_side", "with the lookup written as one_hot @ W, the gradient is "
                "one_hot.T @ dout (vocab_size, D), not dout.T @ one_hot (its transpose).",
                like=lambda ids, dout, vocab_size: dout.T @ np.eye(vocab_size)[ids]),
    ])


# ---------------------------------------------------------------- warm-up: one score's gradient
def _bce(s, t):
    return np.logaddexp(0, -s) * t + np.logaddexp(0, s) * (1 - t)   # −t log σ(s) − (1−t) log σ(−s)


def _score_reference(s, t):
    return _sig(s) - np.asarray(t, dtype=float)


def _score_worked(f):
    s, t = np.array([-3.0, -0.5, 0.0, 0.7, 4.0]), np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    expect_gradients_match_numerical(
        [f(s.copy(), t.copy())], lambda x: float(np.sum(_bce(x, t))), [s],
        ["dL/ds for s = [-3, -0.5, 0, 0.7, 4], t = [1, 0, 1, 0, 1]"])


def _score_matrix(f):
    rng = np.random.default_rng(1)
    s, t = rng.normal(0, 2, (3, 4)), (rng.random((3, 4)) < 0.5).astype(float)
    expect_close(f(s.copy(), t.copy()), _score_reference(s, t),
                 "dL/ds for a (3, 4) array of scores and labels", rtol=1e-7)


def _score_extremes(f):
    s, t = np.array([800.0, 800.0, -800.0, -800.0]), np.array([1.0, 0.0, 1.0, 0.0])
    with np.errstate(all="ignore"):
        got = f(s.copy(), t.copy())
    expect_close(got, [0.0, 1.0, -1.0, 0.0], "dL/ds for scores of ±800 (simplify before you "
                 "code: y(1 - y) is 0 there in floating point)", atol=1e-12)


check_score_gradient = FunctionExercise(
    "the gradient of one score", [_score_worked, _score_matrix, _score_extremes],
    reference=_score_reference, step="warm-up", forbidden=NS_FORBIDDEN,
    explanation=("dL/ds = (y - t) / (y(1 - y)) · y(1 - y) = y - t = σ(s) - t: the prediction "
                 "minus the label, the same form as the softmax's ŷ - y. Every negative-sampling "
                 "and hierarchical-softmax gradient of this lesson starts from it."),
    mistakes=[
        Mistake("sign", "you have t - y: the loss falls when the score moves towards the label, "
                "so its gradient is the prediction minus the label.",
                like=lambda s, t: -_score_reference(s, t)),
        Mistake("only_dL_dy", "that is dL/dy alone; multiply by dy/ds = y(1 - y), and simplify.",
                like=lambda s, t: _score_reference(s, t) / (_sig(s) * (1 - _sig(s)))),
        Mistake("label_ignored", "the label t matters: for t = 1 the gradient is σ(s) - 1, for "
                "t = 0 it is σ(s).", like=lambda s, t: _sig(s)),
    ])


# ---------------------------------------------------------------- warm-up: the noise distribution
def _noise_reference(counts, power=0.75):
    return unigram_noise(np.asarray(counts, dtype=float), power)


def _lesson_example(f):
    got = f(np.array([0.8, 0.15, 0.05]), 0.75)
    expect_close(np.round(got, 3), [0.709, 0.202, 0.089],
                 "the lesson's example rounded to 3 decimals")


def _counts_not_probs(f):
    p = np.array([0.3, 0.1, 0.0, 0.6]) ** 0.75
    expect_close(f(np.array([30, 10, 0, 60]), 0.75), p / p.sum(),
                 "probabilities from raw counts [30, 10, 0, 60] (the unseen word gets 0)")
    expect_close(f(np.array([1.0, 3.0]), 1.0), [0.25, 0.75],
                 "power 1 (plain unigram) for counts [1, 3]")


def _wide_range(f):
    counts = np.array([3e9, 1.0, 0.0, 2e4])
    expect_close(f(counts, 0.75), _noise_reference(counts, 0.75),
                 "counts spanning 1 to 3·10⁹ (and an unseen word)", rtol=1e-9, atol=1e-15)


def _unigram(counts, power=0.75):
    return np.asarray(counts, float) / np.sum(counts)


check_noise_distribution = FunctionExercise(
    "noise distribution", [_lesson_example, _counts_not_probs, _wide_range],
    reference=_noise_reference, step="warm-up",
    forbidden=(unigram_noise, NoiseSampler, unigram_table),
    mistakes=[
        Mistake("not_renormalised", "after raising to the power the values no longer sum to 1: "
                "divide by their sum.", like=lambda counts, power=0.75: _unigram(counts) ** power),
        Mistake("power_ignored", "raise the unigram probabilities to the power (0.75 flattens the "
                "distribution: rare words are drawn more often).", like=_unigram),
        Mistake("add_one", "no add-one smoothing here: a word never seen gets probability 0.",
                like=lambda counts, power=0.75: _noise_reference(np.asarray(counts, float) + 1,
                                                                 power)),
    ])


# ---------------------------------------------------------------- core: negative-sampling gradients
def _ns_reference(v, u_c, U_neg):
    s_c, s_neg = np.einsum("bd,bd->b", u_c, v), np.einsum("bkd,bd->bk", U_neg, v)
    loss = np.logaddexp(0, -s_c) + np.logaddexp(0, s_neg).sum(axis=1)
    g_c, g_neg = _sig(s_c) - 1.0, _sig(s_neg)
    dv = g_c[:, None] * u_c + np.einsum("bk,bkd->bd", g_neg, U_neg)
    return loss, dv, g_c[:, None] * v, g_neg[:, :, None] * v[:, None, :]


NS_NAMES = ("loss", "dv", "du_c", "dU_neg")


def _ns_case(seed, B, d, k):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 0.7, (B, d)), rng.normal(0, 0.7, (B, d)), rng.normal(0, 0.7, (B, k, d))


def _ns_torch_loss(v, u_c, U_neg):
    s_c, s_neg = (u_c * v).sum(1), (U_neg * v[:, None, :]).sum(2)
    return -torch.nn.functional.logsigmoid(s_c) - torch.nn.functional.logsigmoid(-s_neg).sum(1)


def _ns_against(f, case, what):
    got = f(*(a.copy() for a in case))
    expect_tuple(got, NS_NAMES)
    for name, g, e in zip(NS_NAMES, got, _ns_reference(*case), strict=True):
        expect_close(g, e, f"{name} ({what})", rtol=1e-9)
    return got


def _ns_worked(f):
    v, u_c = np.array([[1.0, 0.0]]), np.array([[1.0, 0.5]])
    U_neg = np.array([[[0.0, 3.0], [-2.0, 1.0]]])
    _ns_against(f, (v, u_c, U_neg), "one pair: s_c = 1, the noise scores 0 and -2")
    v, u_c = np.array([[40.0, 0.0], [-40.0, 0.0]]), np.array([[20.0, 1.0], [20.0, 1.0]])
    U_neg = np.array([[[-20.0, 0.0], [20.0, 0.0]], [[0.5, 3.0], [-20.0, 2.0]]])
    with np.errstate(all="ignore"):
        _ns_against(f, (v, u_c, U_neg),
                    "scores of ±800: -log σ(s) = log(1 + e^(-s)) is still finite")


def _ns_against_torch(f):
    v, u_c, U_neg = _ns_case(1, 3, 5, 4)
    got = f(v.copy(), u_c.copy(), U_neg.copy())
    expect_tuple(got, NS_NAMES)
    expect_close(got[0], _ns_torch_loss(*map(torch.from_numpy, (v, u_c, U_neg))).numpy(),
                 "the per-pair losses (B=3, k=4), shape (3,)")
    expect_gradients_match_torch(got[1:], _ns_torch_loss, [v, u_c, U_neg],
                                 [f"{n} (B=3, d=5, k=4)" for n in NS_NAMES[1:]], dout=np.ones(3))


def _ns_against_finite_differences(f):
    v, u_c, U_neg = _ns_case(5, 2, 3, 2)
    got = f(v.copy(), u_c.copy(), U_neg.copy())
    expect_tuple(got, NS_NAMES)
    expect_gradients_match_numerical(
        got[1:], lambda a, b, c: float(np.sum(_ns_reference(a, b, c)[0])), [v, u_c, U_neg],
        [f"{n} (finite differences)" for n in NS_NAMES[1:]])


def _ns_negatives_wrong_sign(v, u_c, U_neg):
    loss, dv, du_c, dU = _ns_reference(v, u_c, U_neg)
    noise = np.einsum("bk,bkd->bd", _sig(np.einsum("bkd,bd->bk", U_neg, v)), U_neg)
    return loss, dv - 2 * noise, du_c, -dU


def _ns_positive_no_target(v, u_c, U_neg):
    loss, dv, du_c, dU = _ns_reference(v, u_c, U_neg)
    return loss, dv + u_c, du_c + v, dU


def _ns_naive_log(v, u_c, U_neg):
    s_c, s_neg = np.einsum("bd,bd->b", u_c, v), np.einsum("bkd,bd->bk", U_neg, v)
    sig = lambda x: 1 / (1 + np.exp(-x))                 # noqa: E731 (the student's one-liner)
    loss = -np.log(sig(s_c)) - np.log(sig(-s_neg)).sum(axis=1)
    return (loss,) + _ns_reference(v, u_c, U_neg)[1:]


check_ns_gradients = FunctionExercise(
    "negative-sampling gradients",
    [_ns_worked, _ns_against_torch, _ns_against_finite_differences],
    reference=_ns_reference, step="core", forbidden=NS_FORBIDDEN + (sgd_step,),
    explanation=("Every score s gets the same rule, dL/ds = σ(s) - t. The word's vector collects "
                 "Σ (σ(s) - t) · u over the 1 + k output vectors, and each output vector gets "
                 "(σ(s) - t) · v: a pair costs 1 + k dot products, whatever the vocabulary size."),
    mistakes=[
        Mistake("negatives_wrong_sign", "for a noise word the loss is -log σ(-s), whose "
                "derivative is +σ(s) (the rule σ(s) - t with t = 0): the noise words enter dv and "
                "dU_neg with a plus.", like=_ns_negatives_wrong_sign),
        Mistake("positive_no_target", "for the true context t = 1: its gradient is σ(s_c) - 1, "
                "not σ(s_c) (you treated it as a noise word).", like=_ns_positive_no_target),
        Mistake("batch_mean", "return one loss per pair, shape (B,): the training step averages "
                "them itself.", when=lambda out, *args: np.ndim(out[0]) == 0,
                example=lambda *a: (float(np.mean(_ns_reference(*a)[0])),)
                + _ns_reference(*a)[1:]),
        Mistake("unstable_loss", "-np.log(sigmoid(s)) overflows for large |s| (e^800 is inf, "
                "σ(-800) becomes 0, its log -inf): write -log σ(s) as np.logaddexp(0, -s), "
                "log(1 + e^(-s)) without overflow.",
                when=lambda out, *args: not np.all(np.isfinite(np.asarray(out[0], float))),
                example=_ns_naive_log),
    ])


# ---------------------------------------------------------------- core: the SGD training step
def _scatter_update(C, contexts, negatives, du_c, dU_neg, lr):
    """C's rows move by -lr times the sum of their gradients (repeated ids add up)."""
    B, k = negatives.shape
    np.add.at(C, np.concatenate([contexts, negatives.reshape(-1)]),
              -lr * np.concatenate([du_c, dU_neg.reshape(B * k, -1)]))


def _step_reference(W, C, words, contexts, negatives, lr, gradients):
    loss, dv, du_c, dU_neg = gradients(W[words], C[contexts], C[negatives])  # all before updating
    np.add.at(W, words, -lr * dv)                                            # repeated ids add up
    _scatter_update(C, contexts, negatives, du_c, dU_neg, lr)
    return float(np.mean(loss)), W, C


def _step_tiny():
    """6 words, d = 3, 4 pairs, k = 2, with repeated words among words, contexts and noise."""
    rng = np.random.default_rng(3)
    W, C = rng.normal(0, 0.5, (6, 3)), rng.normal(0, 0.5, (6, 3))
    return (W, C, np.array([1, 2, 1, 0]), np.array([4, 5, 0, 2]),
            np.array([[3, 3], [4, 0], [2, 5], [4, 1]]))


def _step_case(f, W, C, words, contexts, negatives, lr, gradients, what):
    expected = _step_reference(W.copy(), C.copy(), words, contexts, negatives, lr, gradients)
    got = f(W, C, words, contexts, negatives, lr, gradients)
    expect_tuple(got, ("loss", "W", "C"))
    expect_close(got[0], expected[0], f"the batch's mean loss per pair ({what})")
    for name, g, e in zip(("W", "C"), got[1:], expected[1:], strict=True):
        expect_close(g, e, f"{name} after one step ({what})")


def _step_repeats(f):
    _step_case(f, *_step_tiny(), 0.1, _ns_reference,
               "6 words, 4 pairs, k = 2, repeated ids, lr = 0.1")


def _step_random(f):
    rng = np.random.default_rng(11)
    W, C = rng.normal(0, 0.3, (40, 8)), rng.normal(0, 0.3, (40, 8))
    _step_case(f, W, C, rng.integers(0, 40, 64), rng.integers(0, 40, 64),
               rng.integers(0, 40, (64, 5)), 0.025, _ns_reference, "V=40, d=8, B=64, k=5, lr=0.025")


def _fixed_gradients(v, u_c, U_neg):
    """A stand-in with known outputs: the step must use the gradients function it is given."""
    B, k, d = U_neg.shape
    return (np.full(B, 2.0), np.tile(np.arange(1.0, d + 1), (B, 1)), np.full((B, d), -1.0),
            np.full((B, k, d), 0.5))


def _step_uses_given_gradients(f):
    _step_case(f, *_step_tiny(), 0.5, _fixed_gradients, "a stand-in gradients function whose "
               "outputs are known: the step must call the one it is given")


def _step_buffered(W, C, words, contexts, negatives, lr, gradients):
    loss, dv, du_c, dU_neg = gradients(W[words], C[contexts], C[negatives])
    W[words] -= lr * dv
    C[contexts] -= lr * du_c
    C[negatives] -= lr * dU_neg
    return float(np.mean(loss)), W, C


def _step_stale(W, C, words, contexts, negatives, lr, gradients):
    loss, dv, _, _ = gradients(W[words], C[contexts], C[negatives])
    np.add.at(W, words, -lr * dv)                                        # W moves first ...
    _, _, du_c, dU_neg = gradients(W[words], C[contexts], C[negatives])  # ... C's from the new W
    _scatter_update(C, contexts, negatives, du_c, dU_neg, lr)
    return float(np.mean(loss)), W, C


check_sgd_step = FunctionExercise(
    "the SGD training step", [_step_repeats, _step_random, _step_uses_given_gradients],
    reference=_step_reference, step="core",
    forbidden=(sgd_step, scatter_rows, ns_loss_and_gradients, EmbeddingDot, Embedding,
               one_hot_sums, SGD, _scatter_update),
    explanation=("One step gathers the rows the batch uses, computes every gradient from those "
                 "values, and moves each row by -lr times the SUM of its gradients: a word used "
                 "three times gets three contributions, as in the embedding layer's backward "
                 "pass."),
    mistakes=[
        Mistake("buffered", "W[words] -= lr * dv applies a repeated row only once (NumPy writes "
                "the rows one after another, each overwriting the last): add repeated ids' "
                "updates with np.add.at(W, words, -lr * dv).", like=_step_buffered),
        Mistake("ascent", "the update goes against the gradient: subtract lr times the gradient "
                "(you added it).",
                like=lambda W, C, w, c, n, lr, g: _step_reference(W, C, w, c, n, -lr, g)),
        Mistake("mean_gradient", "each pair moves its rows by lr times its own gradient: sum the "
                "gradients over the batch, do not average them.",
                like=lambda W, C, w, c, n, lr, g: _step_reference(W, C, w, c, n, lr / len(w), g)),
        Mistake("stale", "compute every gradient from the values before the step, then update: "
                "you moved W first and computed C's gradients from the new W.", like=_step_stale),
    ])


# ---------------------------------------------------------------- experiment: always kept
def _always_kept_ratio(sample: float = 1e-4) -> float:
    """The largest f / t whose occurrences keep_probabilities keeps all, by bisection."""
    total, lo, hi = 1e12, 0.01, 100.0
    for _ in range(80):
        mid = (lo + hi) / 2
        counts = np.array([mid * sample * total, total - mid * sample * total])
        lo, hi = (mid, hi) if keep_probabilities(counts, sample)[0] >= 1.0 else (lo, mid)
    return lo


check_always_kept = ExperimentExercise(
    "the words subsampling never touches", _always_kept_ratio, atol=0.0005,
    explanation=("The code keeps an occurrence with probability (√(f/t) + 1) · t/f. With x = f/t "
                 "that is (√x + 1)/x, at least 1 while √x + 1 ≥ x, i.e. up to √x = (1 + √5)/2, "
                 "the golden ratio: x = φ². The paper's √(t/f) would start discarding at f = t "
                 "already."),
    mistakes=[
        Mistake("paper_formula", "that is where the paper's keep probability √(t/f) reaches 1; "
                "the code uses (√(f/t) + 1) · t/f, which stays at 1 a little longer.", like=1.0),
        Mistake("golden_ratio", "that is √x = (1 + √5)/2; the question asks for x = f/t itself, "
                "its square.", like=(1 + 5 ** 0.5) / 2),
        Mistake("frequency_not_ratio", "that is a relative frequency f; the question asks for the "
                "ratio f/t (divide by t = 10⁻⁴).", like=lambda: 1e-4 * _always_kept_ratio()),
    ],
)

EXERCISES = [check_embedding_backward, check_score_gradient, check_noise_distribution,
             check_ns_gradients, check_sgd_step, check_always_kept]
