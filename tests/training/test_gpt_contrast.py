"""training/gpt_contrast.py: TinyGPT never sees the future and its loss is next-piece cross-entropy;
filling a blank from the left scores each blank with the pieces
before it, and the next-piece scores count every real next piece."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.nn import functional as F

from helpers.lib.bert import BertConfig, TinyBert
from helpers.lib.mlm import IGNORE, MaskedBatch
from tests.props import budget, dims
from training.gpt_contrast import (
    TinyGPT,
    causal_lm_loss,
    fill_from_the_left,
    next_piece_scores,
    sentence_batches,
)

MASK = 4
T = torch.tensor
V = 40
CFG = BertConfig(vocab_size=V, dim=8, n_layers=1, n_heads=2, ff_dim=16, max_len=8, dropout=0.0)


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


@budget(1)
@given(st.data())
def test_the_causal_model_never_sees_the_future_and_its_loss_is_next_piece_cross_entropy(data):
    torch.manual_seed(0)
    model = TinyGPT(CFG).eval()
    B, L = data.draw(dims(1, 3)), data.draw(dims(2, 6))
    ids = np.array(data.draw(st.lists(st.integers(1, V - 1), min_size=B * L, max_size=B * L)))
    ids = ids.reshape(B, L)
    lengths = [L] + [data.draw(st.integers(2, L)) for _ in range(B - 1)]
    att = np.arange(L)[None, :] < np.array(lengths)[:, None]             # right padding
    j = data.draw(st.integers(0, L - 1))
    other = ids.copy()
    other[:, j:] = (ids[:, j:] + 5) % (V - 1) + 1                         # another future from j on
    with torch.no_grad():
        h, h2 = model(T(ids), T(att)), model(T(other), T(att))
        np.testing.assert_allclose(h[:, :j].numpy(), h2[:, :j].numpy(), atol=1e-5)
        logits = model.mlm_logits(h).double()
        terms = [F.cross_entropy(logits[b, t][None], T([ids[b, t + 1]])).item()
                 for b in range(B) for t in range(L - 1) if att[b, t + 1]]
        loss = causal_lm_loss(model, T(ids), T(att)).item()
        np.testing.assert_allclose(loss, np.mean(terms), rtol=1e-5)
        padded = np.where(att, ids, (ids + 3) % (V - 1) + 1)             # whatever sits in padding
        loss = causal_lm_loss(model, T(padded), T(att)).item()
        np.testing.assert_allclose(loss, np.mean(terms), rtol=1e-5)


def test_the_encoder_reads_later_positions_the_causal_model_does_not():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        gpt, bert = TinyGPT(CFG).eval(), TinyBert(CFG).eval()
    ids = T([[2, 7, 8, 9, 10, 3]])
    changed = ids.clone()
    changed[0, 4] = 11
    with torch.no_grad():
        assert not torch.allclose(bert(ids)[0, :4], bert(changed)[0, :4])
        hidden, attn = gpt.layers_and_attention(ids)
    assert float(attn.triu(1).abs().max()) == 0            # no weight on a later position
    torch.testing.assert_close(hidden[-1], gpt(ids))
