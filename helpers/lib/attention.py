"""Scaled dot-product and multi-head attention in NumPy, forward and backward (lesson 04). A mask
is boolean, True = "this query may look at this key", as PyTorch's ``attn_mask``."""
from __future__ import annotations

import math

import numpy as np

from helpers.lib.checks import check_finite, check_integers, check_mask, check_whole
from helpers.lib.layers import Layer, softmax


# ---------------------------------------------------------------- masks
def causal_mask(T: int, T_k: int | None = None) -> np.ndarray:
    """(T, T_k) bool, True on and below the diagonal: query i sees keys 0..i (lesson 04 §4)."""
    T = check_whole(T, "T", "causal_mask", minimum=1)
    T_k = T if T_k is None else check_whole(T_k, "T_k", "causal_mask", minimum=1)
    return np.tril(np.ones((T, T_k), dtype=bool))


def padding_mask(lengths, T: int) -> np.ndarray:
    """(B, 1, T) bool, True at the first ``lengths[b]`` positions of sequence b (lesson 04 §4);
    ``[:, 0]`` of it is the (B, T) ``key_padding``."""
    T = check_whole(T, "T", "padding_mask", minimum=1)
    lengths = check_integers(lengths, "lengths", "padding_mask", "whole numbers (one per sequence)")
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be 1-D (one per sequence), got shape {lengths.shape}")
    if np.any(lengths < 1) or np.any(lengths > T):
        raise ValueError(f"every length must lie in [1, {T}], got {lengths.tolist()}")
    return (np.arange(T)[None, :] < lengths[:, None])[:, None, :]


def _full_mask(mask, key_padding, score_shape: tuple, where: str, causal: bool = False):
    """``mask``, ``key_padding`` and the causal mask checked and combined into one bool mask."""
    full = None
    if mask is not None:
        full = check_mask(mask, "mask", where, "this query may attend to this key")
        pairs = zip(full.shape[::-1], score_shape[::-1], strict=False)  # fewer axes broadcast
        fits = 2 <= full.ndim <= len(score_shape) and all(m in (1, s) for m, s in pairs)
        if not fits:
            padding = len(score_shape) > 2 and full.shape == (score_shape[0], score_shape[-1])
            hint = ("; a key-padding mask (B, T_k) goes in key_padding= (a 2-D mask is (T_q, T_k))"
                    if padding else "")
            raise ValueError(f"{where}: attention mask of shape {full.shape} does not broadcast to "
                             f"the scores' shape {score_shape} (..., T_q, T_k){hint}")
    if key_padding is not None:
        kp = check_mask(key_padding, "key_padding", where, "a real key, not padding")
        want = (score_shape[0], score_shape[-1]) if len(score_shape) > 2 else (score_shape[-1],)
        if kp.shape != want:
            raise ValueError(f"{where}: key_padding must have shape (B, T_k) = {want} for scores "
                             f"of shape {score_shape}, got {kp.shape}")
        kp = kp.reshape(want[:-1] + (1,) * (len(score_shape) - len(want)) + want[-1:])
        full = kp if full is None else full & kp
    if causal:
        tri = causal_mask(score_shape[-2], score_shape[-1])
        full = tri if full is None else full & tri
    if full is not None and not np.broadcast_to(full, score_shape).any(axis=-1).all():
        raise ValueError(f"{where}: the attention mask hides every key from some query; its "
                         "softmax would be 0/0. Every query needs at least one visible key")
    return full


# ---------------------------------------------------------------- attention, forward
def attention_single_query(q, K, V):
    """One query against all keys: z = Σ_i softmax_i(q·k_i / √d_k) v_i (lesson 04 §1).
    q: (d_k,), K: (T, d_k), V: (T, d_v). Returns (z (d_v,), weights (T,))."""
    if np.ndim(q) != 1 or np.ndim(K) != 2:
        raise ValueError(f"expected q (d_k,) and K (T, d_k), got {np.shape(q)}, {np.shape(K)}")
    z, w = scaled_dot_product_attention(np.asarray(q)[None], K, V)
    return z[0], w[0]


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None, key_padding=None):
    """softmax(Q Kᵀ · scale, masked) V for every query at once (lesson 04 §4): Q (..., T_q, d_k),
    K (..., T_k, d_k), V (..., T_k, d_v); ``mask`` bool against the scores (..., T_q, T_k),
    ``key_padding`` (B, T_k) True at real keys, ``scale`` 1/√d_k by default; a hidden score is −∞.
    Returns (out (..., T_q, d_v), weights (..., T_q, T_k))."""
    where = "scaled_dot_product_attention"
    Q, K, V = (check_finite(np.asarray(a), n, where) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    if min(Q.ndim, K.ndim, V.ndim) < 2:
        raise ValueError(f"Q, K, V need at least 2 dimensions (tokens, features); got {Q.shape}, "
                         f"{K.shape}, {V.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"queries and keys must have the same width d_k: Q {Q.shape}, K {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"keys and values must have the same number of tokens: K {K.shape}, "
                         f"V {V.shape}")
    if K.shape[-2] == 0:
        raise ValueError(f"there are no keys (T_k = 0 in K {K.shape}): a softmax over no scores "
                         "is undefined")
    scale = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale
    scores = (Q @ np.swapaxes(K, -1, -2)) * scale
    full = _full_mask(mask, key_padding, scores.shape, where)
    if full is not None:
        scores = np.where(full, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights


# ---------------------------------------------------------------- attention, backward
def softmax_backward(dA, A):
    """The softmax's backward pass, row by row: dS = A ⊙ (dA − Σ_j dA_j A_j) (lesson 04 §4),
    A = softmax(S) and dA = ∂L/∂A both (..., n); returns ∂L/∂S (..., n)."""
    return A * (dA - np.sum(dA * A, axis=-1, keepdims=True))


def _unbroadcast(g, shape: tuple):
    """``g`` summed over the axes that broadcasting added or stretched, back to ``shape``."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for ax, n in enumerate(shape):
        if n == 1 and g.shape[ax] != 1:
            g = g.sum(axis=ax, keepdims=True)
    return g


def softmax_attention_backward(dout, Q, K, V, weights, scale):
    """Gradients of out = softmax(scale · Q Kᵀ, masked) V given dL/dout (lesson 04 §4): with
    A = weights, dV = Aᵀ dO, dA = dO Vᵀ, dS = A ⊙ (dA − rowsum(dA ⊙ A)), dQ = scale · dS K,
    dK = scale · dSᵀ Q. Returns (dQ, dK, dV) with the shapes of Q, K, V."""
    dV = np.swapaxes(weights, -1, -2) @ dout
    dS = softmax_backward(dout @ np.swapaxes(V, -1, -2), weights)
    dQ = scale * dS @ K
    dK = scale * np.swapaxes(dS, -1, -2) @ Q
    return _unbroadcast(dQ, Q.shape), _unbroadcast(dK, K.shape), _unbroadcast(dV, V.shape)


class Attention(Layer):
    """Softmax attention as a layer without parameters (lesson 04 §4): forward(Q, K, V, mask,
    key_padding) runs ``attend``; ``backward(dout)`` returns (dQ, dK, dV)."""


    def __init__(self, attend=scaled_dot_product_attention,
                 attend_backward=softmax_attention_backward):
        super().__init__()
        self.attend, self.attend_backward = attend, attend_backward

    def forward(self, Q, K, V, mask=None, key_padding=None):
        Q, K = np.asarray(Q), np.asarray(K)
        self.scale = 1.0 / math.sqrt(Q.shape[-1])
        shape = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2]) + (Q.shape[-2], K.shape[-2])
        full = _full_mask(mask, key_padding, shape, "Attention.forward")
        out, self.weights = self.attend(Q, K, V, mask=full, scale=self.scale)
        self.Q, self.K, self.V = Q, K, V
        return self.remember(out)

    def backward(self, dout):
        self.check_dout(dout=dout)
        return self.attend_backward(dout, self.Q, self.K, self.V, self.weights, self.scale)


# ---------------------------------------------------------------- multi-head attention
def split_heads(X, num_heads: int):
    """(B, T, d) -> (B, h, T, d/h): head i gets columns i·d/h ... (i+1)·d/h − 1 (lesson 04 §5)."""
    B, T, d = X.shape
    return X.reshape(B, T, num_heads, d // num_heads).transpose(0, 2, 1, 3)


def merge_heads(X):
    """(B, h, T, d_h) -> (B, T, h·d_h), the inverse of :func:`split_heads` (lesson 04 §5)."""
    B, h, T, dh = X.shape
    return X.transpose(0, 2, 1, 3).reshape(B, T, h * dh)


def mha_forward(X, params, num_heads, mask=None, attend=scaled_dot_product_attention):
    """Multi-head self-attention, Concat(head_1..h) W_O + b_O, for X (B, T, d) (lesson 04 §5):
    params = [W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O], W (d, d), b (d,); head i owns columns
    i·d/h ... (i+1)·d/h − 1, all heads in one ``attend`` call with scale 1/√(d/h). Returns
    (out (B, T, d), cache = (X, Q, K, V, weights (B, h, T, ·), concat (B, T, d)))."""
    W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O = params
    Q, K, V = (split_heads(X @ W + b, num_heads) for W, b in ((W_Q, b_Q), (W_K, b_K), (W_V, b_V)))
    heads, weights = attend(Q, K, V, mask=mask, scale=1.0 / math.sqrt(Q.shape[-1]))
    concat = merge_heads(heads)
    return concat @ W_O + b_O, (X, Q, K, V, weights, concat)


def mha_backward(dout, cache, params, attend_backward=softmax_attention_backward):
    """Multi-head self-attention backward: (dX (B, T, d), grads parallel to ``params``) from dout
    (B, T, d) and :func:`mha_forward`'s cache (lesson 04 §5). dout W_Oᵀ is split into heads,
    ``attend_backward`` gives their dQ, dK, dV, merged back; dX sums the three paths into X."""
    X, Q, K, V, weights, concat = cache
    W_Q, _, W_K, _, W_V, _, W_O, _ = params
    d = X.shape[-1]
    X2, dout2 = X.reshape(-1, d), dout.reshape(-1, d)
    dQ, dK, dV = attend_backward(split_heads(dout @ W_O.T, Q.shape[1]), Q, K, V, weights,
                                 1.0 / math.sqrt(Q.shape[-1]))
    grads, dX = [], 0
    for W, dH in ((W_Q, dQ), (W_K, dK), (W_V, dV)):
        dP = merge_heads(dH).reshape(-1, d)          # dL/d(X W + b)
        grads += [X2.T @ dP, dP.sum(axis=0)]
        dX = dX + dP @ W.T
    grads += [concat.reshape(-1, d).T @ dout2, dout2.sum(axis=0)]
    return dX.reshape(X.shape), grads


class MultiHeadAttention(Layer):
    """Multi-head self-attention as a NumPy layer running the four functions it is given
    (lesson 04 §5): params as :func:`mha_forward`; forward(X (B, T, d), mask, causal,
    key_padding) -> (B, T, d), ``weights`` (B, h, T, T) kept."""

    def __init__(self, d_model: int, num_heads: int, rng: np.random.Generator, dtype=np.float64,
                 attend=scaled_dot_product_attention, attend_backward=softmax_attention_backward,
                 mha_forward=mha_forward, mha_backward=mha_backward):
        super().__init__()
        if num_heads < 1 or d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}: "
                             "every head needs the same width d_model / num_heads")
        self.d, self.h = d_model, num_heads
        self.attend, self.attend_backward = attend, attend_backward
        self.mha_forward, self.mha_backward = mha_forward, mha_backward
        bound = math.sqrt(6.0 / (2 * d_model))
        for _ in range(4):
            self.params += [rng.uniform(-bound, bound, (d_model, d_model)).astype(dtype),
                            np.zeros(d_model, dtype)]
        self.grads = [np.zeros_like(p) for p in self.params]

    def forward(self, X, mask=None, causal: bool = False, key_padding=None):
        where = "MultiHeadAttention.forward"
        X = check_finite(np.asarray(X), "X", where)
        if X.ndim != 3 or X.shape[-1] != self.d:
            raise ValueError(f"MultiHeadAttention expects input (B, T, {self.d}), got {X.shape}")
        B, T, _ = X.shape
        if mask is not None:
            mask = np.asarray(mask)                 # checked with the others by _full_mask
            if mask.ndim == 3:                      # (B, T, T): one pattern per sequence
                mask = mask[:, None]
            elif mask.ndim not in (2, 4):
                raise ValueError(f"{where}: mask must be (T, T), (B, T, T) or (B, h, T, T), got "
                                 f"shape {mask.shape}")
        full = _full_mask(mask, key_padding, (B, self.h, T, T), where, causal)
        out, self.cache = self.mha_forward(X, self.params, self.h, mask=full, attend=self.attend)
        self.weights = self.cache[4]
        return self.remember(out.astype(X.dtype, copy=False))      # float32 stays float32

    def backward(self, dout):
        self.check_dout(dout=dout)
        dX, grads = self.mha_backward(dout, self.cache, self.params,
                                      attend_backward=self.attend_backward)
        for mine, g in zip(self.grads, grads, strict=True):
            mine[...] = g
        return dX.astype(dout.dtype, copy=False)

    def load_torch(self, mha) -> "MultiHeadAttention":
        """Copy the weights of a ``torch.nn.MultiheadAttention(d, h, batch_first=True)``: y = x Wᵀ
        + b with in_proj_weight = [W_Q; W_K; W_V], so ours are its transposed blocks."""
        if (mha.embed_dim, mha.num_heads) != (self.d, self.h) or mha.in_proj_weight is None:
            raise ValueError(f"load_torch needs a self-attention module, d={self.d}, h={self.h}")
        d, W = self.d, mha.in_proj_weight.detach().double().numpy()
        b = [np.zeros(3 * d) if t is None else t.detach().double().numpy()
             for t in (mha.in_proj_bias, mha.out_proj.bias)]
        for k in range(3):
            rows = slice(k * d, (k + 1) * d)
            self.params[2 * k][...], self.params[2 * k + 1][...] = W[rows].T, b[0][rows]
        self.params[6][...] = mha.out_proj.weight.detach().double().numpy().T
        self.params[7][...] = b[1][:d]
        return self
