"""helpers.lib.attention: attention and multi-head attention equal PyTorch's and finite differences
for every mask form, the layers run the functions they are given, bad input is named."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import attention as A
from helpers.lib.gradcheck import check_function, check_layer
from tests.props import (
    assume,
    budget,
    closeness,
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


@budget()
@given(T_=dims(1, 6), Tk=dims(1, 6), lengths=st.lists(st.integers(1, 6), min_size=1, max_size=4))
def test_causal_and_padding_masks_are_their_formulas(T_, Tk, lengths):
    np.testing.assert_array_equal(A.causal_mask(T_, Tk), np.arange(T_)[:, None] >= np.arange(Tk))
    pm = A.padding_mask(lengths, 6)
    assert pm.shape == (len(lengths), 1, 6) and pm.sum(-1).ravel().tolist() == lengths
    raises_naming(lambda: A.padding_mask(np.array(lengths, float), 6), "lengths", TypeError)
    raises_naming(lambda: A.padding_mask(lengths + [7], 6), "length", ValueError)
    raises_naming(lambda: A.causal_mask(float(T_)), "T", TypeError)
    raises_naming(lambda: A.causal_mask(0), "T", ValueError)


@budget(3)
@given(st.data())
def test_attention_is_torchs_for_every_mask_form_and_shape(data):
    B, h = data.draw(dims(1, 3)), data.draw(dims(1, 3))
    Tq = data.draw(st.sampled_from([B, h, 1, 3]))          # B = T_q, h = T_q: the ambiguous cases
    Tk, d = data.draw(dims(1, 4)), data.draw(dims(1, 3))
    Q, K, V = (data.draw(float_arrays(s)) for s in ((B, h, Tq, d), (B, h, Tk, d), (B, h, Tk, 2)))
    mshape = data.draw(st.sampled_from([(Tq, Tk), (B, 1, Tq, Tk), (1, h, Tq, Tk), (B, h, Tq, Tk)]))
    mask, keep = data.draw(visible_mask(mshape)), data.draw(visible_mask((B, Tk)))
    full = np.broadcast_to(mask, (B, h, Tq, Tk)) & keep[:, None, None, :]
    assume(full.any(-1).all())
    ref = F.scaled_dot_product_attention(T(Q), T(K), T(V), attn_mask=T(full))
    for _form, m, expected in mask_forms(mask):
        call = lambda m=m: A.scaled_dot_product_attention(Q, K, V, m, key_padding=keep)  # noqa: E731
        if expected == "same":
            out, w = call()
            close(out, ref)
            assert np.all(w[~full] == 0) and np.allclose(w.sum(-1), 1)
        else:
            raises_naming(call, "mask", expected)
    for _form, kp, expected in mask_forms(keep):
        if expected != "same":
            raises_naming(lambda kp=kp: A.scaled_dot_product_attention(Q, K, V, key_padding=kp),
                          "key_padding", expected)
    raises_naming(lambda: A.scaled_dot_product_attention(Q, K, V, key_padding=keep[:, :0]),
                  "key_padding", ValueError)
    bad = inject(Q, data.draw(non_finite), data.draw(st.integers(0, 30)))
    raises_naming(lambda: A.scaled_dot_product_attention(bad, K, V), "Q", ValueError)
    z, w = A.attention_single_query(Q[0, 0, 0], K[0, 0], V[0, 0])
    close(z, F.scaled_dot_product_attention(T(Q[0, 0, :1]), T(K[0, 0]), T(V[0, 0]))[0])
    raises_naming(lambda: A.attention_single_query(Q[0, 0, 0], inject(K[0, 0], np.nan, 0), V[0, 0]),
                  "K", ValueError)


def test_bad_masks_and_shapes_are_refused_with_a_reason():
    rng = np.random.default_rng(7)
    Q, K, V = rng.standard_normal((2, 4, 3)), *rng.standard_normal((2, 2, 5, 3))
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast"):
        A.scaled_dot_product_attention(Q, K, V, A.causal_mask(4))
    with pytest.raises(ValueError, match="key_padding="):       # a (B, T_k) padding mask as mask
        A.scaled_dot_product_attention(Q, K, V, np.ones((2, 5), bool))
    with pytest.raises(ValueError, match="hides every key"):
        A.scaled_dot_product_attention(Q, K, V, np.zeros((4, 5), bool))
    with pytest.raises(ValueError, match="same width d_k"):
        A.scaled_dot_product_attention(Q, K[..., :2], V)
    with pytest.raises(ValueError, match="same number of tokens"):
        A.scaled_dot_product_attention(Q, K, V[:, :4])
    with pytest.raises(ValueError, match="no keys"):
        A.scaled_dot_product_attention(Q, K[:, :0], V[:, :0])
    with pytest.raises(ValueError, match="no keys"):
        A.attention_single_query(Q[0, 0], K[0, :0], V[0, :0])


@budget(2)
@given(st.data())
def test_the_attention_backward_is_autograds_and_sums_broadcast_axes(data):
    B, Tq, Tk, d = (data.draw(dims(1, 3)) for _ in range(4))
    shared = data.draw(st.booleans())                    # one K, V for a batch of query sets
    Q = data.draw(float_arrays((B, Tq, d)))
    K, V = (data.draw(float_arrays(s if shared else (B,) + s)) for s in ((Tk, d), (Tk, 2)))
    mask = data.draw(visible_mask((Tq, Tk)))
    tq, tk, tv = (T(x, requires_grad=True) for x in (Q, K, V))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=T(mask))
    dout = data.draw(float_arrays((B, Tq, 2)))
    out.backward(T(dout))
    layer = A.Attention()
    close(layer.forward(Q, K, V, mask.astype(np.int64)), out.detach())
    for ours, theirs in zip(layer.backward(dout), (tq, tk, tv), strict=True):
        close(ours, theirs.grad, 1e-9)
    assert np.all(layer.backward(dout)[2][..., ~mask.any(0), :] == 0)   # hidden keys get nothing
    raises_naming(lambda: layer.backward(inject(dout, np.inf, 0)), "dout", ValueError)


def test_the_backward_agrees_with_finite_differences_and_the_softmax_jacobian():
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), rng.random((2, 5, 2))
    layer, dout = A.Attention(), rng.standard_normal((2, 4, 2))
    keep = A.padding_mask([5, 2], 5)[:, 0]
    layer.forward(Q, K, V, key_padding=keep)
    grads = layer.backward(dout)
    report = check_function(lambda: float(np.sum(layer.forward(Q, K, V, key_padding=keep) * dout)),
                            [Q, K, V], list(grads), ["Q", "K", "V"])
    assert report.ok, report
    a, da = A.scaled_dot_product_attention(Q, K, V)[1][0, 0], rng.standard_normal(5)
    close(A.softmax_backward(da, a), (np.diag(a) - np.outer(a, a)) @ da)


@budget(3)
@given(st.data())
def test_multi_head_attention_is_torchs_with_every_mask_and_B_equal_to_h_or_T(data):
    h, dh = data.draw(dims(1, 3)), data.draw(dims(1, 2))
    B = data.draw(st.sampled_from([1, h, 2]))
    T_ = data.draw(st.sampled_from([B, h, 1, 3]))
    d = h * dh
    X = data.draw(float_arrays((B, T_, d)))
    torch.manual_seed(data.draw(st.integers(0, 3)))
    tm = torch.nn.MultiheadAttention(d, h, batch_first=True, bias=data.draw(st.booleans())).double()
    with torch.no_grad():                      # non-zero biases, so a wrong bias path is caught
        for b in (tm.in_proj_bias, tm.out_proj.bias):
            if b is not None:
                b.normal_()
    ours = A.MultiHeadAttention(d, h, np.random.default_rng(0)).load_torch(tm)
    kind = data.draw(st.sampled_from(["2d", "3d", "4d"]))
    mask = data.draw(visible_mask({"2d": (T_, T_), "3d": (B, T_, T_), "4d": (B, h, T_, T_)}[kind]))
    keep, causal = data.draw(visible_mask((B, T_))), data.draw(st.booleans())
    per_head = {"2d": mask[None, None], "3d": mask[:, None], "4d": mask}[kind]
    full = np.broadcast_to(per_head, (B, h, T_, T_)) & keep[:, None, None, :]
    full = full & A.causal_mask(T_) if causal else full
    assume(full.any(-1).all())
    tx = T(X, requires_grad=True)
    ty, tw = tm(tx, tx, tx, attn_mask=T(~full).reshape(B * h, T_, T_), average_attn_weights=False)
    dout = data.draw(float_arrays((B, T_, d)))
    ty.backward(T(dout))
    for _form, m, expected in mask_forms(mask):
        call = lambda m=m: ours.forward(X, m, causal, keep.astype(np.int8))  # noqa: E731
        if expected == "same":
            close(call(), ty.detach())
        else:
            raises_naming(call, "mask", expected)
    ours.forward(X, mask=mask, causal=causal, key_padding=keep)
    close(ours.weights, tw.detach())
    close(ours.backward(dout), tx.grad, 1e-9)
    dW_in = np.concatenate([ours.grads[0].T, ours.grads[2].T, ours.grads[4].T])
    close(dW_in, tm.in_proj_weight.grad, 1e-9)
    close(ours.grads[6], tm.out_proj.weight.grad.T, 1e-9)
    if tm.in_proj_bias is not None:
        close(np.concatenate(ours.grads[1:6:2]), tm.in_proj_bias.grad, 1e-9)
        close(ours.grads[7], tm.out_proj.bias.grad, 1e-9)
    raises_naming(lambda: ours.forward(X, mask=mask[None, None, None]), "mask", ValueError)
    raises_naming(lambda: ours.forward(X, key_padding=keep.astype(float)), "key_padding", TypeError)
    raises_naming(lambda: ours.forward(X, key_padding=keep[:, :0]), "key_padding", ValueError)
    raises_naming(lambda: ours.forward(inject(X, np.nan, 0)), "X", ValueError)


def test_multi_head_finite_differences_and_the_zero_key_bias_gradient():
    rng = np.random.default_rng(6)
    mha = A.MultiHeadAttention(6, 2, rng)
    for p in mha.params[1::2]:
        p[...] = rng.standard_normal(p.shape)
    X = rng.standard_normal((2, 4, 6))
    for mask in (None, A.causal_mask(4)):
        report = check_layer(mha, X, mask, rng=rng)
        # b_K adds q·b_K to a whole row of scores, which the softmax ignores: its gradient is 0,
        # so only an absolute test makes sense for it
        report.errors.pop("param[3]")
        assert report.ok, report
        assert np.abs(mha.grads[3]).max() < 1e-12
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=3"):
        A.MultiHeadAttention(10, 3, rng)
    with pytest.raises(ValueError, match=r"expects input \(B, T, 6\)"):
        mha.forward(np.zeros((2, 3, 4)))


def recording(calls, **functions):
    """``functions``, each appending its name to ``calls`` before it runs."""
    def wrap(name, f):
        def run(*args, **kwargs):
            calls.append(name)
            return f(*args, **kwargs)
        return run
    return {name: wrap(name, f) for name, f in functions.items()}


def test_the_layers_run_the_functions_they_are_given():
    def doubled_backward(dout, cache, params, attend_backward):    # the layer returns its dX
        dX, grads = A.mha_backward(dout, cache, params, attend_backward)
        return 2 * dX, grads

    calls, rng = [], np.random.default_rng(0)
    yours = recording(calls, attend=A.scaled_dot_product_attention, mha_forward=A.mha_forward,
                      attend_backward=A.softmax_attention_backward, mha_backward=doubled_backward)
    X, dout = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    plain, mine = (A.MultiHeadAttention(4, 2, np.random.default_rng(1), **kw) for kw in ({}, yours))
    close(mine.forward(X, causal=True), plain.forward(X, causal=True))
    close(mine.backward(dout), 2 * plain.backward(dout))
    assert calls == ["mha_forward", "attend", "mha_backward", "attend_backward"]
    layer = A.Attention(attend=yours["attend"], attend_backward=yours["attend_backward"])
    layer.forward(X, X, X, A.causal_mask(3))
    layer.backward(dout)
    assert calls[-2:] == ["attend", "attend_backward"]
