"""training/gpt_contrast.py: filling a blank from the left scores each blank with the pieces
before it, and the next-piece scores count every real next piece."""
import numpy as np
import pytest
import torch

from helpers.lib.bert import BertConfig, TinyGPT
from helpers.lib.mlm import IGNORE, MaskedBatch
from training.gpt_contrast import fill_from_the_left, next_piece_scores, sentence_batches

MASK = 4


@pytest.fixture(scope="module")
def gpt():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        cfg = BertConfig(vocab_size=20, dim=16, n_layers=2, n_heads=2, ff_dim=32, max_len=12,
                         dropout=0.0)
        return TinyGPT(cfg).eval()


def test_fill_from_the_left_scores_each_blank_with_the_pieces_before_it(gpt):
    seq = np.array([[2, 7, 8, 9, 3], [2, 10, 11, 3, 0]])
    labels = np.full(seq.shape, IGNORE)
    labels[0, 2], labels[1, 1] = 8, 10
    inputs = np.where(labels != IGNORE, MASK, seq)
    out = fill_from_the_left(gpt, [MaskedBatch(inputs, labels, seq != 0)])
    with torch.no_grad():
        logits = gpt.mlm_logits(gpt(torch.as_tensor(seq), torch.as_tensor(seq != 0)))
    right = [int(logits[0, 1].argmax() == 8), int(logits[1, 0].argmax() == 10)]
    np.testing.assert_array_equal(out["right"], right)
    np.testing.assert_array_equal(out["count"], [1, 1])
    assert out["accuracy"] == np.mean(right)


def test_the_next_piece_scores_count_every_real_next_piece(gpt):
    seqs = [np.array([2, 7, 8, 3]), np.array([2, 9, 10, 11, 3])]
    ev = next_piece_scores(gpt, sentence_batches(seqs, 0))
    assert ev["n"] == 3 + 4
    with torch.no_grad():
        logits = [gpt.mlm_logits(gpt(torch.as_tensor(s[None])))[0, :-1] for s in seqs]
        nll = [torch.nn.functional.cross_entropy(z, torch.as_tensor(s[1:]), reduction="sum").item()
               for z, s in zip(logits, seqs)]
    assert ev["nll"] == pytest.approx(sum(nll) / 7, rel=1e-5)
