"""Checkers for lesson 04 (self-attention and the Transformer)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import ExerciseFailed, FunctionExercise, Mistake, expect_close, expect_equal
from helpers.lib.attention import causal_mask, scaled_dot_product_attention, split_heads


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

EXERCISES = [check_causal_mask, check_split_heads]
