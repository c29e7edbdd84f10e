"""Properties of helpers.lib.attention and positions: PyTorch's results for every mask
form (bool, 0/1 integers; floats refused), B equal to T or to the number of heads, and errors that
name the argument."""

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import attention as A
from helpers.lib import positions as P
from helpers.lib.transformer import rope_torch
from tests.props import (
    assume,
    budget,
    closeness,
    covers,
    dims,
    float_arrays,
    inject,
    mask_forms,
    non_finite,
    raises_naming,
)

T = torch.tensor


close = closeness(1e-10)


@st.composite
def visible_mask(draw, shape):
    """A bool mask of ``shape`` in which every query (row of the last two axes) sees a key."""
    m = draw(float_arrays(shape)) > 0
    m[..., 0] |= ~m.any(axis=-1)
    return m


# ---------------------------------------------------------------- masks
@covers("attention.causal_mask", "attention.padding_mask")
@budget()
@given(T_=dims(1, 6), Tk=dims(1, 6), lengths=st.lists(st.integers(1, 6), min_size=1, max_size=4))
def test_causal_and_padding_masks_are_their_formulas(T_, Tk, lengths):
    np.testing.assert_array_equal(A.causal_mask(T_, Tk), np.arange(T_)[:, None] >= np.arange(Tk)[None, :])
    np.testing.assert_array_equal(A.causal_mask(T_), np.tril(np.ones((T_, T_), bool)))
    pm = A.padding_mask(lengths, 6)
    assert pm.shape == (len(lengths), 1, 6) and pm.sum(-1).ravel().tolist() == lengths
    raises_naming(lambda: A.padding_mask(np.array(lengths, float), 6), "lengths", TypeError)
    raises_naming(lambda: A.padding_mask(lengths + [7], 6), "length", ValueError)
    raises_naming(lambda: A.causal_mask(float(T_)), "T", TypeError)
    raises_naming(lambda: A.causal_mask(0), "T", ValueError)


@covers("attention.scaled_dot_product_attention", "attention.attention_single_query")
@budget(3)
@given(st.data())
def test_attention_is_torchs_for_every_mask_form_and_shape(data):
    B, h = data.draw(dims(1, 3)), data.draw(dims(1, 3))
    Tq = data.draw(st.sampled_from([B, h, 1, 3]))          # B = T_q and h = T_q are the ambiguous cases
    Tk, d = data.draw(dims(1, 4)), data.draw(dims(1, 3))
    Q, K, V = (data.draw(float_arrays(s)) for s in ((B, h, Tq, d), (B, h, Tk, d), (B, h, Tk, 2)))
    mshape = data.draw(st.sampled_from([(Tq, Tk), (B, 1, Tq, Tk), (1, h, Tq, Tk), (B, h, Tq, Tk), (h, 1, Tk)]))
    assume(len(mshape) != 3 or mshape[-2] == 1)
    mask = data.draw(visible_mask(mshape))
    keep = data.draw(visible_mask((B, Tk)))
    full = np.broadcast_to(mask, (B, h, Tq, Tk)) & keep[:, None, None, :]
    assume(full.any(-1).all())
    ref = F.scaled_dot_product_attention(T(Q), T(K), T(V), attn_mask=T(full))
    for _form, m, expected in mask_forms(mask):
        call = lambda m=m: A.scaled_dot_product_attention(Q, K, V, m, key_padding=keep)   # noqa: E731
        if expected == "same":
            out, w = call()
            close(out, ref)
            assert np.all(w[~full] == 0) and np.allclose(w.sum(-1), 1)
        else:
            raises_naming(call, "mask", expected)
    for _form, kp, expected in mask_forms(keep):
        if expected != "same":
            raises_naming(lambda kp=kp: A.scaled_dot_product_attention(Q, K, V, mask, key_padding=kp),
                          "key_padding", expected)
    raises_naming(lambda: A.scaled_dot_product_attention(Q, K, V, key_padding=keep[:, :0]), "key_padding", ValueError)
    bad = inject(Q, data.draw(non_finite), data.draw(st.integers(0, 30)))
    raises_naming(lambda: A.scaled_dot_product_attention(bad, K, V), "Q", ValueError)
    out, w = A.attention_single_query(Q[0, 0, 0], K[0, 0], V[0, 0])
    close(out, F.scaled_dot_product_attention(T(Q[0, 0, :1]), T(K[0, 0]), T(V[0, 0]))[0])
    raises_naming(lambda: A.attention_single_query(Q[0, 0, 0], inject(K[0, 0], np.nan, 0), V[0, 0]), "K", ValueError)


@covers("attention.Attention", "attention.softmax_attention_backward")
@budget(2)
@given(st.data())
def test_the_attention_layer_backward_is_autograds(data):
    B, Tq, Tk, d = (data.draw(dims(1, 3)) for _ in range(4))
    Q, K, V = (data.draw(float_arrays(s)) for s in ((B, Tq, d), (B, Tk, d), (B, Tk, 2)))
    mask = data.draw(visible_mask((Tq, Tk)))
    tq, tk, tv = (T(x, requires_grad=True) for x in (Q, K, V))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=T(mask))
    dout = data.draw(float_arrays((B, Tq, 2)))
    out.backward(T(dout))
    layer = A.Attention()
    close(layer.forward(Q, K, V, mask.astype(np.int64)), out.detach())
    for ours, theirs in zip(layer.backward(dout), (tq, tk, tv), strict=True):
        close(ours, theirs.grad, 1e-9)
    raises_naming(lambda: layer.backward(inject(dout, np.inf, 0)), "dout", ValueError)


@covers("attention.split_heads", "attention.merge_heads")
@budget()
@given(st.data())
def test_split_and_merge_heads_are_inverse_and_head_i_owns_its_columns(data):
    B, T_, h, dh = (data.draw(dims(1, 3)) for _ in range(4))
    X = data.draw(float_arrays((B, T_, h * dh)))
    H = A.split_heads(X, h)
    np.testing.assert_array_equal(A.merge_heads(H), X)
    i = data.draw(st.integers(0, h - 1))
    np.testing.assert_array_equal(H[:, i], X[..., i * dh:(i + 1) * dh])
    if h * dh > 1:
        raises_naming(lambda: A.split_heads(X, h * dh + 1), "num_heads", ValueError)
    raises_naming(lambda: A.split_heads(X[0], h), "split_heads", ValueError)
    raises_naming(lambda: A.merge_heads(X), "merge_heads", ValueError)


@covers("attention.MultiHeadAttention")
@budget(3)
@given(st.data())
def test_multi_head_attention_is_torchs_with_every_mask_and_B_equal_to_h_or_T(data):
    h, dh = data.draw(dims(1, 3)), data.draw(dims(1, 2))
    B = data.draw(st.sampled_from([1, h, 2]))
    T_ = data.draw(st.sampled_from([B, h, 1, 3]))
    d = h * dh
    X = data.draw(float_arrays((B, T_, d)))
    bias = data.draw(st.booleans())
    torch.manual_seed(data.draw(st.integers(0, 3)))
    tm = torch.nn.MultiheadAttention(d, h, batch_first=True, bias=bias).double()
    ours = A.MultiHeadAttention(d, h, np.random.default_rng(0)).load_torch(tm)
    kind = data.draw(st.sampled_from(["2d", "3d", "4d"]))
    mshape = {"2d": (T_, T_), "3d": (B, T_, T_), "4d": (B, h, T_, T_)}[kind]
    mask = data.draw(visible_mask(mshape))
    keep = data.draw(visible_mask((B, T_)))
    causal = data.draw(st.booleans())
    per_head = {"2d": mask[None, None], "3d": mask[:, None], "4d": mask}[kind]
    full = np.broadcast_to(per_head, (B, h, T_, T_)) & keep[:, None, None, :]
    if causal:
        full = full & A.causal_mask(T_)
    assume(full.any(-1).all())
    tx = T(X, requires_grad=True)
    ty, _ = tm(tx, tx, tx, attn_mask=T(~full).reshape(B * h, T_, T_), need_weights=False)
    dout = data.draw(float_arrays((B, T_, d)))
    ty.backward(T(dout))
    for _form, m, expected in mask_forms(mask):
        call = lambda m=m: ours.forward(X, mask=m, causal=causal, key_padding=keep.astype(np.int8))  # noqa: E731
        if expected == "same":
            close(call(), ty.detach())
        else:
            raises_naming(call, "mask", expected)
    ours.forward(X, mask=mask, causal=causal, key_padding=keep)
    close(ours.backward(dout), tx.grad, 1e-9)
    close(ours.grads[6], tm.out_proj.weight.grad.T, 1e-9)
    raises_naming(lambda: ours.forward(X, mask=mask[None, None, None]), "mask", ValueError)
    raises_naming(lambda: ours.forward(X, key_padding=keep.astype(float)), "key_padding", TypeError)
    raises_naming(lambda: ours.forward(inject(X, np.nan, 0)), "X", ValueError)


@covers("attention.softmax_jacobian_norm", "attention.dot_product_statistics")
@budget()
@given(st.data())
def test_the_jacobian_norm_is_the_frobenius_norm_of_diag_p_minus_ppT(data):
    n = data.draw(dims(1, 6))
    p = torch.softmax(T(data.draw(float_arrays((n,), -5, 5))), 0).numpy()
    close(A.softmax_jacobian_norm(p), np.linalg.norm(np.diag(p) - np.outer(p, p)), 1e-9)
    d_k = data.draw(dims(1, 16))
    stats = A.dot_product_statistics(d_k, 4, np.random.default_rng(0), n_queries=50)
    close(stats["var_scaled"] * d_k, stats["var_raw"], 1e-9)
    assert 0 < stats["max_weight_scaled"] <= 1 and stats["jacobian_scaled"] >= 0


# ---------------------------------------------------------------- positions
@covers("positions.sinusoidal_encoding", "positions.rope_angles", "positions.apply_rope", "positions.alibi_bias")
@budget()
@given(st.data())
def test_position_encodings_are_their_formulas_and_rope_is_torchs(data):
    T_, half = data.draw(dims(1, 6)), data.draw(dims(1, 3))
    d = 2 * half
    pe = P.sinusoidal_encoding(T_, d)
    i = np.arange(0, d, 2)
    close(pe[:, 0::2], np.sin(np.arange(T_)[:, None] / 10000 ** (i / d)))
    x = data.draw(float_arrays((2, T_, d)))
    close(P.apply_rope(x), rope_torch(T(x)))
    cos, sin = P.rope_angles(T_, d, offset=3)
    close(cos, np.cos((3 + np.arange(T_))[:, None] * 10000.0 ** (-i / d)))
    close(np.linalg.norm(P.apply_rope(x), axis=-1), np.linalg.norm(x, axis=-1))   # a rotation
    slope = data.draw(st.sampled_from([0.0, 0.5]))
    b = P.alibi_bias(T_, slope)
    assert np.all(np.isneginf(b[np.triu_indices(T_, 1)])) and np.allclose(np.tril(b), -slope * np.tril(
        np.arange(T_)[:, None] - np.arange(T_)[None, :]))
    raises_naming(lambda: P.apply_rope(x[0, 0]), "apply_rope", ValueError)
    raises_naming(lambda: P.apply_rope(x, positions=np.full(T_, np.nan)), "positions", ValueError)
    raises_naming(lambda: P.apply_rope(x, positions=np.ones(T_, bool)), "positions", TypeError)
    raises_naming(lambda: P.sinusoidal_encoding(T_, d + 1), "d", ValueError)
    raises_naming(lambda: P.sinusoidal_encoding(float(T_), d), "T", TypeError)


@covers("positions.LearnedPositions")
@budget()
@given(T_=dims(1, 5), B=dims(1, 3))
def test_learned_positions_sum_their_gradient_over_the_batch(T_, B):
    lp = P.LearnedPositions(5, 3, np.random.default_rng(0))
    out = lp.forward(T_)
    np.testing.assert_array_equal(out, lp.params[0][:T_])
    dout = np.random.default_rng(T_).standard_normal((B, T_, 3))
    lp.backward(dout)
    close(lp.grads[0][:T_], dout.sum(0))
    assert np.all(lp.grads[0][T_:] == 0)
    raises_naming(lambda: lp.forward(6), "sequence length", ValueError)   # lesson 04 prints this message
    raises_naming(lambda: lp.forward(2.5), "T", TypeError)

