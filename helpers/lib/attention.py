"""Scaled dot-product attention and multi-head attention in NumPy, forward and backward (lesson 04).

Tokens are rows: ``Q`` is (..., T_q, d_k), ``K`` (..., T_k, d_k), ``V`` (..., T_k, d_v); the leading
axes are batch (and head) axes. A mask is boolean (0/1 integers are accepted, floats refused),
``True`` meaning "this query may look at this key"; it is read from the right against the scores
(..., T_q, T_k), as NumPy broadcasts and ``torch.nn.functional.scaled_dot_product_attention``
reads ``attn_mask``, so a 2-D mask is always (T_q, T_k). A key-padding mask (B, T_k) has its own
argument, ``key_padding``.

**Your functions inside the layers.** The layers take the functions they run as keyword
arguments (the defaults are the course's), so that a student's code runs inside them:

- ``attend(Q, K, V, mask=None, scale=None) -> (out, weights)`` —
  :func:`scaled_dot_product_attention`; the layers call it with ``mask=`` (padding and causal
  mask already combined into one bool mask) and ``scale=`` 1/√d_k.
- ``attend_backward(dout, Q, K, V, weights, scale) -> (dQ, dK, dV)`` —
  :func:`softmax_attention_backward`.
- ``mha_forward(X, params, num_heads, mask=None, attend=...) -> (out, cache)`` —
  :func:`mha_forward`; ``cache = (X, Q, K, V, weights, concat)`` with the heads split.
- ``mha_backward(dout, cache, params, attend_backward=...) -> (dX, grads)`` — :func:`mha_backward`.

``Attention(attend=, attend_backward=)`` and ``MultiHeadAttention(d, h, rng, attend=,
attend_backward=, mha_forward=, mha_backward=)`` take them; ``DecoderBlock`` and
``NumpyDecoderLM`` (:mod:`helpers.lib.decoder`), ``EncoderBlock`` and ``NumpyEncoder``
(:mod:`helpers.lib.encoder_numpy`) pass them down.
"""
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
    """(B, 1, T) bool, True at the first ``lengths[b]`` positions of sequence b (lesson 04 §4).

    The axis of size 1 broadcasts over the queries, so it can be passed as ``mask``;
    ``padding_mask(lengths, T)[:, 0]`` is the (B, T) ``key_padding``."""
    T = check_whole(T, "T", "padding_mask", minimum=1)
    lengths = check_integers(lengths, "lengths", "padding_mask", "whole numbers (one per sequence)")
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be 1-D (one per sequence), got shape {lengths.shape}")
    if np.any(lengths < 1) or np.any(lengths > T):
        raise ValueError(f"every length must lie in [1, {T}], got {lengths.tolist()}")
    return (np.arange(T)[None, :] < lengths[:, None])[:, None, :]


def _full_mask(mask, key_padding, score_shape: tuple, where: str, causal: bool = False):
    """``mask``, ``key_padding`` (and the causal mask) checked against the scores (..., T_q, T_k)
    and combined into one bool mask (None when there is none)."""
    full = None
    if mask is not None:
        full = check_mask(mask, "mask", where, "this query may attend to this key")
        fits = 2 <= full.ndim <= len(score_shape) and all(
            m in (1, s) for m, s in zip(full.shape[::-1], score_shape[::-1], strict=False))
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
    q, K, V = (check_finite(np.asarray(a), n, "attention_single_query") for a, n in
               ((q, "q"), (K, "K"), (V, "V")))
    if q.ndim != 1 or K.shape[-1:] != q.shape or K.ndim != 2 or V.ndim != 2 or len(K) != len(V):
        raise ValueError(f"expected q (d_k,), K (T, d_k), V (T, d_v); got {q.shape}, {K.shape}, "
                         f"{V.shape}")
    if len(K) == 0:
        raise ValueError("there are no keys (T = 0): a softmax over no scores is undefined")
    w = softmax(K @ q / math.sqrt(len(q)))
    return w @ V, w


def scaled_dot_product_attention(Q, K, V, mask=None, scale=None, key_padding=None):
    """softmax(Q Kᵀ · scale, masked) V for every query at once (lesson 04 §4).

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v). ``mask``: bool, read from the
    right against the scores (..., T_q, T_k); ``key_padding``: (B, T_k) bool, True at real keys;
    ``scale`` defaults to 1/√d_k. A hidden score is −∞, so its weight is exactly 0.
    Returns (out (..., T_q, d_v), weights (..., T_q, T_k)); each row of weights sums to 1."""
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
    """The softmax's backward pass, row by row: dS = A ⊙ (dA − Σ_j dA_j A_j) (lesson 04 §4).

    The Jacobian diag(a) − a aᵀ of each row applied to its upstream gradient, without building
    it. A = softmax(S) and dA = ∂L/∂A, both (..., n); returns ∂L/∂S (..., n)."""
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
    """Gradients of out = softmax(scale · Q Kᵀ, masked) V given dL/dout (lesson 04 §4).

    With A = weights: dV = Aᵀ dO, dA = dO Vᵀ, dS = A ⊙ (dA − rowsum(dA ⊙ A)),
    dQ = scale · dS K, dK = scale · dSᵀ Q. Masked entries have A = 0, hence dS = 0.
    Returns (dQ, dK, dV) with the shapes of Q, K, V (summed over broadcast batch axes)."""
    dV = np.swapaxes(weights, -1, -2) @ dout
    dS = softmax_backward(dout @ np.swapaxes(V, -1, -2), weights)
    dQ = scale * dS @ K
    dK = scale * np.swapaxes(dS, -1, -2) @ Q
    return _unbroadcast(dQ, Q.shape), _unbroadcast(dK, K.shape), _unbroadcast(dV, V.shape)


class Attention(Layer):
    """Softmax attention as a layer without parameters: forward(Q, K, V, mask, key_padding)
    (lesson 04 §4).

    Runs ``attend`` forward and ``attend_backward`` backward (the course's by default);
    ``backward(dout)`` returns (dQ, dK, dV). ``weights`` keeps the last attention matrix."""

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
    X = np.asarray(X)
    num_heads = check_whole(num_heads, "num_heads", "split_heads", minimum=1)
    if X.ndim != 3 or X.shape[-1] % num_heads:
        raise ValueError(f"split_heads expects X (B, T, d) with d divisible by num_heads="
                         f"{num_heads}, got {X.shape}")
    B, T, d = X.shape
    return X.reshape(B, T, num_heads, d // num_heads).transpose(0, 2, 1, 3)


def merge_heads(X):
    """(B, h, T, d_h) -> (B, T, h·d_h), the inverse of :func:`split_heads` (lesson 04 §5)."""
    X = np.asarray(X)
    if X.ndim != 4:
        raise ValueError(f"merge_heads expects X of shape (B, h, T, d_h), got {X.shape}")
    B, h, T, dh = X.shape
    return X.transpose(0, 2, 1, 3).reshape(B, T, h * dh)


def mha_forward(X, params, num_heads, mask=None, attend=scaled_dot_product_attention):
    """Multi-head self-attention forward: Concat(head_1..h) W_O + b_O (lesson 04 §5).

    X: (B, T, d); params = [W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O], W_* (d, d), b_* (d,): head i
    owns columns i·d/h ... (i+1)·d/h − 1 of W_Q, W_K, W_V. Each head runs
    ``attend(Q_i, K_i, V_i, mask=mask, scale=1/√(d/h))`` (all heads in one call on (B, h, T, d/h)).
    Returns (out (B, T, d), cache = (X, Q, K, V, weights, concat)) with Q, K, V (B, h, T, d/h),
    weights (B, h, T, T) and concat (B, T, d), the merged heads."""
    W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O = params
    Q, K, V = (split_heads(X @ W + b, num_heads) for W, b in ((W_Q, b_Q), (W_K, b_K), (W_V, b_V)))
    heads, weights = attend(Q, K, V, mask=mask, scale=1.0 / math.sqrt(Q.shape[-1]))
    concat = merge_heads(heads)
    return concat @ W_O + b_O, (X, Q, K, V, weights, concat)


def mha_backward(dout, cache, params, attend_backward=softmax_attention_backward):
    """Multi-head self-attention backward (lesson 04 §5).

    dout: (B, T, d); ``cache`` and ``params`` as :func:`mha_forward`. The heads' gradient
    dout W_Oᵀ is split, ``attend_backward`` gives dQ, dK, dV per head, and they are merged back;
    X feeds Q, K and V, so dX sums the three paths. Returns (dX (B, T, d), grads), grads parallel
    to ``params``."""
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
    """Multi-head self-attention as a NumPy layer, forward and backward (lesson 04 §5).

    params = [W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O] (Xavier-uniform matrices (d, d), zero
    biases, as ``torch.nn.MultiheadAttention``). forward(X (B, T, d), mask=None, causal=False,
    key_padding=None) -> (B, T, d): ``mask`` (bool) is (T, T), (B, T, T) or (B, h, T, T),
    ``causal`` adds the causal mask, ``key_padding`` (B, T) marks the real tokens. ``weights``
    keeps the last attention weights (B, h, T, T). The four functions it runs are keyword
    arguments (see the module's docstring)."""

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
            mask = check_mask(mask, "mask", where, "this query may attend to this key")
            if mask.ndim == 3:                      # (B, T, T): one pattern per sequence
                mask = mask[:, None]
            elif mask.ndim not in (2, 4):
                raise ValueError(f"{where}: mask must be (T, T), (B, T, T) or (B, h, T, T), got "
                                 f"shape {mask.shape}")
        full = _full_mask(mask, key_padding, (B, self.h, T, T), where, causal)
        out, self.cache = self.mha_forward(X, self.params, self.h, mask=full, attend=self.attend)
        self.weights = self.cache[4]
        return self.remember(out)

    def backward(self, dout):
        self.check_dout(dout=dout)
        dX, grads = self.mha_backward(dout, self.cache, self.params,
                                      attend_backward=self.attend_backward)
        for mine, g in zip(self.grads, grads, strict=True):
            mine[...] = g
        return dX

    def load_torch(self, mha) -> "MultiHeadAttention":
        """Copy the weights of a ``torch.nn.MultiheadAttention(d, h, batch_first=True)``.

        PyTorch stores y = x Wᵀ + b with in_proj_weight = [W_Q; W_K; W_V] (3d, d): our matrices
        are its transposed blocks. A module without biases gives zero biases."""
        if mha.embed_dim != self.d or mha.num_heads != self.h:
            raise ValueError(f"torch module has d={mha.embed_dim}, h={mha.num_heads}; "
                             f"this layer has d={self.d}, h={self.h}")
        if mha.in_proj_weight is None:
            raise ValueError("load_torch: this nn.MultiheadAttention has separate q/k/v weights; "
                             "the NumPy layer is self-attention with one width d")
        d = self.d

        def numpy(t, shape):
            return np.zeros(shape) if t is None else t.detach().cpu().double().numpy()
        W, b = numpy(mha.in_proj_weight, (3 * d, d)), numpy(mha.in_proj_bias, (3 * d,))
        for k in range(3):
            self.params[2 * k][...] = W[k * d:(k + 1) * d].T
            self.params[2 * k + 1][...] = b[k * d:(k + 1) * d]
        self.params[6][...] = numpy(mha.out_proj.weight, (d, d)).T
        self.params[7][...] = numpy(mha.out_proj.bias, (d,))
        return self
