"""training/bert_nsp.py: the piece-overlap baseline and its threshold, sentence-pair batches
with their segments, and the NSP head's shape."""
import numpy as np
import pytest
import torch

from helpers.lib.mlm import SentencePair
from training.bert_nsp import NSPHead, overlap, overlap_baseline, pair_batch

SPECIAL = 5


def pair(a, b, is_next):
    ids = np.array([2, *a, 3, *b, 3])
    return SentencePair(ids, np.array([0] * (len(a) + 2) + [1] * (len(b) + 1)), is_next)


def test_the_overlap_baseline_reads_shared_pieces_and_picks_its_threshold_on_training_pairs():
    assert overlap(pair([5, 6, 7], [6, 7, 8], True), SPECIAL) == pytest.approx(2 / 4)
    train = [pair([5, 6], [6, 7], True), pair([5, 6], [8, 9], False), pair([7, 8], [8, 9], True),
             pair([5, 7], [6, 9], False)]
    test = [pair([5, 6], [5, 9], True), pair([5, 6], [7, 8], False)]
    right, thr = overlap_baseline(train, test, SPECIAL)
    assert thr == 0.0 and list(right) == [1, 1]


def test_pair_batches_keep_the_segments():
    p = SentencePair(np.array([2, 5, 3, 6, 7, 3]), np.array([0, 0, 0, 1, 1, 1]), True)
    q = SentencePair(np.array([2, 5, 3, 6, 3]), np.array([0, 0, 0, 1, 1]), False)
    ids, seg, att, y = pair_batch(type("Tok", (), {"pad_id": 0})(), [p, q])
    assert ids.shape == seg.shape == (2, 6) and list(y) == [1, 0]
    assert list(seg[1]) == [0, 0, 0, 1, 1, 0] and list(att[1]) == [True] * 5 + [False]
    assert NSPHead(16)(torch.zeros(2, 6, 16)).shape == (2, 2)
