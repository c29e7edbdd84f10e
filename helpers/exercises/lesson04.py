"""Checkers for lesson 04 (self-attention and the Transformer)."""
from __future__ import annotations

import numpy as np
import torch

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.lessons.lesson04 import dot_product_statistics
from helpers.lib.attention import (
    causal_mask,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)
from helpers.lib.decoder import layer_norm_backward
from helpers.lib.layers import LayerNorm
from helpers.lib.optim import Adam, AdamW, clip_adam_step, clip_global_norm


# ----------------------------------------------------------------------------- the causal mask
def _dtype_and_shape(f):
    m = np.asarray(f(3))
    expect_equal(m.shape, (3, 3), "shape of causal_mask(3)")
    if m.dtype != bool:
        raise ExerciseFailed(f"dtype of causal_mask(3): expected bool (True = may attend), got {m.dtype}")


def _mask_values(f):
    for T in (1, 2, 5):
        expect_equal(np.asarray(f(T)), causal_mask(T), f"causal_mask({T}) (row = query, column = key)")


def _no_peeking(f):
    # with the mask, changing a future value must not change earlier outputs
    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((6, 4)) for _ in range(3))
    out, _ = scaled_dot_product_attention(Q, K, V, np.asarray(f(6)))
    V2 = V.copy()
    V2[5] += 10.0
    out2, _ = scaled_dot_product_attention(Q, K, V2, np.asarray(f(6)))
    expect_close(out2[:5], out[:5], "outputs of positions 0-4 after changing the value of position 5")


check_causal_mask = FunctionExercise(
    "causal mask", [_dtype_and_shape, _mask_values, _no_peeking], reference=causal_mask, step="warm-up",
    forbidden=(causal_mask,),
    mistakes=[
        Mistake("upper_triangle", "row i is the query and column j the key: query i may see keys j <= i, "
                "the lower triangle (np.tril), not the upper one.",
                like=lambda T: np.triu(np.ones((T, T), dtype=bool))),
        Mistake("no_diagonal", "a position may attend to itself: keep the diagonal (np.tril with k=0).",
                like=lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1)),
        Mistake("float_mask", "np.ones gives floats; the mask is boolean: np.ones((T, T), dtype=bool).",
                like=lambda T: np.tril(np.ones((T, T)))),
        Mistake("hide_mask", "you marked the positions to hide; here True means 'may attend' (the opposite of "
                "the attn_mask of torch.nn.MultiheadAttention, where True hides).",
                like=lambda T: ~np.tril(np.ones((T, T), dtype=bool))),
    ])


# ----------------------------------------------------------------------------- splitting heads
def _split_shape(f):
    X = np.zeros((2, 5, 12))
    expect_equal(np.shape(f(X, 3)), (2, 3, 5, 4), "shape of split_heads(X (2, 5, 12), h=3)")


def _split_values(f):
    X = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    got = np.asarray(f(X, 2))
    expect_close(got[0, 1, 0], X[0, 0, 4:8], "head 1 of token 0 (should be features 4..7)")
    expect_close(got, split_heads(X, 2), "split_heads(X, 2) for X of shape (2, 3, 8)")


def _one_head(f):
    X = np.random.default_rng(1).standard_normal((1, 4, 6))
    expect_close(np.asarray(f(X, 1))[:, 0], X, "with one head the only head is X itself")


check_split_heads = FunctionExercise(
    "split heads", [_split_shape, _split_values, _one_head], reference=split_heads, step="warm-up",
    forbidden=(split_heads, merge_heads),
    mistakes=[
        Mistake("plain_reshape", "a plain reshape to (B, h, T, d/h) has the right shape but cuts the flat "
                "memory in the wrong place, mixing tokens into heads: reshape to (B, T, h, d/h), then move the "
                "head axis forward with transpose(0, 2, 1, 3).",
                like=lambda X, h: X.reshape(X.shape[0], h, X.shape[1], X.shape[2] // h)),
        Mistake("strided_heads", "head i must hold a contiguous block of columns, i·d/h to (i+1)·d/h − 1; "
                "reshaping to (B, T, d/h, h) gives head i every h-th column. Reshape to (B, T, h, d/h).",
                like=lambda X, h: X.reshape(X.shape[0], X.shape[1], X.shape[2] // h, h).transpose(0, 3, 1, 2)),
        Mistake("no_transpose", "after the reshape to (B, T, h, d/h) the head axis must come before time: "
                "transpose(0, 2, 1, 3) gives (B, h, T, d/h).",
                like=lambda X, h: X.reshape(X.shape[0], X.shape[1], h, X.shape[2] // h)),
    ])


# ----------------------------------------------------------------------------- LayerNorm, backward
EPS = 1e-5
NAMES = ("dx", "dgamma", "dbeta")


_layer_norm_backward_reference = layer_norm_backward


def _ln_forward(x, gamma, beta, eps=EPS):
    mu = x.mean(-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) + beta


def _case(seed, shape):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2 + 1
    gamma, beta = rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
    return rng.standard_normal(shape), x, gamma, beta


def _ln_shapes(f):
    dy, x, gamma, _ = _case(0, (2, 3, 5))
    got = f(dy, x, gamma)
    expect_tuple(got, NAMES)
    for name, g, want in zip(NAMES, got, (x.shape, gamma.shape, gamma.shape)):
        expect_equal(np.shape(g), want, f"shape of {name} for x (2, 3, 5) (sum over every axis but the last)")


def _ln_numerical(f):
    dy, x, gamma, beta = _case(1, (4, 6))
    expect_gradients_match_numerical(f(dy, x, gamma), lambda x_, g_, b_: float(np.sum(_ln_forward(x_, g_, b_) * dy)),
                                     [x, gamma, beta], NAMES)


def _ln_torch(f):
    dy, x, gamma, beta = _case(2, (2, 5, 8))
    expect_gradients_match_torch(
        f(dy, x, gamma), lambda x_, g_, b_: torch.nn.functional.layer_norm(x_, (8,), g_, b_, eps=EPS),
        [x, gamma, beta], NAMES, dout=dy)


def _ln_treats_stats_as_constants(dy, x, gamma, eps=EPS):
    dx, dg, db = _layer_norm_backward_reference(dy, x, gamma, eps)
    return dy * gamma / np.sqrt(x.var(-1, keepdims=True) + eps), dg, db


def _ln_forgets_variance(dy, x, gamma, eps=EPS):
    dx, dg, db = _layer_norm_backward_reference(dy, x, gamma, eps)
    g = dy * gamma
    return (g - g.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps), dg, db


def _ln_dgamma_without_xhat(dy, x, gamma, eps=EPS):
    dx, dg, db = _layer_norm_backward_reference(dy, x, gamma, eps)
    return dx, np.sum(dy * x, axis=tuple(range(x.ndim - 1))), db


def _ln_not_summed(dy, x, gamma, eps=EPS):
    ln = LayerNorm(x.shape[-1], eps)
    ln.params[0][...] = gamma
    xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    ln.forward(x)
    return ln.backward(dy), dy * xhat, dy


check_layer_norm_backward = FunctionExercise(
    "LayerNorm backward", [_ln_shapes, _ln_numerical, _ln_torch], reference=_layer_norm_backward_reference,
    step="core", forbidden=(LayerNorm, LayerNorm.backward, LayerNorm.forward),
    mistakes=[
        Mistake("stats_constant", "μ and σ depend on x too: treating them as constants gives dx = dy·γ/σ. "
                "Subtract the mean of g = dy·γ over the features and the part along x̂: "
                "dx = (g − mean(g) − x̂·mean(g·x̂)) / σ.", like=_ln_treats_stats_as_constants),
        Mistake("variance_forgotten", "you handled the mean but not the variance: σ also depends on x, which "
                "adds the term − x̂·mean(g·x̂) inside the bracket.", like=_ln_forgets_variance),
        Mistake("dgamma_raw_x", "γ multiplies the normalised x̂ = (x − μ)/σ, not x: dγ = Σ dy·x̂.",
                like=_ln_dgamma_without_xhat),
        Mistake("not_summed", "γ and β are shared by every position: sum dγ and dβ over all axes but the last "
                "(they have shape (d,)).", like=_ln_not_summed),
    ])


# ----------------------------------------------------------------------------- experiment: when does the softmax saturate?
D_K_GRID = tuple(2 ** k for k in range(11))           # 1, 2, 4, ..., 1024: the widget's range
THRESHOLD = 0.9


def smallest_saturating_d_k(threshold: float = THRESHOLD, n_keys: int = 16, seed: int = 0) -> int:
    """The smallest d_k in D_K_GRID at which the *unscaled* softmax puts, on average, more than
    ``threshold`` of its weight on one key (what the section-2 explorer prints as 'mean max weight')."""
    for d_k in D_K_GRID:
        if dot_product_statistics(d_k, n_keys, np.random.default_rng(seed))["max_weight_raw"] > threshold:
            return d_k
    raise ValueError(f"no d_k up to {D_K_GRID[-1]} reaches a mean max weight of {threshold}")


check_saturation = ExperimentExercise(
    "saturation width",
    lambda n_keys=16: smallest_saturating_d_k(THRESHOLD, n_keys),
    explanation=("Unscaled, the scores q·k have standard deviation √d_k, so the gap between the largest "
                 "score and the rest grows like √d_k and the softmax turns into a spike on one key; its "
                 "Jacobian, and with it the gradient reaching Q and K, shrinks at the same time. Dividing "
                 "by √d_k keeps the standard deviation at 1 for every width: the scaled max weight stays "
                 "near 0.25 with 16 keys whatever d_k is."),
    mistakes=[
        Mistake("square_root", "that is √d_k, the standard deviation of the unscaled scores at the right width; "
                "the question asks for d_k itself (the slider's value).",
                like=lambda n_keys=16: int(np.sqrt(smallest_saturating_d_k(THRESHOLD, n_keys)))),
        Mistake("one_step_early", "at that d_k the unscaled max weight is still below 0.9: double d_k once more.",
                like=lambda n_keys=16: smallest_saturating_d_k(THRESHOLD, n_keys) // 2),
        Mistake("largest_width", "1024 is the slider's end, not the first width that crosses 0.9: go down "
                "through the powers of two until it drops below.", like=1024),
    ],
    example_context={"n_keys": 16},
)

# ----------------------------------------------------------------------------- the training step: clip, then Adam
def _global_norm(grads) -> float:
    return float(np.sqrt(sum(float(np.sum(np.square(g))) for g in grads)))


def _problem(seed: int = 0, scale=(1.0, 3.0, 1e-4, 0.5), steps: int = 6):
    """Four parameters of different shapes (one with tiny gradients, where ε matters) and the
    gradients of ``steps`` steps."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (2, 3, 2), (5,)]
    params = [rng.standard_normal(s) for s in shapes]
    grads = [[k * rng.standard_normal(s) for s, k in zip(shapes, scale, strict=True)] for _ in range(steps)]
    return params, grads


def _run(f, params, grad_steps, lr, max_norm, **kw):
    """Call ``f`` for every step of ``grad_steps``, as a training loop does; returns the last params."""
    params = [p.copy() for p in params]
    m, v = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params]
    for t, gs in enumerate(grad_steps, 1):
        out = f(params, [g.copy() for g in gs], m, v, t, lr, max_norm, **kw)
        expect_tuple(out, ("params", "m", "v"))
        params, m, v = (list(x) for x in out)
    return params


def _torch_run(params, grad_steps, lr, max_norm, beta1=0.9, beta2=0.999, eps=1e-8):
    ts = [torch.tensor(p.copy(), requires_grad=True) for p in params]
    opt = torch.optim.Adam(ts, lr=lr, betas=(beta1, beta2), eps=eps)
    for gs in grad_steps:
        for t, g in zip(ts, gs, strict=True):
            t.grad = torch.tensor(g.copy())
        torch.nn.utils.clip_grad_norm_(ts, max_norm)
        opt.step()
    return [t.detach().numpy() for t in ts]


def _step_one(f):
    params, grads = _problem(0)
    zeros = [np.zeros_like(p) for p in params]
    out = f([p.copy() for p in params], [g.copy() for g in grads[0]], [z.copy() for z in zeros],
            [z.copy() for z in zeros], 1, 1e-2, 1.0)
    expect_tuple(out, ("params", "m", "v"))
    for name, got in zip(("params", "m", "v"), out, strict=True):
        if len(got) != len(params):
            raise ExerciseFailed(f"{name}: expected a list of {len(params)} arrays (one per parameter), got {len(got)}")
        for i, (a, p) in enumerate(zip(got, params, strict=True)):
            expect_equal(np.shape(a), p.shape, f"shape of {name}[{i}]")
    want = _torch_run(params, grads[:1], 1e-2, 1.0)
    for i, (g, w) in enumerate(zip(out[0], want, strict=True)):
        expect_close(g, w, f"parameter {i} after one step (t=1, lr=0.01, max_norm=1)", rtol=1e-5, atol=1e-9)


def _step_against_torch(f):
    # six steps; the gradients' joint norm (about 7) is clipped with max_norm=1 and left alone with 50
    params, grads = _problem(1)
    for max_norm in (1.0, 50.0):
        got, want = _run(f, params, grads, 3e-2, max_norm), _torch_run(params, grads, 3e-2, max_norm)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            expect_close(g, w, f"parameter {i} after 6 steps (lr=0.03, max_norm={max_norm:g}), against "
                               "torch.nn.utils.clip_grad_norm_ + torch.optim.Adam", rtol=1e-5, atol=1e-9)


def _step_other_betas(f):
    params, grads = _problem(2, scale=(0.1, 0.2, 1e-5, 0.05), steps=3)
    got = _run(f, params, grads, 1e-3, 1.0, beta1=0.8, beta2=0.99, eps=1e-6)
    want = _torch_run(params, grads, 1e-3, 1.0, beta1=0.8, beta2=0.99, eps=1e-6)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        expect_close(g, w, f"parameter {i} after 3 steps with beta1=0.8, beta2=0.99, eps=1e-6", rtol=1e-5, atol=1e-10)


def _adam_variant(clip: str = "global", bias_correction: bool = True, eps_inside: bool = False):
    """A wrong (or right) training step, for the mistakes: how it clips, and how Adam divides."""
    def step(params, grads, m, v, t, lr, max_norm=1.0, beta1=0.9, beta2=0.999, eps=1e-8):
        norm = _global_norm(grads)
        if clip == "global":
            grads = [g * (max_norm / (norm + 1e-6) if norm > max_norm else 1.0) for g in grads]
        elif clip == "each":
            grads = [g * (max_norm / (np.linalg.norm(g) + 1e-6) if np.linalg.norm(g) > max_norm else 1.0) for g in grads]
        elif clip == "always":
            grads = [g * (max_norm / (norm + 1e-6)) for g in grads]
        c1, c2 = (1 - beta1 ** t, 1 - beta2 ** t) if bias_correction else (1.0, 1.0)
        out = ([], [], [])
        for p, g, m_, v_ in zip(params, grads, m, v, strict=True):
            m_, v_ = beta1 * m_ + (1 - beta1) * g, beta2 * v_ + (1 - beta2) * g * g
            denom = np.sqrt(v_ / c2 + eps) if eps_inside else np.sqrt(v_ / c2) + eps
            for lst, x in zip(out, (p - lr * (m_ / c1) / denom, m_, v_), strict=True):
                lst.append(x)
        return out
    return step


check_clip_adam_step = FunctionExercise(
    "clip, then Adam", [_step_one, _step_against_torch, _step_other_betas], reference=clip_adam_step,
    step="core", forbidden=(Adam, AdamW, Adam.update, AdamW.update, clip_global_norm),
    mistakes=[
        Mistake("no_bias_correction", "m and v start at zero, so their first values are too small by the factors "
                "1 − β₁ᵗ and 1 − β₂ᵗ: divide by those factors (t counts the steps from 1) before the update.",
                like=_adam_variant(bias_correction=False)),
        Mistake("clip_each_array", "clipping rescales all gradients together, by one factor: max_norm over the "
                "norm of *all* gradients at once (the square root of the sum of every squared entry), not each "
                "array by its own norm.", like=_adam_variant(clip="each")),
        Mistake("clip_always", "clip only when the joint norm is larger than max_norm: a smaller gradient stays "
                "as it is (rescaling it to length max_norm every step throws its size away).",
                like=_adam_variant(clip="always")),
        Mistake("no_clipping", "clip before Adam sees the gradients: when their joint norm exceeds max_norm, "
                "multiply every gradient by max_norm / norm.", like=_adam_variant(clip="none")),
        Mistake("eps_inside_sqrt", "ε goes outside the square root: m̂ / (√v̂ + ε). Inside, it changes the step "
                "of every parameter whose gradients are small.", like=_adam_variant(eps_inside=True)),
    ])

EXERCISES = [check_saturation, check_causal_mask, check_split_heads, check_layer_norm_backward,
             check_clip_adam_step]
