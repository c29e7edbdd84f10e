"""Lesson 02 (recurrent networks and BPTT): the explorers' render functions, how bland a text is,
the exposure-bias figure, and the challenge's scorer. The models are the lesson's own code
(:mod:`helpers.lib.recurrent`); this module draws and keeps score.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable

import numpy as np

from helpers.course.char_live import TEST_PREDICTIONS, VALID_PREDICTIONS, heldout_loss, kn_baselines
from helpers.course.char_live import live_split
from helpers.course.models import model_dir, model_info
from helpers.infra.plotting import BLACK, COLOURS, GREY, GREY_DARK, log_axis, new_figure, set_labels
from helpers.lib.layers import log_softmax, softmax
from helpers.lib.recurrent import NumpyLM, gradient_norms, random_recurrent_lm
from helpers.lib.text import Vocab, check_tokens

SCALES = (0.5, 1.0, 3.0)


def render_gradient_flow(scale: float = 1.0, steps: int = 60, hidden: int = 64):
    """Explorer: the gradient reaching k steps back in a random tanh RNN whose recurrent matrix
    has largest singular value ``scale`` (the grey curves: :data:`SCALES`)."""
    fig, ax = new_figure()
    for s in SCALES:
        norms = gradient_norms(random_recurrent_lm("rnn", s, hidden), steps)
        ax.plot(norms, color=GREY, lw=1)
        ax.annotate(f"{s:g}", (steps - 1, norms[-1]), fontsize=8, color=GREY_DARK)
    g = gradient_norms(random_recurrent_lm("rnn", scale, hidden), steps)
    ax.plot(g, color=COLOURS["vermillion"], lw=2.5, label=f"scale {scale:g}")
    log_axis(ax, "y")
    set_labels(ax, "Gradient reaching k steps back (tanh RNN, random weights)",
               "k (time steps back from the loss)", r"$\|\partial L/\partial h_{T-k}\|$ (log scale)")
    ax.legend(loc="upper left")
    ratio = g[-1] / g[0]
    verdict = "explodes" if ratio > 10 else ("vanishes" if ratio < 0.1 else "roughly survives")
    return fig, (f"scale {scale:g}, hidden {hidden}: the gradient {steps - 1} steps back is "
                 f"{ratio:.1e} times the gradient at the loss ({verdict})")


def render_temperature(temperature: float = 1.0, seed: int = 0, *, model: NumpyLM, vocab: Vocab,
                       prompt: tuple[str, ...] = ("the", "government", "said"), top: int = 12):
    """Explorer: the next-word distribution after ``prompt`` at a temperature (bars, against the
    model's own in grey) and a 20-word sample at that temperature (the summary)."""
    ids = vocab.encode(["<eos>", *prompt])
    logits = model.forward(ids[None])[0, -1].astype(np.float64)
    p1, pt = softmax(logits), softmax(logits / temperature)
    order = np.argsort(-p1)[:top]
    fig, ax = new_figure()
    xs = np.arange(top)
    ax.bar(xs - 0.2, p1[order], 0.4, label="temperature 1 (the model)", color=GREY)
    ax.bar(xs + 0.2, pt[order], 0.4, label=f"temperature {temperature:g}", color=COLOURS["blue"])
    ax.set_xticks(xs, [vocab.itos[i] for i in order], rotation=45, ha="right")
    set_labels(ax, f"Next word after '{' '.join(prompt)}'", f"the model's {top} most likely words",
               "probability of the next word")
    ax.legend()
    entropy = float(-(pt * log_softmax(logits / temperature)).sum())
    words = model.sample(ids, 20, temperature, np.random.default_rng(seed), banned=[vocab.unk_id])
    return fig, (f"T={temperature:g}, entropy {entropy:.2f} nats: {' '.join(prompt)} | "
                 + " ".join(vocab.decode(words)))


def frequency_profile(tokens: list[str], vocab: Vocab, top: int = 100) -> dict[str, float]:
    """How bland a text is, special tokens aside: ``top_share`` of its words among the ``top``
    most frequent training words, their ``median_rank`` (1 = the most frequent) and ``distinct``,
    types / tokens."""
    check_tokens(tokens, "tokens", "frequency_profile")
    specials = set(vocab.specials)
    ordered = sorted((t for t in vocab.itos if t not in specials),
                     key=lambda t: (-vocab.counts[vocab.stoi[t]], t))
    rank = {t: r for r, t in enumerate(ordered, 1)}
    ranks = np.array([rank[t] for t in tokens if t in rank])
    if not ranks.size:
        raise ValueError("cannot profile a text without ordinary vocabulary words")
    return {"top_share": float(np.mean(ranks <= top)), "median_rank": float(np.median(ranks)),
            "distinct": len({t for t in tokens if t in rank}) / ranks.size}


def plot_exposure_gaps(runs: dict[int, dict[str, np.ndarray]], later: slice = slice(5, 30)):
    """The exposure-bias gap own - data of each training run, step by step, around the zero line
    of a model without exposure bias (left), and its mean beside the model's error on the
    source's own prefixes (right). ``runs``: seed -> :func:`~helpers.lib.recurrent_tasks.exposure_gap`."""
    fig, axes = new_figure(ncols=2)
    colours = list(COLOURS.values())
    for i, (seed, r) in enumerate(runs.items()):
        axes[0].plot(np.arange(1, len(r["gap"]) + 1), r["gap"], color=colours[i % len(colours)],
                     lw=1.2, label=f"run {seed}")
    axes[0].axhline(0, color=BLACK, lw=1, ls="--", label="no exposure bias")
    set_labels(axes[0], "Gap own - data, per training run", "steps after the 2-symbol start",
               "KL gap (nats)")
    axes[0].legend(fontsize=7, ncols=2)
    xs = np.arange(len(runs))
    axes[1].bar(xs - 0.2, [r["data_kl"][later].mean() for r in runs.values()], 0.4, color=GREY,
                label="error on the source's prefixes")
    axes[1].bar(xs + 0.2, [r["gap"][later].mean() for r in runs.values()], 0.4,
                color=COLOURS["vermillion"], label="gap own - data")
    axes[1].axhline(0, color=BLACK, lw=1)
    axes[1].set_xticks(xs, [f"run {s}" for s in runs])
    set_labels(axes[1], f"Mean over steps {later.start + 1}-{later.stop}", "training run", "KL (nats)")
    axes[1].legend(fontsize=7)
    return fig


# ---------------------------------------------------------------- the challenge
CHALLENGE_CPU_MINUTES = 5.0
SCORING_WINDOWS = (64, 128, 256, 512)          # window lengths that divide Hamlet's 32,768
SHIPPED_READ: list[str] = []                   # shipped character models read since the import


def _watch_model_files(event: str, args: tuple) -> None:
    """An audit hook: note every opening of a shipped character model's file."""
    if event == "open" and isinstance(args[0], (str, os.PathLike)):
        path = os.path.realpath(args[0])
        if path.startswith(os.path.realpath(model_dir())) and "char_" in os.path.basename(path):
            SHIPPED_READ.append(os.path.basename(path))


sys.addaudithook(_watch_model_files)


def challenge_standings(extra: dict[str, float] | None = None) -> dict[str, float]:
    """Hamlet test losses (nats/char, the first 32,768 predictions), best first: the Kneser-Ney
    trigram and 4-gram, the shipped character LSTM of lessons 03-04 and the ``extra`` rows."""
    kn, info = kn_baselines((3, 4)), model_info("char_lstm")
    rows = {"Kneser-Ney 3-gram": kn[3]["test_loss"], "Kneser-Ney 4-gram": kn[4]["test_loss"],
            f"shipped character LSTM ({info['settings']['hidden']} units, "
            f"{info['cpu_seconds'] / 60:.0f} CPU-minutes)": float(info["subset_metric"]["value"]),
            **(extra or {})}
    return dict(sorted(rows.items(), key=lambda kv: kv[1]))


def _cross_entropy(model) -> Callable:
    """The loss the challenge computes itself from the model's logits (the model never sees the
    targets)."""
    if not callable(getattr(model, "forward", None)):
        raise TypeError("build_and_train() must return the trained model, with a forward(ids) method "
                        f"giving logits (B, T, V); got {type(model).__name__}")

    def loss(x, y):
        logits = np.asarray(model.forward(x), dtype=np.float64)
        if logits.shape[:2] != x.shape or logits.ndim != 3:
            raise ValueError(f"the model's logits must have shape {x.shape + ('V',)}, got {logits.shape}")
        return float(-np.take_along_axis(log_softmax(logits), y[..., None], axis=2).mean())
    return loss


def run_challenge(build_and_train: Callable, seq_len: int = 64, extra: dict[str, float] | None = None,
                  cpu_minutes: float = CHALLENGE_CPU_MINUTES) -> dict | None:
    """Score the challenge (lesson 02 §8): time the CPU of ``build_and_train()``, which builds a
    character model, trains it on ``live_split().train`` and returns it; score its logits on
    Othello (validation) and Hamlet (test) in windows of ``seq_len``, and print where it stands.
    A run over ``cpu_minutes``, or in a kernel that has read a shipped character model, is
    scored but does not count. Returns the scores (None when not attempted)."""
    title = f"the challenge: beat the Kneser-Ney 4-gram on Hamlet within {cpu_minutes:g} CPU-minutes"
    if seq_len not in SCORING_WINDOWS:
        raise ValueError(f"seq_len must be one of {SCORING_WINDOWS} (a divisor of "
                         f"{TEST_PREDICTIONS:,}), got {seq_len}")
    t0 = time.process_time()
    try:
        model = build_and_train()
    except NotImplementedError:
        print(f"… {title}: not attempted yet — replace the raise NotImplementedError in "
              "build_and_train.")
        return None
    cpu = time.process_time() - t0
    loss_fn, split = _cross_entropy(model), live_split()
    valid = heldout_loss(loss_fn, split.valid, seq_len, 4 * VALID_PREDICTIONS)
    test = heldout_loss(loss_fn, split.test, seq_len, TEST_PREDICTIONS)
    why_not = (f"it took {cpu / 60:.1f} CPU-minutes, over the budget" if cpu > 60 * cpu_minutes else
               f"this kernel has read a shipped model ({', '.join(sorted(set(SHIPPED_READ)))}): only "
               "a model you trained counts (restart the kernel)" if SHIPPED_READ else "")
    rows = challenge_standings({**(extra or {}), "your model": test})
    print(f"{'✓' if not why_not and test < rows['Kneser-Ney 4-gram'] else '·'} {title}")
    print(f"  your run: {cpu / 60:.1f} CPU-minutes; Othello (validation) {valid:.3f}, Hamlet (test) "
          f"{test:.3f} nats/char, windows of {seq_len}" + (f" — it does not count: {why_not}" if why_not else ""))
    width = max(map(len, rows))
    for name, loss in rows.items():
        print(f"  {name:<{width}}  {loss:.3f}" + ("   <- you" if name == "your model" else ""))
    return {"cpu_seconds": cpu, "valid_loss": valid, "test_loss": test, "counts": not why_not,
            "standings": rows}
