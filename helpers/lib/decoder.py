"""A decoder-only Transformer language model in NumPy, stacked from the course's layers, with
:class:`helpers.lib.transformer.DecoderLM`'s architecture (lesson 04)."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from helpers.lib.attention import (
    MultiHeadAttention,
    mha_backward,
    mha_forward,
    scaled_dot_product_attention,
    softmax_attention_backward,
)
from helpers.lib.layers import Embedding, Layer, LayerNorm, Linear, SoftmaxCrossEntropy, softmax
from helpers.lib.positions import LearnedPositions, rotary, sinusoidal_encoding


def layer_norm_backward(dy, x, gamma, eps: float = 1e-5):
    """LayerNorm's backward pass as a function: (dx, dγ, dβ) for x, dy (..., d), γ (d,)
    (lesson 04 §7); what :meth:`helpers.lib.layers.LayerNorm.backward` computes."""
    layer = LayerNorm(np.shape(x)[-1], eps, dtype=np.result_type(x, np.float32))
    layer.params[0][...] = gamma
    layer.forward(x)
    dx = layer.backward(dy)
    return dx, layer.grads[0].copy(), layer.grads[1].copy()


class GELU(Layer):
    """GELU(x) = x·Φ(x), Φ the standard normal CDF, as ``torch.nn.GELU()`` (lesson 04 §8).
    Backward: d/dx [x Φ(x)] = Φ(x) + x φ(x), φ the normal density."""

    def forward(self, x):
        self.x, self.cdf = x, 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
        return self.remember(x * self.cdf)

    def backward(self, dout):
        self.check_dout(dout=dout)
        pdf = np.exp(-0.5 * self.x * self.x) / math.sqrt(2.0 * math.pi)
        return dout * (self.cdf + self.x * pdf)


class FeedForward(Layer):
    """Linear(d, d_ff) -> GELU -> Linear(d_ff, d) at every position (lesson 04 §8)."""

    def __init__(self, d: int, d_ff: int, rng: np.random.Generator, dtype=np.float32):
        super().__init__()
        self.fc1, self.act = Linear(d, d_ff, rng, dtype), GELU()
        self.fc2 = Linear(d_ff, d, rng, dtype)
        self.params, self.grads = self.fc1.params + self.fc2.params, self.fc1.grads + self.fc2.grads

    def forward(self, x):
        B, T, d = x.shape
        h = self.act.forward(self.fc1.forward(x.reshape(B * T, d)))      # every position is a row
        return self.remember(self.fc2.forward(h).reshape(B, T, d))

    def backward(self, dout):
        self.check_dout(dout=dout)
        B, T, d = dout.shape
        dh = self.act.backward(self.fc2.backward(dout.reshape(B * T, d)))
        return self.fc1.backward(dh).reshape(B, T, d)


class DecoderBlock(Layer):
    """One decoder block, (B, T, d) -> (B, T, d) (lesson 04 §8): Pre-LN x = x + Attn(LN1(x)),
    x = x + FFN(LN2(x)); Post-LN x = LN1(x + Attn(x)), x = LN2(x + FFN(x)); Attn causal."""

    def __init__(self, d: int, n_heads: int, d_ff: int, rng: np.random.Generator, norm: str = "pre",
                 rope: bool = False, dtype=np.float32, layer_norm=LayerNorm,
                 attend=scaled_dot_product_attention, attend_backward=softmax_attention_backward,
                 mha_forward=mha_forward, mha_backward=mha_backward):
        super().__init__()
        if rope:
            attend, attend_backward = rotary(attend, attend_backward)
        self.pre = norm == "pre"
        self.ln1, self.ln2 = layer_norm(d, dtype=dtype), layer_norm(d, dtype=dtype)
        self.attn = MultiHeadAttention(d, n_heads, rng, dtype, attend, attend_backward,
                                       mha_forward, mha_backward)
        self.ff = FeedForward(d, d_ff, rng, dtype)
        parts = [self.ln1, self.attn, self.ln2, self.ff]
        self.params = [p for part in parts for p in part.params]
        self.grads = [g for part in parts for g in part.grads]

    def forward(self, x):
        if self.pre:
            x = x + self.attn.forward(self.ln1.forward(x), causal=True)
            return self.remember(x + self.ff.forward(self.ln2.forward(x)))
        x = self.ln1.forward(x + self.attn.forward(x, causal=True))
        return self.remember(self.ln2.forward(x + self.ff.forward(x)))

    def backward(self, dout):
        self.check_dout(dout=dout)
        if self.pre:
            dx = dout + self.ln2.backward(self.ff.backward(dout))
            return dx + self.ln1.backward(self.attn.backward(dx))
        d = self.ln2.backward(dout)
        d = self.ln1.backward(d + self.ff.backward(d))
        return d + self.attn.backward(d)


BLOCK_NAMES = ["ln1.gamma", "ln1.beta", "attn.W_Q", "attn.b_Q", "attn.W_K", "attn.b_K", "attn.W_V",
               "attn.b_V", "attn.W_O", "attn.b_O", "ln2.gamma", "ln2.beta", "ff.W_1", "ff.b_1",
               "ff.W_2", "ff.b_2"]


class NumpyDecoderLM(Layer):
    """A decoder-only Transformer language model in NumPy (lesson 04 §8): forward(ids (B, T)) ->
    logits (B, T, V), position t seeing tokens 0..t; loss(ids, targets) -> mean cross-entropy
    (nats), then backward() fills ``grads``. Settings as a TransformerConfig."""

    def __init__(self, vocab_size: int, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
                 d_ff: int | None = None, max_len: int = 64, norm: str = "pre",
                 positions: str = "learned", seed: int = 0, dtype=np.float32, layer_norm=LayerNorm,
                 attend=scaled_dot_product_attention, attend_backward=softmax_attention_backward,
                 mha_forward=mha_forward, mha_backward=mha_backward):
        super().__init__()
        if positions not in ("learned", "sinusoidal", "rope", None):
            raise ValueError(f"positions must be 'learned', 'sinusoidal', 'rope' or None (no "
                             f"position information), got {positions!r}")
        if norm not in ("pre", "post"):
            raise ValueError(f"norm must be 'pre' or 'post', got {norm!r}")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        if positions == "rope" and (d_model // n_heads) % 2:
            raise ValueError(f"RoPE rotates pairs of features: the head width "
                             f"{d_model // n_heads} must be even")
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.max_len = max_len
        rng = np.random.default_rng(seed)
        self.tok = Embedding(vocab_size, d_model, rng, dtype=dtype, scale=0.02)
        self.pos = LearnedPositions(max_len, d_model, rng) if positions == "learned" else None
        if self.pos is not None:                    # the table in the model's dtype
            self.pos.params[0] = self.pos.params[0].astype(dtype)
            self.pos.grads[0] = np.zeros_like(self.pos.params[0])
        self.pe = (sinusoidal_encoding(max_len, d_model).astype(dtype)
                   if positions == "sinusoidal" else None)
        self.blocks = [DecoderBlock(d_model, n_heads, d_ff, rng, norm, positions == "rope", dtype,
                                    layer_norm, attend, attend_backward, mha_forward, mha_backward)
                       for _ in range(n_layers)]
        self.ln_f = layer_norm(d_model, dtype=dtype) if norm == "pre" else None
        self.head = Linear(d_model, vocab_size, rng, dtype)
        layers = [x for x in (self.tok, self.pos, *self.blocks, self.ln_f, self.head) if x]
        self.params = [p for layer in layers for p in layer.params]
        self.grads = [g for layer in layers for g in layer.grads]
        self.names = (["tok.E"] + (["pos.P"] if self.pos else [])
                      + [f"block{i}.{n}" for i in range(n_layers) for n in BLOCK_NAMES]
                      + (["ln_f.gamma", "ln_f.beta"] if self.ln_f else []) + ["head.W", "head.b"])
        for p in self.params:                       # GPT-2's initialisation (as DecoderLM's)
            if p.ndim == 2:
                p[...] = rng.normal(0.0, 0.02, p.shape)
        self.criterion = SoftmaxCrossEntropy()

    def forward(self, ids):
        ids = np.asarray(ids)
        if ids.ndim != 2 or not (ids.shape[0] >= 1 and 1 <= ids.shape[1] <= self.max_len):
            raise ValueError(f"NumpyDecoderLM expects token ids of shape (B, T), B >= 1 and 1 <= T "
                             f"<= max_len={self.max_len} (not an empty batch), got {ids.shape}")
        B, T = ids.shape
        x = self.tok.forward(ids)                                   # (B, T, d)
        if self.pos is not None:
            x = x + self.pos.forward(T)                             # added to every sequence
        elif self.pe is not None:
            x = x + self.pe[:T]
        for block in self.blocks:
            x = block.forward(x)
        if self.ln_f is not None:
            x = self.ln_f.forward(x)
        self._shape = x.shape
        return self.remember(self.head.forward(x.reshape(B * T, -1)).reshape(B, T, -1))

    def loss(self, ids, targets) -> float:
        """Mean next-token cross-entropy (nats) of ``targets`` (B, T) given ``ids`` (B, T)."""
        logits, targets = self.forward(ids), np.asarray(targets)
        if targets.shape != logits.shape[:2]:
            raise ValueError(f"targets must have the shape of ids {logits.shape[:2]}, got "
                             f"{targets.shape}")
        return self.criterion.forward(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def backward(self, dlogits=None):
        if dlogits is None:                          # from the last loss()
            dlogits = self.criterion.backward().reshape(self._shape[:2] + (-1,))
        self.check_dout(dlogits=dlogits)
        B, T, V = dlogits.shape
        dx = self.head.backward(dlogits.reshape(B * T, V)).reshape(self._shape)
        if self.ln_f is not None:
            dx = self.ln_f.backward(dx)
        for block in reversed(self.blocks):
            dx = block.backward(dx)
        if self.pos is not None:
            self.pos.backward(dx)
        self.tok.backward(dx)
        return None

    def next_probs(self, ids, temperature: float = 1.0) -> np.ndarray:
        """P(next token | ids (T,)) = softmax(logits / temperature) from the last max_len tokens."""
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        ids = np.asarray(ids)[-self.max_len:]
        return softmax(self.forward(ids[None])[0, -1].astype(np.float64) / temperature)

    def generate(self, prompt_ids, n_new: int, temperature: float = 1.0, seed: int = 0):
        """``prompt_ids`` (1-D) and ``n_new`` tokens drawn one at a time from :meth:`next_probs`."""
        ids = [int(i) for i in np.asarray(prompt_ids).ravel()]
        if not ids:
            raise ValueError("generation needs a prompt of at least one token")
        rng = np.random.default_rng(seed)
        for _ in range(n_new):
            p = self.next_probs(np.array(ids), temperature)
            ids.append(int(rng.choice(len(p), p=p)))
        return np.array(ids)

    @classmethod
    def from_torch(cls, model, dtype=np.float64, **parts) -> "NumpyDecoderLM":
        """A NumpyDecoderLM holding the weights of a :class:`helpers.lib.transformer.DecoderLM`
        (PyTorch's W (out, in) transposed; qkv split into W_Q, W_K, W_V)."""
        c = model.cfg
        out = cls(c.vocab_size, c.d_model, c.n_heads, c.n_layers, c.d_ff, c.max_len, c.norm,
                  c.positions, dtype=dtype, **parts)
        d = c.d_model
        rows = [(model.tok.weight, False)] + ([(model.pos.weight, False)] if model.pos else [])
        for b in model.blocks:
            W, bias = b.attn.qkv.weight, b.attn.qkv.bias
            rows += [(b.ln1.weight, False), (b.ln1.bias, False)]
            for k in range(3):                          # W_Q, b_Q, W_K, b_K, W_V, b_V
                rows += [(W[k * d:(k + 1) * d], True), (bias[k * d:(k + 1) * d], False)]
            rows += [(b.attn.proj.weight, True), (b.attn.proj.bias, False), (b.ln2.weight, False),
                     (b.ln2.bias, False), (b.ff[0].weight, True), (b.ff[0].bias, False),
                     (b.ff[2].weight, True), (b.ff[2].bias, False)]
        if c.norm == "pre":
            rows += [(model.ln_f.weight, False), (model.ln_f.bias, False)]
        rows += [(model.head.weight, True), (model.head.bias, False)]
        for p, (tensor, transpose) in zip(out.params, rows, strict=True):
            w = tensor.detach().cpu().double().numpy()
            p[...] = w.T if transpose else w
        return out
