"""Scaled dot-product attention and multi-head attention in NumPy, forward and backward.

Conventions (the same as ``torch.nn.functional.scaled_dot_product_attention``):

- Tokens are rows. ``Q`` has shape (..., T_q, d_k), ``K`` (..., T_k, d_k), ``V`` (..., T_k, d_v);
  the leading ``...`` are batch (and head) axes.
- A mask is boolean (0/1 integers are accepted and converted; floats are refused, see
  :mod:`helpers.lib.checks`): ``True`` means "this query may look at this key", ``False`` sets
  the score to −∞ before the softmax, so that key gets weight exactly 0.
- ``mask`` is read **from the right** against the scores (..., T_q, T_k), as NumPy broadcasts and
  ``torch.nn.functional.scaled_dot_product_attention`` reads ``attn_mask``: its last two axes are
  always (T_q, T_k), so a 2-D mask is one (T_q, T_k) pattern shared by every sequence (a causal
  mask). A key-padding mask (B, T_k), one row per sequence, has its own argument
  ``key_padding`` (or is given as :func:`padding_mask`'s (B, 1, T_k)), so it is never mistaken
  for a (T_q, T_k) mask when B happens to equal T_q.
- :class:`MultiHeadAttention` knows its score shape (B, h, T, T), so there a 3-D mask is
  (B, T, T), one pattern per sequence (shared by the heads); a per-head mask is 4-D (B, h, T, T).

Layers follow the course protocol of :mod:`helpers.lib.layers` (``params``/``grads`` filled in
place by ``backward``). Arrays are float64 unless you pass float32 yourself.
"""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import check_finite, check_integers, check_mask, check_whole
from helpers.lib.layers import Layer, softmax


# ---------------------------------------------------------------- masks
def causal_mask(T: int, T_k: int | None = None) -> np.ndarray:
    """(T, T_k) bool, True on and below the diagonal: query i may see keys 0..i only. Taught in lesson 04, section 4."""
    T = check_whole(T, "T", "causal_mask", minimum=1)
    T_k = T if T_k is None else check_whole(T_k, "T_k", "causal_mask", minimum=1)
    return np.tril(np.ones((T, T_k), dtype=bool))


def padding_mask(lengths, T: int) -> np.ndarray:
    """Key mask for a padded batch: (B, 1, T) bool, True at the first ``lengths[b]`` positions. Taught in lesson 04, section 4.

    ``lengths``: (B,) integers in [1, T]. The middle axis of size 1 broadcasts over the queries
    (every query ignores the same padded keys); a 3-D mask is (B, T_q, T_k), so it can be passed
    as ``mask`` as it is, to :func:`scaled_dot_product_attention` of (B, T_q, d) queries and to
    :class:`MultiHeadAttention`. ``padding_mask(lengths, T)[:, 0]`` is the (B, T) ``key_padding``.
    """
    T = check_whole(T, "T", "padding_mask", minimum=1)
    lengths = check_integers(lengths, "lengths", "padding_mask", "whole numbers (a length per sequence)")
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be 1-D (one length per sequence), got shape {lengths.shape}")
    if np.any(lengths < 1) or np.any(lengths > T):
        raise ValueError(f"every length must lie in [1, {T}], got {lengths.tolist()}")
    return (np.arange(T)[None, :] < lengths[:, None])[:, None, :]


def _check_mask(mask, score_shape: tuple, name: str = "mask", where: str = "attention") -> np.ndarray:
    """Validate a mask against the score shape (..., T_q, T_k), read from the right; return it as bool."""
    mask = check_mask(mask, name, where, "this query may attend to this key")
    if mask.ndim < 2 or mask.ndim > len(score_shape):
        raise ValueError(f"attention {name} of shape {mask.shape} does not fit scores of shape "
                         f"{score_shape} (..., T_q, T_k): it needs 2 to {len(score_shape)} dimensions"
                         + _padding_hint(mask.shape, score_shape))
    for m, s in zip(mask.shape[::-1], score_shape[::-1], strict=False):  # trailing axes; the mask may have fewer
        if m not in (1, s):
            raise ValueError(f"attention {name} of shape {mask.shape} does not broadcast to the "
                             f"scores' shape {score_shape} (..., T_q, T_k)" + _padding_hint(mask.shape, score_shape))
    return mask


def _padding_hint(mask_shape: tuple, score_shape: tuple) -> str:
    if len(mask_shape) == 2 and len(score_shape) >= 3 and mask_shape == (score_shape[0], score_shape[-1]):
        return ("; a key-padding mask (B, T_k) goes in key_padding= (or as padding_mask(lengths, T) of "
                "shape (B, 1, T_k)): a 2-D mask is always (T_q, T_k)")
    return ""


def _key_padding(key_padding, score_shape: tuple, where: str) -> np.ndarray:
    """A key-padding mask (B, T_k) (or (T_k,) for unbatched scores) as a mask of the scores' rank."""
    key_padding = check_mask(key_padding, "key_padding", where, "a real key, not padding")
    expected = (score_shape[0], score_shape[-1]) if len(score_shape) >= 3 else (score_shape[-1],)
    if key_padding.shape != expected:
        raise ValueError(f"{where}: key_padding must have shape (B, T_k) = {expected} for scores of shape "
                         f"{score_shape}, got {key_padding.shape}")
    if len(score_shape) < 3:
        return key_padding[None, :]
    return key_padding.reshape((score_shape[0],) + (1,) * (len(score_shape) - 2) + (score_shape[-1],))


def _check_some_key_visible(mask, score_shape: tuple) -> None:
    if not np.all(np.broadcast_to(mask, score_shape).any(axis=-1)):
        raise ValueError("the attention mask hides every key from some query; its softmax would "
                         "be 0/0. Every query needs at least one visible key")


# ---------------------------------------------------------------- attention
def attention_single_query(q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: bool = True):
    """One query against all keys: z = Σ_i softmax_i(q·k_i / √d_k) v_i. Taught in lesson 04, section 1.

    q: (d_k,), K: (T, d_k), V: (T, d_v). Returns (z (d_v,), weights (T,)).
    ``scale=False`` drops the 1/√d_k (the unscaled form of the notes).
    """
    q, K, V = (check_finite(np.asarray(a), n, "attention_single_query") for a, n in ((q, "q"), (K, "K"), (V, "V")))
    if q.ndim != 1 or K.ndim != 2 or V.ndim != 2:
        raise ValueError(f"expected q (d_k,), K (T, d_k), V (T, d_v); got {q.shape}, {K.shape}, {V.shape}")
    if K.shape[1] != q.shape[0] or K.shape[0] != V.shape[0]:
        raise ValueError(f"shapes do not match: q {q.shape}, K {K.shape}, V {V.shape}")
    if K.shape[0] == 0:
        raise ValueError("there are no keys (T = 0): a softmax over no scores is undefined")
    scores = K @ q / (np.sqrt(q.shape[0]) if scale else 1.0)
    w = softmax(scores)
    return w @ V, w


def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask=None,
                                 scale: float | None = None, key_padding=None):
    """Matrix form: softmax(Q Kᵀ / √d_k + mask) V for every query at once. Taught in lesson 04, section 1.

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v) float. ``mask``: bool (or 0/1)
    read from the right against the scores (..., T_q, T_k) — a 2-D mask is (T_q, T_k) — or None.
    ``key_padding``: (B, T_k) bool, True at the real keys of each sequence (B = the first axis of
    the scores; (T_k,) for unbatched Q), or None. ``scale`` defaults to 1/√d_k.
    Returns (out (..., T_q, d_v), weights (..., T_q, T_k)); each row of weights sums to 1.
    """
    Q, K, V = (check_finite(np.asarray(a), n, "scaled_dot_product_attention") for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    if Q.ndim < 2 or K.ndim < 2 or V.ndim < 2:
        raise ValueError(f"Q, K, V need at least 2 dimensions (tokens, features); got {Q.shape}, {K.shape}, {V.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"queries and keys must have the same width d_k: Q {Q.shape}, K {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"keys and values must have the same number of tokens: K {K.shape}, V {V.shape}")
    if K.shape[-2] == 0:
        raise ValueError(f"there are no keys (T_k = 0 in K {K.shape}): a softmax over no scores is undefined")
    s = 1.0 / np.sqrt(Q.shape[-1]) if scale is None else scale
    scores = (Q @ np.swapaxes(K, -1, -2)) * s
    full = None
    if mask is not None:
        full = _check_mask(mask, scores.shape, "mask", "scaled_dot_product_attention")
    if key_padding is not None:
        kp = _key_padding(key_padding, scores.shape, "scaled_dot_product_attention")
        full = kp if full is None else full & kp
    if full is not None:
        _check_some_key_visible(full, scores.shape)
        scores = np.where(full, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights


def softmax_attention_backward(dout, Q, K, V, weights, scale: float):
    """Gradients of out = softmax(s·Q Kᵀ + mask) V given dL/dout. Taught in lesson 04, section 4.

    With A = weights:  dV = Aᵀ dO,  dA = dO Vᵀ,
    dS = A ⊙ (dA − rowsum(dA ⊙ A))   (the softmax Jacobian applied row by row),
    dQ = s · dS K,  dK = s · dSᵀ Q.  Masked entries have A = 0, hence dS = 0 there.
    Returns (dQ, dK, dV) with the shapes of Q, K, V (summed over broadcast batch axes).
    """
    dV = np.swapaxes(weights, -1, -2) @ dout
    dA = dout @ np.swapaxes(V, -1, -2)
    dS = weights * (dA - np.sum(dA * weights, axis=-1, keepdims=True))
    dQ = scale * dS @ K
    dK = scale * np.swapaxes(dS, -1, -2) @ Q
    return (_unbroadcast(dQ, Q.shape), _unbroadcast(dK, K.shape), _unbroadcast(dV, V.shape))


def _unbroadcast(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``g`` over the axes that broadcasting added or stretched, back to ``shape``."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for ax, n in enumerate(shape):
        if n == 1 and g.shape[ax] != 1:
            g = g.sum(axis=ax, keepdims=True)
    return g


class Attention(Layer):
    """Parameter-free softmax attention as a layer: forward(Q, K, V, mask, key_padding) -> out. Taught in lesson 04, section 4.

    ``mask`` and ``key_padding`` as in :func:`scaled_dot_product_attention`.

    ``backward(dout)`` returns the tuple (dQ, dK, dV) (three inputs, three gradients).
    ``weights`` keeps the last attention matrix (..., T_q, T_k) for plotting.
    """

    def forward(self, Q, K, V, mask=None, key_padding=None):
        self.scale = 1.0 / np.sqrt(np.shape(Q)[-1])
        out, self.weights = scaled_dot_product_attention(Q, K, V, mask, self.scale, key_padding)
        self.Q, self.K, self.V = Q, K, V
        return self.remember(out)

    def backward(self, dout):
        self.check_dout(dout=dout)
        return softmax_attention_backward(dout, self.Q, self.K, self.V, self.weights, self.scale)


# ---------------------------------------------------------------- heads
def split_heads(X: np.ndarray, num_heads: int) -> np.ndarray:
    """(B, T, d) -> (B, h, T, d/h): head i gets feature columns i·d/h ... (i+1)·d/h − 1. Taught in lesson 04, section 5."""
    X = np.asarray(X)
    num_heads = check_whole(num_heads, "num_heads", "split_heads", minimum=1)
    if X.ndim != 3:
        raise ValueError(f"split_heads expects X of shape (B, T, d), got {X.shape}")
    B, T, d = X.shape
    if d % num_heads:
        raise ValueError(f"model dimension d={d} is not divisible by num_heads={num_heads}")
    return X.reshape(B, T, num_heads, d // num_heads).transpose(0, 2, 1, 3)


def merge_heads(X: np.ndarray) -> np.ndarray:
    """(B, h, T, d_h) -> (B, T, h·d_h): the inverse of :func:`split_heads` (Concat(head_1..h)). Taught in lesson 04, section 5."""
    X = np.asarray(X)
    if X.ndim != 4:
        raise ValueError(f"merge_heads expects X of shape (B, h, T, d_h), got {X.shape}")
    B, h, T, dh = X.shape
    return X.transpose(0, 2, 1, 3).reshape(B, T, h * dh)


class MultiHeadAttention(Layer):
    """Multi-head self-attention as a NumPy layer, forward and backward. Taught in lesson 04, section 5.

    Multi-head self-attention, MultiHead(X) = Concat(head_1..h) W_O + b_O with
    head_i = Attention(X W_Q^(i), X W_K^(i), X W_V^(i)).

    The h per-head projections are stored side by side in one (d, d) matrix each
    (head i owns columns i·d_h ... (i+1)·d_h − 1), as PyTorch does.
    params = [W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O]; W_* are (d, d), b_* are (d,).

    forward(X (B, T, d), mask=None, causal=False, key_padding=None) -> (B, T, d) where ``mask``
    (bool, or 0/1) is (T, T) for every sequence, (B, T, T) one per sequence or (B, h, T, T) one per
    head (an axis of size 1 broadcasts), ``causal`` adds the causal mask and ``key_padding``
    (B, T) marks the *real* tokens (True) as opposed to padding.
    ``weights`` keeps the last attention weights (B, h, T, T).
    """

    def __init__(self, d_model: int, num_heads: int, rng: np.random.Generator, dtype=np.float64):
        super().__init__()
        if num_heads < 1 or d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}: "
                             "every head needs the same width d_model / num_heads")
        self.d, self.h = d_model, num_heads
        bound = np.sqrt(6.0 / (2 * d_model))  # Xavier-uniform, as nn.MultiheadAttention
        for _ in range(4):
            self.params += [rng.uniform(-bound, bound, (d_model, d_model)).astype(dtype),
                            np.zeros(d_model, dtype)]
        self.grads = [np.zeros_like(p) for p in self.params]
        self.attn = Attention()

    def forward(self, X, mask=None, causal: bool = False, key_padding=None):
        X = np.asarray(X)
        if X.ndim != 3 or X.shape[-1] != self.d:
            raise ValueError(f"MultiHeadAttention expects input (B, T, {self.d}), got {X.shape}")
        check_finite(X, "X", "MultiHeadAttention.forward")
        B, T, _ = X.shape
        full = np.ones((1, 1, T, T), dtype=bool)
        if mask is not None:
            m = check_mask(mask, "mask", "MultiHeadAttention.forward", "this query may attend to this key")
            if m.ndim == 3:                    # (B, T, T): one pattern per sequence, shared by the heads
                m = m[:, None]
            elif m.ndim not in (2, 4):
                raise ValueError(f"MultiHeadAttention.forward: mask must be (T, T), (B, T, T) or (B, h, T, T) "
                                 f"= {(B, self.h, T, T)}, got shape {m.shape}")
            full = full & _check_mask(m, (B, self.h, T, T), "mask", "MultiHeadAttention.forward")
        if causal:
            full = full & causal_mask(T)
        if key_padding is not None:
            key_padding = check_mask(key_padding, "key_padding", "MultiHeadAttention.forward", "a real token")
            if key_padding.shape != (B, T):
                raise ValueError(f"key_padding must be a bool array of shape (B, T) = {(B, T)}, "
                                 f"got {key_padding.dtype} {key_padding.shape}")
            full = full & key_padding[:, None, None, :]
        _check_some_key_visible(full, (B, self.h, T, T))
        W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O = self.params
        self.X = X
        Q, K, V = (split_heads(X @ W + b, self.h) for W, b in ((W_Q, b_Q), (W_K, b_K), (W_V, b_V)))
        heads = self.attn.forward(Q, K, V, full)
        self.weights = self.attn.weights
        self.concat = merge_heads(heads)
        return self.remember(self.concat @ W_O + b_O)

    def backward(self, dout):
        self.check_dout(dout=dout)
        W_Q, _, W_K, _, W_V, _, W_O, _ = self.params
        X2 = self.X.reshape(-1, self.d)
        self.grads[6][...] = self.concat.reshape(-1, self.d).T @ dout.reshape(-1, self.d)
        self.grads[7][...] = dout.reshape(-1, self.d).sum(axis=0)
        dQ, dK, dV = self.attn.backward(split_heads(dout @ W_O.T, self.h))
        dX = np.zeros_like(self.X)
        for k, (W, dH) in enumerate(((W_Q, dQ), (W_K, dK), (W_V, dV))):
            dP = merge_heads(dH)                      # (B, T, d): dL/d(X W + b)
            self.grads[2 * k][...] = X2.T @ dP.reshape(-1, self.d)
            self.grads[2 * k + 1][...] = dP.reshape(-1, self.d).sum(axis=0)
            dX += dP @ W.T                           # X feeds Q, K and V: sum the three paths
        return dX

    def load_torch(self, mha) -> "MultiHeadAttention":
        """Copy the weights of a ``torch.nn.MultiheadAttention(d, h, batch_first=True)``.

        PyTorch stores y = x Wᵀ + b with in_proj_weight = [W_Q; W_K; W_V] of shape (3d, d),
        so our (d, d) matrices are the transposed blocks. A module made with ``bias=False`` has no
        biases; ours are then set to 0 (the same function).
        """
        if mha.embed_dim != self.d or mha.num_heads != self.h:
            raise ValueError(f"torch module has d={mha.embed_dim}, h={mha.num_heads}; "
                             f"this layer has d={self.d}, h={self.h}")
        if getattr(mha, "in_proj_weight", None) is None:
            raise ValueError("load_torch: this nn.MultiheadAttention has separate q/k/v weights (kdim or vdim "
                             "differ from embed_dim); the NumPy layer is self-attention with one width d")

        def numpy(t, shape):                 # a module built with bias=False has no biases: they are 0
            return np.zeros(shape) if t is None else t.detach().cpu().double().numpy()
        d = self.d
        W = numpy(mha.in_proj_weight, (3 * d, d))
        b = numpy(mha.in_proj_bias, (3 * d,))
        for k in range(3):
            self.params[2 * k][...] = W[k * d:(k + 1) * d].T
            self.params[2 * k + 1][...] = b[k * d:(k + 1) * d]
        self.params[6][...] = numpy(mha.out_proj.weight, (d, d)).T
        self.params[7][...] = numpy(mha.out_proj.bias, (d,))
        return self


# ---------------------------------------------------------------- why √d_k
def softmax_jacobian_norm(p: np.ndarray) -> np.ndarray:
    """How much gradient a softmax passes back: the norm of its Jacobian. Taught in lesson 04, section 2.

    Frobenius norm of the softmax Jacobian diag(p) − p pᵀ for each distribution p (..., n):
    sqrt(Σp² − 2Σp³ + (Σp²)²). It is largest for flat p and goes to 0 as p becomes one-hot,
    which is why a saturated softmax passes almost no gradient back."""
    s2 = np.sum(p ** 2, axis=-1)
    return np.sqrt(np.maximum(s2 - 2 * np.sum(p ** 3, axis=-1) + s2 ** 2, 0.0))


def dot_product_statistics(d_k: int, n_keys: int, rng: np.random.Generator, n_queries: int = 2000):
    """Measure what scaling does for random q, k with independent N(0, 1) entries. Taught in lesson 04, section 2.

    Returns a dict with the variance of q·k (theory: d_k) and of q·k/√d_k (theory: 1),
    and, for softmax over ``n_keys`` keys, the mean largest weight and the mean norm of
    the softmax Jacobian (how much gradient flows back), unscaled vs scaled.
    """
    q = rng.standard_normal((n_queries, d_k))
    k = rng.standard_normal((n_queries, n_keys, d_k))
    raw = np.einsum("nd,ntd->nt", q, k)
    out = {"d_k": d_k, "raw": raw, "var_raw": float(raw.var()), "var_scaled": float((raw / np.sqrt(d_k)).var())}
    for name, s in (("raw", raw), ("scaled", raw / np.sqrt(d_k))):
        p = softmax(s)
        out[f"max_weight_{name}"] = float(p.max(axis=-1).mean())
        out[f"jacobian_{name}"] = float(softmax_jacobian_norm(p).mean())
    return out


