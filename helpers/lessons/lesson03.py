"""Lesson 03 (LSTM gates): the live runs' figure, the long-range task's grid and explorers, gate
heat maps, the forget gate over a whole text, and the subject-verb agreement test. The models are
the lesson's own code (:mod:`helpers.lib.recurrent`); this module draws and keeps score.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from helpers.course.char_live import windows
from helpers.infra.plotting import GREY, GREY_DARK, MARKERS, colour_bar, heatmap, log_axis
from helpers.infra.plotting import new_figure, set_labels
from helpers.lib.layers import log_softmax
from helpers.lib.recurrent import NumpyLM, gradient_norms, random_recurrent_lm
from helpers.lib.recurrent_tasks import train_long_range
from helpers.lib.stats import Interval, bootstrap_interval
from helpers.lib.text import Vocab


def plot_live_runs(runs: dict, baselines: dict[str, float], title: str):
    """Held-out loss of live runs (name -> LiveTraining) against updates (left) and against their
    CPU seconds (right), the baselines as grey lines."""
    fig, axes = new_figure(ncols=2, sharey=True)
    for (name, run), marker in zip(runs.items(), MARKERS):
        c = run.curve
        axes[0].plot(c.step, c.heldout_loss, marker=marker, ms=3, label=name)
        axes[1].plot(c.cpu_seconds, c.heldout_loss, marker=marker, ms=3, label=name)
    shown = [v for run in runs.values() for v in run.curve.heldout_loss[1:]] + list(baselines.values())
    for ax in axes:
        for (name, v), ls in zip(baselines.items(), (":", "--")):
            ax.axhline(v, color=GREY_DARK, ls=ls, lw=1.2, label=name)
        ax.set_ylim(min(shown) - 0.05, max(shown) + 0.1)      # the untrained start is off the top
    set_labels(axes[0], title, "training step", "held-out loss (nats/char)")
    set_labels(axes[1], "The same runs against their compute", "CPU seconds of training",
               "held-out loss (nats/char)")
    axes[0].legend(fontsize=8)
    return fig


def window_losses(model: NumpyLM, ids: np.ndarray, seq_len: int, predictions: int) -> np.ndarray:
    """The mean NLL of each window of the first ``predictions`` predictions of ``ids``, each from a
    zero state (their mean is :func:`helpers.course.char_live.heldout_loss`): for paired comparisons."""
    x, y = windows(ids, seq_len, predictions)
    out = []
    for i in range(0, len(x), 64):
        logp = log_softmax(model.forward(x[i:i + 64]).astype(np.float64))
        out.append(-np.take_along_axis(logp, y[i:i + 64, :, None], axis=2)[..., 0].mean(axis=1))
    return np.concatenate(out)


# ---------------------------------------------------------------- the long-range task
DISTANCES = (5, 15, 30, 60)
LONG_RANGE = {"RNN": ("rnn", False), "RNN, W_h = I at the start": ("rnn", True),
              "LSTM": ("lstm", False), "GRU": ("gru", False)}


@lru_cache(maxsize=16)
def long_range_accuracy(keep_bias: float = 3.0, steps: int = 300, hidden: int = 32,
                        distances: tuple = DISTANCES, cells: tuple = ()) -> dict[str, list[float]]:
    """{model: held-out accuracy at each distance} on the long-range task for the models of
    :data:`LONG_RANGE`; the gated ones start with the gate that keeps the state at
    sigmoid(``keep_bias``). ``cells``: (lstm_step, lstm_step_backward, gru_step,
    gru_step_backward) to train with (yours), or () for the course's."""
    out = {}
    for name, (kind, identity) in LONG_RANGE.items():
        fns = {"lstm": cells[:2], "gru": cells[2:]}.get(kind, ()) or (None, None)
        out[name] = [train_long_range(kind, d, hidden, steps, keep_bias, identity, 0, *fns)
                     for d in distances]
    return out


def render_long_range(steps: int = 300, keep_bias: float = 3.0, hidden: int = 32, cells: tuple = ()):
    """Explorer: accuracy against distance for the RNN (two starts), the LSTM and the GRU."""
    acc = long_range_accuracy(keep_bias, steps, hidden, DISTANCES, cells)
    fig, ax = new_figure()
    for (name, a), marker in zip(acc.items(), MARKERS):
        ax.plot(DISTANCES, a, marker=marker, label=name)
    ax.axhline(0.5, color=GREY, ls=":", label="chance")
    log_axis(ax, "x", ticks=DISTANCES)
    ax.set_ylim(0.4, 1.02)
    set_labels(ax, f"Remembering the first token ({steps} steps, hidden {hidden}, "
               f"keep-gate bias {keep_bias:g})",
               "distance (distractors between the cue and the answer)", "held-out accuracy")
    ax.legend()
    return fig, "\n".join(f"{name}: " + ", ".join(f"d={d}: {v:.2f}" for d, v in zip(DISTANCES, a))
                          for name, a in acc.items())


def render_forget_bias_flow(forget_bias: float = 0.0, steps: int = 60, rnn_scale: float = 1.0):
    """Explorer: the gradient reaching k steps back in a random LSTM whose forget gates start at
    sigmoid(``forget_bias``), against a random tanh RNN of recurrent scale ``rnn_scale``."""
    g_rnn = gradient_norms(random_recurrent_lm("rnn", rnn_scale), steps)
    g_lstm = gradient_norms(random_recurrent_lm("lstm", 1.0, forget_bias=forget_bias), steps)
    fig, ax = new_figure()
    ax.plot(g_rnn / g_rnn[0], label=f"RNN (scale {rnn_scale:g})")
    ax.plot(g_lstm / g_lstm[0], lw=2.5, label=f"LSTM (forget bias {forget_bias:g}, "
            f"f = {1 / (1 + np.exp(-forget_bias)):.2f} at the start)")
    log_axis(ax, "y")
    set_labels(ax, "Gradient reaching k steps back, random weights", "k (time steps back)",
               r"$\|\partial L/\partial h_{T-k}\| \;/\; \|\partial L/\partial h_T\|$ (log scale)")
    ax.legend()
    k = steps - 1
    return fig, (f"{k} steps back: the LSTM keeps {g_lstm[k] / g_lstm[0]:.1e} of the gradient, "
                 f"the RNN {g_rnn[k] / g_rnn[0]:.1e}")


# ---------------------------------------------------------------- inside the trained LSTM
def lstm_gates(model: NumpyLM) -> np.ndarray:
    """The gates i, f, o of an LSTM's last forward pass: (3, B, T, H)."""
    caches = model.cache[3]
    return np.stack([np.stack([c[k] for c in caches], axis=1) for k in (3, 4, 6)])


def gate_heatmap(model: NumpyLM, ids: np.ndarray, words: list[str], n_units: int = 16):
    """Heat maps of the input, forget and output gates of an LSTM reading one sentence ``ids``
    (T,), for the ``n_units`` units whose forget gate varies most. Returns (figure, gates
    (3, T, H))."""
    model.states(np.asarray(ids)[None])
    gates = lstm_gates(model)[:, 0]
    units = np.argsort(-gates[1].std(axis=0))[:n_units]
    fig, axes = new_figure(ncols=3, height=0.26 * n_units + 1.6)
    for ax, name, g in zip(axes, ("input gate i", "forget gate f", "output gate o"), gates):
        im = heatmap(ax, g[:, units].T, title=name, x="word read at this step", y="hidden unit",
                     xticklabels=words, yticklabels=units, vmin=0, vmax=1, with_bar=False)
        ax.tick_params(axis="x", labelsize=8)
        ax.tick_params(axis="y", labelsize=7)
    colour_bar(im, list(axes), "gate value (0 = closed, 1 = open)")
    return fig, gates


def forget_gates(model: NumpyLM, ids: np.ndarray, rows: int = 16, chunk: int = 256):
    """The forget gate, averaged over the units, at every token of ``ids`` read as ``rows``
    parallel streams (the state carried): (f (n,), the token read at each step (n,))."""
    X = np.asarray(ids[:len(ids) // rows * rows]).reshape(rows, -1)
    out, state = [], None
    for start in range(0, X.shape[1], chunk):
        model.states(X[:, start:start + chunk], state)
        state = model.last_state
        out.append(lstm_gates(model)[1].mean(axis=-1))
    return np.concatenate(out, axis=1).reshape(-1), X.reshape(-1)


def forget_gate_contrast(f: np.ndarray, tokens: np.ndarray, at, block: int = 500) -> Interval:
    """Mean forget gate at the tokens whose id is in ``at`` minus at all others, with a 95 %
    bootstrap interval over blocks of ``block`` consecutive tokens."""
    f, mask = np.asarray(f, np.float64), np.isin(tokens, np.asarray(at))
    n = len(f) // block
    if n < 2 or not mask.any() or mask.all():
        raise ValueError(f"need >= 2 blocks of {block} tokens with both kinds of token; got "
                         f"{len(f)} tokens, {int(mask.sum())} of the class")
    fb, mb = f[:n * block].reshape(n, block), mask[:n * block].reshape(n, block)
    cols = ((fb * mb).sum(1), mb.sum(1), (fb * ~mb).sum(1), (~mb).sum(1))
    return bootstrap_interval(lambda sa, na, so, no: sa.sum() / na.sum() - so.sum() / no.sum(), *cols)


# ---------------------------------------------------------------- subject-verb agreement
AGREEMENT_NOUNS = (("man", "men"), ("woman", "women"), ("child", "children"), ("player", "players"),
                   ("country", "countries"), ("city", "cities"), ("student", "students"),
                   ("officer", "officers"), ("member", "members"), ("leader", "leaders"),
                   ("friend", "friends"), ("official", "officials"), ("school", "schools"),
                   ("minister", "ministers"), ("director", "directors"), ("writer", "writers"))
AGREEMENT_VERBS = (("is", "are"), ("was", "were"), ("has", "have"))
# frames by the number of words between the subject S and its verb; A, B, C: the nouns between
AGREEMENT_FRAMES = {0: "the S", 3: "the S of the A", 4: "the S that the A met",
                    7: "the S that the A met near the B", 10: "the S that the A met near the B of the C"}


@dataclass
class AgreementItem:
    """One prefix: its words, the distance (words between subject and verb), the subject's number
    ('sg', 'pl') and the nouns' number between them: 'other', 'same' or 'none'."""

    words: tuple[str, ...]
    distance: int
    number: str
    attractors: str


def agreement_items(vocab: Vocab, per_subject: int = 4, seed: int = 0) -> list[AgreementItem]:
    """Every subject of :data:`AGREEMENT_NOUNS` in both numbers in every frame, ``per_subject``
    times with the nouns between drawn (seeded) from the other subjects, in the other number (the
    test) and in the subject's (the control). Refuses words outside ``vocab``."""
    words = {w for pair in AGREEMENT_NOUNS + AGREEMENT_VERBS for w in pair}
    words |= {w for frame in AGREEMENT_FRAMES.values() for w in frame.split() if w not in "SABC"}
    missing = sorted(w for w in words if w not in vocab.stoi)
    if missing:
        raise ValueError(f"agreement test words not in the vocabulary: {missing}")
    rng, items = np.random.default_rng(seed), []
    for distance, frame in AGREEMENT_FRAMES.items():
        kinds = ("other", "same") if "A" in frame else ("none",)
        for k, pair in enumerate(AGREEMENT_NOUNS):
            others = AGREEMENT_NOUNS[:k] + AGREEMENT_NOUNS[k + 1:]
            for number, idx in (("sg", 0), ("pl", 1)):
                for attractors in kinds:
                    between = idx if attractors == "same" else 1 - idx
                    for _ in range(per_subject if "A" in frame else 1):
                        picks = rng.choice(len(others), 3, replace=False)
                        fill = {"S": pair[idx], **{x: others[j][between] for x, j in zip("ABC", picks)}}
                        items.append(AgreementItem(tuple(fill.get(w, w) for w in frame.split()),
                                                   distance, number, attractors))
    return items


def agreement_scores(model: NumpyLM, vocab: Vocab, items: list[AgreementItem]) -> np.ndarray:
    """For each prefix (read after ``<eos>``), the fraction of the verb pairs of
    :data:`AGREEMENT_VERBS` whose agreeing form the model finds more likely: (len(items),)."""
    sg, pl = (np.array([vocab.stoi[p[i]] for p in AGREEMENT_VERBS]) for i in (0, 1))
    out = np.empty(len(items))
    for length in sorted({len(it.words) for it in items}):
        idx = [i for i, it in enumerate(items) if len(it.words) == length]
        logits = model.forward(np.array([vocab.encode(["<eos>", *items[i].words]) for i in idx]))[:, -1]
        singular = np.array([items[i].number == "sg" for i in idx])[:, None]
        out[idx] = ((logits[:, sg] > logits[:, pl]) == singular).mean(axis=1)
    return out
