"""Lesson 10's module and its shipped-model helpers: word-sense rounds, spreads and paired
differences, the curve's last-fifth gain, the per-sentence accuracy and its bootstrap, the
tokenizer's storage, and the trainer's split."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from helpers.course.mlm_model import split_of, tokenizer_from_arrays, tokenizer_to_arrays
from helpers.infra.seeding import make_rng
from helpers.lessons.lesson10 import (
    accuracy_interval,
    last_fifth_gain,
    paired_difference,
    sense_rounds,
    spread,
    unigram_sentence_scores,
)
from helpers.lib.bpe import BPETokenizer
from helpers.lib.contextual import nearest_sense_accuracy
from helpers.lib.mlm import IGNORE, MaskedBatch


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sense_rounds_are_the_rounds_of_nearest_sense_accuracy(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 16))
    X[:12] += 0.4
    senses = ["a"] * 12 + ["b"] * 12
    ours = sense_rounds(X, senses, 3, 50, seed)
    theirs = nearest_sense_accuracy(X, senses, 3, make_rng(seed), 50)
    np.testing.assert_array_equal(ours, theirs["per_round"])
    assert ours.mean() == pytest.approx(theirs["accuracy"])


def test_identical_vectors_are_at_chance_and_separated_ones_perfect():
    senses = ["a"] * 6 + ["b"] * 6
    assert sense_rounds(np.ones((12, 4)), senses, 2, 20).mean() == 0.5
    apart = np.vstack([np.tile([1.0, 0.0], (6, 1)), np.tile([0.0, 1.0], (6, 1))])
    assert sense_rounds(apart, senses, 2, 20).mean() == 1.0
    with pytest.raises(ValueError, match="more than n_support"):
        sense_rounds(apart, senses, 6, 5)


def test_spread_and_paired_difference_call_ties():
    a = np.linspace(0.5, 0.9, 201)
    mean, lo, hi = spread(a)
    assert mean == pytest.approx(0.7) and lo == pytest.approx(0.51) and hi == pytest.approx(0.89)
    d, lo, hi = paired_difference(a, a - 0.05)
    assert d == pytest.approx(0.05) and lo == pytest.approx(0.05) and hi == pytest.approx(0.05)
    noise = np.random.default_rng(0).normal(0, 0.05, 201)
    d, lo, hi = paired_difference(a + noise, a)           # no real difference: the range contains 0
    assert lo < 0 < hi


def test_last_fifth_gain_reads_the_curve_from_80_percent_of_the_steps():
    curve = {"step": [500, 1000, 1500, 2000, 2500], "valid_acc": [0.1, 0.2, 0.25, 0.27, 0.275]}
    gain, a, b = last_fifth_gain(curve)
    assert (a, b) == (2000, 2500) and gain == pytest.approx(0.005)


def test_accuracy_interval_resamples_sentences():
    right, count = np.array([1, 2, 0, 3]), np.array([2, 4, 1, 3])
    iv = accuracy_interval(right, count, n_boot=200)
    assert iv.estimate == pytest.approx(6 / 10) and iv.low <= iv.estimate <= iv.high


def test_unigram_scores_count_only_masked_positions():
    labels = np.array([[IGNORE, 7, 7, IGNORE], [9, IGNORE, IGNORE, IGNORE], [IGNORE] * 4])
    b = MaskedBatch(np.zeros_like(labels), labels, np.ones_like(labels, dtype=bool))
    right, count = unigram_sentence_scores(7, [b])
    np.testing.assert_array_equal(right, [2, 0])          # the sentence without a masked piece is left out
    np.testing.assert_array_equal(count, [2, 1])


def test_tokenizer_round_trips_through_arrays():
    tok = BPETokenizer.train(Counter("the river bank and the money bank the banks".split() * 3), vocab_size=40)
    back = tokenizer_from_arrays(tokenizer_to_arrays(tok))
    assert back.itos == tok.itos and back.merges == tok.merges
    assert list(back.encode("the riverbank")) == list(tok.encode("the riverbank"))


def test_the_split_is_by_document_90_5_5():
    counts = Counter(split_of(k) for k in range(2000))
    assert counts == {"train": 1800, "valid": 100, "test": 100}
