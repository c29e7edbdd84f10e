"""Lesson 02 (recurrent networks and BPTT): the gradient explorer and the challenge's scorer.
The models are the lesson's own code (:mod:`helpers.lib.recurrent`)."""
from __future__ import annotations

import os
import sys
import time
from typing import Callable

import numpy as np

from helpers.course import char_live
from helpers.course.models import model_dir, model_info
from helpers.infra.plotting import COLOURS, GREY, GREY_DARK, log_axis, new_figure, set_labels
from helpers.lib.layers import log_softmax
from helpers.lib.recurrent import gradient_norms, random_recurrent_lm


def render_gradient_flow(scale: float = 1.0, steps: int = 60, hidden: int = 64):
    """Explorer: the gradient reaching k steps back in a tanh RNN of spectral norm ``scale``."""
    fig, ax = new_figure()
    for s in (0.5, 1.0, 3.0):
        norms = gradient_norms(random_recurrent_lm("rnn", s, hidden), steps)
        ax.plot(norms, color=GREY, lw=1)
        ax.annotate(f"{s:g}", (steps - 1, norms[-1]), fontsize=8, color=GREY_DARK)
    g = gradient_norms(random_recurrent_lm("rnn", scale, hidden), steps)
    ax.plot(g, color=COLOURS["vermillion"], lw=2.5, label=f"scale {scale:g}")
    log_axis(ax, "y")
    set_labels(ax, "Gradient reaching k steps back (tanh RNN, random weights)",
               "k (time steps back from the loss)",
               r"$\|\partial L/\partial h_{T-k}\|$ (log scale)")
    ax.legend(loc="upper left")
    ratio = g[-1] / g[0]
    verdict = "explodes" if ratio > 10 else ("vanishes" if ratio < 0.1 else "roughly survives")
    return fig, (f"scale {scale:g}, hidden {hidden}: the gradient {steps - 1} steps back is "
                 f"{ratio:.1e} times the gradient at the loss ({verdict})")


# ---------------------------------------------------------------- the challenge
SHIPPED_READ: list[str] = []              # shipped character models read since this import


def _watch_model_files(event: str, args: tuple) -> None:
    """An audit hook: note every opening of a shipped character model's file."""
    if event == "open" and isinstance(args[0], (str, os.PathLike)):
        path = os.path.realpath(args[0])
        if path.startswith(os.path.realpath(model_dir())) and "char_" in os.path.basename(path):
            SHIPPED_READ.append(os.path.basename(path))


sys.addaudithook(_watch_model_files)


def run_challenge(build_and_train: Callable, seq_len: int = 64, extra: dict | None = None,
                  cpu_minutes: float = 5.0) -> dict | None:
    """Score the challenge (lesson 02 §8): CPU time and cross-entropy, printed and returned."""
    title = ("the challenge: beat the Kneser-Ney 4-gram on Hamlet within "
             f"{cpu_minutes:g} CPU-minutes")
    if char_live.TEST_PREDICTIONS % seq_len:
        raise ValueError(f"seq_len must divide {char_live.TEST_PREDICTIONS:,} (64, 128, ...), "
                         f"got {seq_len}")
    t0 = time.process_time()
    try:
        model = build_and_train()
    except NotImplementedError:
        print(f"… {title}: not attempted yet — replace the raise NotImplementedError in "
              "build_and_train.")
        return None
    cpu = time.process_time() - t0
    if not callable(getattr(model, "forward", None)):
        raise TypeError("build_and_train() must return the trained model, with a forward(ids) "
                        f"method giving logits (B, T, V); got {type(model).__name__}")

    def loss(x, y):                                # from the logits alone: no target is given
        logits = np.asarray(model.forward(x), dtype=np.float64)
        if logits.shape[:2] != x.shape or logits.ndim != 3:
            raise ValueError(f"the logits must have shape {x.shape + ('V',)}, got {logits.shape}")
        return float(-np.take_along_axis(log_softmax(logits), y[..., None], axis=2).mean())

    split = char_live.live_split()
    valid = char_live.heldout_loss(loss, split.valid, seq_len, 4 * char_live.VALID_PREDICTIONS)
    test = char_live.heldout_loss(loss, split.test, seq_len, char_live.TEST_PREDICTIONS)
    why_not = (f"it took {cpu / 60:.1f} CPU-minutes, over the budget" if cpu > 60 * cpu_minutes else
               f"this kernel has read a shipped model ({', '.join(sorted(set(SHIPPED_READ)))}): "
               "only a model you trained counts (restart the kernel)" if SHIPPED_READ else "")
    kn, info = char_live.kn_baselines((3, 4)), model_info("char_lstm")
    rows = {"Kneser-Ney 3-gram": kn[3]["test_loss"], "Kneser-Ney 4-gram": kn[4]["test_loss"],
            f"shipped character LSTM ({info['settings']['hidden']} units, "
            f"{info['cpu_seconds'] / 60:.0f} CPU-minutes)": info["subset_metric"]["value"],
            **(extra or {}), "your model": test}
    rows = dict(sorted(rows.items(), key=lambda kv: kv[1]))
    print(f"{'✓' if not why_not and test < rows['Kneser-Ney 4-gram'] else '·'} {title}")
    print(f"  your run: {cpu / 60:.1f} CPU-minutes; Othello (validation) {valid:.3f}, Hamlet "
          f"(test) {test:.3f} nats/char, windows of {seq_len}"
          + (f"; not counted: {why_not}" if why_not else ""))
    width = max(map(len, rows))
    for name, v in rows.items():
        print(f"  {name:<{width}}  {v:.3f}" + ("   <- you" if name == "your model" else ""))
    return {"cpu_seconds": cpu, "valid_loss": valid, "test_loss": test, "counts": not why_not,
            "standings": rows}
