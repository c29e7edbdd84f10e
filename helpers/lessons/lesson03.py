"""Lesson 03 (LSTM gates): the long-range dependency task, gate heat maps, the forget gate
measured over a whole text, the subject-verb agreement test of the trained language models, and
the explorers' render functions.

Every ``render_*`` function is pure: ``render_*(**control values) -> (Figure, summary str)``;
the notebook wraps them in :class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from helpers.course.char_live import windows
from helpers.infra.plotting import (
    GREY,
    GREY_DARK,
    MARKERS,
    colour_bar,
    heatmap,
    log_axis,
    new_figure,
    set_labels,
)
from helpers.infra.threads import single_thread_blas
from helpers.lib.gradient_flow import gradient_norms_through_time, random_recurrent_layer
from helpers.lib.layers import log_softmax
from helpers.lib.metrics import Interval, bootstrap_interval
from helpers.lib.recurrent_lm import NumpyLM
from helpers.lib.recurrent_tasks import train_long_range
from helpers.lib.rnn_lm import EOS, RecurrentLM
from helpers.lib.text import Vocab


# ---------------------------------------------------------------- the live LSTM beside the live RNN
def plot_live_runs(runs: dict, baselines: dict[str, float], title: str):
    """Held-out loss of several live runs (name -> :class:`helpers.infra.live_training.LiveTraining`)
    against training steps (left) and against the CPU seconds they took (right), the baselines as
    grey lines: the same comparison at the same number of updates and at the same compute. The
    y-axis shows the trained part of the curves (the untrained start, log V, is above it)."""
    fig, axes = new_figure(ncols=2, sharey=True)
    for (name, run), marker in zip(runs.items(), MARKERS, strict=False):
        c = run.curve
        axes[0].plot(c.step, c.heldout_loss, marker=marker, ms=3, label=name)
        axes[1].plot(c.cpu_seconds, c.heldout_loss, marker=marker, ms=3, label=name)
    trained = [v for run in runs.values() for v in run.curve.heldout_loss[1:]]    # the untrained start is off the top
    low, high = min(trained + list(baselines.values())), max(trained + list(baselines.values()))
    for ax in axes:
        for (name, v), ls in zip(baselines.items(), (":", "--", "-."), strict=False):
            ax.axhline(v, color=GREY_DARK, ls=ls, lw=1.2, label=name)
        ax.set_ylim(low - 0.05, high + 0.1)
    set_labels(axes[0], title, "training step", "held-out loss (nats/char)")
    set_labels(axes[1], "The same runs against their compute", "CPU seconds of training", "held-out loss (nats/char)")
    axes[0].legend(fontsize=8)
    return fig


def window_losses(model: NumpyLM, ids: np.ndarray, seq_len: int, predictions: int, batch: int = 64) -> np.ndarray:
    """The mean NLL of each non-overlapping window of the first ``predictions`` predictions of
    ``ids``, every window from a zero state, as :func:`helpers.course.char_live.heldout_loss` scores
    them: (predictions // seq_len,) float64, whose mean is the held-out loss. Two models scored this
    way are compared window by window (a paired comparison)."""
    x, y = windows(ids, seq_len, predictions)
    out = []
    for i in range(0, len(x), batch):
        logp = log_softmax(model.forward(x[i:i + batch]).astype(np.float64))
        out.append(-np.take_along_axis(logp, y[i:i + batch, :, None], axis=2)[..., 0].mean(axis=1))
    return np.concatenate(out)


# ---------------------------------------------------------------- the long-range dependency task
DISTANCES = (5, 15, 30, 60)


MODELS = {"rnn": ("rnn", "default"), "rnn, identity start": ("rnn", "identity"), "lstm": ("lstm", "default")}
LABELS = {"rnn": "RNN", "rnn, identity start": "RNN, W_h = I at the start", "lstm": "LSTM"}


@lru_cache(maxsize=32)
def long_range_accuracy(kinds: tuple[str, ...] = tuple(MODELS), distances: tuple[int, ...] = DISTANCES,
                        hidden: int = 32, steps: int = 300, forget_bias: float = 2.0,
                        seed: int = 0) -> dict[str, list[float]]:
    """{model: [held-out accuracy at each distance]} for the models of :data:`MODELS` (the RNN
    from PyTorch's initialisation, the RNN started with W_h = identity, and the LSTM with its
    forget-gate bias at ``forget_bias``). Memoised: same arguments, same numbers."""
    out = {}
    for name in kinds:
        kind, init = MODELS[name]
        out[name] = [train_long_range(kind, d, hidden, steps, seed=seed, forget_bias=forget_bias, rnn_init=init)
                     for d in distances]
    return out


def render_long_range(steps: int = 300, forget_bias: float = 2.0, hidden: int = 32, max_distance: int = 60):
    """Explorer: accuracy against distance for the RNN (two starts) and the LSTM on the toy agreement task."""
    distances = tuple(d for d in DISTANCES if d <= max_distance) or (max_distance,)
    acc = long_range_accuracy(tuple(MODELS), distances, hidden, steps, forget_bias)
    fig, ax = new_figure()
    for k, marker in zip(MODELS, MARKERS, strict=False):
        ax.plot(distances, acc[k], marker=marker, label=LABELS[k])
    ax.axhline(0.5, color=GREY, ls=":", label="chance")
    log_axis(ax, "x", ticks=distances)
    ax.set_ylim(0.4, 1.02)
    set_labels(ax, f"Remembering the first token ({steps} steps, hidden {hidden}, forget bias {forget_bias:g})",
               "distance (distractor tokens between the cue and the prediction)", "held-out accuracy")
    ax.legend()
    return fig, "\n".join(f"{LABELS[k]}: " + ", ".join(f"d={d}: {a:.2f}" for d, a in zip(distances, acc[k], strict=True))
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


# ---------------------------------------------------------------- the forget gate over a whole text
CLAUSE_WORDS = ("that", "which", "who", "and", "but", "because", "when", "while", "if", "although")


@torch.no_grad()
def forget_gates(model: RecurrentLM, ids: np.ndarray, rows: int = 16, chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """The forget gate of a trained LSTM LM at every token of the stream ``ids``, averaged over
    its hidden units: ``ids`` is read as ``rows`` parallel streams (the state carried along each,
    as in evaluation); at each step f_t = sigmoid(W_if x_t + b_if + W_hf h_{t-1} + b_hf) for the
    token x_t just read. Returns (f (n,) float64: mean over units, tokens (n,) int: the token
    read at that step), both in the rows' order (n = rows * (len(ids) // rows))."""
    if model.kind != "lstm":
        raise ValueError(f"forget gates need an LSTM, got a {model.kind!r} model")
    model.eval()
    n = len(ids) // rows * rows
    X = torch.as_tensor(np.asarray(ids[:n]).reshape(rows, -1))
    H = model.rnn.hidden_size
    W_ih, W_hh = model.rnn.weight_ih_l0[H:2 * H], model.rnn.weight_hh_l0[H:2 * H]
    bias = model.rnn.bias_ih_l0[H:2 * H] + model.rnn.bias_hh_l0[H:2 * H]
    state, h_prev, out = None, torch.zeros(rows, 1, H), []
    for start in range(0, X.shape[1], chunk):
        x = model.embed(X[:, start:start + chunk])
        hs, state = model.rnn(x, state)
        before = torch.cat([h_prev, hs[:, :-1]], dim=1)              # h_{t-1} for each step
        f = torch.sigmoid(x @ W_ih.T + before @ W_hh.T + bias)       # (rows, chunk, H)
        out.append(f.mean(-1).double())
        h_prev = hs[:, -1:]
    return torch.cat(out, 1).reshape(-1).numpy(), X.reshape(-1).numpy()


@dataclass
class GateContrast:
    """Mean forget gate at the tokens of a class and at all other tokens, and the difference
    (class - other) with a 95 % block-bootstrap interval (blocks of consecutive tokens)."""

    name: str
    n_tokens: int
    mean_at: float
    mean_elsewhere: float
    difference: Interval


def forget_gate_contrast(f: np.ndarray, tokens: np.ndarray, at: np.ndarray, name: str, block: int = 500,
                         n_boot: int = 1000, seed: int = 0) -> GateContrast:
    """Compare the forget gate ``f`` (n,) at the tokens whose id is in ``at`` with the rest,
    resampling blocks of ``block`` consecutive tokens (neighbouring steps are not independent)."""
    f, tokens = np.asarray(f, np.float64), np.asarray(tokens)
    if f.shape != tokens.shape or f.ndim != 1:
        raise ValueError(f"expected f and tokens of the same shape (n,), got {f.shape} and {tokens.shape}")
    mask = np.isin(tokens, np.asarray(at))
    n_blocks = len(f) // block
    if n_blocks < 2 or not mask.any() or mask.all():
        raise ValueError(f"need >= 2 blocks of {block} tokens with both kinds of token; got {len(f)} tokens, "
                         f"{int(mask.sum())} of class {name!r}")
    fb, mb = f[:n_blocks * block].reshape(n_blocks, block), mask[:n_blocks * block].reshape(n_blocks, block)
    cols = ((fb * mb).sum(1), mb.sum(1), (fb * ~mb).sum(1), (~mb).sum(1))

    def diff(s_at, n_at, s_else, n_else):
        return s_at.sum() / n_at.sum() - s_else.sum() / n_else.sum()

    interval = bootstrap_interval(diff, *cols, n_boot=n_boot, seed=seed)
    return GateContrast(name, int(mask.sum()), float(f[mask].mean()), float(f[~mask].mean()), interval)


# ---------------------------------------------------------------- subject-verb agreement (Linzen et al. 2016)
# (singular, plural) subjects that are not collective nouns (a BBC "the team are" would be right)
AGREEMENT_NOUNS = (("man", "men"), ("woman", "women"), ("child", "children"), ("player", "players"),
                   ("country", "countries"), ("city", "cities"), ("student", "students"),
                   ("officer", "officers"), ("member", "members"), ("leader", "leaders"),
                   ("friend", "friends"), ("official", "officials"), ("school", "schools"),
                   ("minister", "ministers"), ("director", "directors"), ("writer", "writers"))
AGREEMENT_VERBS = (("is", "are"), ("was", "were"), ("has", "have"))
# frames by the number of words between the subject S and its verb; A, B, C: attractors, nouns of
# the other number
AGREEMENT_FRAMES = {0: "the S", 3: "the S of the A", 4: "the S that the A met",
                    7: "the S that the A met near the B", 10: "the S that the A met near the B of the C"}


@dataclass
class AgreementItem:
    """One constructed prefix: its words, the distance (words between subject and verb), the
    subject's number ('sg' or 'pl'), and its attractors' number relative to the subject
    ('other', 'same'; 'none' without attractors)."""

    words: tuple[str, ...]
    distance: int
    number: str
    attractors: str = "other"


def agreement_items(vocab: Vocab, per_subject: int = 4, seed: int = 0) -> list[AgreementItem]:
    """The constructed prefixes of :data:`AGREEMENT_FRAMES`: every subject of
    :data:`AGREEMENT_NOUNS` in both numbers, ``per_subject`` times per frame with attractors
    drawn (seeded) from the other nouns, once in the other number (the test) and once in the
    subject's number (the control: same distance, no conflicting noun). Every word must be in
    ``vocab`` (a ValueError names the ones that are not)."""
    words = {w for pair in AGREEMENT_NOUNS + AGREEMENT_VERBS for w in pair}
    words |= {w for frame in AGREEMENT_FRAMES.values() for w in frame.split() if w not in "SABC"}
    missing = sorted(w for w in words if w not in vocab.stoi)
    if missing:
        raise ValueError(f"agreement test words not in the vocabulary: {missing}")
    rng = np.random.default_rng(seed)
    items = []
    for distance, frame in AGREEMENT_FRAMES.items():
        for k, pair in enumerate(AGREEMENT_NOUNS):
            others = [p for j, p in enumerate(AGREEMENT_NOUNS) if j != k]
            for number, idx in (("sg", 0), ("pl", 1)):
                for attractors in (("other", "same") if "A" in frame else ("none",)):
                    a_idx = idx if attractors == "same" else 1 - idx
                    for _ in range(per_subject if "A" in frame else 1):
                        picks = rng.choice(len(others), 3, replace=False)
                        fill = {"S": pair[idx], **{x: others[j][a_idx] for x, j in zip("ABC", picks, strict=True)}}
                        items.append(AgreementItem(tuple(fill.get(w, w) for w in frame.split()), distance, number,
                                                   attractors))
    return items


@torch.no_grad()
def agreement_scores(model: RecurrentLM, vocab: Vocab, items: list[AgreementItem]) -> np.ndarray:
    """For each item, the fraction of the verb pairs of :data:`AGREEMENT_VERBS` for which the
    model gives the form that agrees with the subject a higher probability than the other form
    (read after ``<eos>``, as a sentence start). Returns (len(items),) float64 in [0, 1]."""
    model.eval()
    sg, pl = (np.array([vocab.stoi[p[i]] for p in AGREEMENT_VERBS]) for i in (0, 1))
    out = np.empty(len(items))
    for length in sorted({len(it.words) for it in items}):
        idx = [i for i, it in enumerate(items) if len(it.words) == length]
        ids = torch.as_tensor(np.array([vocab.encode([EOS, *items[i].words]) for i in idx]))
        logits = model(ids)[0][:, -1].double().numpy()
        right_sg = logits[:, sg] > logits[:, pl]                   # (n, pairs): singular form preferred
        numbers = np.array([items[i].number == "sg" for i in idx])[:, None]
        out[idx] = (right_sg == numbers).mean(axis=1)
    return out


def agreement_table(models: dict[str, RecurrentLM], vocab: Vocab, items: list[AgreementItem],
                    n_boot: int = 1000) -> dict[str, dict[tuple[int, str], Interval]]:
    """{kind: {(distance, attractors): accuracy with a 95 % bootstrap interval over the prefixes}}."""
    keys = [(it.distance, it.attractors) for it in items]
    table = {}
    for kind, model in models.items():
        scores = agreement_scores(model, vocab, items)
        table[kind] = {key: bootstrap_interval(np.mean, scores[[k == key for k in keys]], n_boot=n_boot)
                       for key in sorted(set(keys))}
    return table
