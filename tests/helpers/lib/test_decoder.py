"""helpers.lib.decoder: the NumPy decoder is DecoderLM (PyTorch) in logits, loss and gradients
for every setting, agrees with finite differences, and runs the functions it is given."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import attention as A
from helpers.lib import decoder as D
from helpers.lib.gradcheck import check_function, check_layer
from helpers.lib.transformer import DecoderLM, TransformerConfig
from tests.helpers.lib.test_attention import recording
from tests.props import budget, dims, raises_naming


@budget(2)
@given(st.data())
def test_the_numpy_decoder_is_decoder_lm_for_every_setting(data):
    norm = data.draw(st.sampled_from(["pre", "post"]))
    pos = data.draw(st.sampled_from(["learned", "rope", "sinusoidal"]))
    heads, n_layers = data.draw(st.sampled_from([1, 2])), data.draw(dims(1, 2))
    cfg = TransformerConfig(vocab_size=7, d_model=4 * heads, n_heads=heads, n_layers=n_layers,
                            max_len=6, norm=norm, positions=pos)
    tm = DecoderLM(cfg, seed=data.draw(st.integers(0, 3))).double().eval()
    nm = D.NumpyDecoderLM.from_torch(tm)
    B, T_ = data.draw(dims(1, 3)), data.draw(dims(1, 6))
    ids = np.array(data.draw(st.lists(st.integers(0, 6), min_size=B * T_, max_size=B * T_)))
    ids = ids.reshape(B, T_)
    logits = nm.forward(ids)
    with torch.no_grad():           # torch keeps the sinusoids in float32
        np.testing.assert_allclose(logits, tm(torch.as_tensor(ids)).numpy(), atol=1e-6)
    raises_naming(lambda: nm.forward(np.zeros((1, 7), np.int64)), "max_len", ValueError)
    raises_naming(lambda: nm.forward(np.zeros(5, np.int64)), "(B, T)", ValueError)
    raises_naming(lambda: nm.loss(ids[:0], ids[:0]), "empty", ValueError)
    raises_naming(lambda: nm.loss(ids, ids[:, :0]), "targets", ValueError)
    raises_naming(lambda: D.NumpyDecoderLM(7, positions="alibi"), "positions", ValueError)


def test_without_positions_one_block_sees_the_set_of_earlier_tokens_not_their_order():
    nm = D.NumpyDecoderLM(7, d_model=8, n_heads=2, n_layers=1, positions=None, dtype=np.float64)
    logits, swapped = nm.forward([[1, 2, 3, 4]]), nm.forward([[2, 1, 3, 4]])
    np.testing.assert_allclose(swapped[:, 2:], logits[:, 2:], atol=1e-12)   # same token, same set
    assert np.abs(swapped[:, 0] - logits[:, 0]).max() > 1e-6


@pytest.mark.parametrize("norm,positions", [("pre", "learned"), ("pre", "rope"),
                                            ("post", "learned"), ("post", "sinusoidal")])
def test_loss_and_every_gradient_equal_decoder_lm(norm, positions):
    cfg = TransformerConfig(11, d_model=8, n_heads=2, n_layers=2, max_len=6, norm=norm,
                            positions=positions)
    tm = DecoderLM(cfg, seed=1).double()
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel()),
                                     dtype=p.dtype))
    nm = D.NumpyDecoderLM.from_torch(tm)
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 11, (3, 6)), rng.integers(0, 11, (3, 6))
    loss = nm.loss(x, y)
    nm.backward()
    t_loss = F.cross_entropy(tm(torch.as_tensor(x)).flatten(0, 1), torch.as_tensor(y).flatten())
    t_loss.backward()
    tol = 1e-12 if positions != "sinusoidal" else 1e-7          # torch's sinusoids are float32
    assert loss == pytest.approx(t_loss.item(), abs=tol)
    with torch.no_grad():           # torch's gradients in the NumPy layout: copy them in as weights
        for p in tm.parameters():
            p.copy_(p.grad)
    theirs = D.NumpyDecoderLM.from_torch(tm).params
    for name, g, tg in zip(nm.names, nm.grads, theirs, strict=True):
        np.testing.assert_allclose(g, tg, atol=1e-8 if positions == "sinusoidal" else 1e-13,
                                   err_msg=name)


@budget(0.1)
@given(st.sampled_from(["pre", "post"]), st.booleans(), dims(1, 2), dims(2, 4), st.integers(0, 5))
def test_every_piece_of_a_block_passes_finite_differences(norm, rope, B, T_, seed):
    rng = np.random.default_rng(seed)
    block = D.DecoderBlock(8, 2, 12, rng, norm=norm, rope=rope, dtype=np.float64)
    for p in block.params:
        p += 0.1 * rng.standard_normal(p.shape)
    x = rng.standard_normal((B, T_, 8))
    report = check_layer(block, x, rng=rng)
    # without RoPE the key bias adds the same number to a row of scores (lesson 04 §5): its
    # gradient is exactly 0, and its relative error noise over noise
    zero = {f"param[{i}]" for i, g in enumerate(block.grads) if np.abs(g).max() < 1e-10}
    assert all(e < 1e-6 for name, e in report.errors.items() if name not in zero), report
    assert rope or zero == {"param[5]"}
    ff = D.FeedForward(8, 12, rng, dtype=np.float64)
    assert check_layer(ff, x, rng=rng).ok
    raises_naming(lambda: D.NumpyDecoderLM(5, 8, 2, norm="mid"), "norm", ValueError)
    raises_naming(lambda: D.NumpyDecoderLM(5, 6, 2, positions="rope"), "RoPE", ValueError)


def test_the_whole_model_passes_finite_differences_with_rope():
    nm = D.NumpyDecoderLM(9, d_model=8, n_heads=2, n_layers=1, max_len=5, positions="rope",
                          dtype=np.float64, seed=3)
    rng = np.random.default_rng(5)
    for p in nm.params:
        p += 0.1 * rng.standard_normal(p.shape)
    x, y = rng.integers(0, 9, (2, 5)), rng.integers(0, 9, (2, 5))
    nm.loss(x, y)
    nm.backward()
    grads = [g.copy() for g in nm.grads]
    report = check_function(lambda: nm.loss(x, y), nm.params, grads, nm.names)
    assert report.ok, report
    # with RoPE the key bias is rotated differently at every position, so it changes the scores
    assert all(np.abs(g).max() > 1e-6 for n, g in zip(nm.names, nm.grads, strict=True)
               if n.endswith("b_K"))


@budget()
@given(dims(1, 3), dims(1, 4), dims(2, 6), st.integers(0, 5))
def test_gelu_and_the_layer_norm_backward_equal_torch(B, T_, d, seed):
    rng = np.random.default_rng(seed)
    x = 3 * rng.standard_normal((B, T_, d)) + rng.standard_normal()
    dy, gamma, beta = rng.standard_normal((B, T_, d)), *rng.standard_normal((2, d))
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    F.layer_norm(tx, (d,), tg, tb, 1e-5).backward(torch.tensor(dy))
    for ours, theirs in zip(D.layer_norm_backward(dy, x, gamma), (tx.grad, tg.grad, tb.grad),
                            strict=True):
        np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-10)
    gelu, tx = D.GELU(), torch.tensor(x, requires_grad=True)
    ty = F.gelu(tx)
    np.testing.assert_allclose(gelu.forward(x), ty.detach().numpy(), atol=1e-12)
    ty.backward(torch.tensor(dy))
    np.testing.assert_allclose(gelu.backward(dy), tx.grad.numpy(), atol=1e-12)


def test_the_model_runs_the_attention_it_is_given_and_samples_with_a_seed():
    calls = []
    yours = recording(calls, attend=A.scaled_dot_product_attention,
                      attend_backward=A.softmax_attention_backward)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 13, (2, 7))
    for positions in ("learned", "rope"):
        plain = D.NumpyDecoderLM(13, d_model=8, n_heads=2, n_layers=2, max_len=7, seed=0,
                                 positions=positions)
        mine = D.NumpyDecoderLM(13, d_model=8, n_heads=2, n_layers=2, max_len=7, seed=0,
                                positions=positions, **yours)
        np.testing.assert_array_equal(mine.loss(ids, ids), plain.loss(ids, ids))
        mine.backward()
        plain.backward()
        for g, h in zip(mine.grads, plain.grads, strict=True):
            np.testing.assert_array_equal(g, h)
    assert calls == ["attend", "attend", "attend_backward", "attend_backward"] * 2
    sample = plain.generate([1, 2], 5, temperature=0.7, seed=0)
    assert sample.shape == (7,) and list(sample[:2]) == [1, 2] and sample.max() < 13
    np.testing.assert_array_equal(sample, plain.generate([1, 2], 5, temperature=0.7, seed=0))
    raises_naming(lambda: plain.next_probs([1], temperature=0), "temperature", ValueError)
