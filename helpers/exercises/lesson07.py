"""Checkers for lesson 07 (the embedding layer and word2vec): the embedding layer's backward, the
noise distribution, the negative-sampling gradients of a batch, the SGD training step, and an
experiment with the subsampling formula."""
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
from helpers.lib.layers import Embedding, SigmoidCrossEntropy
from helpers.lib.negative_sampling import (
    CBOWNS,
    EmbeddingDot,
    NoiseSampler,
    SkipGramNS,
    sgns_pair_gradients,
    unigram_noise,
    unigram_table,
)
from helpers.lib.sgns import ns_loss_and_gradients, scatter_rows, sgd_step
from helpers.lib.word2vec import keep_probabilities


# ----------------------------------------------------------------------------- the embedding layer's backward
def _embedding_backward_reference(ids, dout, vocab_size):
    dW = np.zeros((vocab_size, dout.shape[1]))
    np.add.at(dW, ids, dout)
    return dW


def _shapes(f):
    dW = f(np.array([1, 3]), np.ones((2, 4)), 5)
    expect_equal(np.shape(dW), (5, 4), "shape of dW for ids [1, 3], dout (2, 4), vocab_size=5")


def _no_repeats(f):
    dout = np.arange(6.0).reshape(3, 2)
    expect_close(f(np.array([2, 0, 3]), dout, 4), _embedding_backward_reference(np.array([2, 0, 3]), dout, 4),
                 "dW when every id appears once (ids [2, 0, 3])")


def _repeats(f):
    # the lesson's example: ids [0, 2, 0, 4]; row 0 receives the sum of two rows of dout
    dout = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    exp = np.zeros((5, 2))
    exp[0], exp[2], exp[4] = [6.0, 8.0], [3.0, 4.0], [7.0, 8.0]
    expect_close(f(np.array([0, 2, 0, 4]), dout, 5), exp, "dW for the repeated ids [0, 2, 0, 4]")


def _many_repeats(f):
    rng = np.random.default_rng(7)
    ids, dout = rng.integers(0, 6, size=40), rng.standard_normal((40, 3))
    expect_close(f(ids, dout, 9), _embedding_backward_reference(ids, dout, 9),
                 "dW for 40 random ids among 9 words (most repeated, three never used)")


def _assigned(ids, dout, vocab_size):
    dW = np.zeros((vocab_size, dout.shape[1]))
    dW[ids] = dout
    return dW


def _one_hot_wrong_side(ids, dout, vocab_size):
    one_hot = np.eye(vocab_size)[ids]                    # (N, V)
    return dout.T @ one_hot                              # (D, V)


def _averaged(ids, dout, vocab_size):
    dW = _embedding_backward_reference(ids, dout, vocab_size)
    seen = np.bincount(ids, minlength=vocab_size)
    return dW / np.maximum(seen, 1)[:, None]


check_embedding_backward = FunctionExercise(
    "embedding backward", [_shapes, _no_repeats, _repeats, _many_repeats], reference=_embedding_backward_reference,
    step="warm-up", forbidden=(Embedding, Embedding.backward, EmbeddingDot, scatter_rows),
    mistakes=[
        Mistake("assigned", "a repeated id keeps only the last gradient with dW[ids] = dout: repeated ids must "
                "be summed, with np.add.at(dW, ids, dout).", like=_assigned),
        Mistake("rows_not_scattered", "dout holds one gradient per looked-up row (N, D); dW is the gradient of "
                "the whole table (vocab_size, D): start from zeros and add each row of dout into row ids[i].",
                like=lambda ids, dout, vocab_size: dout),
        Mistake("one_hot_wrong_side", "with the lookup written as one_hot @ W, the gradient is one_hot.T @ dout "
                "(vocab_size, D), not dout.T @ one_hot (its transpose).", like=_one_hot_wrong_side),
        Mistake("averaged", "a repeated id receives the SUM of its rows of dout, not their mean: each "
                "occurrence contributes to the loss.", like=_averaged),
    ])


# ----------------------------------------------------------------------------- the noise distribution
def _noise_reference(counts, power=0.75):
    return unigram_noise(np.asarray(counts, dtype=float), power)


def _renormalised(p):
    return p / p.sum()


def _lesson_example(f):
    got = f(np.array([0.8, 0.15, 0.05]), 0.75)
    expect_close(np.sum(got), 1.0, "sum of the probabilities for [0.8, 0.15, 0.05]")
    expect_close(np.round(got, 3), [0.709, 0.202, 0.089], "the lesson's example rounded to 3 decimals")


def _counts_not_probs(f):
    got = f(np.array([30, 10, 0, 60]), 0.75)
    p = np.array([0.3, 0.1, 0.0, 0.6]) ** 0.75
    expect_close(got, p / p.sum(), "probabilities from raw counts [30, 10, 0, 60] (the unseen word gets 0)")


def _wide_range(f):
    counts = np.array([3e9, 1.0, 0.0, 2e4])            # a corpus of three billion tokens: no overflow, no underflow
    expect_close(f(counts, 0.75), _noise_reference(counts, 0.75), "counts spanning 1 to 3·10⁹ (and an unseen word)",
                 rtol=1e-9, atol=1e-15)


def _power_one(f):
    expect_close(f(np.array([1.0, 3.0]), 1.0), [0.25, 0.75], "power 1 (plain unigram) for counts [1, 3]")


check_noise_distribution = FunctionExercise(
    "noise distribution", [_lesson_example, _counts_not_probs, _power_one, _wide_range], reference=_noise_reference,
    step="warm-up", forbidden=(unigram_noise, NoiseSampler, unigram_table),
    mistakes=[
        Mistake("not_renormalised", "after raising to the power, the values no longer sum to 1: divide by "
                "their sum.", like=lambda counts, power=0.75: (np.asarray(counts, float) / np.sum(counts)) ** power),
        Mistake("power_ignored", "raise the unigram probabilities to the power (0.75 flattens the distribution: "
                "rare words are drawn more often).",
                like=lambda counts, power=0.75: np.asarray(counts, float) / np.sum(counts)),
        Mistake("add_one", "no add-one smoothing here: a word never seen gets probability 0.",
                like=lambda counts, power=0.75: _noise_reference(np.asarray(counts, float) + 1, power)),
        Mistake("power_inverted", "the power is applied as p ** 0.75, not p ** (1 / 0.75).",
                like=lambda counts, power=0.75: _renormalised((np.asarray(counts, float) / np.sum(counts)) ** (1 / power))),
    ])



# ----------------------------------------------------------------------------- core: the negative-sampling gradients of a batch
def _sig(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))      # σ(x), no overflow


def _ns_reference(v, u_o, U_neg):
    s_o, s_neg = np.einsum("bd,bd->b", u_o, v), np.einsum("bkd,bd->bk", U_neg, v)     # (B,), (B, k)
    loss = np.logaddexp(0, -s_o) + np.logaddexp(0, s_neg).sum(axis=1)               # −log σ(s_o) − Σ log σ(−s_j)
    g_o, g_neg = _sig(s_o) - 1.0, _sig(s_neg)          # dL/ds = σ(s) − t: t = 1 for the true word, 0 for noise
    dv = g_o[:, None] * u_o + np.einsum("bk,bkd->bd", g_neg, U_neg)
    return loss, dv, g_o[:, None] * v, g_neg[:, :, None] * v[:, None, :]


NS_NAMES = ("loss", "dv", "du_o", "dU_neg")


def _ns_case(seed, B, d, k, scale=0.7):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, d)) * scale, rng.standard_normal((B, d)) * scale,
            rng.standard_normal((B, k, d)) * scale)


def _ns_torch_loss(v, u_o, U_neg):
    s_o, s_neg = (u_o * v).sum(1), (U_neg * v[:, None, :]).sum(2)
    return -torch.nn.functional.logsigmoid(s_o) - torch.nn.functional.logsigmoid(-s_neg).sum(1)


def _ns_one_pair(f):
    # one pair, d = 2, k = 2: s_o = 1, the noise scores 0 and −2 (small enough to follow by hand)
    v, u_o = np.array([[1.0, 0.0]]), np.array([[1.0, 0.5]])
    U_neg = np.array([[[0.0, 3.0], [-2.0, 1.0]]])
    got = f(v, u_o, U_neg)
    expect_tuple(got, NS_NAMES)
    ref = _ns_reference(v, u_o, U_neg)
    expect_close(got[0], ref[0], "the loss of one pair (s_o = 1, noise scores 0 and −2), shape (1,)")
    for name, g, e in zip(NS_NAMES[1:], got[1:], ref[1:], strict=True):
        expect_close(g, e, f"{name} of that pair")


def _ns_against_torch(seed, B, d, k):
    def check(f):
        v, u_o, U_neg = _ns_case(seed, B, d, k)
        got = f(v, u_o, U_neg)
        expect_tuple(got, NS_NAMES)
        expect_close(got[0], _ns_torch_loss(*map(torch.from_numpy, (v, u_o, U_neg))).numpy(),
                     f"the per-pair losses (B={B}, k={k}), shape ({B},)")
        expect_gradients_match_torch(got[1:], _ns_torch_loss, [v, u_o, U_neg],
                                     [f"{n} (B={B}, d={d}, k={k})" for n in NS_NAMES[1:]], dout=np.ones(B))
    return check


def _ns_against_finite_differences(f):
    v, u_o, U_neg = _ns_case(5, 2, 3, 2)
    got = f(v, u_o, U_neg)
    expect_tuple(got, NS_NAMES)
    expect_gradients_match_numerical(got[1:], lambda a, b, c: float(np.sum(_ns_reference(a, b, c)[0])),
                                     [v, u_o, U_neg], [f"{n} (finite differences, B=2, d=3, k=2)"
                                                       for n in NS_NAMES[1:]])


def _ns_wide_range(f):
    # scores of ±800: σ(800) is 1 to double precision and e^800 overflows; −log σ(s) is still finite
    v = np.array([[40.0, 0.0], [-40.0, 0.0]])
    u_o = np.array([[20.0, 1.0], [20.0, 1.0]])
    U_neg = np.array([[[-20.0, 0.0], [20.0, 0.0]], [[0.5, 3.0], [-20.0, 2.0]]])
    with np.errstate(all="ignore"):
        got = f(v, u_o, U_neg)
    expect_tuple(got, NS_NAMES)
    ref = _ns_reference(v, u_o, U_neg)
    expect_close(got[0], ref[0], "the losses for scores of ±800 (−log σ(s) = log(1 + e^(−s)), finite)", rtol=1e-9)
    for name, g, e in zip(NS_NAMES[1:], got[1:], ref[1:], strict=True):
        expect_close(g, e, f"{name} for scores of ±800")


def _ns_negatives_wrong_sign(v, u_o, U_neg):
    loss, _, du_o, dU = _ns_reference(v, u_o, U_neg)
    g_neg = _sig(np.einsum("bkd,bd->bk", U_neg, v))
    g_o = _sig(np.einsum("bd,bd->b", u_o, v)) - 1
    return loss, g_o[:, None] * u_o - np.einsum("bk,bkd->bd", g_neg, U_neg), du_o, -dU


def _ns_positive_no_target(v, u_o, U_neg):
    loss, _, _, dU = _ns_reference(v, u_o, U_neg)
    g_o, g_neg = _sig(np.einsum("bd,bd->b", u_o, v)), _sig(np.einsum("bkd,bd->bk", U_neg, v))
    return loss, g_o[:, None] * u_o + np.einsum("bk,bkd->bd", g_neg, U_neg), g_o[:, None] * v, dU


def _ns_dv_positive_only(v, u_o, U_neg):
    loss, _, du_o, dU = _ns_reference(v, u_o, U_neg)
    return loss, (_sig(np.einsum("bd,bd->b", u_o, v)) - 1)[:, None] * u_o, du_o, dU


def _ns_averaged(v, u_o, U_neg):
    k1 = 1 + U_neg.shape[1]
    return tuple(x / k1 for x in _ns_reference(v, u_o, U_neg))


def _ns_batch_mean(v, u_o, U_neg):
    loss, dv, du, dU = _ns_reference(v, u_o, U_neg)
    return float(np.mean(loss)), dv, du, dU


def _ns_naive_log(v, u_o, U_neg):
    s_o, s_neg = np.einsum("bd,bd->b", u_o, v), np.einsum("bkd,bd->bk", U_neg, v)
    sig = lambda x: 1 / (1 + np.exp(-x))                 # noqa: E731 (the student's one-liner)
    loss = -np.log(sig(s_o)) - np.log(sig(-s_neg)).sum(axis=1)
    return (loss,) + _ns_reference(v, u_o, U_neg)[1:]


def _loss_not_finite(out, *args):
    return isinstance(out, (tuple, list)) and len(out) == 4 and not np.all(np.isfinite(np.asarray(out[0], float)))


check_ns_gradients = FunctionExercise(
    "negative-sampling gradients",
    [_ns_one_pair, _ns_against_torch(1, 3, 5, 4), _ns_against_torch(2, 2, 8, 1), _ns_against_finite_differences,
     _ns_wide_range],
    reference=_ns_reference, step="core",
    forbidden=(ns_loss_and_gradients, sgns_pair_gradients, SkipGramNS, CBOWNS, EmbeddingDot, SigmoidCrossEntropy,
               sgd_step),
    explanation=("Every score s gets the same gradient rule, dL/ds = σ(s) − t, with t = 1 for the true context "
                 "word and t = 0 for each noise word. The centre vector collects Σ (σ(s) − t) · u over the 1 + k "
                 "output vectors, and each output vector gets (σ(s) − t) · v: a pair costs 1 + k dot products, "
                 "whatever the vocabulary size. Written with np.logaddexp, the loss stays finite for any score."),
    mistakes=[
        Mistake("negatives_wrong_sign", "for a noise word the loss is -log σ(-s), whose derivative is +σ(s) "
                "(the rule σ(s) - t with t = 0), not -σ(s): the noise words' terms enter dv and dU_neg with a plus.",
                like=_ns_negatives_wrong_sign),
        Mistake("positive_no_target", "for the true context word t = 1: its gradient is σ(s_o) - 1, not σ(s_o) "
                "(you treated it as a noise word).", like=_ns_positive_no_target),
        Mistake("dv_positive_only", "the centre vector v takes part in all 1 + k scores: dv is the sum of "
                "(σ(s) - t) · u over the true word and every noise word.", like=_ns_dv_positive_only),
        Mistake("averaged", "the loss of one pair is the SUM of its 1 + k terms (one true word, k noise words), "
                "not their mean: do not divide by 1 + k.", like=_ns_averaged),
        Mistake("batch_mean", "return one loss per pair, shape (B,): the training step averages them itself.",
                like=_ns_batch_mean),
        Mistake("unstable_loss", "-np.log(sigmoid(s)) overflows for large |s| (e^800 is inf, so σ(-800) becomes "
                "0 and its log -inf): write -log σ(s) as np.logaddexp(0, -s), which is log(1 + e^(-s)) computed "
                "without overflow.", when=_loss_not_finite, example=_ns_naive_log),
    ])


# ----------------------------------------------------------------------------- core: the SGD training step
def _step_reference(W, C, centers, contexts, negatives, lr, gradients):
    B, k = negatives.shape
    loss, dv, du_o, dU_neg = gradients(W[centers], C[contexts], C[negatives])   # every gradient before the update
    np.add.at(W, centers, -lr * dv)                                              # repeated ids add up
    np.add.at(C, np.concatenate([contexts, negatives.reshape(-1)]),
              -lr * np.concatenate([du_o, dU_neg.reshape(B * k, -1)]))
    return float(np.mean(loss)), W, C


STEP_NAMES = ("loss", "W", "C")


def _step_tiny():
    # 6 words, d = 3, 4 pairs, k = 2: centre 1 twice, word 4 as a context and as a negative, word 3
    # twice among one pair's negatives
    rng = np.random.default_rng(3)
    W, C = rng.standard_normal((6, 3)) * 0.5, rng.standard_normal((6, 3)) * 0.5
    return W, C, np.array([1, 2, 1, 0]), np.array([4, 5, 0, 2]), np.array([[3, 3], [4, 0], [2, 5], [4, 1]])


def _step_case(f, W, C, centers, contexts, negatives, lr, gradients, what):
    expected = _step_reference(W.copy(), C.copy(), centers, contexts, negatives, lr, gradients)
    got = f(W, C, centers, contexts, negatives, lr, gradients)
    expect_tuple(got, STEP_NAMES)
    expect_close(got[0], expected[0], f"the batch's mean loss per pair ({what})")
    for name, g, e in zip(("W", "C"), got[1:], expected[1:], strict=True):
        expect_close(g, e, f"{name} after one step ({what})")


def _step_repeats(f):
    _step_case(f, *_step_tiny(), 0.1, _ns_reference, "6 words, 4 pairs, k = 2, repeated ids, lr = 0.1")


def _step_random(f):
    rng = np.random.default_rng(11)
    V, d, B, k = 40, 8, 64, 5
    W, C = rng.standard_normal((V, d)) * 0.3, rng.standard_normal((V, d)) * 0.3
    _step_case(f, W, C, rng.integers(0, V, B), rng.integers(0, V, B), rng.integers(0, V, (B, k)), 0.025,
               _ns_reference, f"V={V}, d={d}, B={B}, k={k}, lr = 0.025")


def _fixed_gradients(v, u_o, U_neg):
    # a stand-in gradient function with known outputs: the step must use the one it is given
    B, k, d = U_neg.shape
    return (np.full(B, 2.0), np.tile(np.arange(1.0, d + 1), (B, 1)), np.full((B, d), -1.0),
            np.full((B, k, d), 0.5))


def _step_uses_given_gradients(f):
    _step_case(f, *_step_tiny(), 0.5, _fixed_gradients,
               "with a stand-in `gradients` function whose outputs are known: the step must call the one it is given")


def _step_buffered(W, C, centers, contexts, negatives, lr, gradients):
    B, k = negatives.shape
    loss, dv, du_o, dU_neg = gradients(W[centers], C[contexts], C[negatives])
    W[centers] -= lr * dv
    C[contexts] -= lr * du_o
    C[negatives] -= lr * dU_neg
    return float(np.mean(loss)), W, C


def _step_ascent(W, C, centers, contexts, negatives, lr, gradients):
    return _step_reference(W, C, centers, contexts, negatives, -lr, gradients)


def _step_mean_gradient(W, C, centers, contexts, negatives, lr, gradients):
    return _step_reference(W, C, centers, contexts, negatives, lr / len(centers), gradients)


def _step_negatives_not_updated(W, C, centers, contexts, negatives, lr, gradients):
    loss, dv, du_o, _ = gradients(W[centers], C[contexts], C[negatives])
    np.add.at(W, centers, -lr * dv)
    np.add.at(C, contexts, -lr * du_o)
    return float(np.mean(loss)), W, C


def _step_only_W(W, C, centers, contexts, negatives, lr, gradients):
    loss, dv, _, _ = gradients(W[centers], C[contexts], C[negatives])
    np.add.at(W, centers, -lr * dv)
    return float(np.mean(loss)), W, C


def _step_stale(W, C, centers, contexts, negatives, lr, gradients):
    B, k = negatives.shape
    loss, dv, _, _ = gradients(W[centers], C[contexts], C[negatives])
    np.add.at(W, centers, -lr * dv)                                  # W moves first ...
    _, _, du_o, dU_neg = gradients(W[centers], C[contexts], C[negatives])   # ... then C's gradients from the new W
    np.add.at(C, np.concatenate([contexts, negatives.reshape(-1)]),
              -lr * np.concatenate([du_o, dU_neg.reshape(B * k, -1)]))
    return float(np.mean(loss)), W, C


check_sgd_step = FunctionExercise(
    "the SGD training step",
    [_step_repeats, _step_random, _step_uses_given_gradients],
    reference=_step_reference, step="core",
    forbidden=(sgd_step, scatter_rows, ns_loss_and_gradients, SkipGramNS, CBOWNS, EmbeddingDot, Embedding),
    explanation=("One step gathers the rows the batch uses, computes every gradient from those values, and moves "
                 "each row by −lr times the SUM of its gradients over the batch: a word used three times gets three "
                 "contributions, exactly as in the embedding layer's backward pass. With a learning rate per pair "
                 "this is what word2vec's one-pair-at-a-time SGD does, in one NumPy step per batch."),
    mistakes=[
        Mistake("buffered", "W[centers] -= lr * dv applies a repeated row only once (NumPy computes the right-hand "
                "side for every index, then writes the rows one after another, each overwriting the last): add "
                "the updates of repeated ids with np.add.at(W, centers, -lr * dv).", like=_step_buffered),
        Mistake("ascent", "the update goes against the gradient: subtract lr times the gradient (you added it, "
                "which climbs the loss).", like=_step_ascent),
        Mistake("mean_gradient", "each pair moves its rows by lr times its own gradient (a learning rate per pair, "
                "as word2vec's SGD): sum the gradients over the batch, do not average them.",
                like=_step_mean_gradient),
        Mistake("negatives_not_updated", "the k noise words' output vectors are parameters too: their rows of C "
                "move by -lr · dU_neg in the same step.", like=_step_negatives_not_updated),
        Mistake("only_W", "the output vectors C move too: the true context words' rows by -lr · du_o and the "
                "noise words' by -lr · dU_neg.", like=_step_only_W),
        Mistake("stale", "compute every gradient from the values before the step, then update: you moved W first "
                "and computed C's gradients from the new W.", like=_step_stale),
    ])


# ----------------------------------------------------------------------------- experiment: which words subsampling never touches
def _always_kept_ratio(sample: float = 1e-4) -> float:
    """Measured with the trainers' own keep_probabilities: the largest f / t (relative frequency over
    the threshold) whose occurrences are all kept, by bisection to 1e-9."""
    total = 1e12
    lo, hi = 0.01, 100.0
    for _ in range(80):
        mid = (lo + hi) / 2
        counts = np.array([mid * sample * total, total - mid * sample * total])
        lo, hi = (mid, hi) if keep_probabilities(counts, sample)[0] >= 1.0 else (lo, mid)
    return lo


check_always_kept = ExperimentExercise(
    "the words subsampling never touches",
    _always_kept_ratio, atol=0.0005,
    explanation=("The code keeps an occurrence with probability (√(f/t) + 1) · t/f. Writing x = f/t, that is "
                 "(√x + 1)/x, which is at least 1 while √x + 1 ≥ x, i.e. up to √x = (1 + √5)/2, the golden ratio: "
                 "x = φ² ≈ 2.618. Every word rarer than about 2.6 t keeps all its occurrences; the paper's "
                 "√(t/f) would start discarding at f = t already."),
    mistakes=[
        Mistake("paper_formula", "that is where the paper's keep probability √(t/f) reaches 1; the code (word2vec.c, "
                "gensim, our trainers) uses (√(f/t) + 1) · t/f, which stays at 1 a little longer.", like=1.0),
        Mistake("golden_ratio", "that is √x = (1 + √5)/2, the golden ratio; the question asks for x = f/t itself, "
                "its square.", like=(1 + 5 ** 0.5) / 2),
        Mistake("frequency_not_ratio", "that is a relative frequency f; the question asks for the ratio f/t "
                "(divide by t = 10⁻⁴).", like=lambda: 1e-4 * _always_kept_ratio()),
        Mistake("inverse", "that is t/f; the question asks for f/t, the frequency in units of the threshold.",
                like=lambda: 1 / _always_kept_ratio()),
    ],
)

EXERCISES = [check_noise_distribution, check_embedding_backward, check_ns_gradients, check_sgd_step,
             check_always_kept]
