"""A BERT-style encoder in NumPy: lesson 04's decoder blocks without the causal mask, in
:class:`helpers.lib.bert.TinyBert`'s architecture, with a hand-written backward (lesson 10 §3.3)."""
from __future__ import annotations

import numpy as np

from helpers.lib.attention import (
    MultiHeadAttention,
    mha_backward,
    mha_forward,
    scaled_dot_product_attention,
    softmax_attention_backward,
)
from helpers.lib.bert import TinyBert
from helpers.lib.checks import check_ids, check_mask
from helpers.lib.decoder import GELU, FeedForward
from helpers.lib.layers import Layer, LayerNorm, Linear, log_softmax
from helpers.lib.mlm import IGNORE

__all__ = ["EncoderBlock", "NumpyEncoder"]


def _numpy(t) -> np.ndarray:
    return t.detach().cpu().double().numpy()


def _copy_affine(ours: Layer, theirs, transpose: bool) -> None:
    """``ours.params = [W or γ, b or β]`` from a torch Linear (W stored (out, in)) or LayerNorm."""
    W = _numpy(theirs.weight)
    ours.params[0][...], ours.params[1][...] = W.T if transpose else W, _numpy(theirs.bias)


class EncoderBlock(Layer):
    """One Pre-LN encoder block, (B, L, d) -> (B, L, d) (lesson 10 §3.3): x = x + Attn(LN1(x),
    key_padding), x = x + FFN(LN2(x)); ``key_padding`` (B, L) True at real tokens."""

    def __init__(self, d: int, n_heads: int, d_ff: int, rng: np.random.Generator, dtype=np.float64,
                 attend=scaled_dot_product_attention, attend_backward=softmax_attention_backward,
                 mha_forward=mha_forward, mha_backward=mha_backward):
        super().__init__()
        self.ln1 = LayerNorm(d, dtype=dtype)
        self.attn = MultiHeadAttention(d, n_heads, rng, dtype, attend, attend_backward,
                                       mha_forward, mha_backward)
        self.ln2, self.ff = LayerNorm(d, dtype=dtype), FeedForward(d, d_ff, rng, dtype)
        self.parts = [self.ln1, self.attn, self.ln2, self.ff]
        self.params = [p for part in self.parts for p in part.params]
        self.grads = [g for part in self.parts for g in part.grads]

    def forward(self, x, key_padding=None):
        x = x + self.attn.forward(self.ln1.forward(x), key_padding=key_padding)
        return self.remember(x + self.ff.forward(self.ln2.forward(x)))

    def backward(self, dout):
        self.check_dout(dout=dout)
        dx = dout + self.ln2.backward(self.ff.backward(dout))
        return dx + self.ln1.backward(self.attn.backward(dx))

    def load_torch(self, layer) -> "EncoderBlock":
        """Copy the weights of a ``torch.nn.TransformerEncoderLayer`` (Pre-LN, batch first);
        PyTorch's Linear stores W as (out, in), ours as (in, out)."""
        self.attn.load_torch(layer.self_attn)
        for ours, theirs, transpose in ((self.ln1, layer.norm1, False),
                                        (self.ln2, layer.norm2, False),
                                        (self.ff.fc1, layer.linear1, True),
                                        (self.ff.fc2, layer.linear2, True)):
            _copy_affine(ours, theirs, transpose)
        return self


class NumpyEncoder:
    """A TinyBert in NumPy, forward and backward (lesson 10 §3.3): forward(ids (B, L),
    attention_mask, segments) -> (B, L, d); masked_lm_step(ids, labels, attention_mask) -> the
    masked-LM loss, with its gradients in ``grads``; :meth:`from_torch` loads a TinyBert."""

    def __init__(self, vocab_size: int, dim: int, n_layers: int, n_heads: int, ff_dim: int,
                 max_len: int, n_segments: int = 2, pad_id: int = 0, seed: int = 0,
                 dtype=np.float64, attend=scaled_dot_product_attention,
                 attend_backward=softmax_attention_backward, mha_forward=mha_forward,
                 mha_backward=mha_backward):
        rng = np.random.default_rng(seed)
        self.vocab_size, self.max_len = vocab_size, max_len
        self.n_segments, self.pad_id = n_segments, pad_id
        self.E = rng.normal(0.0, 0.02, (vocab_size, dim)).astype(dtype)      # also the output
        self.P = rng.normal(0.0, 0.02, (max_len, dim)).astype(dtype)         # learned positions
        self.S = rng.normal(0.0, 0.02, (n_segments, dim)).astype(dtype)      # sentence A / B
        self.emb_norm = LayerNorm(dim, dtype=dtype)
        self.blocks = [EncoderBlock(dim, n_heads, ff_dim, rng, dtype, attend, attend_backward,
                                    mha_forward, mha_backward) for _ in range(n_layers)]
        self.final_norm = LayerNorm(dim, dtype=dtype)
        self.head, self.head_act = Linear(dim, dim, rng, dtype), GELU()
        self.head_norm = LayerNorm(dim, dtype=dtype)
        self.out_bias = np.zeros(vocab_size, dtype)
        self.params = ([self.E, self.P, self.S] + self.emb_norm.params
                       + [p for b in self.blocks for p in b.params]
                       + self.final_norm.params + self.head.params + self.head_norm.params
                       + [self.out_bias])
        self.grads = ([np.zeros_like(self.E), np.zeros_like(self.P), np.zeros_like(self.S)]
                      + self.emb_norm.grads + [g for b in self.blocks for g in b.grads]
                      + self.final_norm.grads + self.head.grads + self.head_norm.grads
                      + [np.zeros_like(self.out_bias)])

    def forward(self, ids, attention_mask=None, segments=None):
        ids = check_ids(np.asarray(ids), self.vocab_size, "ids", "NumpyEncoder", noun="token ids")
        if ids.ndim != 2 or ids.shape[1] > self.max_len:
            raise ValueError(f"NumpyEncoder: ids must be (B, L) with L <= {self.max_len}, "
                             f"got shape {ids.shape}")
        mask = ids != self.pad_id if attention_mask is None else check_mask(
            attention_mask, "attention_mask", "NumpyEncoder", "a real token")
        segments = np.zeros_like(ids) if segments is None else check_ids(
            np.asarray(segments), self.n_segments, "segments", "NumpyEncoder", noun="segment ids")
        if mask.shape != ids.shape or segments.shape != ids.shape:
            raise ValueError(f"NumpyEncoder: attention_mask {mask.shape} and segments "
                             f"{segments.shape} must have the shape of ids {ids.shape}")
        self.ids, self.segments = ids, segments
        x = self.E[ids] + self.P[:ids.shape[1]][None] + self.S[segments]     # (B, L, d)
        x = self.emb_norm.forward(x)
        for block in self.blocks:
            x = block.forward(x, key_padding=mask)
        return self.final_norm.forward(x)

    def mlm_logits(self, hidden):
        """(..., d) contextual vectors -> (..., V) scores: the head, then h Eᵀ + b_out."""
        shape = hidden.shape
        h = self.head_act.forward(self.head.forward(hidden.reshape(-1, shape[-1])))
        h = self.head_norm.forward(h)
        return (h @ self.E.T + self.out_bias).reshape(*shape[:-1], -1)

    def _picked(self, ids, labels):
        labels = np.asarray(labels)
        if labels.shape != np.shape(ids):
            raise ValueError(f"NumpyEncoder: labels {labels.shape} must have the shape of ids "
                             f"{np.shape(ids)}")
        picked = labels != IGNORE
        if not picked.any():
            raise ValueError("NumpyEncoder: labels are all -100 (no masked positions): "
                             "the loss is undefined")
        check_ids(labels[picked], self.vocab_size, "labels", "NumpyEncoder.masked_lm_loss",
                  noun="token ids")
        return picked, labels[picked]

    def masked_lm_loss(self, ids, labels, attention_mask=None) -> float:
        picked, y = self._picked(ids, labels)
        logp = log_softmax(self.mlm_logits(self.forward(ids, attention_mask)[picked]))
        return float(-np.mean(logp[np.arange(len(y)), y]))

    def masked_lm_step(self, ids, labels, attention_mask=None) -> float:
        """The masked-LM loss of a batch, with the gradient of every parameter in ``self.grads``;
        dlogits = (P − Y)/|M| at the masked positions, the tied table getting both gradients."""
        picked, y = self._picked(ids, labels)
        hidden = self.forward(ids, attention_mask)
        g = self.head_norm.forward(self.head_act.forward(self.head.forward(hidden[picked])))
        logp = log_softmax(g @ self.E.T + self.out_bias)
        rows = np.arange(len(y))
        dlogits = np.exp(logp)
        dlogits[rows, y] -= 1
        dlogits /= len(y)
        dE, dP, dS = self.grads[:3]
        dE[...] = dlogits.T @ g                                          # output use of E
        self.grads[-1][...] = dlogits.sum(0)
        dh = self.head.backward(self.head_act.backward(self.head_norm.backward(dlogits @ self.E)))
        dx = np.zeros_like(hidden)
        dx[picked] = dh
        dx = self.final_norm.backward(dx)
        for block in reversed(self.blocks):
            dx = block.backward(dx)
        dx = self.emb_norm.backward(dx)
        np.add.at(dE, self.ids, dx)                                      # input use of E
        dP[...] = 0
        dP[:dx.shape[1]] = dx.sum(0)
        dS[...] = 0
        np.add.at(dS, self.segments, dx)
        return float(-np.mean(logp[rows, y]))

    @classmethod
    def from_torch(cls, model: TinyBert, dtype=np.float64, attend=scaled_dot_product_attention,
                   attend_backward=softmax_attention_backward) -> "NumpyEncoder":
        """A NumpyEncoder holding the weights of ``model``, a tied TinyBert (each W transposed)."""
        if not isinstance(model, TinyBert) or model.out is not None:
            raise ValueError("NumpyEncoder.from_torch needs a TinyBert with tied weights "
                             "(cfg.tie_weights=True)")
        c = model.cfg
        out = cls(c.vocab_size, c.dim, c.n_layers, c.n_heads, c.ff_dim, c.max_len, c.n_segments,
                  model.pad_id, dtype=dtype, attend=attend, attend_backward=attend_backward)
        out.E[...], out.P[...], out.S[...] = (_numpy(e.weight) for e in (
            model.tok_emb, model.pos_emb, model.seg_emb))
        for block, layer in zip(out.blocks, model.encoder.layers, strict=True):
            block.load_torch(layer)
        for ours, theirs, transpose in ((out.emb_norm, model.emb_norm, False),
                                        (out.head, model.head[0], True),
                                        (out.final_norm, model.encoder.norm, False),
                                        (out.head_norm, model.head[2], False)):
            _copy_affine(ours, theirs, transpose)
        out.out_bias[...] = _numpy(model.out_bias)
        return out
