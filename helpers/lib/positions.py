"""Position information for self-attention, in NumPy: sinusoidal encodings, learned
position embeddings, and rotary position embeddings (RoPE).

Self-attention alone is permutation-equivariant: shuffle the input rows and the output
rows shuffle the same way. These three ways tell the model where each token is.
"""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import check_finite, check_whole
from helpers.lib.layers import Embedding, Layer


def sinusoidal_encoding(T: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal position encodings of the original Transformer. Taught in lesson 04, section 6.

    The fixed encodings of "Attention is all you need", (T, d) float64:

    PE[pos, 2i] = sin(pos / base^(2i/d)),  PE[pos, 2i+1] = cos(pos / base^(2i/d)).
    Works for any position, nothing is learned. ``d`` must be even.
    """
    T, d = check_whole(T, "T", "sinusoidal_encoding"), check_whole(d, "d", "sinusoidal_encoding")
    if T < 1 or d < 2 or d % 2:
        raise ValueError(f"need T >= 1 and an even d >= 2, got T={T}, d={d}")
    pos = np.arange(T)[:, None]
    freq = base ** (-np.arange(0, d, 2) / d)          # (d/2,) one frequency per sin/cos pair
    pe = np.empty((T, d))
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)
    return pe


class LearnedPositions(Layer):
    """A learned position table: one trainable vector per position 0 .. max_len − 1. Taught in lesson 04, section 6.

    forward(T) -> (T, d), the first T rows; backward(dout (T, d) or (B, T, d)) fills
    ``grads``. Positions at or beyond ``max_len`` have no vector: asking for them is an error.
    """

    dout_may_add_batch_axes = True   # the same (T, d) rows are added to every sequence of a batch

    def __init__(self, max_len: int, d: int, rng: np.random.Generator, scale: float = 0.02):
        super().__init__()
        self.table = Embedding(max_len, d, rng, scale=scale)
        self.params, self.grads = self.table.params, self.table.grads
        self.max_len = max_len

    def forward(self, T: int) -> np.ndarray:
        T = check_whole(T, "T", "LearnedPositions.forward")
        if not 1 <= T <= self.max_len:
            raise ValueError(f"sequence length {T} is outside the learned table (1 .. max_len={self.max_len}); "
                             "a learned position table cannot extrapolate to unseen positions")
        self.T = T
        return self.remember(self.table.forward(np.arange(T)))

    def backward(self, dout):
        self.check_dout(dout=dout)
        dout = np.asarray(dout)
        # the same position vector is added to every sequence of the batch: sum over the batch
        self.table.backward(dout.reshape((-1,) + dout.shape[-2:]).sum(axis=0))
        return None


def rope_angles(T: int, d: int, base: float = 10000.0, offset: int = 0):
    """The rotation angles of RoPE. Taught in lesson 04, section 6.

    cos and sin of the RoPE rotation angles, each (T, d/2): angle[m, i] = (offset + m) · θ_i
    with θ_i = base^(−2i/d)."""
    T, d = check_whole(T, "T", "rope_angles", minimum=1), check_whole(d, "d", "rope_angles", minimum=2)
    offset = check_whole(offset, "offset", "rope_angles")
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of features, so d must be even; got d={d}")
    theta = base ** (-np.arange(0, d, 2) / d)
    ang = (offset + np.arange(T))[:, None] * theta[None, :]
    return np.cos(ang), np.sin(ang)


def apply_rope(x: np.ndarray, positions=None, base: float = 10000.0) -> np.ndarray:
    """Rotate each feature pair (x_2i, x_2i+1) of the token at position m by the angle m·θ_i. Taught in lesson 04, section 6.

    x: (..., T, d) with d even; positions: (T,) ints (default 0 .. T−1). Returns the same shape.
    Applied to queries and keys (not values), it makes q_m · k_n depend on m − n only:
    R(m)q · R(n)k = q · R(n − m)k, because rotations compose and are orthogonal.
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"apply_rope expects x of shape (..., T, d) (tokens, features), got shape {x.shape}; "
                         "a single token's vector is x[None, :]")
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of features, so d must be even; got d={d}")
    pos = np.arange(T) if positions is None else np.asarray(positions)
    if pos.shape != (T,):
        raise ValueError(f"positions must have shape ({T},), got {pos.shape}")
    if pos.dtype == bool or not np.issubdtype(pos.dtype, np.number):
        raise TypeError(f"apply_rope: positions must be numbers (usually the ints 0 .. T-1), got dtype {pos.dtype}")
    check_finite(pos, "positions", "apply_rope", "positions must be finite numbers")
    theta = base ** (-np.arange(0, d, 2) / d)
    ang = pos[:, None] * theta[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty(np.broadcast_shapes(x.shape), dtype=np.result_type(x, np.float64))
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


def rotary(attend, attend_backward):
    """RoPE around a pair of attention functions: queries and keys rotated first (lesson 04 §6).

    Returns (rope_attend, rope_attend_backward) with the signatures of ``attend`` and
    ``attend_backward`` (:mod:`helpers.lib.attention`) on (..., T, d_k) heads. A rotation is
    orthogonal, so the backward pass rotates dQ and dK back by the opposite angles:
    if Q' = R Q then dQ = Rᵀ dQ'."""
    def rotate(x, positions=None):
        return apply_rope(x, positions).astype(x.dtype)

    def rope_attend(Q, K, V, mask=None, scale=None):
        return attend(rotate(Q), rotate(K), V, mask=mask, scale=scale)

    def rope_attend_backward(dout, Q, K, V, weights, scale):
        dQ, dK, dV = attend_backward(dout, rotate(Q), rotate(K), V, weights, scale)
        back = -np.arange(Q.shape[-2])
        return rotate(dQ, back), rotate(dK, back), dV
    return rope_attend, rope_attend_backward


def alibi_bias(T: int, slope: float) -> np.ndarray:
    """ALiBi's distance penalty on attention scores. Taught in lesson 04, section 6.

    ALiBi (mentioned for completeness): a bias −slope·(i − j) added to the score of query i
    and key j ≤ i, (T, T), so attention decays linearly with distance; −∞ above the diagonal."""
    T = check_whole(T, "T", "alibi_bias", minimum=1)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    return np.where(j <= i, -slope * (i - j), -np.inf)
