"""A small decoder-only Transformer language model in PyTorch and its LSTM baseline (lesson 04):
ids (B, T) -> logits (B, T, V), initial weights from an explicit ``seed``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from helpers.infra.seeding import choose_device
from helpers.lib.checks import check_ids
from helpers.lib.positions import sinusoidal_encoding


# ---------------------------------------------------------------- the model
@dataclass
class TransformerConfig:
    """The sizes of a :class:`DecoderLM` (lesson 04 §8): norm 'pre' (GPT-2) or 'post' (the
    original); positions 'learned', 'sinusoidal' or 'rope'; d_ff 4·d_model unless given."""

    vocab_size: int
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int | None = None
    max_len: int = 128
    norm: str = "pre"
    positions: str = "learned"

    def __post_init__(self):
        self.d_ff = 4 * self.d_model if self.d_ff is None else self.d_ff
        if self.n_heads < 1 or self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.norm not in ("pre", "post"):
            raise ValueError(f"norm must be 'pre' or 'post', got {self.norm!r}")
        if self.positions not in ("learned", "sinusoidal", "rope"):
            raise ValueError(f"positions: learned, sinusoidal or rope, got {self.positions!r}")
        if self.positions == "rope" and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"RoPE needs an even head width, got {self.d_model // self.n_heads}")


def rope_torch(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoPE in PyTorch, as :func:`helpers.lib.positions.apply_rope` (lesson 04 §6): on (..., T, d),
    the pair (x_2i, x_2i+1) at position m rotated by m·base^(−2i/d)."""
    T, d = x.shape[-2], x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, device=x.device, dtype=torch.float64) / d)
    ang = torch.arange(T, device=x.device, dtype=torch.float64)[:, None] * theta[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class CausalSelfAttention(nn.Module):
    """Causal multi-head self-attention with PyTorch's fused kernel, (B, T, d) -> (B, T, d)
    (lesson 04 §8)."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.h, self.d = cfg.n_heads, cfg.d_model
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.rope = cfg.positions == "rope"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape
        q, k, v = (t.view(B, T, self.h, d // self.h).transpose(1, 2)
                   for t in self.qkv(x).split(d, dim=-1))
        if self.rope:
            q, k = rope_torch(q), rope_torch(k)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, d))


class Block(nn.Module):
    """One Transformer block (lesson 04 §7). Pre-LN: x = x + Attn(LN1(x)); x = x + FFN(LN2(x)).
    Post-LN (the original 2017 order): x = LN1(x + Attn(x)); x = LN2(x + FFN(x))."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.pre = cfg.norm == "pre"
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ff = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(),
                                nn.Linear(cfg.d_ff, cfg.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x + self.attn(self.ln1(x))
            return x + self.ff(self.ln2(x))
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ff(x))


def _init_weights(module: nn.Module) -> None:
    """GPT-style initialisation: N(0, 0.02) weights, zero biases, LayerNorm at identity."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


class DecoderLM(nn.Module):
    """A decoder-only Transformer language model (lesson 04 §8): embeddings + positions ->
    blocks -> (final LayerNorm for Pre-LN) -> logits (B, T, V); position t sees tokens 0..t."""

    def __init__(self, cfg: TransformerConfig, seed: int = 0):
        super().__init__()
        self.cfg = cfg
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
            learned = cfg.positions == "learned"
            self.pos = nn.Embedding(cfg.max_len, cfg.d_model) if learned else None
            self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
            self.ln_f = nn.LayerNorm(cfg.d_model) if cfg.norm == "pre" else nn.Identity()
            self.head = nn.Linear(cfg.d_model, cfg.vocab_size)
            _init_weights(self)
        if cfg.positions == "sinusoidal":
            pe = torch.tensor(sinusoidal_encoding(cfg.max_len, cfg.d_model), dtype=torch.float32)
            self.register_buffer("pe", pe, persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.ndim != 2:
            raise ValueError(f"DecoderLM expects token ids of shape (B, T), got {tuple(ids.shape)}")
        check_ids(ids, self.cfg.vocab_size, "ids", "DecoderLM.forward", noun="token ids")
        T = ids.shape[1]
        if T > self.cfg.max_len:
            raise ValueError(f"sequence length {T} exceeds this model's max_len={self.cfg.max_len}")
        x = self.tok(ids)
        if self.pos is not None:
            x = x + self.pos(torch.arange(T, device=ids.device))
        elif self.cfg.positions == "sinusoidal":
            x = x + self.pe[:T]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class LSTMLM(nn.Module):
    """The recurrent baseline: embedding -> torch.nn.LSTM -> linear, (B, T) -> (B, T, V)
    (lesson 04 §10)."""

    def __init__(self, vocab_size: int, emb_dim: int = 64, hidden: int = 256, num_layers: int = 1,
                 seed: int = 0):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.embed = nn.Embedding(vocab_size, emb_dim)
            self.lstm = nn.LSTM(emb_dim, hidden, num_layers=num_layers, batch_first=True)
            self.head = nn.Linear(hidden, vocab_size)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.ndim != 2:
            raise ValueError(f"LSTMLM expects token ids of shape (B, T), got {tuple(ids.shape)}")
        check_ids(ids, self.embed.num_embeddings, "ids", "LSTMLM.forward", noun="token ids")
        out, _ = self.lstm(self.embed(ids))
        return self.head(out)


def block_parameter_count(d_model: int, d_ff: int | None = None) -> dict[str, int]:
    """The parameters of one block by part (lesson 04 §7): attention 4(d² + d), feed-forward
    2·d·d_ff + d_ff + d, two LayerNorms 4d; 12d² + 13d in all with d_ff = 4d."""
    d_ff = 4 * d_model if d_ff is None else d_ff
    parts = {"attention": 4 * (d_model * d_model + d_model),
             "feed_forward": 2 * d_model * d_ff + d_ff + d_model,
             "layer_norms": 4 * d_model}
    parts["total"] = sum(parts.values())
    return parts


# ---------------------------------------------------------------- evaluation and generation
@torch.no_grad()
def evaluate_lm(model: nn.Module, ids: np.ndarray, seq_len: int = 128, max_tokens: int = 32768,
                batch_size: int = 64, device=None) -> float:
    """Mean next-token cross-entropy (nats) on the first ``max_tokens`` + 1 tokens of ``ids`` in
    non-overlapping windows of ``seq_len``, each starting with empty context (lesson 04 §10)."""
    device = choose_device(device) if not isinstance(device, torch.device) else device
    n = min(len(ids) - 1, max_tokens) // seq_len
    if n < 1:
        raise ValueError(f"need more than {seq_len} tokens to evaluate, got {len(ids)}")
    x = torch.as_tensor(ids[: n * seq_len].reshape(n, seq_len), device=device)
    y = torch.as_tensor(ids[1: n * seq_len + 1].reshape(n, seq_len), device=device)
    was = model.training
    model.eval()
    total = 0.0
    for s in range(0, n, batch_size):
        logits = model(x[s:s + batch_size])
        total += F.cross_entropy(logits.flatten(0, 1), y[s:s + batch_size].flatten(),
                                 reduction="sum").item()
    model.train(was)
    return total / (n * seq_len)
