"""Properties of lesson 04's NumPy decoder (helpers.lib.decoder) and the clip-then-Adam step
(helpers.lib.optim.clip_adam_step): for drawn sizes and settings, the NumPy layers equal PyTorch
(or centred finite differences) in float64, the model is causal, and bad input is refused with a
message that names the argument."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import decoder as D
from helpers.lib.gradcheck import check_function, check_layer
from helpers.lib.optim import clip_adam_step
from helpers.lib.transformer import DecoderLM, TransformerConfig
from tests.props import budget, covers, dims, raises_naming


@covers("decoder.NumpyDecoderLM")
@budget(2)
@given(st.data())
def test_the_numpy_decoder_is_decoder_lm_and_causal_for_every_setting(data):
    norm, pos = data.draw(st.sampled_from(["pre", "post"])), data.draw(st.sampled_from(["learned", "rope"]))
    heads, n_layers = data.draw(st.sampled_from([1, 2])), data.draw(dims(1, 2))
    cfg = TransformerConfig(vocab_size=7, d_model=4 * heads, n_heads=heads, n_layers=n_layers, max_len=6, norm=norm,
                            positions=pos)
    tm = DecoderLM(cfg, seed=data.draw(st.integers(0, 3))).double().eval()
    nm = D.NumpyDecoderLM.from_torch(tm)
    B, T_ = data.draw(dims(1, 3)), data.draw(dims(1, 6))
    ids = np.array(data.draw(st.lists(st.integers(0, 6), min_size=B * T_, max_size=B * T_))).reshape(B, T_)
    logits = nm.forward(ids)
    with torch.no_grad():
        np.testing.assert_allclose(logits, tm(torch.as_tensor(ids)).numpy(), atol=1e-10)
    t = data.draw(st.integers(0, T_ - 1))
    changed = ids.copy()
    changed[:, t:] = (changed[:, t:] + 1) % 7                  # the future changes, the past does not see it
    np.testing.assert_allclose(nm.forward(changed)[:, :t], logits[:, :t], atol=1e-12)
    raises_naming(lambda: nm.forward(np.zeros((1, 7), np.int64)), "max_len", ValueError)
    raises_naming(lambda: nm.loss(ids, ids[:, :0]), "targets", ValueError)
    raises_naming(lambda: D.NumpyDecoderLM(7, positions="alibi"), "positions", ValueError)


def _agrees(layer, report, tol=1e-6):
    """Every gradient agrees with finite differences, except one that is exactly 0 (the key bias
    without RoPE shifts a whole row of scores, which the softmax ignores: lesson 04, section 5),
    whose relative error is noise over noise."""
    zero = {f"param[{i}]" for i, g in enumerate(layer.grads) if np.abs(g).max() < 1e-10}
    return all(e < tol for name, e in report.errors.items() if name not in zero)


@covers("decoder.DecoderBlock", "decoder.DecoderAttention", "decoder.FeedForward", "decoder.RotaryAttention")
@budget(0.1)
@given(st.sampled_from(["pre", "post"]), st.booleans(), dims(1, 2), dims(2, 4), st.integers(0, 5))
def test_every_piece_of_a_block_passes_finite_differences(norm, rope, B, T_, seed):
    rng = np.random.default_rng(seed)
    block = D.DecoderBlock(8, 2, 12, rng, norm=norm, rope=rope, dtype=np.float64)
    for p in block.params:
        p += 0.1 * rng.standard_normal(p.shape)
    x = rng.standard_normal((B, T_, 8))
    assert _agrees(block, check_layer(block, x, rng=rng))
    ff = D.FeedForward(8, 12, rng, dtype=np.float64)
    assert _agrees(ff, check_layer(ff, x, rng=rng))
    attn = D.DecoderAttention(8, 2, rng, dtype=np.float64, rope=rope)
    assert _agrees(attn, check_layer(attn, x, rng=rng))
    Q, K, V = (rng.standard_normal((B, 2, T_, 4)) for _ in range(3))
    ra = D.RotaryAttention(rope=rope)
    dout = rng.standard_normal((B, 2, T_, 4))
    ra.forward(Q, K, V, np.tril(np.ones((T_, T_), bool)))
    grads = ra.backward(dout)
    report = check_function(lambda: float(np.sum(ra.forward(Q, K, V, np.tril(np.ones((T_, T_), bool))) * dout)),
                            [Q, K, V], list(grads), ["dQ", "dK", "dV"])
    assert report.ok, report
    raises_naming(lambda: D.DecoderBlock(8, 2, 12, rng, norm="mid"), "norm", ValueError)


@covers("decoder.GELU", "decoder.layer_norm_backward")
@budget()
@given(dims(1, 3), dims(1, 4), dims(2, 6), st.integers(0, 5))
def test_gelu_and_the_layer_norm_backward_equal_torch(B, T_, d, seed):
    rng = np.random.default_rng(seed)
    x = 3 * rng.standard_normal((B, T_, d)) + rng.standard_normal()
    dy, gamma, beta = rng.standard_normal((B, T_, d)), rng.standard_normal(d), rng.standard_normal(d)
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    F.layer_norm(tx, (d,), tg, tb, 1e-5).backward(torch.tensor(dy))
    for ours, theirs in zip(D.layer_norm_backward(dy, x, gamma), (tx.grad, tg.grad, tb.grad), strict=True):
        np.testing.assert_allclose(ours, theirs.numpy(), atol=1e-10)
    gelu, tx = D.GELU(), torch.tensor(x, requires_grad=True)
    ty = F.gelu(tx)
    np.testing.assert_allclose(gelu.forward(x), ty.detach().numpy(), atol=1e-12)
    ty.backward(torch.tensor(dy))
    np.testing.assert_allclose(gelu.backward(dy), tx.grad.numpy(), atol=1e-12)


@covers("optim.clip_adam_step")
@budget()
@given(st.lists(st.tuples(dims(1, 3), dims(1, 3)), min_size=1, max_size=3), st.sampled_from([1e-3, 0.5, 1.0, 10.0]),
       st.floats(0.001, 0.1), st.integers(0, 5))
def test_clip_adam_step_is_torch_s_clip_grad_norm_then_adam(shapes, max_norm, lr, seed):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s) for s in shapes]
    ts = [torch.tensor(p.copy(), requires_grad=True) for p in params]
    opt = torch.optim.Adam(ts, lr=lr, betas=(0.9, 0.99))
    m, v = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params]
    for t in range(1, 4):
        grads = [rng.standard_normal(s) * rng.choice([1e-3, 1.0, 30.0]) for s in shapes]
        params, m, v = clip_adam_step(params, grads, m, v, t, lr, max_norm=max_norm, beta2=0.99)
        for tt, g in zip(ts, grads, strict=True):
            tt.grad = torch.tensor(g)
        torch.nn.utils.clip_grad_norm_(ts, max_norm)
        opt.step()
    for p, tt in zip(params, ts, strict=True):
        np.testing.assert_allclose(p, tt.detach().numpy(), rtol=1e-9, atol=1e-12)
    raises_naming(lambda: clip_adam_step(params, grads, m, v, 0, lr), "t", ValueError)
