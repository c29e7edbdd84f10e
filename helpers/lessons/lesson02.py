"""Lesson 02 (recurrent networks and BPTT): the worked example "a cow eats grass", the figures of
the exposure-bias measurement, the explorers' render functions, and the challenge's scorer.

The models and their training loops are the lesson's own code in :mod:`helpers.lib.recurrent_lm`
and :mod:`helpers.lib.recurrent_tasks`; this module only draws and keeps score.

Every ``render_*`` function is pure: ``render_*(**control values) -> (Figure, summary str)``;
the notebook wraps them in :class:`helpers.infra.widgets.Explorer` and the tests call them directly.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from helpers.course.char_live import (
    TEST_PREDICTIONS,
    VALID_PREDICTIONS,
    heldout_loss,
    kn_baselines,
    live_split,
)
from helpers.course.models import model_info
from helpers.infra.plotting import BLACK, COLOURS, GREY, GREY_DARK, log_axis, new_figure, set_labels
from helpers.lib.gradient_flow import gradient_norms_through_time, random_recurrent_layer
from helpers.lib.rnn_lm import RecurrentLM, generate, next_word_logits, temperature_probs
from helpers.lib.text import Vocab

# ---------------------------------------------------------------- the worked example
COW_TABLE = {  # position: (input word, output distribution over [a, cow, eats, grass], target)
    1: ("a", [0.40, 0.30, 0.20, 0.10], "cow"),
    2: ("cow", [0.30, 0.20, 0.30, 0.20], "eats"),
    3: ("eats", [0.50, 0.10, 0.20, 0.20], "grass"),
}
COW_VOCAB = ["a", "cow", "eats", "grass"]


def cow_losses(table: dict = COW_TABLE, vocab: list[str] = COW_VOCAB) -> list[float]:
    """-log y_t[target_t] for each row of the "a cow eats grass" table (nats)."""
    return [float(-np.log(dist[vocab.index(target)])) for _, dist, target in table.values()]


# ---------------------------------------------------------------- gradients through time
SCALES = (0.5, 1.0, 2.0, 3.0)


def render_gradient_flow(scale: float = 1.0, steps: int = 60, hidden: int = 64):
    """Explorer: how the gradient reaching k steps back grows or shrinks with the recurrent
    weight scale (largest singular value of W_h)."""
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


# ---------------------------------------------------------------- exposure bias, as per-seed gaps
def plot_exposure_gaps(runs: dict[int, dict[str, np.ndarray]], later: slice = slice(5, 30)):
    """The exposure-bias gap own - data of each training seed, step by step (``runs``: seed ->
    :func:`helpers.lib.recurrent_tasks.exposure_gap` result), around the zero line a model without
    exposure bias would follow; the model's error on the source's own prefixes for scale."""
    fig, axes = new_figure(ncols=2)
    t = np.arange(1, len(next(iter(runs.values()))["gap"]) + 1)
    colours = list(COLOURS.values())
    for i, (seed, r) in enumerate(runs.items()):
        axes[0].plot(t, r["gap"], color=colours[i % len(colours)], lw=1.2, label=f"run {seed}")
    axes[0].axhline(0, color=BLACK, lw=1, ls="--", label="no exposure bias")
    set_labels(axes[0], "Gap own - data, per training run", "steps after the 2-symbol start",
               "KL gap (nats)")
    axes[0].legend(fontsize=7, ncols=2)
    seeds = list(runs)
    gaps = [float(runs[s]["gap"][later].mean()) for s in seeds]
    errors = [float(runs[s]["data_kl"][later].mean()) for s in seeds]
    xs = np.arange(len(seeds))
    axes[1].bar(xs - 0.2, errors, 0.4, color=GREY, label="error on the source's prefixes")
    axes[1].bar(xs + 0.2, gaps, 0.4, color=COLOURS["vermillion"], label="gap own - data")
    axes[1].axhline(0, color=BLACK, lw=1)
    axes[1].set_xticks(xs, [f"run {s}" for s in seeds])
    set_labels(axes[1], f"Mean over steps {later.start + 1}-{later.stop}", "training run", "KL (nats)")
    axes[1].legend(fontsize=7)
    return fig


# ---------------------------------------------------------------- the challenge
CHALLENGE_CPU_MINUTES = 5.0
SCORING_WINDOWS = (64, 128, 256, 512)          # window lengths that divide Hamlet's 32,768 predictions


def challenge_standings(model_loss: float | None = None, extra: dict[str, float] | None = None) -> dict[str, float]:
    """Hamlet test losses (nats/char, the first 32,768 predictions) to compare with: the Kneser-Ney
    trigram and 4-gram, the shipped character LSTM of lessons 03-04, ``extra`` rows (e.g. the
    lesson's live RNN) and ``model_loss`` (yours), best first."""
    kn, info = kn_baselines((3, 4)), model_info("char_lstm")
    rows = {"Kneser-Ney 3-gram": kn[3]["test_loss"], "Kneser-Ney 4-gram": kn[4]["test_loss"],
            f"shipped character LSTM (lessons 03-04, {info['settings']['hidden']} units, "
            f"{info['cpu_seconds'] / 60:.0f} CPU-minutes)": float(info["subset_metric"]["value"])}
    rows.update(extra or {})
    if model_loss is not None:
        rows["your model"] = float(model_loss)
    return dict(sorted(rows.items(), key=lambda kv: kv[1]))


def _scorer(model) -> Callable:
    """The held-out loss function the challenge uses: it takes only the model's logits (the model
    never sees the targets) and computes the cross-entropy itself."""
    logits_fn = getattr(model, "forward", None) if not _is_plain_function(model) else model
    if not callable(logits_fn):
        raise TypeError("build_and_train() must return the trained model (with a forward(ids) method giving "
                        f"logits (b, T, V)) or such a function, got {type(model).__name__}")

    def loss(x, y):
        logits = np.asarray(logits_fn(x), dtype=np.float64)
        if logits.shape[:2] != x.shape or logits.ndim != 3:
            raise ValueError(f"the model's logits must have shape {x.shape + ('V',)}, got {logits.shape}")
        logp = logits - logits.max(axis=2, keepdims=True)
        logp -= np.log(np.exp(logp).sum(axis=2, keepdims=True))
        return float(-np.take_along_axis(logp, y[..., None], axis=2).mean())
    return loss


def _is_plain_function(obj) -> bool:
    return callable(obj) and not hasattr(obj, "forward")


def run_challenge(build_and_train: Callable | None, seq_len: int = 64, extra: dict[str, float] | None = None,
                  cpu_minutes: float = CHALLENGE_CPU_MINUTES) -> dict | None:
    """Score the challenge: call ``build_and_train()`` — your code: it builds a character model,
    trains it on ``live_split().train`` and returns the model (anything with ``forward(ids)`` giving
    logits (b, T, V) for ids (b, T)) or that function — timing its CPU; then score it on Othello
    (validation: make your choices on this number) and on Hamlet (test: the challenge's number), in
    windows of ``seq_len`` characters, computing the cross-entropy from the logits itself, and print
    where it stands. A run over ``cpu_minutes`` of CPU is scored but does not count. Returns the
    scores (None when not attempted)."""
    title = f"the challenge: beat the Kneser-Ney 4-gram on Hamlet within {cpu_minutes:g} CPU-minutes"
    if build_and_train is None:
        print(f"… {title}: not attempted yet — write build_and_train() and pass it to run_challenge.")
        return None
    if seq_len not in SCORING_WINDOWS:
        raise ValueError(f"seq_len must be one of {SCORING_WINDOWS} (it must divide {TEST_PREDICTIONS:,}), got {seq_len}")
    t0 = time.process_time()
    try:
        model = build_and_train()
    except NotImplementedError:
        print(f"… {title}: not attempted yet — replace the `raise NotImplementedError` in build_and_train.")
        return None
    cpu = time.process_time() - t0
    loss_fn = _scorer(model)
    split = live_split()
    valid = heldout_loss(loss_fn, split.valid, seq_len, VALID_PREDICTIONS * 4)
    test = heldout_loss(loss_fn, split.test, seq_len, TEST_PREDICTIONS)
    counts = cpu <= 60 * cpu_minutes
    rows = challenge_standings(test, extra)
    width = max(map(len, rows))
    print(f"{'✓' if counts and test < rows['Kneser-Ney 4-gram'] else '·'} {title}")
    print(f"  your run: {cpu / 60:.1f} CPU-minutes"
          + ("" if counts else f" — over the {cpu_minutes:g}-minute budget, so it does not count")
          + f"; Othello (validation) {valid:.3f}, Hamlet (test) {test:.3f} nats/char, windows of {seq_len}")
    for name, loss in rows.items():
        print(f"  {name:<{width}}  {loss:.3f}" + ("   <- you" if name == "your model" else ""))
    return {"cpu_seconds": cpu, "valid_loss": valid, "test_loss": test, "counts": counts, "standings": rows}
