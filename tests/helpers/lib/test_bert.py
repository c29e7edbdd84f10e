"""helpers.lib.bert: TinyBert (padding never attended, tying and what it saves, bad ids, segments
and masks refused) and the masked-LM losses."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.nn import functional as F

from helpers.lib import bert as BE
from helpers.lib.language_models import count_parameters
from helpers.lib.mlm import IGNORE
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    dims,
    float_arrays,
    mask_forms,
    raises_naming,
)

T = torch.tensor
V = 40
CFG = BE.BertConfig(vocab_size=V, dim=8, n_layers=1, n_heads=2, ff_dim=16, max_len=8, dropout=0.0)
close = closeness(1e-9)


def test_the_mlm_loss_is_cross_entropy_at_the_masked_positions_and_checks_labels():
    g = torch.Generator().manual_seed(0)
    t_logits = torch.randn(2, 6, 9, generator=g)
    labels = torch.full((2, 6), IGNORE)
    labels[0, 1], labels[1, 4], labels[1, 5] = 3, 8, 0
    ref = F.cross_entropy(t_logits.reshape(-1, 9), labels.reshape(-1), ignore_index=IGNORE)
    assert torch.allclose(BE.mlm_loss(t_logits, labels), ref)
    with pytest.raises(ValueError, match="no masked positions"):
        BE.mlm_loss(t_logits, torch.full((2, 6), IGNORE))
    with pytest.raises(ValueError, match=r"mlm_loss: labels must be token ids in \[0, 9\) "
                                         r"\(or -100, ignored\), got 9 at index \(0, 1\)"):
        BE.mlm_loss(t_logits, torch.tensor([[IGNORE, 9] + [IGNORE] * 4, [3] + [IGNORE] * 5]))
    with pytest.raises(TypeError, match="labels must be integer token ids"):
        BE.mlm_loss(t_logits, labels.double())


# ---------------------------------------------------------------- TinyBert
@budget(2)
@given(st.data())
def test_the_encoder_ignores_padding_and_refuses_bad_ids_segments_and_masks(data):
    torch.manual_seed(0)
    model = BE.TinyBert(CFG, 0).eval()
    B, L = data.draw(dims(1, 3)), data.draw(dims(2, 6))
    ids = np.array(data.draw(st.lists(st.integers(5, V - 1), min_size=B * L, max_size=B * L)))
    ids = ids.reshape(B, L)
    att = np.ones((B, L), bool)
    att[0, 1:] = data.draw(float_arrays((L - 1,))) > 0
    seg = np.array(data.draw(st.lists(st.integers(0, 1), min_size=B * L, max_size=B * L)))
    seg = seg.reshape(B, L)
    other = np.where(att, ids, (ids + 3) % V)               # other tokens where there is padding
    with torch.no_grad():
        h = model(T(ids), T(att), T(seg))
        h2 = model(T(other), T(att.astype(np.int64)), T(seg))
        close(h[T(att)].numpy(), h2[T(att)].numpy(), 1e-5)  # real positions never see padding
        hidden, attn = model.layers_and_attention(T(ids), T(att), T(seg))
    close(hidden[-1].numpy(), h.numpy(), 1e-5)
    assert hidden.shape == (2, B, L, 8) and attn.shape == (1, B, 2, L, L)
    assert np.allclose(attn[0].numpy()[..., ~att[0]][0], 0)
    for _form, m, expected in mask_forms(att):
        if expected != "same":
            raises_naming(lambda m=m: model(T(ids), torch.as_tensor(m), T(seg)), "attention_mask",
                          expected)
    check_bad_ids(lambda x: model(torch.as_tensor(x)), ids, V, "ids", data.draw(corrupted(ids, V)))
    check_bad_ids(lambda x: model(T(ids), T(att), torch.as_tensor(x)), seg, 2, "segments",
                  data.draw(corrupted(seg, 2)))
    raises_naming(lambda: model(T(np.zeros((1, 9), np.int64))), "max_len", ValueError)
    raises_naming(lambda: model(T(np.zeros(5, np.int64))), "(B, L)", ValueError)
    labels = np.where(att, ids, IGNORE)
    with torch.no_grad():
        h0 = model(T(ids), T(att))                          # masked_lm_loss: segments 0
        ref0 = F.cross_entropy(model.mlm_logits(h0)[T(att)], T(ids)[T(att)])
        close(BE.masked_lm_loss(model, T(ids), T(labels), T(att)).item(), ref0.item(), 1e-5)


def test_weight_tying_and_what_it_saves():
    cfg = BE.BertConfig(vocab_size=300, dim=24, n_layers=1, n_heads=2, ff_dim=48, max_len=16)
    tied = BE.TinyBert(cfg)
    untied = BE.TinyBert(BE.BertConfig(**{**cfg.__dict__, "tie_weights": False}))
    assert tied.output_matrix() is tied.tok_emb.weight
    assert untied.output_matrix() is not untied.tok_emb.weight
    s = BE.tying_saving(cfg)
    assert s["saved"] == s["V_times_d"] == 300 * 24
    assert (s["tied"], s["untied"]) == (count_parameters(tied), count_parameters(untied))
    ids = torch.full((1, 4), 7)                # the output gives a gradient to absent tokens too
    labels = torch.tensor([[IGNORE, 9, IGNORE, IGNORE]])
    BE.masked_lm_loss(tied, ids, labels, ids != 0).backward()
    assert tied.tok_emb.weight.grad[100].abs().sum() > 0
    base = BE.tying_saving(BE.BertConfig(vocab_size=30522, dim=768, n_layers=12, n_heads=12,
                                         ff_dim=3072, max_len=512))
    # BERT-base's encoder 108,891,648 (without the pooler) + the final LayerNorm of a Pre-LN stack
    # 1,536 + the MLM head's transform 590,592 and its LayerNorm 1,536 + the output bias 30,522
    assert base["tied"] == 108_891_648 + 1_536 + 590_592 + 1_536 + 30_522
    assert base["saved"] == 30522 * 768
