"""Lesson 03 (LSTM gates): the long-range dependency task, gate heat maps, and the
explorers' render functions.

Every ``render_*`` function is pure: ``render_*(**control values) -> (Figure, summary str)``;
the notebook wraps them in :class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from helpers.infra.plotting import (
    GREY,
    MARKERS,
    colour_bar,
    heatmap,
    log_axis,
    new_figure,
    set_labels,
)
from helpers.infra.threads import single_thread_blas
from helpers.lib.gradient_flow import (
    TIME_LAYERS,
    gradient_norms_through_time,
    random_recurrent_layer,
)
from helpers.lib.layers import Embedding, Linear, SoftmaxCrossEntropy
from helpers.lib.optim import Adam, clip_global_norm


# ---------------------------------------------------------------- the long-range dependency task
def long_range_batch(n: int, distance: int, rng: np.random.Generator, n_symbols: int = 10):
    """A toy agreement task. Token 0 or 1 (say: a singular or a plural subject) comes first,
    then ``distance`` distractor tokens drawn from 2..n_symbols-1; the label (n,) is the first
    token, to be predicted after the last distractor. Returns ids (n, distance + 1), labels (n,)."""
    if distance < 1:
        raise ValueError(f"distance must be at least 1, got {distance}")
    ids = rng.integers(2, n_symbols, (n, distance + 1))
    labels = rng.integers(0, 2, n)
    ids[:, 0] = labels
    return ids, labels


@single_thread_blas
def train_long_range(kind: str, distance: int, hidden: int = 32, steps: int = 300, batch: int = 32,
                     lr: float = 3e-3, seed: int = 0, n_test: int = 500, n_symbols: int = 10,
                     forget_bias: float = 2.0) -> float:
    """Train a NumPy Embedding -> Time{RNN,LSTM,GRU} -> Linear classifier (last hidden state)
    on :func:`long_range_batch` with Adam and clipping at 1; return held-out accuracy.
    The LSTM's forget-gate bias starts at ``forget_bias`` (a positive value starts with the
    memory open: f = sigmoid(2) = 0.88)."""
    rng = np.random.default_rng(seed)
    emb = Embedding(n_symbols, 8, rng, scale=1.0, dtype=np.float32)
    rnn = TIME_LAYERS[kind](8, hidden, rng, dtype=np.float32)
    if kind == "lstm":
        rnn.params[2][hidden:2 * hidden] = forget_bias
    head = Linear(hidden, 2, rng, dtype=np.float32)
    loss_fn = SoftmaxCrossEntropy()
    params = emb.params + rnn.params + head.params
    grads = emb.grads + rnn.grads + head.grads
    opt = Adam(lr)

    def logits(ids):
        hs = rnn.forward(emb.forward(ids))
        return head.forward(hs[:, -1]), hs

    for _ in range(steps):
        ids, y = long_range_batch(batch, distance, rng, n_symbols)
        out, hs = logits(ids)
        loss_fn.forward(out, y)
        dhs = np.zeros_like(hs)
        dhs[:, -1] = head.backward(loss_fn.backward())
        emb.backward(rnn.backward(dhs))
        clip_global_norm(grads, 1.0)
        opt.step(params, grads)
    ids, y = long_range_batch(n_test, distance, np.random.default_rng(seed + 10_000), n_symbols)
    return float(np.mean(logits(ids)[0].argmax(1) == y))


DISTANCES = (5, 15, 30, 60)


@lru_cache(maxsize=32)
def long_range_accuracy(kinds: tuple[str, ...] = ("rnn", "lstm"), distances: tuple[int, ...] = DISTANCES,
                        hidden: int = 32, steps: int = 300, forget_bias: float = 2.0,
                        seed: int = 0) -> dict[str, list[float]]:
    """{kind: [held-out accuracy at each distance]} (memoised: same arguments, same numbers)."""
    return {k: [train_long_range(k, d, hidden, steps, seed=seed, forget_bias=forget_bias) for d in distances]
            for k in kinds}


def render_long_range(steps: int = 300, forget_bias: float = 2.0, hidden: int = 32, max_distance: int = 60):
    """Explorer: accuracy against distance for an RNN and an LSTM trained on the toy agreement task."""
    distances = tuple(d for d in DISTANCES if d <= max_distance) or (max_distance,)
    acc = long_range_accuracy(("rnn", "lstm"), distances, hidden, steps, forget_bias)
    fig, ax = new_figure()
    for k, marker in (("rnn", MARKERS[0]), ("lstm", MARKERS[1])):
        ax.plot(distances, acc[k], marker=marker, label=k.upper())
    ax.axhline(0.5, color=GREY, ls=":", label="chance")
    log_axis(ax, "x", ticks=distances)
    ax.set_ylim(0.4, 1.02)
    set_labels(ax, f"Remembering the first token ({steps} steps, hidden {hidden}, forget bias {forget_bias:g})",
               "distance (distractor tokens between the cue and the prediction)", "held-out accuracy")
    ax.legend()
    return fig, "  ".join(f"{k.upper()}: " + ", ".join(f"d={d}: {a:.2f}" for d, a in zip(distances, acc[k], strict=True))
                          for k in acc)


# ---------------------------------------------------------------- inside the trained LSTM
@single_thread_blas
def gate_heatmap(layer, E: np.ndarray, ids: np.ndarray, words: list[str], n_units: int = 16):
    """Heat maps of the input, forget and output gates of a NumPy ``TimeLSTM`` reading one
    sentence ``ids`` (T,) (words: its tokens). Shows the ``n_units`` units whose forget gate
    varies most over the sentence. Returns (figure, gates (T, 4H))."""
    layer.forward(E[np.asarray(ids)][None])
    gates = layer.gates[0]
    H = layer.hidden_size
    units = np.argsort(-gates[:, H:2 * H].std(axis=0))[:n_units]
    fig, axes = new_figure(ncols=3, height=0.26 * n_units + 1.6)
    for ax, (name, k) in zip(axes, (("input gate i", 0), ("forget gate f", 1), ("output gate o", 3)), strict=True):
        im = heatmap(ax, gates[:, k * H + units].T, title=name, x="word read at this step", y="hidden unit",
                     xticklabels=words, yticklabels=units, vmin=0, vmax=1, with_bar=False)
        ax.tick_params(axis="x", labelsize=8)
        ax.tick_params(axis="y", labelsize=7)
    colour_bar(im, list(axes), "gate value (0 = closed, 1 = open)")
    return fig, gates


def render_forget_bias_flow(forget_bias: float = 0.0, steps: int = 60, rnn_scale: float = 1.0):
    """Explorer: gradient reaching k steps back in a random LSTM whose forget gates start at
    sigmoid(forget_bias), against a random tanh RNN with recurrent scale ``rnn_scale``."""
    fig, ax = new_figure()
    g_rnn = gradient_norms_through_time(random_recurrent_layer("rnn", rnn_scale), steps)
    g_lstm = gradient_norms_through_time(random_recurrent_layer("lstm", 1.0, forget_bias=forget_bias), steps)
    ax.plot(g_rnn / g_rnn[0], label=f"RNN (scale {rnn_scale:g})")
    ax.plot(g_lstm / g_lstm[0], lw=2.5, label=f"LSTM (forget bias {forget_bias:g}, f0 = {1 / (1 + np.exp(-forget_bias)):.2f})")
    log_axis(ax, "y")
    set_labels(ax, "Gradient reaching k steps back, random weights", "k (time steps back from the loss)",
               r"$\|\partial L/\partial h_{T-k}\| \;/\; \|\partial L/\partial h_T\|$ (log scale)")
    ax.legend()
    k = steps - 1
    return fig, (f"{k} steps back: LSTM keeps {g_lstm[k] / g_lstm[0]:.1e} of the gradient, "
                 f"RNN {g_rnn[k] / g_rnn[0]:.1e}")
