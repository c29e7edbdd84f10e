"""Lesson 04's figures, explorer views and experiments: √d_k, per-character losses, the copy task
and its challenge, attention maps, sampling, Pre-LN against Post-LN."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from helpers.course.char_live import CharSplit
from helpers.infra.plotting import (
    GREY_DARK,
    colour_bar,
    heatmap,
    new_figure,
    plot_curves,
    set_labels,
)
from helpers.lib.layers import softmax
from helpers.lib.positions import sinusoidal_encoding
from helpers.lib.transformer import DecoderLM, TransformerConfig, evaluate_lm


# ---------------------------------------------------------------- §2 why √d_k
def softmax_jacobian_norm(p):
    """‖diag(p) − p pᵀ‖_F for each distribution p (..., n): the gradient a softmax passes back."""
    s2 = np.sum(p ** 2, axis=-1)
    return np.sqrt(np.maximum(s2 - 2 * np.sum(p ** 3, axis=-1) + s2 ** 2, 0.0))


def dot_product_statistics(d_k: int, n_keys: int, rng: np.random.Generator, n_queries: int = 2000):
    """For N(0, 1) queries and keys: the variance of q·k (theory d_k) and of q·k/√d_k (theory 1),
    and the softmax's mean largest weight and Jacobian norm, unscaled ('raw') and scaled."""
    raw = np.einsum("nd,ntd->nt", rng.standard_normal((n_queries, d_k)),
                    rng.standard_normal((n_queries, n_keys, d_k)))
    var = float(raw.var())
    out = {"d_k": d_k, "raw": raw, "var_raw": var, "var_scaled": var / d_k}
    for name, s in (("raw", raw), ("scaled", raw / np.sqrt(d_k))):
        out[f"max_weight_{name}"] = float(softmax(s).max(axis=-1).mean())
        out[f"jacobian_{name}"] = float(softmax_jacobian_norm(softmax(s)).mean())
    return out


def render_scaling(d_k: int = 16, n_keys: int = 16, seed: int = 0):
    """Histograms of q·k with and without 1/√d_k, and one query's softmax both ways."""
    st = dot_product_statistics(d_k, n_keys, np.random.default_rng(seed))
    fig, (ax1, ax2) = new_figure(ncols=2)
    raw, row = st["raw"].ravel(), st["raw"][0]
    bins = np.linspace(*(np.array([-1, 1]) * max(4.0, np.percentile(np.abs(raw), 99.5))), 61)
    for values, label in ((raw, "q·k"), (raw / np.sqrt(d_k), "q·k / √d_k")):
        ax1.hist(values, bins=bins, alpha=0.6, density=True, label=label)
    set_labels(ax1, f"dot products, d_k = {d_k}", "score", "density")
    for shift, values, label in ((-0.2, row, "softmax(q·k)"),
                                 (0.2, row / np.sqrt(d_k), "softmax(q·k/√d_k)")):
        ax2.bar(np.arange(n_keys) + shift, softmax(values), width=0.4, label=label)
    set_labels(ax2, "attention weights of one query", "key index", "weight")
    ax2.set_ylim(0, 1)
    ax1.legend()
    ax2.legend()
    return fig, (f"d_k={d_k}: var(q·k)={st['var_raw']:.1f} (theory {d_k}), var(q·k/√d_k)="
                 f"{st['var_scaled']:.2f}; mean max weight {st['max_weight_raw']:.2f} unscaled vs "
                 f"{st['max_weight_scaled']:.2f} scaled; softmax Jacobian norm "
                 f"{st['jacobian_raw']:.3f} vs {st['jacobian_scaled']:.3f}")


# ---------------------------------------------------------------- §1, §6 figures
def plot_reversal(lengths, accuracy: dict, weights, example):
    """Accuracy against length per model (name -> (runs, lengths)), and one example's attention."""
    fig, (ax1, ax2) = new_figure(ncols=2, width=4.2, height=3.6)
    for i, (name, acc) in enumerate(accuracy.items()):
        ax1.plot(lengths, np.transpose(acc), color=f"C{i}", alpha=0.3)
        ax1.plot(lengths, np.mean(acc, 0), "o-", color=f"C{i}", label=f"{name} ({len(acc)} runs)")
    set_labels(ax1, "reversing a sequence: test accuracy", "sequence length", "accuracy per symbol")
    ax1.set_ylim(0, 1.02)
    ax1.legend()
    ex = [str(s) for s in example]
    heatmap(ax2, weights, title="alignment (with attention)", x="input position (symbol)",
            y="output position (symbol)", colour_label="attention weight", xticklabels=ex,
            yticklabels=ex[::-1], vmin=0, vmax=1)
    return fig


def plot_positional_encoding(T: int = 128, d: int = 64, dims=(0, 8, 20, 40)):
    """The sinusoidal encoding as a heat map, and a few of its dimensions against position."""
    pe = sinusoidal_encoding(T, d)
    fig, (ax1, ax2) = new_figure(ncols=2, width=5.2, height=3.6)
    heatmap(ax1, pe.T, title=f"sinusoidal encoding, d = {d}", x="position", y="dimension",
            colour_label="PE value", signed=True, vmin=-1, vmax=1)
    plot_curves(ax2, {f"dimension {i}": pe[:, i] for i in dims}, "a few dimensions", "position",
                "PE value", x=np.arange(T))
    ax2.set_ylim(-1.1, 1.9)
    ax2.legend(loc="upper center", ncols=2, fontsize=8, frameon=False)
    return fig


# ---------------------------------------------------------------- §10 the shipped models
@torch.no_grad()
def char_nlls(model: nn.Module, ids: np.ndarray, ctx: int, max_tokens: int) -> np.ndarray:
    """Per-character loss (nats) of the first ``max_tokens`` predictions of ``ids`` in
    non-overlapping windows of ``ctx``: the terms of :func:`helpers.lib.transformer.evaluate_lm`."""
    n = min(len(ids) - 1, max_tokens) // ctx
    x, y = (torch.as_tensor(ids[s: s + n * ctx].reshape(n, ctx)) for s in (0, 1))
    model.eval()
    rows = [F.cross_entropy(model(x[s:s + 32]).flatten(0, 1).double(), y[s:s + 32].flatten(),
                            reduction="none") for s in range(0, n, 32)]
    return torch.cat(rows).numpy()


# ---------------------------------------------------------------- §11 copying, §15 the challenge
def copy_problems(rng: np.random.Generator, n: int, length: int, n_symbols: int = 16):
    """``n`` copy problems (symbols 1..n_symbols, 0, the same symbols): (x, y) (n, 2·length), y
    the next symbol at each position; the copy is y[:, length:]."""
    s = rng.integers(1, n_symbols + 1, (n, length))
    seq = np.concatenate([s, np.zeros((n, 1), s.dtype), s], 1)
    return seq[:, :-1], seq[:, 1:]


def plot_copy_experiment(result: dict):
    """Copy accuracy against the number of symbols, one line per model, chance in grey."""
    fig, ax = new_figure(width=6.4, height=3.4)
    curves = {f"{name} ({result['params'][name]:,} parameters, {result['steps'][name]} steps)": acc
              for name, acc in result["accuracy"].items()}
    plot_curves(ax, curves, "Copying a sequence of random symbols", "symbols to copy",
                "accuracy per symbol", x=result["lengths"])
    ax.axhline(1 / 16, color=GREY_DARK, ls=":", label="chance (a random symbol)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(result["lengths"], [str(n) for n in result["lengths"]])
    ax.minorticks_off()
    ax.set_ylim(0, 1.05)
    ax.legend(loc="center left", fontsize=8)
    return fig


CHALLENGE_CPU_SECONDS, CHALLENGE_LENGTHS = 120, (16, 32, 48, 64)


def score_copy_challenge(model, cpu_seconds: float, budget: float = CHALLENGE_CPU_SECONDS) -> dict:
    """Print the copy challenge's score: per-symbol accuracy on 200 fresh problems per length."""
    if not callable(getattr(model, "forward", None)):
        raise TypeError("model must have forward(ids) -> logits (B, T, V), as NumpyDecoderLM has")
    if not (np.isfinite(cpu_seconds) and cpu_seconds >= 0):
        raise ValueError(f"cpu_seconds must be the training's CPU time (>= 0), got {cpu_seconds!r}")
    accuracy = {}
    for n in CHALLENGE_LENGTHS:
        x, y = copy_problems(np.random.default_rng(20_000 + n), 200, n)
        accuracy[n] = float((np.asarray(model.forward(x)).argmax(-1)[:, n:] == y[:, n:]).mean())
    within = cpu_seconds <= budget
    print(f"trained for {cpu_seconds:.0f} CPU-s ({'within' if within else 'over'} the {budget:.0f} "
          "CPU-s budget); accuracy per symbol (chance 0.06):\n  "
          + ", ".join(f"{n} symbols {a:.2f}" for n, a in accuracy.items())
          + f"  <- your score: {accuracy[64]:.2f} at 64")
    return {"accuracy": accuracy, "within_budget": within}


# ---------------------------------------------------------------- §12 inside the trained model
def _char_label(c: str) -> str:
    """A visible tick label: '␣' for a space, '↵' for a newline, other invisibles escaped."""
    return {" ": "␣", "\n": "↵"}.get(c, c if c.isprintable() else repr(c)[2:-1])


def attention_maps(model, ids) -> np.ndarray:
    """(layers, heads, T, T): a NumpyDecoderLM's attention weights on one sequence ``ids`` (T,)."""
    model.forward(np.asarray(ids)[None])
    return np.stack([block.attn.weights[0] for block in model.blocks])


def plot_attention_grid(maps: np.ndarray, text: str):
    """Every layer's (rows) and head's (columns) attention weights on ``text``, one colour bar."""
    L, H = maps.shape[:2]
    labels = [_char_label(c) for c in text]
    fig, axes = new_figure(ncols=H, nrows=L, width=2.5, height=2.6)
    axes = np.asarray(axes).reshape(L, H)
    for (layer, head), ax in np.ndenumerate(axes):
        im = heatmap(ax, maps[layer, head], title=f"layer {layer}, head {head}", x="key",
                     y="query", xticklabels=labels, yticklabels=labels, vmin=0, vmax=1,
                     with_bar=False)
        ax.tick_params(labelsize=5.5, length=1.5, pad=1)
    colour_bar(im, axes.ravel().tolist(), "attention weight")
    return fig


def word_start_scores(maps: np.ndarray, text: str) -> np.ndarray:
    """(layers, heads): each head's mean weight, inside a word, on the space where it began."""
    rows = [t for t in range(1, len(text)) if text[t - 1:t + 1].isalpha() and " " in text[:t]]
    return maps[:, :, rows, [text.rindex(" ", 0, t) for t in rows]].mean(-1)


def render_attention(model, corpus: CharSplit, text: str, head: int = 0, layer: int = 0):
    """Heat map of one layer's and head's attention weights of a NumpyDecoderLM on ``text``."""
    W = attention_maps(model, corpus.encode(text))[layer, head]
    labels = [_char_label(c) for c in text]
    fig, ax = new_figure(width=5.4, height=4.7)
    heatmap(ax, W, title=f"layer {layer}, head {head}: attention weights",
            x="key (attended-to character)", y="query (current character)",
            colour_label="attention weight", xticklabels=labels, yticklabels=labels, vmin=0, vmax=1)
    ax.tick_params(labelsize=7)
    dist = np.abs(np.arange(len(text))[:, None] - np.arange(len(text)))
    return fig, (f"layer {layer}, head {head}: mean distance attended "
                 f"{(W * dist).sum(1).mean():.2f} characters; mean weight on itself "
                 f"{np.diag(W).mean():.2f}, on the previous character {np.diag(W, -1).mean():.2f}")


def render_temperature(model, corpus: CharSplit, prompt: str, temperature: float = 1.0,
                       n_new: int = 160, seed: int = 0):
    """A NumpyDecoderLM's 15 likeliest next characters after ``prompt``, and a sample."""
    ids = corpus.encode(prompt)
    p = model.next_probs(ids, temperature)
    top = np.argsort(-p)[:15]
    sample = corpus.decode(model.generate(ids, n_new, temperature, seed)[len(ids):])
    fig, ax = new_figure(height=3.0)
    ax.bar(range(len(top)), p[top])
    ax.set_xticks(range(len(top)), [_char_label(corpus.vocab.itos[i]) for i in top])
    set_labels(ax, f"P(next character | '{prompt[-20:]}') at temperature {temperature:.2f}",
               "character (the 15 most likely)", "probability")
    ax.set_ylim(0, 1)
    entropy = float(-(p * np.log(np.clip(p, 1e-300, None))).sum())
    return fig, f"T={temperature:.2f}, entropy {entropy:.2f} nats. Sample: {prompt}{sample}"


# ---------------------------------------------------------------- §13 Pre-LN or Post-LN
_NORM_RUNS: dict = {}


def norm_comparison(split: CharSplit, lr: float, steps: int, seeds=(0, 1)) -> dict:
    """Pre-LN and Post-LN PyTorch decoders on the same batches: {'pre'|'post': {'curves', 'valid'}}
    per seed, memoised."""
    key = (split.valid_work, len(split.train), lr, steps, tuple(seeds))
    if key not in _NORM_RUNS:
        _NORM_RUNS[key] = {norm: {"curves": [], "valid": []} for norm in ("pre", "post")}
        for norm, seed in ((norm, seed) for norm in ("pre", "post") for seed in seeds):
            cfg = TransformerConfig(split.V, d_model=32, n_heads=4, n_layers=4, max_len=64,
                                    norm=norm)
            model, rng = DecoderLM(cfg, seed=seed).train(), np.random.default_rng(seed)
            opt, losses = torch.optim.Adam(model.parameters(), lr=lr), []
            for _ in range(steps):
                starts = rng.integers(0, len(split.train) - 65, 8)
                w = torch.as_tensor(split.train[starts[:, None] + np.arange(65)])
                loss = F.cross_entropy(model(w[:, :-1]).flatten(0, 1), w[:, 1:].flatten())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                losses.append(loss.item())
            _NORM_RUNS[key][norm]["curves"].append(losses)
            valid = evaluate_lm(model, split.valid, seq_len=64, max_tokens=4096)
            _NORM_RUNS[key][norm]["valid"].append(valid)
    return _NORM_RUNS[key]


def render_norm_comparison(split: CharSplit, lr: float = 3e-2, steps: int = 200, seeds=(0, 1)):
    """Training curves (a line per seed) and validation losses of :func:`norm_comparison`."""
    lr = float(f"{lr:.3g}")
    result = norm_comparison(split, lr, int(steps), tuple(seeds))
    fig, (ax1, ax2) = new_figure(ncols=2, width=4.2, height=3.4)
    for i, (norm, r) in enumerate(result.items()):
        for k, c in enumerate(r["curves"]):
            ax1.plot(range(1, len(c) + 1), c, color=f"C{i}", alpha=0.7,
                     label=f"{norm}-LN" if k == 0 else None)
        ax2.plot([i] * len(r["valid"]), r["valid"], "o", color=f"C{i}")
    set_labels(ax1, f"training loss, lr={lr:g}, no warm-up", "step", "loss", y_unit="nats/char")
    ax1.legend()
    ax2.set_xticks([0, 1], ["pre-LN", "post-LN"])
    ax2.set_xlim(-0.5, 1.5)
    set_labels(ax2, "validation loss per seed", "normalisation", "loss", y_unit="nats/char")
    parts = [f"{n}-LN " + ", ".join(f"{v:.3f}" for v in r["valid"]) for n, r in result.items()]
    return fig, f"lr={lr:.1e}, {steps} steps, validation loss per seed: " + "; ".join(parts)
