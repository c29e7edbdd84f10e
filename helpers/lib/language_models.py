"""Pieces every language-model lesson uses: perplexity, the unigram floor, parameter counts, and
sampling text one token at a time."""
from __future__ import annotations

import math
import warnings
from typing import Callable

import numpy as np
from torch import nn

from helpers.lib.checks import check_class_ids, check_ids


def perplexity(mean_nll: float) -> float:
    """exp(mean NLL in nats), how many next words the model hesitates between (lesson 01 §8)."""
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
    if mean_nll > 709.78:
        warnings.warn(f"perplexity: a mean NLL of {mean_nll} nats gives a perplexity beyond the "
                      "largest float64: returning inf. The model diverged (try a smaller "
                      "learning rate)", RuntimeWarning, stacklevel=2)
        return math.inf
    return math.exp(mean_nll)


def unigram_loss(train_ids: np.ndarray, valid_ids: np.ndarray, vocab_size: int) -> float:
    """Held-out loss (nats per token) of the add-one unigram model, the floor (lesson 04 §8)."""
    for name, ids in (("train_ids", train_ids), ("valid_ids", valid_ids)):
        if len(ids) == 0:
            raise ValueError(f"unigram_loss: {name} is empty")
        check_class_ids(ids, vocab_size, "unigram_loss", name)
    counts = np.bincount(train_ids, minlength=vocab_size) + 1.0
    return float(-np.log(counts / counts.sum())[valid_ids].mean())


def parameter_table(module: nn.Module) -> list[tuple[str, tuple[int, ...], int]]:
    """(name, shape, count) of every parameter of a PyTorch ``module`` (lesson 01 §9)."""
    return [(name, tuple(p.shape), p.numel()) for name, p in module.named_parameters()]


def count_parameters(module: nn.Module) -> int:
    """The number of distinct trainable parameters; a tied matrix counts once (lesson 04 §7)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def sample_text(next_probs: Callable[[np.ndarray], np.ndarray], start_ids, n_tokens: int,
                rng: np.random.Generator, temperature: float = 1.0, banned=()) -> list[int]:
    """Draw ``n_tokens`` ids one by one, sliding a window as long as ``start_ids`` (lesson 01 §9),
    from softmax(log ``next_probs(window (1, n))`` / temperature); ``banned`` never."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    window = [int(i) for i in start_ids]
    if not window:
        raise ValueError("sample_text: start_ids is empty; give the window of ids to start from")
    out = []
    for _ in range(int(n_tokens)):
        p = np.asarray(next_probs(np.array([window])), np.float64)[0]
        banned = check_ids(list(banned), len(p), "banned", "sample_text")
        with np.errstate(divide="ignore"):
            logp = np.log(p) / temperature
        logp[banned] = -np.inf
        if not np.isfinite(logp).any():
            raise ValueError("sample_text: every id is banned or has probability 0")
        q = np.exp(logp - logp.max())
        out.append(int(rng.choice(len(q), p=q / q.sum())))
        window = window[1:] + out[-1:]
    return out
