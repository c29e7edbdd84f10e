"""Tests of helpers.lib.attention: NumPy attention against PyTorch, gradients, masks, errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.exercises.lesson04 import check_causal_mask, check_split_heads
from helpers.infra.widgets import Explorer, slider
from helpers.lessons.lesson04 import render_scaling
from helpers.lib.attention import (
    Attention,
    MultiHeadAttention,
    attention_single_query,
    causal_mask,
    dot_product_statistics,
    merge_heads,
    padding_mask,
    scaled_dot_product_attention,
    softmax_jacobian_norm,
    split_heads,
)
from helpers.lib.gradcheck import assert_close_to_torch, check_function, check_layer, relative_error
from helpers.lib.layers import softmax


def t(a, grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


# ---------------------------------------------------------------- forward
def test_single_query_is_a_row_of_the_matrix_form():
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 5))
    out, W = scaled_dot_product_attention(Q, K, V)
    for i in range(4):
        z, w = attention_single_query(Q[i], K, V)
        np.testing.assert_allclose(z, out[i], rtol=1e-12)
        np.testing.assert_allclose(w, W[i], rtol=1e-12)
    # the unscaled form of the notes: weights exp(q·k_i) / Σ_j exp(q·k_j)
    z, w = attention_single_query(Q[0], K, V, scale=False)
    e = np.exp(K @ Q[0])
    np.testing.assert_allclose(w, e / e.sum(), rtol=1e-12)
    np.testing.assert_allclose(z, (e / e.sum()) @ V, rtol=1e-12)


@pytest.mark.parametrize("shape", [(1, 1, 1, 4), (1, 2, 1, 3), (2, 3, 5, 4), (3, 1, 7, 8)])
@pytest.mark.parametrize("masking", ["none", "causal", "padding"])
def test_matches_torch_sdpa(shape, masking):
    B, H, T, d = shape
    rng = np.random.default_rng(sum(shape))
    Q, K, V = (rng.standard_normal(shape) for _ in range(3))
    mask = None
    if masking == "causal":
        mask = causal_mask(T)
    elif masking == "padding":
        lengths = rng.integers(1, T + 1, size=B)
        mask = padding_mask(lengths, T)[:, None]  # (B, 1, 1, T)
    ours, W = scaled_dot_product_attention(Q, K, V, mask)
    theirs = F.scaled_dot_product_attention(t(Q), t(K), t(V),
                                            attn_mask=None if mask is None else torch.tensor(mask))
    assert_close_to_torch(ours, theirs, f"attention output {shape} {masking}", rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(W.sum(-1), 1.0, rtol=1e-12)
    if mask is not None:
        assert np.all(W[~np.broadcast_to(mask, W.shape)] == 0.0), "masked keys must get weight exactly 0"


def test_cross_attention_shapes_and_torch():
    rng = np.random.default_rng(1)
    Q, K, V = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 6, 4)), rng.standard_normal((2, 6, 5))
    out, W = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 5) and W.shape == (2, 3, 6)
    assert_close_to_torch(out, F.scaled_dot_product_attention(t(Q), t(K), t(V)), "cross-attention", rtol=1e-10)


def test_masked_values_do_not_leak():
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((5, 4)) for _ in range(3))
    out, _ = scaled_dot_product_attention(Q, K, V, causal_mask(5))
    V2, K2 = V.copy(), K.copy()
    V2[4] += 100.0
    K2[4] -= 50.0
    out2, _ = scaled_dot_product_attention(Q, K2, V2, causal_mask(5))
    np.testing.assert_allclose(out2[:4], out[:4], rtol=1e-12)
    assert not np.allclose(out2[4], out[4])
    # padding: values of padded keys do not matter either
    mask = padding_mask([3], 5)
    out, _ = scaled_dot_product_attention(Q[None], K[None], V[None], mask)
    out2, _ = scaled_dot_product_attention(Q[None], K2[None], V2[None], mask)
    np.testing.assert_allclose(out2, out, rtol=1e-12)


# ---------------------------------------------------------------- backward
@pytest.mark.parametrize("masked", [False, True])
def test_attention_backward_finite_differences(masked):
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    mask = padding_mask([5, 2], 5) if masked else None
    layer = Attention()
    dout = rng.standard_normal((2, 4, 2))
    layer.forward(Q, K, V, mask)
    dQ, dK, dV = layer.backward(dout)
    report = check_function(lambda: float(np.sum(layer.forward(Q, K, V, mask) * dout)),
                            [Q, K, V], [dQ, dK, dV], ["Q", "K", "V"])
    assert report.ok, report
    if masked:  # padded keys/values of sequence 1 receive no gradient
        assert np.all(dK[1, 2:] == 0) and np.all(dV[1, 2:] == 0)


def test_attention_backward_matches_torch_autograd_with_broadcast_mask():
    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((3, 2, 6, 4)) for _ in range(3))
    mask = causal_mask(6)
    layer = Attention()
    out = layer.forward(Q, K, V, mask)
    dout = rng.standard_normal(out.shape)
    grads = layer.backward(dout)
    tq, tk, tv = t(Q, True), t(K, True), t(V, True)
    F.scaled_dot_product_attention(tq, tk, tv, is_causal=True).backward(t(dout))
    for name, ours, theirs in zip("QKV", grads, (tq.grad, tk.grad, tv.grad), strict=True):
        assert_close_to_torch(ours, theirs, f"d{name}", rtol=1e-9, atol=1e-12)


def test_backward_sums_over_broadcast_axes():
    # one shared K, V for a batch of query sets: their gradients must be summed, not overwritten
    rng = np.random.default_rng(5)
    Q, K, V = rng.standard_normal((3, 4, 2)), rng.standard_normal((5, 2)), rng.standard_normal((5, 3))
    layer = Attention()
    dout = rng.standard_normal(layer.forward(Q, K, V).shape)
    dQ, dK, dV = layer.backward(dout)
    assert dK.shape == K.shape and dV.shape == V.shape
    report = check_function(lambda: float(np.sum(layer.forward(Q, K, V) * dout)), [K, V], [dK, dV], ["K", "V"])
    assert report.ok, report


# ---------------------------------------------------------------- multi-head
def torch_mha(d, h, seed):
    torch.manual_seed(seed)
    m = torch.nn.MultiheadAttention(d, h, batch_first=True).double()
    with torch.no_grad():  # non-zero biases so a wrong bias path is caught
        m.in_proj_bias.normal_()
        m.out_proj.bias.normal_()
    return m


@pytest.mark.parametrize("B,T,d,h", [(1, 1, 8, 2), (1, 5, 8, 1), (2, 5, 8, 2), (3, 7, 12, 3)])
@pytest.mark.parametrize("masking", ["none", "causal", "padding"])
def test_multihead_matches_torch_module(B, T, d, h, masking):
    rng = np.random.default_rng(B * 100 + T)
    tm = torch_mha(d, h, seed=T)
    ours = MultiHeadAttention(d, h, rng).load_torch(tm)
    X = rng.standard_normal((B, T, d))
    kw, tkw = {}, {}
    if masking == "causal":
        kw["causal"] = True
        tkw["attn_mask"] = torch.tensor(~causal_mask(T))  # torch: True = NOT allowed
    elif masking == "padding":
        lengths = rng.integers(1, T + 1, size=B)
        keep = padding_mask(lengths, T)[:, 0]
        kw["key_padding"] = keep
        tkw["key_padding_mask"] = torch.tensor(~keep)
    y = ours.forward(X, **kw)
    tx = t(X, True)
    ty, tw = tm(tx, tx, tx, need_weights=True, average_attn_weights=False, **tkw)
    assert_close_to_torch(y, ty, "MHA output", rtol=1e-10, atol=1e-12)
    assert_close_to_torch(ours.weights, tw, "MHA weights per head", rtol=1e-10, atol=1e-12)
    dout = rng.standard_normal(y.shape)
    dX = ours.backward(dout)
    ty.backward(t(dout))
    assert_close_to_torch(dX, tx.grad, "dX", rtol=1e-9, atol=1e-12)
    dW_in = np.concatenate([ours.grads[0].T, ours.grads[2].T, ours.grads[4].T])
    db_in = np.concatenate([ours.grads[1], ours.grads[3], ours.grads[5]])
    assert_close_to_torch(dW_in, tm.in_proj_weight.grad, "d in_proj_weight", rtol=1e-9, atol=1e-12)
    assert_close_to_torch(db_in, tm.in_proj_bias.grad, "d in_proj_bias", rtol=1e-9, atol=1e-12)
    assert_close_to_torch(ours.grads[6].T, tm.out_proj.weight.grad, "d W_O", rtol=1e-9, atol=1e-12)
    assert_close_to_torch(ours.grads[7], tm.out_proj.bias.grad, "d b_O", rtol=1e-9, atol=1e-12)


def test_multihead_finite_differences_and_zero_key_bias_gradient():
    rng = np.random.default_rng(6)
    mha = MultiHeadAttention(6, 2, rng)
    for p in mha.params[1::2]:
        p[...] = rng.standard_normal(p.shape)
    X = rng.standard_normal((2, 4, 6))
    report = check_layer(mha, X, np.ones((1, 1, 4, 4), bool), rng=rng)
    # b_K shifts every score of a query by the same q·b_K, and softmax ignores shifts:
    # its true gradient is 0, so only an absolute test makes sense for it
    assert report.errors.pop("param[3]") >= 0
    assert report.ok, report
    assert np.abs(mha.grads[3]).max() < 1e-12
    causal_report = check_layer(mha, X, causal_mask(4), rng=rng)
    causal_report.errors.pop("param[3]")
    assert causal_report.ok, causal_report


def test_split_and_merge_heads_are_inverse():
    X = np.arange(2 * 3 * 8).reshape(2, 3, 8)
    H = split_heads(X, 4)
    assert H.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(H[1, 2, 0], X[1, 0, 4:6])
    np.testing.assert_array_equal(merge_heads(H), X)


# ---------------------------------------------------------------- errors
def test_bad_masks_raise_clear_errors():
    rng = np.random.default_rng(7)
    Q, K, V = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 3))
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast"):
        scaled_dot_product_attention(Q, K, V, causal_mask(4))
    with pytest.raises(ValueError, match="mask of shape"):
        scaled_dot_product_attention(Q, K, V, np.ones(5, bool))
    with pytest.raises(ValueError, match="mask of shape"):
        scaled_dot_product_attention(Q, K, V, np.ones((1, 1, 4, 5), bool))
    with pytest.raises(TypeError, match="boolean"):
        scaled_dot_product_attention(Q, K, V, np.ones((4, 5)))
    with pytest.raises(ValueError, match="hides every key"):
        scaled_dot_product_attention(Q, K, V, np.zeros((4, 5), bool))
    with pytest.raises(ValueError, match="same width d_k"):
        scaled_dot_product_attention(Q, K[..., :2], V)
    with pytest.raises(ValueError, match="same number of tokens"):
        scaled_dot_product_attention(Q, K, V[:, :4])
    with pytest.raises(ValueError, match=r"every length must lie in \[1, 5\]"):
        padding_mask([0, 5], 5)


def test_multihead_errors():
    rng = np.random.default_rng(8)
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=3"):
        MultiHeadAttention(10, 3, rng)
    with pytest.raises(ValueError, match="not divisible by num_heads=5"):
        split_heads(np.zeros((1, 2, 8)), 5)
    mha = MultiHeadAttention(8, 2, rng)
    with pytest.raises(ValueError, match=r"expects input \(B, T, 8\)"):
        mha.forward(np.zeros((2, 3, 6)))
    with pytest.raises(ValueError, match="mask of shape"):
        mha.forward(np.zeros((2, 3, 8)), mask=np.ones((4, 4), bool))
    with pytest.raises(ValueError, match=r"key_padding must be a bool array of shape \(B, T\)"):
        mha.forward(np.zeros((2, 3, 8)), key_padding=np.ones((2, 4), bool))


# ---------------------------------------------------------------- √d_k and the explorer
def test_dot_product_variance_grows_with_d_and_scaling_fixes_it():
    small = dot_product_statistics(4, 16, np.random.default_rng(0))
    big = dot_product_statistics(256, 16, np.random.default_rng(0))
    assert abs(big["var_raw"] / 256 - 1) < 0.1 and abs(small["var_raw"] / 4 - 1) < 0.1
    assert abs(big["var_scaled"] - 1) < 0.1
    # unscaled softmax saturates: almost one-hot, with a vanishing Jacobian
    assert big["max_weight_raw"] > 0.85 > big["max_weight_scaled"]
    assert big["jacobian_raw"] < 0.5 * big["jacobian_scaled"]


def test_softmax_jacobian_norm_formula():
    rng = np.random.default_rng(1)
    for p in (softmax(rng.standard_normal(6)), softmax(10 * rng.standard_normal(6)), np.full(4, 0.25)):
        J = np.diag(p) - np.outer(p, p)
        assert np.isclose(softmax_jacobian_norm(p), np.linalg.norm(J), rtol=1e-10)
    assert softmax_jacobian_norm(np.array([0.0, 1.0, 0.0])) == 0.0


def test_scaling_explorer_redraws():
    ex = Explorer(render_scaling, {"d_k": slider(16, 1, 512, 1, "d_k"), "n_keys": slider(16, 2, 64, 1, "keys")})
    before, n = ex.summary, ex.renders
    assert "var(q·k)" in before
    ex.controls["d_k"].value = 256
    assert ex.renders == n + 1 and ex.summary != before and "d_k=256" in ex.summary


# ---------------------------------------------------------------- the exercise checkers
def test_exercise_checkers_accept_solutions_and_reject_mistakes(capsys):
    assert check_causal_mask(lambda T: np.tril(np.ones((T, T), bool)))
    assert not check_causal_mask(lambda T: np.triu(np.ones((T, T), bool)))  # the transposed mask
    assert "expected" in capsys.readouterr().out
    assert not check_causal_mask(lambda T: np.tril(np.ones((T, T))))  # floats, not booleans

    def stub(T):
        raise NotImplementedError
    assert not check_causal_mask(stub)
    assert "not attempted" in capsys.readouterr().out
    assert check_split_heads.run_checks(split_heads)   # the library's own passes the checks (a student's call of it is refused)
    assert not check_split_heads(lambda X, h: X.reshape(X.shape[0], h, X.shape[1], -1))  # the classic bug
    assert relative_error(np.ones(2), np.ones(2)) == 0
