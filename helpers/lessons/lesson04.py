"""Lesson 04 (self-attention and the Transformer): the shipped character models' comparison
(per-character losses, block-bootstrap intervals, curves), the Pre-LN / Post-LN experiment, the
copy task's figure (its training: :mod:`helpers.course.copy_task`), the parallel-vs-sequential timing, the figures the lesson draws, the challenge's scoring
and the explorers' render functions. (The model the student trains, and its training step, are
not here: they are in the lesson and in :mod:`helpers.lib.decoder`.)

Every ``render_*`` function returns ``(Figure, summary str)``; the notebook wraps them in
:class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

import time
from statistics import median

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from helpers.course.char_live import (
    TEST_PREDICTIONS,
    CharSplit,
    heldout_loss,
    kn_baselines,
    live_split,
    load_char_ngram,
)
from helpers.course.char_lms import EVAL_TOKENS, ShippedCharLM
from helpers.course.models import model_info
from helpers.infra.plotting import (
    COLOURS,
    GREY_DARK,
    LINESTYLES,
    MARKERS,
    colour_bar,
    heatmap,
    new_figure,
    set_labels,
)
from helpers.infra.seeding import torch_generator
from helpers.lib.layers import softmax
from helpers.lib.positions import sinusoidal_encoding
from helpers.lib.transformer import (
    DecoderLM,
    TransformerConfig,
    evaluate_lm,
    generate,
    next_token_probs,
)


# ---------------------------------------------------------------- the shipped models, compared
@torch.no_grad()
def char_nlls(model: nn.Module, ids: np.ndarray, ctx: int, max_tokens: int) -> np.ndarray:
    """Per-character loss (nats) of the first ``max_tokens`` predictions of ``ids``, scored as
    :func:`helpers.lib.transformer.evaluate_lm` does (non-overlapping windows of ``ctx``, each
    starting with an empty context): element i scores ids[i + 1]. Returns (n_windows * ctx,) float64,
    n_windows = max_tokens // ctx; its mean is evaluate_lm's number."""
    n = min(len(ids) - 1, max_tokens) // ctx
    x = torch.as_tensor(ids[: n * ctx].reshape(n, ctx))
    y = torch.as_tensor(ids[1: n * ctx + 1].reshape(n, ctx))
    model.eval()
    rows = [F.cross_entropy(model(x[s:s + 32]).flatten(0, 1).double(), y[s:s + 32].flatten(), reduction="none")
            for s in range(0, n, 32)]
    return torch.cat(rows).numpy()


def block_bootstrap(values: dict[str, np.ndarray], block: int, n_boot: int = 2000, seed: int = 0,
                    level: float = 0.95) -> dict[str, tuple[float, float, float]]:
    """Mean and percentile interval of each per-character loss in ``values`` (same characters,
    same order), resampling whole blocks of ``block`` consecutive characters (neighbouring
    characters' losses are correlated; the blocks are the evaluation windows) — the same resampled
    blocks for every entry, so differences between entries are paired. Entries named 'A − B' are
    added for every ordered pair. Returns {name: (mean, low, high)}."""
    names = list(values)
    n = len(values[names[0]])
    if any(len(v) != n for v in values.values()) or n % block:
        raise ValueError(f"need equal lengths divisible by block={block}, got {[len(v) for v in values.values()]}")
    per_block = {k: np.asarray(v, float).reshape(-1, block).mean(1) for k, v in values.items()}
    for a in names:
        for b in names:
            if a != b:
                per_block[f"{a} − {b}"] = per_block[a] - per_block[b]
    idx = np.random.default_rng(seed).integers(0, n // block, size=(n_boot, n // block))
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    return {k: (float(v.mean()), *map(float, np.percentile(v[idx].mean(1), q))) for k, v in per_block.items()}


def plot_shipped_curves(shipped: dict[str, ShippedCharLM], ngram_valid: float, ngram_label: str):
    """Validation loss (first EVAL_TOKENS predictions of the validation play) of each shipped model
    against training CPU time (steps × the measured CPU cost per step of its shipped training),
    with the n-gram's loss on the same characters as a line. Returns the figure."""
    fig, ax = new_figure(width=7, height=3.8)
    for name, m in shipped.items():
        per_step = m.cpu_seconds / m.metrics["steps"]
        ax.plot(np.array(m.curve["step"]) * per_step, m.curve["valid_loss"], "o-", ms=3,
                label=f"{name} ({m.metrics['n_params']:,} parameters)")
    ax.axhline(ngram_valid, color=GREY_DARK, ls=":", label=ngram_label)
    set_labels(ax, f"Validation loss (first {EVAL_TOKENS:,} predictions of Othello) during training",
               "training CPU time, one thread", "cross-entropy", x_unit="s", y_unit="nats/char")
    ax.legend()
    return fig


# ---------------------------------------------------------------- Pre-LN vs Post-LN, several seeds
def norm_comparison(split: CharSplit, seeds=(0, 1, 2), steps: int = 60, lr: float = 1e-2, d_model: int = 32,
                    n_layers: int = 4, ctx: int = 64, batch_size: int = 8, eval_tokens: int = 4096) -> dict:
    """Train a Pre-LN and a Post-LN Transformer (same size, same batches, no warm-up) for ``steps``
    steps at learning rate ``lr`` with each seed; return {'pre'|'post': {'curves': [per-step
    losses per seed], 'valid': [validation loss per seed (first ``eval_tokens`` predictions of
    the validation play)]}}. Small on purpose: a few seconds in all."""
    out = {}
    for norm in ("pre", "post"):
        curves, valid = [], []
        for seed in seeds:
            cfg = TransformerConfig(split.V, d_model=d_model, n_heads=4, n_layers=n_layers, max_len=ctx, norm=norm)
            model = DecoderLM(cfg, seed=seed).train()
            opt = torch.optim.Adam(model.parameters(), lr=lr)
            rng, offs, losses = np.random.default_rng(seed), np.arange(ctx + 1), []
            for _ in range(steps):
                w = torch.as_tensor(split.train[rng.integers(0, len(split.train) - ctx - 1, batch_size)[:, None] + offs])
                loss = F.cross_entropy(model(w[:, :-1]).flatten(0, 1), w[:, 1:].flatten())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                losses.append(loss.item())
            curves.append(losses)
            valid.append(evaluate_lm(model, split.valid, seq_len=ctx, max_tokens=eval_tokens))
        out[norm] = {"curves": curves, "valid": valid}
    return out


_NORM_RUNS: dict = {}


def cached_norm_comparison(split: CharSplit, seeds: tuple, steps: int, lr: float) -> dict:
    """:func:`norm_comparison` with these arguments, computed once per split and setting."""
    key = (split.valid_work, split.test_work, len(split.train), seeds, steps, lr)
    if key not in _NORM_RUNS:
        _NORM_RUNS[key] = norm_comparison(split, seeds, steps, lr)
    return _NORM_RUNS[key]


def plot_norm_comparison(result: dict, lr: float):
    """Training curves of :func:`norm_comparison` (one line per seed) and the validation losses. Returns the figure."""
    fig, (ax1, ax2) = new_figure(ncols=2, width=4.2, height=3.4)
    for i, (norm, r) in enumerate(result.items()):
        for k, c in enumerate(r["curves"]):
            ax1.plot(range(1, len(c) + 1), c, color=f"C{i}", alpha=0.7, label=f"{norm}-LN" if k == 0 else None)
        ax2.plot([i] * len(r["valid"]), r["valid"], "o", color=f"C{i}")
    set_labels(ax1, f"training loss, lr={lr:g}, no warm-up", "step", "training loss", y_unit="nats/char")
    ax1.legend()
    ax2.set_xticks(range(len(result)), [f"{n}-LN" for n in result])
    ax2.set_xlim(-0.5, len(result) - 0.5)
    set_labels(ax2, "validation loss per seed", "normalisation", "cross-entropy", y_unit="nats/char")
    return fig


# ---------------------------------------------------------------- parallel training, sequential generation
@torch.no_grad()
def time_parallel_vs_sequential(model: DecoderLM, T: int, repeats: int = 5, seed: int = 0) -> dict[str, float]:
    """Median seconds (over ``repeats``, after one warm-up run of each) for (a) one forward pass
    over T tokens, which yields all T next-token predictions at once (what training does),
    (b) T forward passes that grow the context one token at a time (what generation must do,
    without a key/value cache), and (c) one forward pass over a single token (the fixed cost
    every call pays). Every quantity is measured the same way."""
    device = next(model.parameters()).device
    ids = torch.randint(0, model.cfg.vocab_size, (1, T), generator=torch_generator(seed)).to(device)
    was = model.training
    model.eval()

    def timed(f):
        f()                                   # warm-up, not counted
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            f()
            runs.append(time.perf_counter() - t0)
        return median(runs)

    def sequential():
        for t in range(1, T + 1):
            model(ids[:, :t])

    par, seq, one = timed(lambda: model(ids)), timed(sequential), timed(lambda: model(ids[:, :1]))
    model.train(was)
    return {"parallel_s": par, "sequential_s": seq, "one_token_s": one, "ratio": seq / par}


# ---------------------------------------------------------------- explorer views
def softmax_jacobian_norm(p: np.ndarray) -> np.ndarray:
    """The Frobenius norm of the softmax Jacobian diag(p) − p pᵀ of each distribution p (..., n):
    sqrt(Σp² − 2Σp³ + (Σp²)²), how much gradient a softmax passes back (0 when p is one-hot)."""
    s2 = np.sum(p ** 2, axis=-1)
    return np.sqrt(np.maximum(s2 - 2 * np.sum(p ** 3, axis=-1) + s2 ** 2, 0.0))


def dot_product_statistics(d_k: int, n_keys: int, rng: np.random.Generator, n_queries: int = 2000):
    """What scaling does for random q, k with N(0, 1) entries: the variance of q·k (theory d_k)
    and of q·k/√d_k (theory 1), and for a softmax over ``n_keys`` keys the mean largest weight
    and the mean norm of its Jacobian, unscaled ('raw') and scaled."""
    q = rng.standard_normal((n_queries, d_k))
    k = rng.standard_normal((n_queries, n_keys, d_k))
    raw = np.einsum("nd,ntd->nt", q, k)
    out = {"d_k": d_k, "raw": raw, "var_raw": float(raw.var()),
           "var_scaled": float((raw / np.sqrt(d_k)).var())}
    for name, s in (("raw", raw), ("scaled", raw / np.sqrt(d_k))):
        p = softmax(s)
        out[f"max_weight_{name}"] = float(p.max(axis=-1).mean())
        out[f"jacobian_{name}"] = float(softmax_jacobian_norm(p).mean())
    return out


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


def render_attention(model: DecoderLM, corpus: CharSplit, text: str, head: int = 0, layer: int = 0):
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


def render_temperature(model: nn.Module, corpus: CharSplit, prompt: str, temperature: float = 1.0,
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


def render_norm_comparison(split: CharSplit, lr: float = 3e-2, steps: int = 60, seeds=(0, 1, 2)):
    """Explorer view of :func:`norm_comparison` (cached per setting, so the lesson's static figure
    and the explorer's first view train once). Returns (figure, summary with every seed's loss)."""
    result = cached_norm_comparison(split, tuple(seeds), int(steps), float(f"{lr:.3g}"))
    fig = plot_norm_comparison(result, lr)
    parts = [f"{norm}-LN " + ", ".join(f"{v:.3f}" for v in r["valid"]) for norm, r in result.items()]
    return fig, f"lr={lr:.1e}, {steps} steps, validation loss per seed: " + "; ".join(parts)


# ---------------------------------------------------------------- attention solves a task: reversing a sequence
class ReverseSeq2Seq(nn.Module):
    """A GRU encoder-decoder for reversing a sequence of symbols, with or without (Luong-style,
    scaled dot-product) attention. ids (B, L) of symbols 0..n_symbols-1 -> logits (B, L, n_symbols)
    of the reversed sequence. Without attention the decoder sees the input only through the
    encoder's last state (the bottleneck of section 1); with it, every output position takes a
    softmax-weighted mix of all encoder states (``last_weights``: (B, L_out, L_in)) on top of the
    decoder's state, so training needs no loop over positions (teacher forcing)."""

    def __init__(self, n_symbols: int, hidden: int, attention: bool, seed: int = 0):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.embed = nn.Embedding(n_symbols + 1, hidden)        # + a start symbol for the decoder
            self.encoder = nn.GRU(hidden, hidden, batch_first=True)
            self.decoder = nn.GRU(hidden, hidden, batch_first=True)
            self.combine = nn.Linear(2 * hidden, hidden) if attention else None
            self.out = nn.Linear(hidden, n_symbols)
        self.start, self.attention, self.last_weights = n_symbols, attention, None

    def _logits(self, dec: torch.Tensor, enc: torch.Tensor) -> torch.Tensor:
        if not self.attention:
            return self.out(dec)
        a = torch.softmax(dec @ enc.transpose(1, 2) / dec.shape[-1] ** 0.5, dim=-1)    # (B, L_out, L_in)
        self.last_weights = a.detach()
        return self.out(torch.tanh(self.combine(torch.cat([dec, a @ enc], -1))))

    def forward(self, ids: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        """Teacher forcing when ``targets`` are given (all positions at once), else greedy decoding
        of ids.shape[1] symbols, one at a time."""
        enc, h = self.encoder(self.embed(ids))
        start = torch.full((ids.shape[0], 1), self.start, dtype=torch.long)
        if targets is not None:
            dec, _ = self.decoder(self.embed(torch.cat([start, targets[:, :-1]], 1)), h)
            return self._logits(dec, enc)
        prev, states, logits = start, [], []
        for _ in range(ids.shape[1]):
            d, h = self.decoder(self.embed(prev), h)
            states.append(d)
            logits.append(self._logits(torch.cat(states, 1), enc)[:, -1:])
            prev = logits[-1].argmax(-1)
        return torch.cat(logits, 1)


def reversal_experiment(seeds=(0, 1, 2), steps: int = 200, lengths=range(4, 13, 2), n_symbols: int = 10,
                        hidden: int = 64, batch_size: int = 64, lr: float = 2e-2, n_test: int = 100) -> dict:
    """Train the encoder-decoder with and without attention to reverse random sequences (each
    batch one length drawn from ``lengths``), for each seed; then measure the per-symbol accuracy
    of greedy decoding on ``n_test`` fresh sequences of every length. Returns {'lengths': [...],
    'with'|'without': (n_seeds, n_lengths) accuracies, 'example': one input (length 10),
    'weights': its attention matrix (with attention, seed 0)}."""
    lengths = list(lengths)
    out = {"lengths": lengths, "hidden": hidden, "steps": steps, "seeds": list(seeds)}
    for kind in ("with", "without"):
        accs = []
        for seed in seeds:
            model = ReverseSeq2Seq(n_symbols, hidden, kind == "with", seed)
            opt = torch.optim.Adam(model.parameters(), lr=lr)
            g = torch_generator(seed)
            for _ in range(steps):
                L = lengths[int(torch.randint(len(lengths), (1,), generator=g))]
                x = torch.randint(n_symbols, (batch_size, L), generator=g)
                y = x.flip(1)
                loss = F.cross_entropy(model(x, y).flatten(0, 1), y.flatten())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
            test = torch_generator(10_000 + seed)
            with torch.no_grad():
                row = []
                for L in lengths:
                    x = torch.randint(n_symbols, (n_test, L), generator=test)
                    row.append(float((model(x).argmax(-1) == x.flip(1)).float().mean()))
                if kind == "with" and seed == seeds[0]:
                    out["example"] = torch.randint(n_symbols, (1, 10), generator=test)[0].tolist()
                    model(torch.tensor([out["example"]]))
                    out["weights"] = model.last_weights[0].numpy()
            accs.append(row)
        out[kind] = np.array(accs)
    return out


def plot_reversal(result: dict):
    """Accuracy vs length (mean and every seed) with and without attention, and the alignment
    matrix of one example. Returns the figure."""
    fig, (ax1, ax2) = new_figure(ncols=2, width=4.2, height=3.6)
    for i, kind in enumerate(("with", "without")):
        acc = result[kind]
        for row in acc:
            ax1.plot(result["lengths"], row, color=f"C{i}", alpha=0.3)
        ax1.plot(result["lengths"], acc.mean(0), "o-", color=f"C{i}", label=f"{kind} attention ({len(acc)} seeds)")
    set_labels(ax1, "reversing a sequence: test accuracy", "sequence length", "accuracy per symbol")
    ax1.set_ylim(0, 1.02)
    ax1.legend()
    ex = [str(s) for s in result["example"]]
    heatmap(ax2, result["weights"], title="alignment (with attention)", x="input position (symbol)",
            y="output position (symbol)", colour_label="attention weight", xticklabels=ex,
            yticklabels=ex[::-1], vmin=0, vmax=1)
    return fig


# ---------------------------------------------------------------- figures drawn in the lesson
def plot_positional_encoding(T: int = 128, d: int = 64, dims=(0, 8, 20, 40)):
    """The sinusoidal encoding as a heat map (position across, dimension down; a labelled colour
    bar) and a few of its dimensions as curves against position. Returns the figure."""
    pe = sinusoidal_encoding(T, d)
    fig, (ax1, ax2) = new_figure(ncols=2, width=5.2, height=3.6)
    heatmap(ax1, pe.T, title=f"sinusoidal encoding, d = {d}", x="position", y="dimension",
            colour_label="PE value", signed=True, vmin=-1, vmax=1)
    for k, i in enumerate(dims):
        ax2.plot(pe[:, i], color=list(COLOURS.values())[k], ls=LINESTYLES[k], label=f"dimension {i}")
    set_labels(ax2, "a few dimensions", "position", "PE value")
    ax2.set_ylim(-1.1, 1.9)
    ax2.legend(loc="upper center", ncols=2, fontsize=8, frameon=False)
    return fig


def plot_attention_grid(maps: np.ndarray, text: str):
    """Every layer's and head's attention weights on ``text``: a grid of heat maps (rows = layers,
    columns = heads), each with the characters as ticks (row = the query, the character predicting
    the next one; column = the key, the character attended to) and one shared, labelled colour bar.
    Returns the figure."""
    L, H = maps.shape[:2]
    labels = [_char_label(c) for c in text]
    fig, axes = new_figure(ncols=H, nrows=L, width=2.5, height=2.6)
    axes = np.asarray(axes).reshape(L, H)
    im = None
    for layer in range(L):
        for head in range(H):
            ax = axes[layer, head]
            im = heatmap(ax, maps[layer, head], title=f"layer {layer}, head {head}", x="key (attended to)",
                         y="query", xticklabels=labels, yticklabels=labels, vmin=0, vmax=1, with_bar=False)
            ax.tick_params(labelsize=5.5, length=1.5, pad=1)
    colour_bar(im, axes.ravel().tolist(), "attention weight")
    return fig


def head_statistics(maps: np.ndarray, text: str) -> list[dict]:
    """Per layer and head of ``maps`` (L, H, T, T) on ``text``: the mean distance attended over,
    the mean weight on the character itself, on the previous one, and on the nearest space at or
    before the previous character (the start of the word being read)."""
    T = len(text)
    dist = np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])
    last_space = np.full(T, -1)
    for t in range(T):
        before = [j for j in range(t) if text[j] == " "]
        last_space[t] = before[-1] if before else -1
    rows = []
    for layer in range(maps.shape[0]):
        for head in range(maps.shape[1]):
            W = maps[layer, head]
            has = last_space >= 0
            rows.append({"layer": layer, "head": head, "mean_distance": float((W * dist).sum(1).mean()),
                         "self": float(np.diag(W).mean()), "previous": float(np.diag(W, -1).mean()),
                         "word_start": float(W[np.flatnonzero(has), last_space[has]].mean())})
    return rows


# ---------------------------------------------------------------- where attention wins: copying (helpers.course.copy_task)
def plot_copy_experiment(result: dict):
    """Copy accuracy against the length of the sequence, one line per model, chance as a grey line."""
    fig, ax = new_figure(width=6.4, height=3.4)
    for k, (name, acc) in enumerate(result["accuracy"].items()):
        ax.plot(result["lengths"], acc, color=list(COLOURS.values())[k], ls=LINESTYLES[k], marker=MARKERS[k],
                label=f"{name} ({result['params'][name]:,} parameters, {result['steps'][name]} steps)")
    ax.axhline(result["chance"], color=GREY_DARK, ls=":", label="chance (a random symbol)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(result["lengths"], [str(n) for n in result["lengths"]])
    ax.minorticks_off()
    ax.set_ylim(0, 1.05)
    set_labels(ax, "Copying a sequence of random symbols", "symbols to copy", "accuracy per symbol")
    ax.legend(loc="center left", fontsize=8)
    return fig


# ---------------------------------------------------------------- the challenge
CHALLENGE_CPU_SECONDS = 300          # five CPU-minutes of training


def challenge_standings() -> dict[str, float]:
    """The yardsticks of the challenge, in nats per character on Hamlet's first 32,768 predictions:
    the Kneser-Ney 3-, 4- and (the best on validation) 8-gram, and the shipped PyTorch models."""
    kn = kn_baselines((3, 4))
    stored = load_char_ngram()
    rows = {"Kneser-Ney trigram": kn[3]["test_loss"], "Kneser-Ney 4-gram": kn[4]["test_loss"],
            f"Kneser-Ney {stored['chosen']['n']}-gram (the best order)": float(np.nanmean(stored["test_nll"]))}
    for name, label in (("char_transformer", "shipped Transformer (PyTorch)"), ("char_lstm", "shipped LSTM (PyTorch)")):
        rows[label] = float(model_info(name)["subset_metric"]["value"])
    return rows


def score_challenge(loss_fn, seq_len: int, cpu_seconds: float, budget: float = CHALLENGE_CPU_SECONDS) -> dict:
    """Score a model for the challenge: its loss on Hamlet's first 32,768 predictions (windows of
    ``seq_len``, as :func:`helpers.course.char_live.heldout_loss`; ``loss_fn(x, y)`` is the model's
    mean loss on a batch), ranked among :func:`challenge_standings`. ``cpu_seconds``: the training's
    CPU time (a LiveTraining's ``cpu_seconds``), at most ``budget``. Prints the table and returns
    {'loss', 'within_budget', 'beaten': [the yardsticks it is below], 'table': [(name, loss)] sorted}."""
    if not callable(loss_fn):
        raise TypeError("loss_fn must be the model's loss function, loss_fn(x, y) -> mean nats per character")
    if not (np.isfinite(cpu_seconds) and cpu_seconds >= 0):
        raise ValueError(f"cpu_seconds must be the training's CPU time (a number >= 0), got {cpu_seconds!r}")
    loss = heldout_loss(loss_fn, live_split().test, int(seq_len), TEST_PREDICTIONS)
    rows = challenge_standings()
    table = sorted([*rows.items(), ("your model", loss)], key=lambda r: r[1])
    beaten = [name for name, v in rows.items() if loss < v]
    within = cpu_seconds <= budget
    print(f"your model: {loss:.3f} nats/char on Hamlet (test), trained for {cpu_seconds:.0f} CPU-s "
          f"({'within' if within else 'over'} the {budget / 60:.0f} CPU-minute budget)")
    for name, v in table:
        print(f"  {'→' if name == 'your model' else ' '} {v:.3f}  {name}")
    if within and beaten:
        print(f"✓ below {', '.join(beaten)}.")
    elif within:
        print("… above every yardstick so far: train longer, or change the model (see the ideas above).")
    else:
        print("… over the budget: this run does not count for the challenge.")
    return {"loss": loss, "within_budget": within, "beaten": beaten, "table": table}
