"""Checkers for lesson 04 (self-attention and the Transformer)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, expect_equal, run_checks
from helpers.lib.attention import causal_mask, scaled_dot_product_attention, split_heads


def check_causal_mask(candidate) -> bool:
    """``candidate(T) -> (T, T) bool`` with True where query i may attend to key j (j <= i)."""

    def dtype_and_shape(f):
        m = np.asarray(f(3))
        expect_equal(m.shape, (3, 3), "shape of causal_mask(3)")
        if m.dtype != bool:
            raise ExerciseFailed(f"causal_mask(3) must be a boolean array (True = may attend), got dtype {m.dtype}")

    def values(f):
        for T in (1, 2, 5):
            expect_equal(np.asarray(f(T)), causal_mask(T), f"causal_mask({T}) (row = query, column = key)")

    def no_peeking(f):
        # with the mask, changing a future value must not change earlier outputs
        rng = np.random.default_rng(4)
        Q, K, V = (rng.standard_normal((6, 4)) for _ in range(3))
        out, _ = scaled_dot_product_attention(Q, K, V, np.asarray(f(6)))
        V2 = V.copy()
        V2[5] += 10.0
        out2, _ = scaled_dot_product_attention(Q, K, V2, np.asarray(f(6)))
        expect_close(out2[:5], out[:5], "outputs of positions 0-4 after changing the value of position 5")

    return run_checks("causal mask", candidate, [dtype_and_shape, values, no_peeking])


def check_split_heads(candidate) -> bool:
    """``candidate(X (B, T, d), h) -> (B, h, T, d // h)``; head i holds columns i·d/h .. (i+1)·d/h − 1."""

    def shape(f):
        X = np.zeros((2, 5, 12))
        expect_equal(np.shape(f(X, 3)), (2, 3, 5, 4), "shape of split_heads(X (2, 5, 12), h=3)")

    def values(f):
        X = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
        got = np.asarray(f(X, 2))
        expect_close(got[0, 1, 0], X[0, 0, 4:8], "head 1 of token 0 (should be features 4..7)")
        expect_close(got, split_heads(X, 2), "split_heads(X, 2) for X of shape (2, 3, 8)")

    def one_head(f):
        X = np.random.default_rng(1).standard_normal((1, 4, 6))
        expect_close(np.asarray(f(X, 1))[:, 0], X, "with one head the only head is X itself")

    return run_checks("split heads", candidate, [shape, values, one_head])
