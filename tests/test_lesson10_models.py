"""Lesson 10's baselines: the blank-filling bigram (helpers.lib.blank_bigram) and the lesson's
scoring of the live NumPy model."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.course.models import load_model
from helpers.lessons.lesson10 import (
    blank_batch,
    blank_examples,
    encoder_blank,
    encoder_scores,
    masking_ablation,
    paired_accuracy_difference,
)
from helpers.lib.blank_bigram import BlankBigram
from helpers.lib.encoder_numpy import NumpyEncoder
from helpers.lib.mlm import IGNORE, MaskedBatch

V, SPECIAL, MASK = 10, 5, 4
SEQS = [np.array([2, 5, 6, 3]), np.array([2, 5, 7, 3]), np.array([2, 8, 6, 3])]


# ---------------------------------------------------------------- the blank-filling bigram
def _blank(inputs, col):
    return BlankBigram(V, SPECIAL, MASK, lam=1.0).fit(SEQS).probabilities(np.array([inputs]), np.array([0]),
                                                                          np.array([col]))[0]


def test_the_bigram_fills_a_blank_from_both_neighbours_by_hand():
    # [CLS] 5 _ [SEP]: P(w | 5) = 1/2 for 6 and 7; P([SEP] | 6) = 2/2, P([SEP] | 7) = 1/1
    p = _blank([2, 5, MASK, 3], 2)
    np.testing.assert_allclose(p[[6, 7]], [0.5, 0.5])
    # [CLS] _ 6 [SEP]: P(5 | CLS) = 2/3, P(8 | CLS) = 1/3; P(6 | 5) = 1/2, P(6 | 8) = 1: 1/3 each -> 1/2
    p = _blank([2, MASK, 6, 3], 1)
    np.testing.assert_allclose(p[[5, 8]], [0.5, 0.5])
    assert p[:SPECIAL].sum() == 0 and np.isclose(p.sum(), 1)


def test_the_left_bigram_ignores_the_right_neighbour_and_a_masked_neighbour_carries_nothing():
    left = BlankBigram(V, SPECIAL, MASK, lam=1.0, left_only=True).fit(SEQS)
    a = left.probabilities(np.array([[2, MASK, 6, 3]]), np.array([0]), np.array([1]))[0]
    b = left.probabilities(np.array([[2, MASK, 9, 3]]), np.array([0]), np.array([1]))[0]
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(a[[5, 8]], [2 / 3, 1 / 3])
    both = BlankBigram(V, SPECIAL, MASK, lam=0.5).fit(SEQS)
    masked = both.probabilities(np.array([[2, 5, MASK, MASK, 3]]), np.array([0]), np.array([2]))[0]
    only_left = BlankBigram(V, SPECIAL, MASK, lam=0.5, left_only=True).fit(SEQS).probabilities(
        np.array([[2, 5, MASK, MASK, 3]]), np.array([0]), np.array([2]))[0]
    np.testing.assert_allclose(masked, only_left)


def test_smoothing_gives_every_piece_a_probability_and_score_counts_per_sentence():
    bg = BlankBigram(V, SPECIAL, MASK, lam=0.8).fit(SEQS)
    p = bg.probabilities(np.array([[2, 9, MASK, 3]]), np.array([0]), np.array([2]))[0]   # 9 never seen
    assert np.all(p[SPECIAL:] > 0) and np.isclose(p.sum(), 1)
    labels = np.array([[IGNORE, IGNORE, 6, IGNORE], [IGNORE, IGNORE, IGNORE, IGNORE], [IGNORE, 5, 6, IGNORE]])
    inputs = np.where(labels != IGNORE, MASK, np.array([[2, 5, 6, 3]] * 3))
    out = bg.score([MaskedBatch(inputs, labels, np.ones_like(labels, bool))])
    np.testing.assert_array_equal(out["count"], [1, 2])
    direct = [bg.probabilities(inputs, np.array([r]), np.array([c]))[0] for r, c in ((0, 2), (2, 1), (2, 2))]
    right = [int(np.argmax(direct[0]) == 6), int(np.argmax(direct[1]) == 5) + int(np.argmax(direct[2]) == 6)]
    np.testing.assert_array_equal(out["right"], right)
    nll = -np.mean([np.log(d[t]) for d, t in zip(direct, (6, 5, 6))])
    assert out["nll"] == pytest.approx(nll) and out["n_masked"] == 3


def test_the_bigram_refuses_bad_input():
    with pytest.raises(ValueError, match="lam must lie in"):
        BlankBigram(V, SPECIAL, MASK, lam=0)
    with pytest.raises(ValueError, match="no sequence"):
        BlankBigram(V, SPECIAL, MASK).fit([])
    with pytest.raises(RuntimeError, match="fit"):
        BlankBigram(V, SPECIAL, MASK).probabilities(np.array([[2, 4, 3]]), np.array([0]), np.array([1]))
    with pytest.raises(ValueError, match="left and a right neighbour"):
        BlankBigram(V, SPECIAL, MASK).fit(SEQS).probabilities(np.array([[2, 4, 3]]), np.array([0]), np.array([2]))


# ---------------------------------------------------------------- the causal model
# ---------------------------------------------------------------- the lesson's scoring of the live model
def test_encoder_scores_and_the_paired_difference():
    ids = np.array([[2, 5, 6, 7, 3], [2, 8, 9, 3, 0]])
    labels = np.full(ids.shape, IGNORE)
    labels[0, [1, 3]], labels[1, 2] = ids[0, [1, 3]], ids[1, 2]
    batch = MaskedBatch(np.where(labels != IGNORE, MASK, ids), labels, ids != 0)
    encoder = NumpyEncoder(V, 8, 1, 2, 16, 8, pad_id=0)
    out = encoder_scores(encoder, [batch])
    assert out["nll"] == pytest.approx(encoder.masked_lm_loss(batch.inputs, batch.labels, batch.attention_mask))
    np.testing.assert_array_equal(out["count"], [2, 1])
    assert encoder_blank(encoder, MaskedBatch(batch.inputs[1:], batch.labels[1:], batch.attention_mask[1:])) \
        .sum() == pytest.approx(1.0)
    right = np.array([3, 1, 0, 2])
    count = np.array([4, 2, 1, 3])
    assert paired_accuracy_difference(right, right, count) == (0.0, 0.0, 0.0)
    d, lo, hi = paired_accuracy_difference(right, right - np.array([1, 0, 0, 0]), count, n_boot=500)
    assert d == pytest.approx(0.1) and 0 <= lo <= d <= hi
    with pytest.raises(ValueError, match="alike"):
        paired_accuracy_difference(right, right[:2], count)


def test_blank_examples_hide_one_single_piece_word():
    tok = load_model("mlm_bert").tok
    sents = [("the", "bank", "raised", "its", "interest", "rates", "again", "today", "in", "london")] * 3
    ex = blank_examples(tok, sents, n=2, seed=0)
    assert len(ex) == 2 and all(len(tok.tokenize_word(w[p])) == 1 and p > 0 for w, p in ex)
    b = blank_batch(tok, *ex[0])
    (col,) = np.flatnonzero(b.labels[0] != IGNORE)
    assert b.inputs[0, col] == tok.mask_id and tok.itos[b.labels[0, col]] == "▁" + ex[0][0][ex[0][1]]


def test_the_masking_ablation_masks_with_the_given_rule_and_scores_both_rules():
    tok = load_model("mlm_bert").tok
    train = [np.array([2, 10, 11, 12, 13, 3]), np.array([2, 14, 15, 16, 3])] * 40
    batch = MaskedBatch(np.array([[2, 4, 11, 12, 3]]), np.array([[IGNORE, 10, IGNORE, IGNORE, IGNORE]]),
                        np.ones((1, 5), bool))
    seen = []

    def replace(ids, chosen, u, random_ids, mask_id):
        seen.append(float(u[chosen].max()) if chosen.any() else 0.0)
        return np.where(chosen, mask_id, ids)

    E0 = np.random.default_rng(0).normal(0, 0.1, (len(tok), 64)).astype(np.float32)
    out = masking_ablation(tok, train, E0, replace, [batch], steps=4)
    assert list(out) == ["[MASK] only", "80/10/10"]
    assert all(0 <= a <= 1 and 0 <= b <= 1 for a, b in out.values())
    assert len(seen) == 8 and max(seen[:4]) == 0 and max(seen[4:]) > 0     # u = 0 means [MASK] only
