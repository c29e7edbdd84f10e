"""Experiments and explorer render functions of lessons 02 (RNN, BPTT) and 03 (LSTM).

Every ``render_*`` function is pure: ``render_*(**control values) -> (Figure, summary str)``;
the notebooks wrap them in :class:`helpers.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

from functools import lru_cache, wraps

import numpy as np
from threadpoolctl import threadpool_limits  # installed with scikit-learn

from helpers.layers import Embedding, Linear, SoftmaxCrossEntropy
from helpers.optim import SGD, Adam, clip_global_norm
from helpers.plotting import new_figure
from helpers.recurrent import TimeGRU, TimeLSTM, TimeRNN

TIME_LAYERS = {"rnn": TimeRNN, "lstm": TimeLSTM, "gru": TimeGRU}


def single_thread_blas(fn):
    """Run ``fn`` with NumPy's BLAS limited to one thread. The experiments here multiply tiny
    matrices step by step; BLAS threads only add synchronisation (measured: 16x more CPU time
    on a busy 2-core machine for the long-range task)."""
    @wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


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
def random_recurrent_layer(kind: str, scale: float, input_size: int = 16, hidden: int = 64,
                           seed: int = 0, forget_bias: float = 0.0):
    """A NumPy recurrent layer whose recurrent matrix (each gate block) is ``scale`` times a
    random orthogonal matrix, so ``scale`` is exactly its largest singular value.
    Input weights ~ N(0, 1/input_size), biases 0 (LSTM forget gate: ``forget_bias``)."""
    rng = np.random.default_rng(seed)
    layer = TIME_LAYERS[kind](input_size, hidden, rng)
    Wx, Wh, b = layer.params[:3]
    for g in range(Wh.shape[1] // hidden):
        Wh[:, g * hidden:(g + 1) * hidden] = scale * np.linalg.qr(rng.standard_normal((hidden, hidden)))[0]
    Wx[...] = rng.standard_normal(Wx.shape) / np.sqrt(input_size)
    b[...] = 0
    if kind == "lstm":
        b[hidden:2 * hidden] = forget_bias
    return layer


@single_thread_blas
def gradient_norms_through_time(layer, T: int = 60, batch: int = 8, seed: int = 0) -> np.ndarray:
    """||dL/dh_{T-k}|| for k = 0..T-1 (mean over the batch), for a loss read at the last
    step only: L = <v, h_T> with v a random vector of norm about 1. Shape (T,)."""
    rng = np.random.default_rng(seed + 1)
    H = layer.hidden_size
    layer.forward(rng.standard_normal((batch, T, layer.input_size)))
    dhs = np.zeros((batch, T, H))
    dhs[:, -1] = rng.standard_normal((batch, H)) / np.sqrt(H)
    layer.backward(dhs)
    return np.linalg.norm(layer.dh_all, axis=2).mean(axis=0)[::-1]


SCALES = (0.5, 1.0, 2.0, 3.0)


def render_gradient_flow(scale: float = 1.0, steps: int = 60, hidden: int = 64):
    """Explorer: how the gradient reaching k steps back grows or shrinks with the recurrent
    weight scale (largest singular value of W_s)."""
    fig, ax = new_figure(width=6.4, height=3.8)
    ks = np.arange(steps)
    for s in SCALES:
        ax.semilogy(ks, gradient_norms_through_time(random_recurrent_layer("rnn", s, hidden=hidden), steps),
                    color="0.75", lw=1)
        ax.annotate(f"{s:g}", (steps - 1, gradient_norms_through_time(
            random_recurrent_layer("rnn", s, hidden=hidden), steps)[-1]), fontsize=8, color="0.4")
    g = gradient_norms_through_time(random_recurrent_layer("rnn", scale, hidden=hidden), steps)
    ax.semilogy(ks, g, color="C3", lw=2.5, label=f"scale {scale:g}")
    ax.set_title("Gradient reaching k steps back (tanh RNN, random weights)")
    ax.set_xlabel("k (time steps back from the loss)")
    ax.set_ylabel("||dL/dh_{T-k}|| (log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left")
    ratio = g[-1] / g[0]
    verdict = "explodes" if ratio > 10 else ("vanishes" if ratio < 0.1 else "roughly survives")
    return fig, (f"scale {scale:g}, hidden {hidden}: the gradient {steps - 1} steps back is "
                 f"{ratio:.1e} times the gradient at the loss ({verdict})")


def clipped_profile(layer, max_norm: float, T: int = 60) -> tuple[np.ndarray, np.ndarray, float]:
    """Per-step gradient norms before and after global-norm clipping of dL/dh_t (all steps
    together, as :func:`helpers.optim.clip_global_norm` does). Returns (before, after, norm)."""
    before = gradient_norms_through_time(layer, T)
    grads = [layer.dh_all.copy()]
    norm = clip_global_norm(grads, max_norm)
    after = np.linalg.norm(grads[0], axis=2).mean(axis=0)[::-1]
    return before, after, norm


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


# ---------------------------------------------------------------- long-range dependency task
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
    fig, ax = new_figure(width=6.0, height=3.6)
    for k, style in (("rnn", "o-"), ("lstm", "s-")):
        ax.plot(distances, acc[k], style, label=k.upper())
    ax.axhline(0.5, color="0.5", ls=":", label="chance")
    ax.set_xscale("log")
    ax.set_xticks(distances, [str(d) for d in distances])
    ax.set_ylim(0.4, 1.02)
    ax.set_title(f"Remembering the first token ({steps} steps, hidden {hidden}, LSTM forget bias {forget_bias:g})")
    ax.set_xlabel("distance (distractor tokens between the cue and the prediction)")
    ax.set_ylabel("held-out accuracy")
    ax.grid(alpha=0.3)
    ax.legend()
    return fig, "  ".join(f"{k.upper()}: " + ", ".join(f"d={d}: {a:.2f}" for d, a in zip(distances, acc[k], strict=True))
                          for k in acc)


# ---------------------------------------------------------------- trained language models, in NumPy
@single_thread_blas
def lm_gradient_flow(E: np.ndarray, layer, W_out: np.ndarray, b_out: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """||dL/dh_{T-k}|| (mean over rows) for k = 0..T-1, where L is the language-model loss of
    the *last* position only: the words ids[:, :T] are read and ids[:, T] is predicted.
    ``E`` (V, D), ``layer`` a NumPy Time* layer, ``W_out`` (V, H), ``b_out`` (V,); ids (B, T+1)."""
    from helpers.layers import softmax

    ids = np.asarray(ids)
    hs = layer.forward(E[ids[:, :-1]])
    p = softmax(hs[:, -1] @ W_out.T + b_out)
    p[np.arange(len(ids)), ids[:, -1]] -= 1            # dL/dlogits = softmax - onehot
    dhs = np.zeros_like(hs)
    dhs[:, -1] = p @ W_out
    layer.backward(dhs)
    return np.linalg.norm(layer.dh_all, axis=2).mean(axis=0)[::-1]


@single_thread_blas
def gate_heatmap(layer, E: np.ndarray, ids: np.ndarray, words: list[str], n_units: int = 16):
    """Heat maps of the input, forget and output gates of a NumPy ``TimeLSTM`` reading one
    sentence ``ids`` (T,) (words: its tokens). Shows the ``n_units`` units whose forget gate
    varies most over the sentence. Returns (figure, gates (T, 4H))."""
    layer.forward(E[np.asarray(ids)][None])
    gates = layer.gates[0]
    H = layer.hidden_size
    units = np.argsort(-gates[:, H:2 * H].std(axis=0))[:n_units]
    fig, axes = new_figure(ncols=3, width=4.6, height=0.26 * n_units + 1.6)
    for ax, (name, k) in zip(axes, (("input gate i", 0), ("forget gate f", 1), ("output gate o", 3)), strict=True):
        im = ax.imshow(gates[:, k * H + units].T, aspect="auto", cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(words)), words, rotation=90, fontsize=8)
        ax.set_yticks(range(n_units), [str(u) for u in units], fontsize=7)
        ax.set_title(name)
        ax.set_xlabel("word read at this step")
    axes[0].set_ylabel("hidden unit")
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="gate value (0 = closed, 1 = open)")
    return fig, gates


def render_forget_bias_flow(forget_bias: float = 0.0, steps: int = 60, rnn_scale: float = 1.0):
    """Explorer: gradient reaching k steps back in a random LSTM whose forget gates start at
    sigmoid(forget_bias), against a random tanh RNN with recurrent scale ``rnn_scale``."""
    fig, ax = new_figure(width=6.4, height=3.8)
    g_rnn = gradient_norms_through_time(random_recurrent_layer("rnn", rnn_scale), steps)
    g_lstm = gradient_norms_through_time(random_recurrent_layer("lstm", 1.0, forget_bias=forget_bias), steps)
    ax.semilogy(g_rnn / g_rnn[0], label=f"RNN (scale {rnn_scale:g})")
    ax.semilogy(g_lstm / g_lstm[0], lw=2.5, label=f"LSTM (forget bias {forget_bias:g}, f0 = {1 / (1 + np.exp(-forget_bias)):.2f})")
    ax.set_title("Gradient reaching k steps back, random weights")
    ax.set_xlabel("k (time steps back from the loss)")
    ax.set_ylabel("||dL/dh_{T-k}|| / ||dL/dh_T|| (log)")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    k = steps - 1
    return fig, (f"{k} steps back: LSTM keeps {g_lstm[k] / g_lstm[0]:.1e} of the gradient, "
                 f"RNN {g_rnn[k] / g_rnn[0]:.1e}")
