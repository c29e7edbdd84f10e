"""helpers.lib.bert: the NumPy masked LM with a tied embedding (finite differences, its autograd
reference, the window, the tied gradient), TinyBert (padding never attended, tying and what it
saves, bad ids, segments and masks refused), the masked-LM losses and the causal TinyGPT."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.nn import functional as F

from helpers.lib import bert as BE
from helpers.lib.gradcheck import check_function
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


# ---------------------------------------------------------------- the NumPy masked LM
def _numpy_case(B, L, V=11, d=4, seed=0, window=0):
    rng = np.random.default_rng(seed)
    model = BE.NumpyMaskedLM(V, d, rng, window=window)
    ids = rng.integers(1, V, (B, L))
    att = np.ones((B, L), bool)
    if L > 2:
        att[0, -2:] = False
        ids[0, -2:] = 0                                    # padding
    labels = np.full((B, L), IGNORE)
    labels[:, 0] = rng.integers(1, V, B)
    if L > 3:
        labels[-1, 2] = 3
    labels[0, min(1, L - 1)] = 5                  # its neighbours reach beyond the sentence
    return model, ids, labels, att


@pytest.mark.parametrize("window", [0, 1, 2])
@pytest.mark.parametrize("B,L", [(1, 1), (2, 5), (3, 7)])
def test_the_numpy_masked_lm_gradients_match_finite_differences_and_torch(window, B, L):
    model, ids, labels, att = _numpy_case(B, L, seed=window + B, window=window)
    loss = model.forward(ids, labels, att)
    model.backward()
    report = check_function(lambda: model.forward(ids, labels, att), model.params,
                            [g.copy() for g in model.grads], names=["E (tied)", "W", "b", "b_out"])
    assert report.ok, report
    t_loss, t_params = BE.numpy_mlm_torch_reference(model.params, ids, labels, att, window=window)
    assert np.isclose(loss, t_loss.item(), rtol=1e-10)
    for name, g, tp in zip(["E", "W", "b", "b_out"], model.grads, t_params, strict=True):
        np.testing.assert_allclose(g, tp.grad.numpy(), rtol=1e-8, atol=1e-12, err_msg=name)


@st.composite
def mlm_batch(draw, V):
    B, L = draw(dims(1, 3)), draw(dims(2, 5))
    ids = np.array(draw(st.lists(st.integers(0, V - 1), min_size=B * L, max_size=B * L)))
    ids = ids.reshape(B, L)
    lengths = [draw(st.integers(1, L)) for _ in range(B)]
    att = np.arange(L)[None, :] < np.array(lengths)[:, None]
    labels = np.where(att & (draw(float_arrays((B, L))) > 0), ids, IGNORE)
    labels[0, 0] = ids[0, 0]
    return ids, labels, att


@budget(2)
@given(st.data())
def test_the_numpy_masked_lm_is_its_autograd_reference_for_every_mask_form(data):
    V_, D = data.draw(dims(2, 8)), data.draw(dims(1, 3))
    model = BE.NumpyMaskedLM(V_, D, np.random.default_rng(data.draw(st.integers(0, 3))))
    ids, labels, att = data.draw(mlm_batch(V_))
    ref_loss, ref_params = BE.numpy_mlm_torch_reference(model.params, ids, labels, att)
    for _form, m, expected in mask_forms(att):
        if expected == "same":
            close(model.forward(ids, labels, m), ref_loss.item())
        else:
            raises_naming(lambda m=m: model.forward(ids, labels, m), "attention_mask", expected)
    model.forward(ids, labels, att)
    model.backward()
    for g, p in zip(model.grads, ref_params, strict=True):
        close(g, p.grad)
    check_bad_ids(lambda x: model.forward(x, labels, att), ids, V_, "ids",
                  data.draw(corrupted(ids, V_)))
    if (~att).any():
        padded = labels.copy()
        padded[~att] = 0
        raises_naming(lambda: model.forward(ids, padded, att), "labels", ValueError)
    logits = data.draw(float_arrays((3, V_)))
    t = np.array(data.draw(st.lists(st.integers(0, V_ - 1), min_size=3, max_size=3)))
    close(BE.mlm_loss_numpy(logits, t), F.cross_entropy(T(logits), T(t)).item())
    check_bad_ids(lambda x: BE.mlm_loss_numpy(logits, x), t, V_, "targets",
                  data.draw(corrupted(t, V_)))


def test_the_window_reads_the_neighbours_and_nothing_beyond_the_sentence():
    model = BE.NumpyMaskedLM(9, 3, np.random.default_rng(0), window=1)
    ids = np.array([[2, 5, 6, 3, 0, 0]])
    att = ids != 0
    labels = np.full(ids.shape, IGNORE)
    labels[0, 3] = 3                           # the last real token: its right neighbour is padding
    base = model.forward(ids, labels, att)
    other = ids.copy()
    other[0, 4] = 7                            # another id at the padded position changes nothing
    assert model.forward(other, labels, att) == base
    other = ids.copy()
    other[0, 2] = 7                            # the left neighbour does
    assert model.forward(other, labels, att) != base
    with pytest.raises(ValueError, match="window must be a non-negative integer"):
        BE.NumpyMaskedLM(9, 3, np.random.default_rng(0), window=-1)
    model.params[1][0, 0] = np.nan                  # a diverged weight is named, not passed on
    with pytest.raises(ValueError, match="NumpyMaskedLM.*W"):
        model.forward(ids, labels, att)


def test_window_zero_is_the_token_and_the_sentence_mean():
    """window=0: h_i = tanh([x_i, c] W + b) at the masked positions, written out here."""
    model, ids, labels, att = _numpy_case(3, 7, seed=4)
    E, W, b, b_out = model.params
    x = E[ids] * att[..., None]
    c = x.sum(1) / att.sum(1, keepdims=True)
    r, k = np.nonzero(labels != IGNORE)
    logits = np.tanh(np.concatenate([x[r, k], c[r]], axis=1) @ W + b) @ E.T + b_out
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    expected = -logp[np.arange(len(r)), labels[r, k]].mean()
    assert np.isclose(model.forward(ids, labels, att), expected, rtol=1e-12)


def test_the_tied_gradient_is_the_sum_of_both_uses():
    model, ids, labels, att = _numpy_case(2, 5)
    model.forward(ids, labels, att)
    model.backward()
    unused = np.setdiff1d(np.arange(11), ids)  # rows never looked up still get the output gradient
    assert len(unused) and np.abs(model.grads[0][unused]).max() > 0
    model2, ids2, labels2, att2 = _numpy_case(2, 5)
    ids2[0, -2:] = 10                          # padding rows get nothing through lookup or mean
    model2.params = [p.copy() for p in model.params]
    assert np.isclose(model2.forward(ids2, labels2, att2), model.forward(ids, labels, att))


def test_the_mlm_losses_worked_numbers_and_label_checks():
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.2, 0.2, 0.6]]))
    assert np.isclose(BE.mlm_loss_numpy(logits, np.array([0, 2])), -(np.log(0.1) + np.log(0.6)) / 2)
    with pytest.raises(ValueError, match="empty set"):
        BE.mlm_loss_numpy(logits[:0], np.array([], int))
    with pytest.raises(ValueError, match="expected logits"):
        BE.mlm_loss_numpy(logits, np.array([0]))
    with pytest.raises(ValueError, match=r"mlm_loss_numpy: targets must be class ids in \[0, 3\), "
                                         r"got -1 at index 1"):
        BE.mlm_loss_numpy(logits, np.array([0, -1]))       # used to score the last class
    model = BE.NumpyMaskedLM(7, 3, np.random.default_rng(0))
    ids, mask = np.array([[1, 2], [3, 4]]), np.ones((2, 2), bool)
    with pytest.raises(ValueError, match=r"NumpyMaskedLM: labels must be class ids in \[0, 7\) "
                                         r"\(or -100, ignored\), got -1 at index \(1, 0\)"):
        model.forward(ids, np.array([[IGNORE, 5], [-1, IGNORE]]), mask)
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


# ---------------------------------------------------------------- TinyGPT
@budget(1)
@given(st.data())
def test_the_causal_model_never_sees_the_future_and_its_loss_is_next_piece_cross_entropy(data):
    torch.manual_seed(0)
    model = BE.TinyGPT(CFG, 0).eval()
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
        loss = BE.causal_lm_loss(model, T(ids), T(att)).item()
        np.testing.assert_allclose(loss, np.mean(terms), rtol=1e-5)
        padded = np.where(att, ids, (ids + 3) % (V - 1) + 1)             # whatever sits in padding
        loss = BE.causal_lm_loss(model, T(padded), T(att)).item()
        np.testing.assert_allclose(loss, np.mean(terms), rtol=1e-5)


def test_the_encoder_reads_later_positions_the_causal_model_does_not():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        gpt, bert = BE.TinyGPT(CFG).eval(), BE.TinyBert(CFG).eval()
    ids = T([[2, 7, 8, 9, 10, 3]])
    changed = ids.clone()
    changed[0, 4] = 11
    with torch.no_grad():
        assert not torch.allclose(bert(ids)[0, :4], bert(changed)[0, :4])
        hidden, attn = gpt.layers_and_attention(ids)
    assert float(attn.triu(1).abs().max()) == 0            # no weight on a later position
    torch.testing.assert_close(hidden[-1], gpt(ids))
