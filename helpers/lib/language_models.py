"""Pieces every language-model lesson uses: perplexity, the unigram floor, parameter tables, and
the feed-forward (Bengio-style) language model of lesson 01."""
from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from torch import nn

from helpers.lib.checks import check_ids
from helpers.lib.layers import check_class_ids


def perplexity(mean_nll: float) -> float:
    """Perplexity, exp(mean NLL in nats). Taught in lesson 01, section 10.

    The effective number of equally likely next words the model hesitates between. Above about
    709.78 nats it exceeds the largest float64: inf, with a RuntimeWarning (a diverged run)."""
    try:
        if isinstance(mean_nll, (bool, str, bytes)):
            raise TypeError
        mean_nll = float(mean_nll)
    except (TypeError, ValueError):
        raise TypeError(f"perplexity: mean_nll must be one number (nats), got "
                        f"{type(mean_nll).__name__} {mean_nll!r}") from None
    if math.isnan(mean_nll) or mean_nll < 0:
        raise ValueError(f"perplexity: the mean negative log-likelihood must be a number >= 0, got "
                         f"{mean_nll} (nan: did training diverge?)")
    try:
        return float(math.exp(mean_nll))
    except OverflowError:
        warnings.warn(f"perplexity: a mean NLL of {mean_nll} nats gives a perplexity of "
                      f"e^{mean_nll}, beyond the largest float64 (about e^709.78): returning inf. "
                      "A loss this large means the model diverged (try a smaller learning rate)",
                      RuntimeWarning, stacklevel=2)
        return math.inf


def unigram_loss(train_ids: np.ndarray, valid_ids: np.ndarray, vocab_size: int) -> float:
    """The held-out loss of the add-one unigram model. Taught in lesson 04, section 8.

    In nats per token: the model ignores context, the floor any language model must beat."""
    for name, ids in (("train_ids", train_ids), ("valid_ids", valid_ids)):
        if len(ids) == 0:
            raise ValueError(f"unigram_loss: {name} is empty")
        check_class_ids(ids, vocab_size, "unigram_loss", name)
    counts = np.bincount(train_ids, minlength=vocab_size) + 1.0
    logp = np.log(counts / counts.sum())
    return float(-logp[valid_ids].mean())


def parameter_table(module: nn.Module) -> list[tuple[str, tuple[int, ...], int]]:
    """(name, shape, count) of every parameter of ``module``. Taught in lesson 01, section 10."""
    return [(name, tuple(p.shape), p.numel()) for name, p in module.named_parameters()]


def count_parameters(module: nn.Module) -> int:
    """The number of distinct trainable parameters. Taught in lesson 04, section 7.

    A tied matrix counts once."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


class FeedForwardLM(nn.Module):
    """The feed-forward (Bengio-style) language model. Taught in lesson 01, section 10.

    P(w_i | w_{i-n} ... w_{i-1}), a fixed window of n previous words:
    ids (B, n) -> embeddings (B, n, d) -> concatenated (B, n·d) -> tanh hidden (B, h) -> logits
    (B, V). ``dropout`` zeroes units of the concatenated embeddings and of the hidden layer in
    training mode (inverted dropout, lesson 01 §6), drawing from torch's global generator."""

    def __init__(self, vocab_size: int, context: int = 3, emb_dim: int = 64, hidden: int = 128,
                 dropout: float = 0.0):
        super().__init__()
        if not 0 <= dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.context = context
        self.drop = nn.Dropout(dropout)
        self.embed = nn.Embedding(vocab_size, emb_dim)       # W1: the input embeddings
        self.hidden = nn.Linear(context * emb_dim, hidden)   # W2, b1
        self.out = nn.Linear(hidden, vocab_size)             # W3 (+ bias): the output embeddings

    def forward(self, ctx: torch.Tensor) -> torch.Tensor:
        if ctx.ndim != 2 or ctx.shape[1] != self.context:
            raise ValueError(f"expected context ids of shape (B, {self.context}), got "
                             f"{tuple(ctx.shape)}")
        check_ids(ctx, self.embed.num_embeddings, "ctx", "FeedForwardLM.forward", noun="token ids")
        x = self.drop(self.embed(ctx).flatten(1))
        return self.out(self.drop(torch.tanh(self.hidden(x))))
