"""Lesson 04 (self-attention and the Transformer): the parallel-vs-sequential timing and the
explorers' render functions.

Every ``render_*`` function returns ``(Figure, summary str)``; the notebook wraps them in
:class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from helpers.infra.plotting import heatmap, new_figure, set_labels
from helpers.infra.seeding import torch_generator
from helpers.lib.attention import dot_product_statistics
from helpers.lib.layers import softmax
from helpers.lib.transformer import (
    CharCorpus,
    DecoderLM,
    TransformerConfig,
    generate,
    next_token_probs,
    train_lm,
)


# ---------------------------------------------------------------- parallel training, sequential generation
@torch.no_grad()
def time_parallel_vs_sequential(model: DecoderLM, T: int, repeats: int = 3, seed: int = 0) -> dict[str, float]:
    """Seconds for (a) one forward pass over T tokens, which yields all T next-token
    predictions at once (what training does), and (b) T forward passes that grow the
    context one token at a time (what generation must do, no key/value cache).
    Best of ``repeats`` for (a)."""
    device = next(model.parameters()).device
    g = torch_generator(seed)
    ids = torch.randint(0, model.cfg.vocab_size, (1, T), generator=g).to(device)
    was = model.training
    model.eval()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        model(ids)
        best = min(best, time.perf_counter() - t0)
    t0 = time.perf_counter()
    for t in range(1, T + 1):
        model(ids[:, :t])
    seq = time.perf_counter() - t0
    model.train(was)
    return {"parallel_s": best, "sequential_s": seq, "ratio": seq / best}


# ---------------------------------------------------------------- explorer views
def render_scaling(d_k: int = 16, n_keys: int = 16, seed: int = 0):
    """Explorer view for √d_k: histograms of q·k with and without scaling, and the
    softmax of one query's scores both ways. Returns (figure, summary)."""
    st = dot_product_statistics(d_k, n_keys, np.random.default_rng(seed))
    fig, (ax1, ax2) = new_figure(ncols=2)
    raw = st["raw"].ravel()
    lim = max(4.0, float(np.percentile(np.abs(raw), 99.5)))
    bins = np.linspace(-lim, lim, 61)
    ax1.hist(raw, bins=bins, alpha=0.6, density=True, label="q·k")
    ax1.hist(raw / np.sqrt(d_k), bins=bins, alpha=0.6, density=True, label="q·k / √d_k")
    set_labels(ax1, f"dot products, d_k = {d_k}", "score", "density")
    ax1.legend()
    x = np.arange(n_keys)
    row = st["raw"][0]
    ax2.bar(x - 0.2, softmax(row), width=0.4, label="softmax(q·k)")
    ax2.bar(x + 0.2, softmax(row / np.sqrt(d_k)), width=0.4, label="softmax(q·k/√d_k)")
    set_labels(ax2, "attention weights of one query", "key index", "weight")
    ax2.set_ylim(0, 1)
    ax2.legend()
    summary = (f"d_k={d_k}: var(q·k)={st['var_raw']:.1f} (theory {d_k}), var(q·k/√d_k)={st['var_scaled']:.2f}; "
               f"mean max weight {st['max_weight_raw']:.2f} unscaled vs {st['max_weight_scaled']:.2f} scaled; "
               f"softmax Jacobian norm {st['jacobian_raw']:.3f} vs {st['jacobian_scaled']:.3f}")
    return fig, summary


def _char_label(c: str) -> str:
    """A visible tick label for a character: '␣' for a space, '↵' for a newline (a backslash
    escape would read as TeX), other invisible characters as their escape without the backslash."""
    if c == " ":
        return "␣"
    if c == "\n":
        return "↵"
    return c if c.isprintable() else repr(c)[2:-1]


def render_attention(model: DecoderLM, corpus: CharCorpus, text: str, head: int = 0, layer: int = 0):
    """Heat map of the attention weights of one layer and head on ``text`` (characters).
    Returns (figure, summary) with the mean distance attended to and the weight kept on
    the token itself."""
    cfg = model.cfg
    if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
        raise ValueError(f"layer must be in [0, {cfg.n_layers}) and head in [0, {cfg.n_heads}), got {layer}, {head}")
    ids = torch.as_tensor(corpus.encode(text), device=next(model.parameters()).device)
    W = model.attention_maps(ids)[layer, head]
    T = len(text)
    labels = [_char_label(c) for c in text]
    fig, ax = new_figure(width=5.4, height=4.7)
    heatmap(ax, W, title=f"layer {layer}, head {head}: attention weights", x="key (attended-to character)",
            y="query (current character)", colour_label="attention weight", xticklabels=labels, yticklabels=labels,
            vmin=0, vmax=1)
    ax.tick_params(labelsize=7)
    dist = np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])
    mean_dist = float((W * dist).sum(axis=1).mean())
    self_w = float(np.diag(W).mean())
    prev_w = float(np.diag(W, -1).mean()) if T > 1 else 0.0
    summary = (f"layer {layer}, head {head}: mean distance attended {mean_dist:.2f} characters; "
               f"mean weight on itself {self_w:.2f}, on the previous character {prev_w:.2f}")
    return fig, summary


def render_temperature(model: nn.Module, corpus: CharCorpus, prompt: str, temperature: float = 1.0,
                       n_new: int = 160, seed: int = 0):
    """Next-character distribution after ``prompt`` at ``temperature`` (15 most likely
    characters) and a sample of ``n_new`` characters. Returns (figure, summary)."""
    ids = corpus.encode(prompt)
    p = next_token_probs(model, ids, temperature)
    top = np.argsort(-p)[:15]
    entropy = float(-(p * np.log(np.clip(p, 1e-300, None))).sum())
    sample = corpus.decode(generate(model, ids, n_new, temperature, seed)[len(ids):])
    fig, ax = new_figure(height=3.0)
    ax.bar(range(len(top)), p[top])
    ax.set_xticks(range(len(top)), [_char_label(corpus.vocab.itos[i]) for i in top])
    set_labels(ax, f"P(next character | '{prompt[-20:]}') at temperature {temperature:.2f}",
               "character (the 15 most likely)", "probability")
    ax.set_ylim(0, 1)
    summary = f"T={temperature:.2f}, entropy {entropy:.2f} nats. Sample: {prompt}{sample}"
    return fig, summary


def render_norm_comparison(corpus: CharCorpus, lr: float = 3e-3, warmup: int = 0, seconds: float = 5.0,
                           seed: int = 0):
    """Train a Pre-LN and a Post-LN Transformer (d=64, 2 layers) for ``seconds`` each at
    learning rate ``lr`` with ``warmup`` steps of linear warm-up; plot both training curves
    against time. Returns (figure, summary with both held-out losses)."""
    fig, ax = new_figure()
    parts = []
    for norm in ("pre", "post"):
        cfg = TransformerConfig(len(corpus.vocab), d_model=64, n_heads=4, n_layers=2, max_len=128, norm=norm)
        res = train_lm(DecoderLM(cfg, seed=seed), corpus, max_seconds=seconds, lr=lr, warmup=warmup,
                       seed=seed, eval_tokens=8192, desc=f"{norm}-LN", progress=False)
        t, loss = zip(*res.curve, strict=True)
        ax.plot(t, loss, label=f"{norm}-LN (held-out {res.valid_loss:.2f})")
        parts.append(f"{norm}-LN: {res.steps} steps, held-out loss {res.valid_loss:.3f} nats/char")
    set_labels(ax, f"Pre-LN vs Post-LN, lr={lr:.1e}, warm-up {warmup} steps", "wall-clock time", "training loss",
               x_unit="s", y_unit="nats/char")
    ax.legend()
    return fig, f"lr={lr:.1e}, warm-up {warmup}: " + "; ".join(parts)
