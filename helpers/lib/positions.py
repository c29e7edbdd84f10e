"""Position information for self-attention in NumPy: sinusoidal encodings, a learned position
table, and rotary position embeddings (RoPE) (lesson 04 §3)."""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import check_finite, check_whole
from helpers.lib.layers import Embedding, Layer


def sinusoidal_encoding(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The original Transformer's fixed encodings, (T, d) float64 (lesson 04 §6):
    PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d)); d even."""
    T, d = (check_whole(v, n, "sinusoidal_encoding", 1) for v, n in ((T, "T"), (d, "d")))
    if d % 2:
        raise ValueError(f"sinusoidal_encoding: d must be even (sin/cos pairs), got d={d}")
    angle = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)    # one frequency per pair
    pe = np.empty((T, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


class LearnedPositions(Layer):
    """A learned table of one vector per position 0 .. max_len − 1 (lesson 04 §6): forward(T) ->
    (T, d), the first T rows; backward(dout (T, d) or (B, T, d)) sums over B."""

    dout_may_add_batch_axes = True

    def __init__(self, max_len: int, d: int, rng: np.random.Generator, scale: float = 0.02):
        super().__init__()
        self.table, self.max_len = Embedding(max_len, d, rng, scale=scale), max_len
        self.params, self.grads = self.table.params, self.table.grads

    def forward(self, T: int) -> np.ndarray:
        T = check_whole(T, "T", "LearnedPositions.forward")
        if not 1 <= T <= self.max_len:
            raise ValueError(f"sequence length {T} is outside the learned table (1 .. max_len="
                             f"{self.max_len}); a learned table cannot extrapolate")
        return self.remember(self.table.forward(np.arange(T)))

    def backward(self, dout):
        self.check_dout(dout=dout)
        dout = np.asarray(dout)
        self.table.backward(dout.reshape((-1,) + dout.shape[-2:]).sum(axis=0))
        return None


def apply_rope(x, positions=None, base: float = 10000.0) -> np.ndarray:
    """RoPE: the feature pair (x_2i, x_2i+1) at position m rotated by m·base^(−2i/d) (lesson 04 §6);
    x (..., T, d), d even, positions (T,); then q_m · k_n depends on m − n only."""
    x = np.asarray(x)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(f"apply_rope expects x of shape (..., T, d) with d even (feature pairs), "
                         f"got shape {x.shape}; a single token's vector is x[None, :]")
    T, d = x.shape[-2:]
    pos = np.arange(T) if positions is None else np.asarray(positions)
    if pos.shape != (T,):
        raise ValueError(f"apply_rope: positions must have shape ({T},), got {pos.shape}")
    if pos.dtype == bool or not np.issubdtype(pos.dtype, np.number):
        raise TypeError(f"apply_rope: positions must be numbers, got dtype {pos.dtype}")
    check_finite(pos, "positions", "apply_rope", "positions must be finite numbers")
    angle = pos[:, None] * base ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angle), np.sin(angle)
    out = np.empty(x.shape, dtype=np.result_type(x, np.float64))
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out


def rotary(attend, attend_backward):
    """RoPE around a pair of attention functions, queries and keys rotated first (lesson 04 §6):
    (rope_attend, rope_attend_backward); backward rotates back, Q' = R Q, dQ = Rᵀ dQ'."""

    def rotate(x, positions=None):
        return apply_rope(x, positions).astype(x.dtype)

    def rope_attend(Q, K, V, mask=None, scale=None):
        return attend(rotate(Q), rotate(K), V, mask=mask, scale=scale)

    def rope_attend_backward(dout, Q, K, V, weights, scale):
        dQ, dK, dV = attend_backward(dout, rotate(Q), rotate(K), V, weights, scale)
        back = -np.arange(Q.shape[-2])
        return rotate(dQ, back), rotate(dK, back), dV
    return rope_attend, rope_attend_backward
