"""Lesson 02 (recurrent networks and BPTT): the notes' worked example, the exploding-gradient
training demo, and the explorers' render functions.

Every ``render_*`` function is pure: ``render_*(**control values) -> (Figure, summary str)``;
the notebook wraps them in :class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

import numpy as np
import torch

from helpers.infra.plotting import COLOURS, GREY, GREY_DARK, log_axis, new_figure, set_labels
from helpers.infra.threads import single_thread_blas
from helpers.lib.batching import bptt_batches
from helpers.lib.gradient_flow import gradient_norms_through_time, random_recurrent_layer
from helpers.lib.layers import Linear
from helpers.lib.optim import SGD, clip_global_norm
from helpers.lib.rnn_lm import (
    RecurrentLM,
    generate,
    next_word_logits,
    temperature_probs,
)
from helpers.lib.text import Vocab

# ---------------------------------------------------------------- the notes' toy example
COW_TABLE = {  # position: (input word, output distribution over [a, cow, eats, grass], target)
    1: ("a", [0.40, 0.30, 0.20, 0.10], "cow"),
    2: ("cow", [0.30, 0.20, 0.30, 0.20], "eats"),
    3: ("eats", [0.50, 0.10, 0.20, 0.20], "grass"),
}
COW_VOCAB = ["a", "cow", "eats", "grass"]


def cow_losses(table: dict = COW_TABLE, vocab: list[str] = COW_VOCAB) -> list[float]:
    """-log y_t[target_t] for each row of the notes' "a cow eats grass" table (nats)."""
    return [float(-np.log(dist[vocab.index(target)])) for _, dist, target in table.values()]


# ---------------------------------------------------------------- gradients through time
SCALES = (0.5, 1.0, 2.0, 3.0)


def render_gradient_flow(scale: float = 1.0, steps: int = 60, hidden: int = 64):
    """Explorer: how the gradient reaching k steps back grows or shrinks with the recurrent
    weight scale (largest singular value of W_s)."""
    fig, ax = new_figure()
    ks = np.arange(steps)
    for s in SCALES:
        norms = gradient_norms_through_time(random_recurrent_layer("rnn", s, hidden=hidden), steps)
        ax.plot(ks, norms, color=GREY, lw=1, ls="-")
        ax.annotate(f"{s:g}", (steps - 1, norms[-1]), fontsize=8, color=GREY_DARK)
    g = gradient_norms_through_time(random_recurrent_layer("rnn", scale, hidden=hidden), steps)
    ax.plot(ks, g, color=COLOURS["vermillion"], lw=2.5, ls="-", label=f"scale {scale:g}")
    log_axis(ax, "y")
    set_labels(ax, "Gradient reaching k steps back (tanh RNN, random weights)",
               "k (time steps back from the loss)", r"$\|\partial L/\partial h_{T-k}\|$ (log scale)")
    ax.legend(loc="upper left")
    ratio = g[-1] / g[0]
    verdict = "explodes" if ratio > 10 else ("vanishes" if ratio < 0.1 else "roughly survives")
    return fig, (f"scale {scale:g}, hidden {hidden}: the gradient {steps - 1} steps back is "
                 f"{ratio:.1e} times the gradient at the loss ({verdict})")


# ---------------------------------------------------------------- exploding gradients in training
def recall_task(n: int, T: int, lag: int, rng: np.random.Generator, dim: int = 4):
    """Inputs (n, T, dim) ~ N(0, 1); target (n, T) = first input feature ``lag`` steps earlier
    (0 for the first ``lag`` steps). A tiny memory task for training demos."""
    x = rng.standard_normal((n, T, dim))
    y = np.zeros((n, T))
    y[:, lag:] = x[:, :T - lag, 0]
    return x, y


@single_thread_blas
def train_recall(scale: float, clip: float | None, steps: int = 80, lr: float = 0.05, T: int = 30,
                 lag: int = 3, hidden: int = 32, seed: int = 0) -> dict[str, np.ndarray]:
    """Plain SGD on :func:`recall_task` with a NumPy TimeRNN + Linear readout (mean squared
    error), from a recurrent matrix of the given ``scale``, with or without global-norm
    clipping at ``clip``. Returns per-step ``loss`` and ``grad_norm`` (before clipping);
    a diverged run has inf/nan from the step it blew up."""
    rng = np.random.default_rng(seed)
    rnn = random_recurrent_layer("rnn", scale, input_size=4, hidden=hidden, seed=seed)
    head = Linear(hidden, 1, rng)
    params, grads = rnn.params + head.params, rnn.grads + head.grads
    opt = SGD(lr)
    losses, norms = np.full(steps, np.nan), np.full(steps, np.nan)
    with np.errstate(all="ignore"):
        for s in range(steps):
            x, y = recall_task(32, T, lag, rng)
            hs = rnn.forward(x)
            pred = head.forward(hs.reshape(-1, hidden)).reshape(y.shape)
            losses[s] = float(np.mean((pred - y) ** 2))
            if not np.isfinite(losses[s]):
                break
            dpred = 2 * (pred - y) / y.size
            rnn.backward(head.backward(dpred.reshape(-1, 1)).reshape(hs.shape))
            norms[s] = clip_global_norm(grads, clip) if clip else float(np.sqrt(sum((g * g).sum() for g in grads)))
            opt.step(params, grads)
    return {"loss": losses, "grad_norm": norms}


# ---------------------------------------------------------------- the trained language model
def render_temperature(temperature: float = 1.0, seed: int = 0, *, model: RecurrentLM, vocab: Vocab,
                       prompt: tuple[str, ...] = ("the", "government", "said"), top: int = 12):
    """Explorer: the next-word distribution after ``prompt`` at a temperature (bars) and a
    20-word sample drawn at that temperature (summary)."""
    logits = next_word_logits(model, vocab, prompt)
    p1, pt = temperature_probs(logits, 1.0), temperature_probs(logits, temperature)
    order = np.argsort(-p1)[:top]
    fig, ax = new_figure()
    xs = np.arange(top)
    ax.bar(xs - 0.2, p1[order], 0.4, label="temperature 1 (the model)", color=GREY)
    ax.bar(xs + 0.2, pt[order], 0.4, label=f"temperature {temperature:g}", color=COLOURS["blue"])
    ax.set_xticks(xs, [vocab.itos[i] for i in order], rotation=45, ha="right")
    set_labels(ax, f"Next word after '{' '.join(prompt)}'", f"the model's {top} most likely next words",
               "probability of the next word")
    ax.legend()
    entropy = float(-(pt * np.log(pt + 1e-300)).sum())
    words = generate(model, vocab, list(prompt), 20, temperature, np.random.default_rng(seed))
    return fig, f"T={temperature:g}, entropy {entropy:.2f} nats: {' '.join(prompt)} | {' '.join(words)}"


# ---------------------------------------------------------------- exposure bias, isolated
class MarkovSource:
    """A known language: an order-2 Markov chain over ``V`` symbols, P(w | a, b) drawn from a
    Dirichlet(``alpha``) per context (seeded). ``probs(a, b)`` (N, V); ``sample(n, length, rng)``
    (n, length) int64 sequences (the first two symbols uniform)."""

    def __init__(self, V: int = 8, alpha: float = 0.3, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.V, self.table = V, rng.dirichlet(np.full(V, alpha), size=(V, V))    # (V, V, V)

    def probs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.table[a, b]

    def sample(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        out = np.zeros((n, length), dtype=np.int64)
        out[:, :2] = rng.integers(0, self.V, (n, 2))
        for t in range(2, length):
            out[:, t] = _draw(self.probs(out[:, t - 2], out[:, t - 1]), rng)
        return out


def _draw(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One sample per row of the row-stochastic (N, V) matrix ``p``."""
    u = rng.random((len(p), 1))
    return np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), p.shape[1] - 1)


@single_thread_blas
def train_on_source(source: MarkovSource, steps: int = 150, seed: int = 0, hidden: int = 32,
                    tokens: int = 20_000) -> RecurrentLM:
    """A small tanh-RNN LM trained by teacher forcing (truncated BPTT, Adam) on ``tokens`` symbols
    sampled from ``source``: deliberately short training, so the model is imperfect."""
    rng = np.random.default_rng(seed)
    stream = source.sample(1, tokens, rng)[0]
    model = RecurrentLM(source.V, "rnn", 16, hidden, seed=seed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    batches, k = list(bptt_batches(stream, 32, 20)), 0
    for _ in range(steps):
        x, y = batches[k % len(batches)]
        k += 1
        logits, _ = model(torch.as_tensor(x))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, source.V), torch.as_tensor(y).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def exposure_gap(source: MarkovSource, model: RecurrentLM | None, n: int = 400, horizon: int = 30,
                 seed: int = 0) -> dict[str, np.ndarray]:
    """How far the model's next-symbol distribution is from the truth, on prefixes the *source*
    wrote ("data") vs prefixes the *model* wrote ("own"), at each step t = 1..horizon after a
    2-symbol start from the source. Returns ``data_kl``, ``own_kl`` (horizon,): mean over ``n``
    sequences of KL(P_true(. | prefix) || P_model(. | prefix)) in nats, and ``gap = own_kl - data_kl``.
    ``model=None`` is the perfect model (P_model = P_true): both KLs, and the gap, are exactly 0.
    A model that is as good on its own prefixes as on real ones has gap 0: a positive gap is
    exposure bias, isolated from how surprising the real continuation is."""
    out = {}
    for mode in ("data", "own"):
        rng = np.random.default_rng(seed)
        seqs = source.sample(n, 2, rng)
        state, kls = None, []
        logits = None
        if model is not None:
            with torch.no_grad():
                lg, state = model(torch.as_tensor(seqs))
            logits = lg[:, -1].double().numpy()
        for _ in range(horizon):
            p_true = source.probs(seqs[:, -2], seqs[:, -1])
            if model is None:
                p_model = p_true
            else:
                p_model = temperature_probs(logits, 1.0)
            kls.append(float(np.mean(np.sum(p_true * (np.log(p_true + 1e-300) - np.log(p_model + 1e-300)), axis=1))))
            nxt = _draw(p_true if mode == "data" else p_model, rng)
            seqs = np.concatenate([seqs, nxt[:, None]], axis=1)
            if model is not None:
                with torch.no_grad():
                    lg, state = model(torch.as_tensor(nxt[:, None]), state)
                logits = lg[:, -1].double().numpy()
        out[f"{mode}_kl"] = np.array(kls)
    out["gap"] = out["own_kl"] - out["data_kl"]
    return out
