"""Checkers for lesson 07 (the embedding layer and word2vec)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import FunctionExercise, Mistake, expect_close, expect_equal
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
    "embedding backward", [_shapes, _no_repeats, _repeats], reference=_embedding_backward_reference, step="core",
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

EXERCISES = [check_embedding_backward, check_noise_distribution]
