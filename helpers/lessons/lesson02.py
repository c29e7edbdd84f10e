"""Lesson 02 (recurrent networks and BPTT): the notes' worked example, the exploding-gradient
training demo, and the explorers' render functions.

Every ``render_*`` function is pure: ``render_*(**control values) -> (Figure, summary str)``;
the notebook wraps them in :class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

import numpy as np

from helpers.infra.plotting import COLOURS, GREY, GREY_DARK, log_axis, new_figure, set_labels
from helpers.infra.threads import single_thread_blas
from helpers.lib.gradient_flow import gradient_norms_through_time, random_recurrent_layer
from helpers.lib.layers import Linear
from helpers.lib.optim import SGD, clip_global_norm
from helpers.lib.rnn_lm import RecurrentLM, generate, next_word_logits, temperature_probs
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
