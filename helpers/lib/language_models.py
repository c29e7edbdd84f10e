"""Neural language-model pieces shared by the lessons: perplexity, parameter
tables, and the feed-forward (Bengio-style) language model of lesson 01."""
from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from torch import nn

from helpers.lib.checks import check_ids


def perplexity(mean_nll: float) -> float:
    """Perplexity, exp(mean negative log-likelihood in nats). Taught in lesson 01, section 10.

    exp(mean negative log-likelihood in nats): the effective number of equally likely
    next words the model hesitates between. Above about 709.78 nats it exceeds the largest
    float64: the result is inf, with a RuntimeWarning saying so (a diverged run)."""
    try:
        if isinstance(mean_nll, (bool, str, bytes)):
            raise TypeError
        mean_nll = float(mean_nll)
    except (TypeError, ValueError):
        raise TypeError(f"perplexity: mean_nll must be one number (nats), got {type(mean_nll).__name__} "
                        f"{mean_nll!r}") from None
    if math.isnan(mean_nll) or mean_nll < 0:
        raise ValueError(f"perplexity: the mean negative log-likelihood must be a number >= 0, got {mean_nll} "
                         "(nan: did training diverge?)")
    try:
        return float(math.exp(mean_nll))
    except OverflowError:
        warnings.warn(f"perplexity: a mean NLL of {mean_nll} nats gives a perplexity of e^{mean_nll}, beyond the "
                      "largest float64 (about e^709.78): returning inf. A loss this large means the model "
                      "diverged (try a smaller learning rate)", RuntimeWarning, stacklevel=2)
        return math.inf


def parameter_table(module: nn.Module) -> list[tuple[str, tuple[int, ...], int]]:
    """(name, shape, count) for every parameter of ``module``, in definition order. Taught in lesson 01, section 10."""
    return [(name, tuple(p.shape), p.numel()) for name, p in module.named_parameters()]


class FeedForwardLM(nn.Module):
    """P(w_i | w_{i-n}, ..., w_{i-1}) with a fixed window of n previous words. Taught in lesson 01, section 10.

    ids (B, n) -> embeddings (B, n, d) -> concatenated (B, n*d) -> tanh hidden (B, h)
    -> logits over the vocabulary (B, V). ``dropout`` (default 0: none) zeroes units of the
    concatenated embeddings and of the hidden layer in training mode only (inverted dropout,
    lesson 01 section 6); it draws from torch's global generator, so seed it for a repeatable run.
    """

    def __init__(self, vocab_size: int, context: int = 3, emb_dim: int = 64, hidden: int = 128,
                 dropout: float = 0.0):
        super().__init__()
        if not 0 <= dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.context = context
        self.drop = nn.Dropout(dropout)
        self.embed = nn.Embedding(vocab_size, emb_dim)       # W1: the input embeddings
        self.hidden = nn.Linear(context * emb_dim, hidden)   # W2, b1
        self.out = nn.Linear(hidden, vocab_size)             # W3 (+ bias): output embeddings

    def forward(self, ctx: torch.Tensor) -> torch.Tensor:
        if ctx.ndim != 2 or ctx.shape[1] != self.context:
            raise ValueError(f"expected context ids of shape (B, {self.context}), got {tuple(ctx.shape)}")
        check_ids(ctx, self.embed.num_embeddings, "ctx", "FeedForwardLM.forward", noun="token ids")
        x = self.drop(self.embed(ctx).flatten(1))
        return self.out(self.drop(torch.tanh(self.hidden(x))))


@torch.no_grad()
def mean_nll(model: nn.Module, X: np.ndarray, y: np.ndarray, batch_size: int = 2048,
             device: str | torch.device = "cpu") -> float:
    """Mean cross-entropy (nats) of ``model(X[i]) -> y[i]`` over a whole split. Taught in lesson 01, section 10."""
    if len(X) != len(y):
        raise ValueError(f"mean_nll: {len(X)} contexts but {len(y)} targets")
    if len(y) == 0:
        raise ValueError("mean_nll: the split is empty; a mean over no tokens is undefined")
    out = getattr(model, "out", None)
    if isinstance(out, nn.Linear):
        check_ids(y, out.out_features, "y", "mean_nll", noun="token ids")
    was_training = model.training
    model.eval()
    total = 0.0
    for s in range(0, len(y), batch_size):
        xb = torch.as_tensor(X[s:s + batch_size], device=device)
        yb = torch.as_tensor(y[s:s + batch_size], device=device)
        total += nn.functional.cross_entropy(model(xb), yb, reduction="sum").item()
    model.train(was_training)
    return total / len(y)


def count_parameters(module: nn.Module) -> int:
    """Number of distinct trainable parameters (a tied matrix counts once). Taught in lesson 04, section 7."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
