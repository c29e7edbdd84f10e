"""A small BERT-style encoder (:class:`TinyBert`) and its masked-LM loss with weight tying
(lesson 10)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from helpers.lib.checks import check_ids, check_mask, describe_offending
from helpers.lib.language_models import count_parameters
from helpers.lib.mlm import IGNORE


# ====================================================================== PyTorch: the encoder
@dataclass
class BertConfig:
    """The sizes of a :class:`TinyBert` (lesson 10 §2.5)."""

    vocab_size: int
    dim: int = 128
    n_layers: int = 4
    n_heads: int = 4
    ff_dim: int = 512
    max_len: int = 64
    n_segments: int = 2
    dropout: float = 0.1
    tie_weights: bool = True


class TinyBert(nn.Module):
    """A BERT-style encoder with a masked-LM head (lesson 10 §2.5): forward(ids (B, L),
    attention_mask (B, L) = ids != 0, segments (B, L) = 0) -> (B, L, dim)."""

    def __init__(self, cfg: BertConfig, pad_id: int = 0):
        super().__init__()
        self.cfg, self.pad_id = cfg, pad_id
        d = cfg.dim
        self.tok_emb = nn.Embedding(cfg.vocab_size, d)        # E, (V, d)
        self.pos_emb = nn.Embedding(cfg.max_len, d)            # learned positions
        self.seg_emb = nn.Embedding(cfg.n_segments, d)         # sentence A / B
        self.emb_norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(cfg.dropout)
        layer = nn.TransformerEncoderLayer(d, cfg.n_heads, cfg.ff_dim, cfg.dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layers, norm=nn.LayerNorm(d),
                                             enable_nested_tensor=False)
        # MLM head: transform, then project on the vocabulary
        self.head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d))
        self.out_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.out = None if cfg.tie_weights else nn.Linear(d, cfg.vocab_size, bias=False)
        for emb in (self.tok_emb, self.pos_emb, self.seg_emb):
            nn.init.normal_(emb.weight, std=0.02)

    def _check(self, ids, attention_mask, segments):
        ids = torch.as_tensor(ids)
        if ids.ndim != 2:
            raise ValueError(f"ids must have shape (B, L), got {tuple(ids.shape)}")
        check_ids(ids, self.cfg.vocab_size, "ids", "TinyBert", noun="token ids")
        if ids.shape[1] > self.cfg.max_len:
            raise ValueError(f"sequence length {ids.shape[1]} exceeds max_len={self.cfg.max_len}")
        if attention_mask is None:
            attention_mask = ids != self.pad_id
        attention_mask = check_mask(torch.as_tensor(attention_mask, device=ids.device),
                                    "attention_mask", "TinyBert", "a real token")
        if attention_mask.shape != ids.shape:
            raise ValueError(f"attention_mask has shape {tuple(attention_mask.shape)}, ids "
                             f"{tuple(ids.shape)}")
        if segments is None:
            segments = torch.zeros_like(ids)
        segments = torch.as_tensor(segments, device=ids.device)
        if segments.shape != ids.shape:
            raise ValueError(f"segments has shape {tuple(segments.shape)}, ids {tuple(ids.shape)}")
        check_ids(segments, self.cfg.n_segments, "segments", "TinyBert", noun="segment ids")
        return ids, attention_mask, segments

    def embed(self, ids, segments):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok_emb(ids) + self.pos_emb(pos)[None] + self.seg_emb(segments)
        return self.drop(self.emb_norm(x))

    def position_mask(self, length: int, device=None):
        """The (L, L) bool mask of the positions a query may not look at, or None (an encoder)."""
        return None

    def forward(self, ids, attention_mask=None, segments=None):
        ids, attention_mask, segments = self._check(ids, attention_mask, segments)
        mask = self.position_mask(ids.shape[1], ids.device)
        return self.encoder(self.embed(ids, segments), mask=mask,
                            src_key_padding_mask=~attention_mask, is_causal=mask is not None)

    def output_matrix(self) -> torch.Tensor:
        """The (V, d) matrix of the output projection: E itself when weights are tied."""
        return self.tok_emb.weight if self.out is None else self.out.weight

    def mlm_logits(self, hidden):
        """(..., d) contextual vectors -> (..., V) scores over the vocabulary."""
        return F.linear(self.head(hidden), self.output_matrix(), self.out_bias)

    @torch.no_grad()
    def layers_and_attention(self, ids, attention_mask=None, segments=None):
        """Every layer's vectors, hidden (n_layers + 1, B, L, d) (0: the embeddings), and
        attention weights (n_layers, B, heads, L, L), in eval mode."""
        ids, attention_mask, segments = self._check(ids, attention_mask, segments)
        pad = ~attention_mask
        mask = self.position_mask(ids.shape[1], ids.device)
        x = self.embed(ids, segments)
        hidden, attn = [x], []
        for layer in self.encoder.layers:
            h = layer.norm1(x)
            _, w = layer.self_attn(h, h, h, key_padding_mask=pad, attn_mask=mask, need_weights=True,
                                   average_attn_weights=False)
            attn.append(w)
            x = layer(x, src_mask=mask, src_key_padding_mask=pad, is_causal=mask is not None)
            hidden.append(x)
        hidden[-1] = self.encoder.norm(x)
        return torch.stack(hidden), torch.stack(attn)


def tying_saving(cfg: BertConfig) -> dict:
    """The parameters of the model with and without weight tying (lesson 10 §2.5)."""
    with torch.device("meta"):  # sizes only: nothing is allocated
        tied = count_parameters(TinyBert(BertConfig(**{**asdict(cfg), "tie_weights": True})))
        untied = count_parameters(TinyBert(BertConfig(**{**asdict(cfg), "tie_weights": False})))
    return {"tied": tied, "untied": untied, "saved": untied - tied,
            "V_times_d": cfg.vocab_size * cfg.dim, "saved_fraction": (untied - tied) / untied}


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The masked-LM loss over the masked positions (lesson 10 §2.3):
    ``−(1/|M|) Σ_{i∈M} log P(x_i | h_i)``, M the positions with ``labels != -100``; logits
    (..., V) float, labels (...) int64 -> scalar. Raises if nothing is masked."""
    labels = torch.as_tensor(labels)
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise TypeError(f"mlm_loss: labels must be integer token ids (or {IGNORE}), got dtype "
                        f"{labels.dtype}")
    if labels.shape != logits.shape[:-1]:
        raise ValueError(f"mlm_loss: labels must have the shape of logits without its last axis, "
                         f"{tuple(logits.shape[:-1])}, got {tuple(labels.shape)}")
    sel = labels != IGNORE
    n = int(sel.sum())
    if n == 0:
        raise ValueError("no masked positions in the batch: the MLM loss is undefined")
    V = logits.shape[-1]
    bad = sel & ((labels < 0) | (labels >= V))
    if bool(bad.any()):
        raise ValueError(f"mlm_loss: labels must be token ids in [0, {V}) (or {IGNORE}, ignored), "
                         "got "
                         + describe_offending(labels.cpu().numpy(), bad.cpu().numpy(), "labels"))
    logp = F.log_softmax(logits[sel].float(), dim=-1)
    return -logp.gather(1, labels[sel][:, None]).sum() / n


def masked_lm_loss(model: TinyBert, inputs, labels, attention_mask) -> torch.Tensor:
    """The MLM loss of a batch, only its masked positions projected to the vocabulary
    (lesson 10 §3)."""
    h = model(inputs, attention_mask)
    sel = labels != IGNORE
    return mlm_loss(model.mlm_logits(h[sel]), labels[sel])
