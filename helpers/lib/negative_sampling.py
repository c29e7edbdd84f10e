"""Negative sampling (Mikolov et al. 2013b): the true context against k noise words (lesson 07)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.special import expit

from helpers.lib.checks import check_finite
from helpers.lib.layers import Embedding, Layer


def unigram_noise(counts: Sequence[float], power: float = 0.75) -> np.ndarray:
    """The noise distribution P(w)^power / Σ_j P(w_j)^power, (V,) from (V,) counts (lesson 07 §4).
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"unigram_noise: counts must be a non-empty 1-D array, "
                         f"got shape {c.shape}")
    bad = np.flatnonzero(~np.isfinite(c) | (c < 0))
    if bad.size:
        raise ValueError(f"unigram_noise: counts must be finite and non-negative, got "
                         f"{c[bad[0]]} at index {bad[0]} ({bad.size} of {c.size} counts)")
    if c.sum() <= 0:
        raise ValueError(f"unigram_noise: every one of the {c.size} counts is 0; the noise "
                         "distribution needs at least one word that occurs")
    if not 0 <= power <= 1:
        raise ValueError(f"unigram_noise: power must lie in [0, 1], got {power}")
    p = (c / c.sum()) ** power
    p[c == 0] = 0.0                       # 0 ** 0 would give 1
    return p / p.sum()


class NoiseSampler:
    """Draws noise word ids from ``unigram_noise(counts, power)`` by inverse CDF (lesson 07 §4):
    ``sample(shape)`` -> int64 ids of that shape."""

    def __init__(self, counts: Sequence[float], power: float = 0.75,
                 rng: np.random.Generator | None = None):
        self.probs = unigram_noise(counts, power)
        self.cdf = np.cumsum(self.probs)
        self.cdf[-1] = 1.0
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def sample(self, shape, rng: np.random.Generator | None = None) -> np.ndarray:
        u = (rng or self.rng).random(shape)
        return np.searchsorted(self.cdf, u, side="right").astype(np.int64)


def unigram_table(counts: Sequence[float], power: float = 0.75,
                  size: int = 1_000_000) -> np.ndarray:
    """word2vec.c's unigram table: word i fills round(size · p_i) slots (lesson 07 §7); a draw
    is ``table[rng.integers(len(table), size=shape)]``."""
    if size < 1:
        raise ValueError(f"unigram_table: size must be a positive number of slots, got {size}")
    p = unigram_noise(counts, power)
    slots = np.maximum(np.round(p * size), p > 0).astype(np.int64)  # every p > 0 gets a slot
    return np.repeat(np.arange(len(p), dtype=np.int32), slots)


class EmbeddingDot(Layer):
    """Scores of hidden vectors against selected rows of W (V, D) (lesson 07 §3): forward(h (N, D),
    ids (N,) or (N, K)) -> scores[n, j] = W[ids[n, j]] · h[n]; backward returns dh (N, D)."""

    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator, dtype=np.float64,
                 scale: float = 0.01, scatter: str = "add.at"):
        super().__init__()
        self.embed = Embedding(vocab_size, dim, rng, dtype=dtype, scale=scale, scatter=scatter)
        self.params, self.grads = self.embed.params, self.embed.grads

    def forward(self, h, ids):
        h, ids = np.asarray(h), np.asarray(ids)
        if h.ndim != 2 or h.shape[1] != self.params[0].shape[1]:
            raise ValueError(f"EmbeddingDot: h must be (N, {self.params[0].shape[1]}), "
                             f"got shape {h.shape}")
        if ids.shape[0] != h.shape[0] or ids.ndim not in (1, 2):
            raise ValueError(f"EmbeddingDot: ids must be (N,) or (N, K) with N={h.shape[0]}, "
                             f"got shape {ids.shape}")
        check_finite(h, "h", "EmbeddingDot.forward")
        rows = self.embed.forward(ids)                       # (N, D) or (N, K, D)
        self.h, self.rows, self.squeeze = h, rows, ids.ndim == 1
        if self.squeeze:
            return self.remember(np.sum(rows * h, axis=1))
        return self.remember(np.einsum("nkd,nd->nk", rows, h))

    def backward(self, dout):
        self.check_dout(dout=dout)
        if self.squeeze:
            self.embed.backward(dout[:, None] * self.h)
            return dout[:, None] * self.rows
        self.embed.backward(dout[:, :, None] * self.h[:, None, :])
        return np.einsum("nk,nkd->nd", dout, self.rows)


def sgns_pair_gradients(w: np.ndarray, c: np.ndarray, n_pos,
                        n_neg) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of SGNS's loss of word–context pairs summed over a corpus (lesson 06 §9): w, c
    (B, D), with x = w·c, L = Σ_b −n_pos log σ(x) − n_neg log σ(−x), dL/dx = n_neg σ(x) −
    n_pos σ(−x), zero at x = ln(n_pos / n_neg). Returns (dL/dw, dL/dc)."""
    w, c = np.asarray(w, dtype=np.float64), np.asarray(c, dtype=np.float64)
    n_pos, n_neg = np.asarray(n_pos, dtype=np.float64), np.asarray(n_neg, dtype=np.float64)
    if w.ndim != 2 or w.shape != c.shape:
        raise ValueError(f"sgns_pair_gradients: w and c must be (B, D) arrays of one shape, "
                         f"got {w.shape} and {c.shape}")
    if n_pos.shape != (w.shape[0],) or n_neg.shape != (w.shape[0],):
        raise ValueError(f"sgns_pair_gradients: n_pos and n_neg must be ({w.shape[0]},), one "
                         f"count per row; got {n_pos.shape} and {n_neg.shape}")
    for name, a in (("w", w), ("c", c), ("n_pos", n_pos), ("n_neg", n_neg)):
        check_finite(a, name, "sgns_pair_gradients")
    if np.any(n_pos < 0) or np.any(n_neg < 0):
        raise ValueError("sgns_pair_gradients: the counts n_pos and n_neg cannot be negative")
    x = np.einsum("bd,bd->b", w, c)
    g = n_neg * expit(x) - n_pos * expit(-x)           # dL/dx
    return g[:, None] * c, g[:, None] * w
