"""Lesson 03 (LSTM gates): the long-range task's explorer, gate heat maps and the agreement set.
The models are the lesson's own code (:mod:`helpers.lib.recurrent`)."""
from __future__ import annotations

from collections import namedtuple
from functools import lru_cache

import numpy as np

from helpers.infra import plotting
from helpers.lib.recurrent import NumpyLM
from helpers.lib.recurrent_tasks import train_long_range
from helpers.lib.text import Vocab

DISTANCES = (5, 15, 30, 60)
LONG_RANGE = {"RNN": ("rnn", False), "RNN, W_h = I at the start": ("rnn", True),
              "LSTM": ("lstm", False), "GRU": ("gru", False)}


@lru_cache(maxsize=16)
def long_range_accuracy(keep_bias: float = 3.0, steps: int = 300, hidden: int = 32,
                        distances: tuple = DISTANCES, cells: tuple = ()) -> dict[str, list[float]]:
    """{model of :data:`LONG_RANGE`: accuracy at each distance} on the long-range task, the gated
    ones' keeping gate starting at sigmoid(``keep_bias``); ``cells``: (lstm_step,
    lstm_step_backward, gru_step, gru_step_backward) to train with (yours), or ()."""
    out = {}
    for name, (kind, identity) in LONG_RANGE.items():
        fns = {"lstm": cells[:2], "gru": cells[2:]}.get(kind, ()) or (None, None)
        out[name] = [train_long_range(kind, d, hidden, steps, keep_bias, identity, 0, *fns)
                     for d in distances]
    return out


def render_long_range(steps: int = 300, keep_bias: float = 3.0, hidden: int = 32,
                      cells: tuple = ()):
    """Explorer: accuracy against distance for the RNN (two starts), the LSTM and the GRU."""
    acc = long_range_accuracy(keep_bias, steps, hidden, DISTANCES, cells)
    fig, ax = plotting.new_figure()
    for (name, a), marker in zip(acc.items(), plotting.MARKERS):
        ax.plot(DISTANCES, a, marker=marker, label=name)
    ax.axhline(0.5, color=plotting.GREY, ls=":", label="chance")
    plotting.log_axis(ax, "x", ticks=DISTANCES)
    ax.set_ylim(0.4, 1.02)
    plotting.set_labels(ax, f"Remembering the first token ({steps} steps, hidden {hidden}, "
               f"keep-gate bias {keep_bias:g})",
               "distance (distractors between the cue and the answer)", "held-out accuracy")
    ax.legend()
    return fig, "\n".join(f"{name}: " + ", ".join(f"d={d}: {v:.2f}" for d, v in zip(DISTANCES, a))
                          for name, a in acc.items())


def gate_heatmap(model: NumpyLM, ids: np.ndarray, words: list[str], n_units: int = 16):
    """Heat maps of the input, forget and output gates of an LSTM reading ``ids`` (T,), for the
    ``n_units`` units whose forget gate varies most -> (figure, gates (3, T, H))."""
    model.states(np.asarray(ids)[None])
    gates = np.stack([np.stack([c[k][0] for c in model.cache[3]]) for k in (3, 4, 6)])  # i, f, o
    units = np.argsort(-gates[1].std(axis=0))[:n_units]
    fig, axes = plotting.new_figure(ncols=3, height=0.26 * n_units + 1.6)
    for ax, name, g in zip(axes, ("input gate i", "forget gate f", "output gate o"), gates):
        im = plotting.heatmap(ax, g[:, units].T, title=name, x="word read at this step",
                              y="hidden unit", xticklabels=words, yticklabels=units, vmin=0,
                              vmax=1, with_bar=False)
        ax.tick_params(axis="x", labelsize=8)
        ax.tick_params(axis="y", labelsize=7)
    plotting.colour_bar(im, list(axes), "gate value (0 = closed, 1 = open)")
    return fig, gates


AGREEMENT_NOUNS = (("man", "men"), ("woman", "women"), ("child", "children"), ("player", "players"),
                   ("country", "countries"), ("city", "cities"), ("student", "students"),
                   ("officer", "officers"), ("member", "members"), ("leader", "leaders"),
                   ("friend", "friends"), ("official", "officials"), ("school", "schools"),
                   ("minister", "ministers"), ("director", "directors"), ("writer", "writers"))
AGREEMENT_VERBS = (("is", "are"), ("was", "were"), ("has", "have"))
# frames by the number of words between the subject S and its verb; A, B, C: the nouns between
AGREEMENT_FRAMES = {0: "the S", 3: "the S of the A", 4: "the S that the A met",
                    7: "the S that the A met near the B",
                    10: "the S that the A met near the B of the C"}


# one prefix: its words, the words between subject and verb, the subject's number ('sg', 'pl')
# and the number of the nouns between them: 'other', 'same' or 'none'
AgreementItem = namedtuple("AgreementItem", "words distance number attractors")


def agreement_items(vocab: Vocab, per_subject: int = 4, seed: int = 0) -> list[AgreementItem]:
    """Every subject of :data:`AGREEMENT_NOUNS` in both numbers in every frame, with seeded nouns
    between in the other number (the test) and in the subject's (the control)."""
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
                        fill = {x: others[j][between] for x, j in zip("ABC", picks)}
                        fill["S"] = pair[idx]
                        items.append(AgreementItem(tuple(fill.get(w, w) for w in frame.split()),
                                                   distance, number, attractors))
    return items
