"""Checkers for lesson 07 (the embedding layer and word2vec)."""
from __future__ import annotations

import numpy as np
import torch

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
from helpers.lib.negative_sampling import unigram_noise


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
    # the notes' example: ids [0, 2, 0, 4]; row 0 receives the sum of two rows of dout
    dout = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    exp = np.zeros((5, 2))
    exp[0], exp[2], exp[4] = [6.0, 8.0], [3.0, 4.0], [7.0, 8.0]
    expect_close(f(np.array([0, 2, 0, 4]), dout, 5), exp, "dW for the repeated ids [0, 2, 0, 4]")


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
    "embedding backward", [_shapes, _no_repeats, _repeats], reference=_embedding_backward_reference, step="warm-up",
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


def _notes_example(f):
    got = f(np.array([0.8, 0.15, 0.05]), 0.75)
    expect_close(np.sum(got), 1.0, "sum of the probabilities for [0.8, 0.15, 0.05]")
    expect_close(np.round(got, 3), [0.709, 0.202, 0.089], "the notes' example rounded to 3 decimals")


def _counts_not_probs(f):
    got = f(np.array([30, 10, 0, 60]), 0.75)
    p = np.array([0.3, 0.1, 0.0, 0.6]) ** 0.75
    expect_close(got, p / p.sum(), "probabilities from raw counts [30, 10, 0, 60] (the unseen word gets 0)")


def _power_one(f):
    expect_close(f(np.array([1.0, 3.0]), 1.0), [0.25, 0.75], "power 1 (plain unigram) for counts [1, 3]")


check_noise_distribution = FunctionExercise(
    "noise distribution", [_notes_example, _counts_not_probs, _power_one], reference=_noise_reference,
    step="warm-up",
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



# ----------------------------------------------------------------------------- core: the negative-sampling gradient
def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _ns_reference(w, c_pos, C_neg):
    s_pos, s_neg = c_pos @ w, C_neg @ w                   # (), (k,)
    loss = -np.log(_sig(s_pos)) - np.sum(np.log(_sig(-s_neg)))
    g_pos, g_neg = _sig(s_pos) - 1.0, _sig(s_neg)          # dL/ds = y - t: t = 1 for the true word, 0 for noise
    return loss, g_pos * c_pos + g_neg @ C_neg, g_pos * w, g_neg[:, None] * w[None, :]


NS_NAMES = ("loss", "dw", "dc_pos", "dC_neg")


def _ns_case(seed, D, k):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(D) * 0.7, rng.standard_normal(D) * 0.7, rng.standard_normal((k, D)) * 0.7


def _ns_torch_loss(w, c_pos, C_neg):
    return -torch.nn.functional.logsigmoid(c_pos @ w) - torch.nn.functional.logsigmoid(-(C_neg @ w)).sum()


def _ns_loss_value(f):
    w, c_pos, C_neg = _ns_case(0, 4, 3)
    got = f(w, c_pos, C_neg)
    expect_tuple(got, NS_NAMES)
    expect_close(got[0], _ns_reference(w, c_pos, C_neg)[0], "the loss -log s(c+ . w) - sum_j log s(-c-_j . w) "
                 "for D=4, k=3")


def _ns_against_torch(seed, D, k):
    def check(f):
        w, c_pos, C_neg = _ns_case(seed, D, k)
        got = f(w, c_pos, C_neg)
        expect_tuple(got, NS_NAMES)
        expect_gradients_match_torch(got[1:], _ns_torch_loss, [w, c_pos, C_neg],
                                     [f"{n} (D={D}, k={k})" for n in NS_NAMES[1:]])
    return check


def _ns_against_finite_differences(f):
    w, c_pos, C_neg = _ns_case(5, 3, 2)
    got = f(w, c_pos, C_neg)
    expect_tuple(got, NS_NAMES)
    expect_gradients_match_numerical(got[1:], lambda w, c, C: _ns_reference(w, c, C)[0], [w, c_pos, C_neg],
                                     [f"{n} (finite differences, D=3, k=2)" for n in NS_NAMES[1:]])


def _ns_negatives_wrong_sign(w, c_pos, C_neg):
    loss, dw, dc, _ = _ns_reference(w, c_pos, C_neg)
    g_neg = _sig(C_neg @ w)
    return loss, (_sig(c_pos @ w) - 1) * c_pos - g_neg @ C_neg, dc, -g_neg[:, None] * w[None, :]


def _ns_positive_no_target(w, c_pos, C_neg):
    loss, _, _, dC = _ns_reference(w, c_pos, C_neg)
    g_pos, g_neg = _sig(c_pos @ w), _sig(C_neg @ w)
    return loss, g_pos * c_pos + g_neg @ C_neg, g_pos * w, dC


def _ns_dw_positive_only(w, c_pos, C_neg):
    loss, _, dc, dC = _ns_reference(w, c_pos, C_neg)
    return loss, (_sig(c_pos @ w) - 1) * c_pos, dc, dC


def _ns_averaged(w, c_pos, C_neg):
    k1 = 1 + len(C_neg)
    return tuple(x / k1 for x in _ns_reference(w, c_pos, C_neg))


check_ns_gradients = FunctionExercise(
    "negative-sampling gradients",
    [_ns_loss_value, _ns_against_torch(1, 5, 4), _ns_against_torch(2, 8, 1), _ns_against_finite_differences],
    reference=_ns_reference, step="core",
    explanation=("Every score s gets the same gradient rule, dL/ds = σ(s) − t, with t = 1 for the true context "
                 "word and t = 0 for each noise word. The centre vector collects Σ (σ(s) − t) · u over the 1 + k "
                 "output vectors, and each output vector gets (σ(s) − t) · w: a pair costs 1 + k dot products, "
                 "whatever the vocabulary size."),
    mistakes=[
        Mistake("negatives_wrong_sign", "for a noise word the loss is -log σ(-s), whose derivative is +σ(s) "
                "(the rule y - t with t = 0), not -σ(s): the noise words' terms enter dw and dC_neg with a plus.",
                like=_ns_negatives_wrong_sign),
        Mistake("positive_no_target", "for the true context word t = 1: its gradient is σ(s+) - 1, not σ(s+) "
                "(you treated it as a noise word).", like=_ns_positive_no_target),
        Mistake("dw_positive_only", "the centre vector w takes part in all 1 + k scores: dw is the sum of "
                "(σ(s) - t) · u over the true word and every noise word.", like=_ns_dw_positive_only),
        Mistake("averaged", "the loss of one pair is the SUM of its 1 + k terms (one true word, k noise words), "
                "not their mean: do not divide by 1 + k.", like=_ns_averaged),
    ])


# ----------------------------------------------------------------------------- core: one SGD update
def _sgd_reference(w, c_pos, C_neg, lr):
    _, dw, dc, dC = _ns_reference(w, c_pos, C_neg)
    return w - lr * dw, c_pos - lr * dc, C_neg - lr * dC


SGD_NAMES = ("w_new", "c_pos_new", "C_neg_new")


def _sgd_case(f, seed, D, k, lr):
    w, c_pos, C_neg = _ns_case(seed, D, k)
    before = [w.copy(), c_pos.copy(), C_neg.copy()]
    got = f(w, c_pos, C_neg, lr)
    expect_tuple(got, SGD_NAMES)
    for name, a, b in zip(("w", "c_pos", "C_neg"), (w, c_pos, C_neg), before, strict=True):
        if not np.array_equal(a, b):
            raise ExerciseFailed(f"your function changed its input {name} in place: return new arrays "
                                 "(the checker compares against the values before the step)")
    for name, g, e in zip(SGD_NAMES, got, _sgd_reference(*before, lr), strict=True):
        expect_close(g, e, f"{name} after one step with lr={lr} (D={D}, k={k})")


check_ns_sgd_step = FunctionExercise(
    "one SGD step",
    [lambda f: _sgd_case(f, 3, 4, 2, 0.1), lambda f: _sgd_case(f, 4, 6, 5, 0.025)],
    reference=_sgd_reference, step="core",
    explanation=("All three gradients are computed from the values *before* the step, then all three "
                 "vectors move against them: θ ← θ − η ∂L/∂θ. This is what the trainers do for every batch, "
                 "on the rows the batch used."),
    mistakes=[
        Mistake("ascent", "the update goes against the gradient: subtract lr * gradient (you added it, "
                "which climbs the loss).", like=lambda w, c, C, lr: tuple(
                    2 * x - y for x, y in zip((w, c, C), _sgd_reference(w, c, C, lr), strict=True))),
        Mistake("stale_w", "you updated w first and then computed the output vectors' gradients with the new w: "
                "compute all gradients from the values before the step, then update.",
                like=lambda w, c, C, lr: (_sgd_reference(w, c, C, lr)[0],)
                + _sgd_reference(_sgd_reference(w, c, C, lr)[0], c, C, lr)[1:]),
        Mistake("only_w", "the output vectors c_pos and C_neg are parameters too: they move by -lr times their "
                "own gradients in the same step.", like=lambda w, c, C, lr: (_sgd_reference(w, c, C, lr)[0], c, C)),
    ])


# ----------------------------------------------------------------------------- experiment: subsampling "the"
def _share_of_the_kept(counts, the):
    t = 1e-4 * np.sum(counts)
    c = counts[the]
    return float(min(1.0, (np.sqrt(c / t) + 1) * t / c))


def _paper_keep(counts, the):
    return float(min(1.0, np.sqrt(1e-4 * np.sum(counts) / counts[the])))


check_keep_the = ExperimentExercise(
    "share of 'the' kept",
    _share_of_the_kept, atol=0.0005,
    explanation=("With t = 10⁻⁴ (the shipped runs' setting) the code keeps each occurrence of a word of "
                 "relative frequency f with probability (√(f/t) + 1) · t/f. *the* is about 7 % of the corpus, "
                 "so only a few percent of its occurrences reach training; words rarer than about t are always "
                 "kept. The pairs it would have formed were mostly uninformative (everything co-occurs with "
                 "*the*), and each epoch gets that much shorter."),
    mistakes=[
        Mistake("paper_formula", "that is the paper's keep probability √(t/f); the code (word2vec.c, gensim, "
                "our trainers) uses (√(f/t) + 1) · t/f, slightly larger.", like=_paper_keep),
        Mistake("discard", "that is the probability of *discarding* an occurrence; the question asks for the share "
                "kept (1 minus your answer).", like=lambda counts, the: 1 - _share_of_the_kept(counts, the)),
        Mistake("sample_1e-3", "that is the share for t = 10⁻³ (gensim's default); the shipped runs use "
                "t = 10⁻⁴.", like=lambda counts, the: float(min(1.0, (np.sqrt(counts[the] / (1e-3 * np.sum(counts)))
                                                                    + 1) * 1e-3 * np.sum(counts) / counts[the]))),
    ],
    example_context={"counts": np.array([84272.0] + [50.0] * 20000 + [1000.0] * 500), "the": 0},
)

EXERCISES = [check_noise_distribution, check_embedding_backward, check_ns_gradients, check_ns_sgd_step,
             check_keep_the]
