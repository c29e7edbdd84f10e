"""Checkers for lesson 04: attention for one query and with masks, the softmax's and attention's
backward passes, multi-head attention forward and backward, the key bias, LayerNorm's backward."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_gradients,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.lib import attention as A
from helpers.lib.decoder import layer_norm_backward
from helpers.lib.layers import LayerNorm, softmax
from helpers.lib.transformer import CausalSelfAttention

# every course implementation of attention, in any lesson, and PyTorch's
TORCH = (CausalSelfAttention, F.scaled_dot_product_attention, F.multi_head_attention_forward,
         torch.nn.MultiheadAttention, torch.nn.TransformerEncoderLayer)
ATTENTION = (A.attention_single_query, A.scaled_dot_product_attention, A.Attention,
             A.MultiHeadAttention, A.mha_forward) + TORCH
BACKWARD = (A.softmax_backward, A.softmax_attention_backward, A.Attention, A.MultiHeadAttention,
            A.mha_backward)
HEADS = (A.split_heads, A.merge_heads, A.MultiHeadAttention, A.mha_forward, A.mha_backward) + TORCH


def _arrays(seed: int, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _attend(Q, K, V, mask=None, scale=None, axis=-1, hidden=-np.inf, after=False):
    """Attention with the knobs of the likely mistakes (the right one with the defaults)."""
    s = 1 / math.sqrt(Q.shape[-1]) if scale is None else scale
    scores = Q @ np.swapaxes(K, -1, -2) * s
    if mask is not None and not after:
        scores = np.where(mask, scores, hidden)
    w = softmax(scores, axis=axis)
    w = w * mask if mask is not None and after else w
    return w @ V, w


def _torch_attention(Q, K, V, mask=None, scale=None):
    t = [torch.tensor(a) for a in (Q, K, V)]
    mask = None if mask is None else torch.tensor(mask)
    return F.scaled_dot_product_attention(*t, attn_mask=mask, scale=scale).numpy()


# ---------------------------------------------------------------- 1 · one query
def _one_her(f):
    q, K, V = _arrays(4, (4,), (4, 4), (4, 4))          # "her" asks, I/made/her/duck answer
    got = f(q, K, V)
    expect_tuple(got, ("z", "weights"))
    expect_close(np.sum(got[1]), 1.0, "the sum of the weights")
    expect_close(got[0], A.attention_single_query(q, K, V)[0], "z for the word 'her'")


def _one_rows(f):
    Q, K, V = _arrays(2, (3, 16), (6, 16), (6, 2))
    rows = _torch_attention(Q, K, V)
    for i in range(3):
        expect_close(f(Q[i], K, V)[0], rows[i], f"z of query {i} (d_k = 16), against PyTorch")


def _one(q, K, V, **knobs):
    z, w = _attend(q[None], K, V, **knobs)
    return z[0], w[0]


check_attention_one = FunctionExercise(
    "attention for one query", [_one_her, _one_rows], reference=A.attention_single_query,
    step="warm-up", forbidden=ATTENTION,
    mistakes=[
        Mistake("no_scale", "divide the scores q·k_i by √d_k (the square root of the length of "
                "q) before the softmax.", like=lambda q, K, V: _one(q, K, V, scale=1)),
        Mistake("keys_as_values", "the weights average the values V, not the keys K: "
                "z = weights @ V.", like=lambda q, K, V: (_one(q, K, V)[1] @ K, _one(q, K, V)[1])),
        Mistake("not_normalised", "the weights are exp(score) divided by their sum, so that they "
                "add up to 1 (a softmax): exp alone is not enough.",
                like=lambda q, K, V: (np.exp(K @ q / 2) @ V, np.exp(K @ q / 2))),
    ])


# ---------------------------------------------------------------- 2 · matrix form, masks
def _attn_plain(f):
    Q, K, V = _arrays(3, (5, 4), (5, 4), (5, 4))
    got = f(Q, K, V)
    expect_tuple(got, ("out", "weights"))
    expect_close(got[0], _torch_attention(Q, K, V), "out for one sequence, against PyTorch")


def _attn_heads_and_scale(f):
    Q, K, V = _arrays(4, (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 2))
    expect_close(f(Q, K, V, scale=0.3)[0], _torch_attention(Q, K, V, scale=0.3),
                 "out for (B=2, h=3) heads, 5 queries, 6 keys, scale=0.3")


def _attn_masks(f):
    Q, K, V = _arrays(5, (2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 2))
    pad = A.padding_mask([5, 3], 5)[:, None]
    for name, mask in (("causal mask (5, 5)", A.causal_mask(5)),
                       ("causal and padding masks, (2, 1, 5, 5)", A.causal_mask(5) & pad)):
        out, w = f(Q, K, V, mask=mask)
        expect_equal(np.shape(w), (2, 3, 5, 5), f"shape of the weights with the {name}")
        hidden = np.asarray(w)[~np.broadcast_to(mask, (2, 3, 5, 5))]
        if np.any(hidden != 0):
            raise ExerciseFailed(f"weights with the {name}: expected exactly 0 where the mask is "
                                 f"False, got up to {np.abs(hidden).max():.3g}")
        expect_close(out, _torch_attention(Q, K, V, mask), f"out with the {name}, against PyTorch")


check_attention = FunctionExercise(
    "attention with masks", [_attn_plain, _attn_heads_and_scale, _attn_masks],
    reference=A.scaled_dot_product_attention, step="core", forbidden=ATTENTION,
    mistakes=[
        Mistake("no_scale", "scale the scores Q Kᵀ by 1/√d_k (d_k = Q.shape[-1]) when scale is "
                "None, and by scale when it is given.",
                like=lambda Q, K, V, mask=None, scale=None: _attend(Q, K, V, mask, 1.0)),
        Mistake("scale_ignored", "use the scale you are given: only when scale is None is it "
                "1/√d_k.", like=lambda Q, K, V, mask=None, scale=None: _attend(Q, K, V, mask)),
        Mistake("wrong_axis", "each query's weights sum to 1 over the keys: take the softmax along "
                "the last axis (the keys), not the queries.",
                like=lambda Q, K, V, mask=None, scale=None: _attend(Q, K, V, mask, scale, -2)),
        Mistake("zero_not_minus_inf", "a hidden score must become −∞ (np.where(mask, scores, "
                "-np.inf)), not 0: exp(0) = 1 still gives the hidden key a weight.",
                like=lambda Q, K, V, mask=None, scale=None: _attend(Q, K, V, mask, scale, -1, 0)),
        Mistake("mask_after_softmax", "mask the scores before the softmax; zeroing weights after "
                "it leaves rows that no longer sum to 1.",
                like=lambda Q, K, V, mask=None, scale=None: _attend(Q, K, V, mask, scale, after=1)),
    ])


# ---------------------------------------------------------------- 3 · the softmax's backward
def _smb_one_row(f):
    S, dA = _arrays(7, (6,), (6,))
    expect_gradients_match_numerical([f(dA, softmax(S))], lambda s: float(np.sum(dA * softmax(s))),
                                     [S], ["dS"])


def _smb_rows(f):
    S, dA = _arrays(8, (2, 4, 4), (2, 4, 4))
    Aw = softmax(np.where(A.causal_mask(4), S, -np.inf))
    expect_close(f(dA, Aw), A.softmax_backward(dA, Aw), "dS of a (2, 4, 4) batch of causal rows "
                                                        "(A = 0 above the diagonal)")


check_softmax_backward = FunctionExercise(
    "the softmax's backward", [_smb_one_row, _smb_rows], reference=A.softmax_backward,
    step="warm-up", forbidden=BACKWARD,
    mistakes=[
        Mistake("diagonal_only", "every score moves every weight (the weights share one "
                "denominator): the off-diagonal terms −a_j a_k of the Jacobian count too.",
                like=lambda dA, A_: A_ * (1 - A_) * dA),
        Mistake("missing_factor", "the result is multiplied by a: ds_k = a_k (da_k − Σ_j da_j "
                "a_j).", like=lambda dA, A_: dA - np.sum(dA * A_, axis=-1, keepdims=True)),
        Mistake("sum_of_everything", "the sum Σ_j da_j a_j runs over one row (axis=-1, "
                "keepdims=True), not over every entry of the array.",
                like=lambda dA, A_: A_ * (dA - np.sum(dA * A_))),
    ])


# ---------------------------------------------------------------- 4 · attention, backward
NAMES = ("dQ", "dK", "dV")


def _backward_case(seed, lead, Tq, Tk, d, dv, mask=None, scale=None):
    Q, K, V, dout = _arrays(seed, lead + (Tq, d), lead + (Tk, d), lead + (Tk, dv), lead + (Tq, dv))
    scale = 1 / math.sqrt(d) if scale is None else scale
    return dout, Q, K, V, A.scaled_dot_product_attention(Q, K, V, mask, scale)[1], scale


def _ab_numerical(f):
    mask = A.causal_mask(4)
    dout, Q, K, V, w, s = _backward_case(11, (2,), 4, 4, 3, 2, mask)
    got = f(dout, Q, K, V, w, s)
    expect_tuple(got, NAMES)
    expect_gradients_match_numerical(
        got, lambda q, k, v: float(np.sum(dout * _attend(q, k, v, mask)[0])), [Q, K, V], NAMES)


def _ab_torch(f):
    mask = A.padding_mask([5, 2], 5)[:, None]
    dout, Q, K, V, w, s = _backward_case(12, (2, 2), 3, 5, 4, 2, mask, 0.3)
    torch_attention = F.scaled_dot_product_attention
    expect_gradients_match_torch(f(dout, Q, K, V, w, s), lambda q, k, v: torch_attention(
        q, k, v, attn_mask=torch.tensor(mask), scale=0.3), [Q, K, V], NAMES, dout=dout)


def _ab_variant(jacobian=True, scaled=True, dv_transposed=True):
    def backward(dout, Q, K, V, weights, scale):
        dV = (np.swapaxes(weights, -1, -2) if dv_transposed else weights) @ dout
        dA = dout @ np.swapaxes(V, -1, -2)
        dS = A.softmax_backward(dA, weights) if jacobian else dA
        s = scale if scaled else 1.0
        return s * dS @ K, s * np.swapaxes(dS, -1, -2) @ Q, dV
    return backward


check_attention_backward = FunctionExercise(
    "attention backward", [_ab_numerical, _ab_torch], reference=A.softmax_attention_backward,
    step="core", forbidden=BACKWARD,
    mistakes=[
        Mistake("no_scale", "S = scale · Q Kᵀ, so dQ = scale · dS K and dK = scale · dSᵀ Q: "
                "keep the scale.", like=_ab_variant(scaled=False)),
        Mistake("no_jacobian", "between dA = dO Vᵀ and dS sits the softmax: dS = A ⊙ (dA − "
                "rowsum(dA ⊙ A)), your softmax backward.", like=_ab_variant(jacobian=False)),
        Mistake("dV_not_transposed", "out = A V, so dV = Aᵀ dO: transpose the weights' last two "
                "axes.", like=_ab_variant(dv_transposed=False)),
    ])


# ---------------------------------------------------------------- 5-6 · multi-head attention
def _mha_case(seed):
    """A torch.nn.MultiheadAttention(12, 3), its weights as our params, X, dout and our cache."""
    torch.manual_seed(seed)
    tm = torch.nn.MultiheadAttention(12, 3, batch_first=True).double()
    with torch.no_grad():
        tm.in_proj_bias.normal_()
        tm.out_proj.bias.normal_()
    params = A.MultiHeadAttention(12, 3, np.random.default_rng(0)).load_torch(tm).params
    X, dout = _arrays(seed, (2, 5, 12), (2, 5, 12))
    return tm, params, X, dout, A.mha_forward(X, params, 3, A.causal_mask(5))[1]


def _uniform_attend(Q, K, V, mask=None, scale=None):
    """Every query averages the values of the keys it may see: a stand-in attend."""
    w = np.broadcast_to(np.ones(1) if mask is None else mask, Q.shape[:-1] + K.shape[-2:-1]) * 1.0
    w = w / w.sum(-1, keepdims=True)
    return w @ V, w


def _forward_torch(f):
    tm, params, X, _, want_cache = _mha_case(14)
    got = f(X, params, 3, mask=A.causal_mask(5), attend=A.scaled_dot_product_attention)
    expect_tuple(got, ("out", "cache"))
    expect_tuple(got[1], ("X", "Q", "K", "V", "weights", "concat"))
    expect_close(got[1][1], want_cache[1], "Q in the cache (X W_Q + b_Q in 3 heads: B, h, T, d/h)")
    tx = torch.tensor(X)
    want = tm(tx, tx, tx, attn_mask=torch.tensor(~A.causal_mask(5)), need_weights=False)[0]
    expect_close(got[0], want.detach().numpy(), "out with a causal mask, against torch's module")


def _forward_uses_attend(f):
    _, params, X, _, _ = _mha_case(15)
    got = f(X, params, 3, mask=A.causal_mask(5), attend=_uniform_attend)[0]
    expect_close(got, A.mha_forward(X, params, 3, A.causal_mask(5), _uniform_attend)[0],
                 "out when attend= is another attention (each query averages the values it may "
                 "see): call the attend you are given, with mask= and scale=")


def _mha_variant(split="right", merge="right", project=True, width="head"):
    def forward(X, params, num_heads, mask=None, attend=A.scaled_dot_product_attention):
        W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O = params
        B, T, d = X.shape
        h, dh = num_heads, d // num_heads
        cut = ((lambda Y: Y.reshape(B, h, T, dh)) if split == "plain"
               else (lambda Y: Y.reshape(B, T, h, dh).transpose(0, 2, 1, 3)))
        Q, K, V = (cut(X @ W + b) for W, b in ((W_Q, b_Q), (W_K, b_K), (W_V, b_V)))
        heads, w = attend(Q, K, V, mask=mask, scale=1 / math.sqrt(dh if width == "head" else d))
        concat = (heads if merge == "plain" else heads.transpose(0, 2, 1, 3)).reshape(B, T, d)
        return (concat @ W_O + b_O if project else concat), (X, Q, K, V, w, concat)
    return forward


check_mha_forward = FunctionExercise(
    "multi-head attention, forward", [_forward_torch, _forward_uses_attend],
    reference=A.mha_forward, step="core", forbidden=HEADS,
    mistakes=[
        Mistake("plain_reshape", "a reshape straight to (B, h, T, d/h) cuts the flat memory in the "
                "wrong place, mixing tokens into heads: reshape to (B, T, h, d/h), then "
                "transpose(0, 2, 1, 3).", like=_mha_variant(split="plain")),
        Mistake("merge_without_transpose", "to merge, move the head axis back behind time first "
                "(transpose(0, 2, 1, 3)), then reshape to (B, T, d).",
                like=_mha_variant(merge="plain")),
        Mistake("full_width_scale", "each head attends in its own d/h dimensions: scale by "
                "1/√(d/h), not 1/√d.", like=_mha_variant(width="model")),
        Mistake("no_output_projection", "the merged heads still go through the output projection: "
                "out = concat @ W_O + b_O.", like=_mha_variant(project=False)),
    ])

PARAM_NAMES = ("dW_Q", "db_Q", "dW_K", "db_K", "dW_V", "db_V", "dW_O", "db_O")


def _mb_torch(f):
    tm, params, X, dout, cache = _mha_case(17)
    got = f(dout, cache, params, attend_backward=A.softmax_attention_backward)
    expect_tuple(got, ("dX", "grads"))
    expect_tuple(got[1], PARAM_NAMES)
    tx = torch.tensor(X, requires_grad=True)
    tm(tx, tx, tx, attn_mask=torch.tensor(~A.causal_mask(5)), need_weights=False)[0].backward(
        torch.tensor(dout))
    W, b = tm.in_proj_weight.grad.numpy(), tm.in_proj_bias.grad.numpy()
    want = [tx.grad.numpy()]
    for k in range(3):
        want += [W[12 * k:12 * (k + 1)].T, b[12 * k:12 * (k + 1)]]
    want += [tm.out_proj.weight.grad.numpy().T, tm.out_proj.bias.grad.numpy()]
    want[4] = None           # b_K adds one number to a whole row of scores, ignored by the softmax
    expect_gradients([got[0]] + list(got[1]), want, ("dX",) + PARAM_NAMES, "torch's module")
    expect_close(got[1][3], np.zeros(12), "db_K (exactly 0: b_K adds one q·b_K to a row of scores)",
                 atol=1e-10)


def _doubled_dv(dout, Q, K, V, weights, scale):
    dQ, dK, dV = A.softmax_attention_backward(dout, Q, K, V, weights, scale)
    return dQ, dK, 2 * dV


def _mb_uses_attend_backward(f):
    _, params, X, dout, cache = _mha_case(18)
    expect_close(f(dout, cache, params, attend_backward=_doubled_dv)[0],
                 A.mha_backward(dout, cache, params, _doubled_dv)[0],
                 "dX when attend_backward= is another function: call the attend_backward you are "
                 "given, with the heads' gradient and (Q, K, V, weights, scale)")


def _mb_variant(paths="QKV", wo_transposed=True, bias_summed=True):
    def backward(dout, cache, params, attend_backward=A.softmax_attention_backward):
        X, Q, K, V, weights, concat = cache
        d = X.shape[-1]
        W_O = params[6] if wo_transposed else params[6].T
        dH = attend_backward(A.split_heads(dout @ W_O.T, Q.shape[1]), Q, K, V, weights,
                             1 / math.sqrt(Q.shape[-1]))
        grads, dX = [], 0
        for name, W, dh in zip("QKV", params[0:6:2], dH, strict=True):
            dP = A.merge_heads(dh)
            grads += [X.reshape(-1, d).T @ dP.reshape(-1, d),
                      dP.reshape(-1, d).sum(0) if bias_summed else dP.sum(0)]
            dX = dX + dP @ W.T if name in paths else dX
        dout = dout.reshape(-1, d)
        return dX, grads + [concat.reshape(-1, d).T @ dout, dout.sum(0)]
    return backward


check_mha_backward = FunctionExercise(
    "multi-head attention, backward", [_mb_torch, _mb_uses_attend_backward],
    reference=A.mha_backward, step="core", forbidden=HEADS,
    mistakes=[
        Mistake("one_path", "X feeds the queries, the keys and the values: dX is the sum of the "
                "three paths, dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ (each merged back to (B, T, d)).",
                like=_mb_variant(paths="V")),
        Mistake("W_O_not_transposed", "out = concat W_O, so the gradient reaching the heads is "
                "dout W_Oᵀ (then split into heads).", like=_mb_variant(wo_transposed=False)),
        Mistake("bias_not_summed", "a bias is shared by every position of every sequence: sum its "
                "gradient over the batch and time axes, to shape (d,).",
                like=_mb_variant(bias_summed=False)),
    ])


# ---------------------------------------------------------------- experiment · the key bias
def key_bias_change(shift: float = 3.0) -> float:
    """Largest change of a causal MultiHeadAttention's output when ``shift`` is added to b_K."""
    rng = np.random.default_rng(0)
    mha, X = A.MultiHeadAttention(8, 2, rng), rng.standard_normal((2, 5, 8))
    before = mha.forward(X, causal=True)
    mha.params[3] += float(shift)
    return float(np.abs(mha.forward(X, causal=True) - before).max())


check_key_bias = ExperimentExercise(
    "the key bias", key_bias_change, atol=1e-6, example_context={"shift": 3.0},
    explanation=("Adding c to b_K adds c to every key, so every score of query i grows by the same "
                 "q_i·c. A softmax ignores a shift shared by a whole row: the weights, and the "
                 "output, do not move. The gradient of b_K is therefore exactly 0, and finite "
                 "differences of a function that does not change are pure rounding noise."),
    mistakes=[
        Mistake("the_shift", "that is the shift you added, not a measured change: run the layer "
                "before and after adding it to b_K and take the largest absolute difference.",
                when=lambda answer, shift=3.0: abs(float(answer) - shift) < 1e-9, example=3.0),
        Mistake("negative", "a change is a size: the largest absolute difference, np.abs(after - "
                "before).max(), is never negative.", when=lambda answer, **c: float(answer) < -1e-6,
                example=-0.4),
        Mistake("another_bias", "a change that large comes from another bias: b_K is params[3] "
                "(W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O). b_Q and b_V do change the output.",
                when=lambda answer, **c: float(answer) > 1e-6, example=0.8),
    ])


# ---------------------------------------------------------------- 8 · LayerNorm, backward
LN_NAMES = ("dx", "dgamma", "dbeta")


def _ln_numerical(f):
    dy, x, gamma, beta = _arrays(1, (4, 6), (4, 6), (6,), (6,))
    got = f(dy, x, gamma)
    expect_tuple(got, LN_NAMES)

    def loss(x_, g_, b_):
        mu = x_.mean(-1, keepdims=True)
        return float(np.sum(dy * (g_ * (x_ - mu) / np.sqrt(x_.var(-1, keepdims=True) + 1e-5) + b_)))
    expect_gradients_match_numerical(got, loss, [x, gamma, beta], LN_NAMES)


def _ln_torch(f):
    dy, x, gamma, beta = _arrays(2, (2, 5, 8), (2, 5, 8), (8,), (8,))
    expect_gradients_match_torch(f(dy, 2 * x + 1, gamma), lambda x_, g_, b_: F.layer_norm(
        x_, (8,), g_, b_, eps=1e-5), [2 * x + 1, gamma, beta], LN_NAMES, dout=dy)


def _ln_variant(x_term="full", summed=True):
    def backward(dy, x, gamma, eps=1e-5):
        sigma = np.sqrt(x.var(-1, keepdims=True) + eps)
        xhat, g = (x - x.mean(-1, keepdims=True)) / sigma, dy * gamma
        dx = {"full": g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True),
              "constant": g, "mean_only": g - g.mean(-1, keepdims=True)}[x_term] / sigma
        axes = tuple(range(x.ndim - 1)) if summed else ()
        return dx, np.sum(dy * xhat, axis=axes), np.sum(dy, axis=axes)
    return backward


check_layer_norm_backward = FunctionExercise(
    "LayerNorm backward", [_ln_numerical, _ln_torch], reference=layer_norm_backward,
    step="core", forbidden=(LayerNorm,),
    mistakes=[
        Mistake("stats_constant", "μ and σ depend on x too: treating them as constants gives "
                "dx = dy·γ/σ. Subtract the mean of g = dy·γ over the features and the part along "
                "x̂: dx = (g − mean(g) − x̂·mean(g·x̂)) / σ.", like=_ln_variant(x_term="constant")),
        Mistake("variance_forgotten", "you handled the mean but not the variance: σ also depends "
                "on x, which adds the term − x̂·mean(g·x̂) inside the bracket.",
                like=_ln_variant(x_term="mean_only")),
        Mistake("not_summed", "γ and β are shared by every position: sum dγ and dβ over all axes "
                "but the last (they have shape (d,)).", like=_ln_variant(summed=False)),
    ])

EXERCISES = [check_attention_one, check_attention, check_softmax_backward, check_attention_backward,
             check_mha_forward, check_mha_backward, check_key_bias, check_layer_norm_backward]
