"""Watching the student's own model learn from its ``step() -> training loss``: a progress bar,
the held-out loss every ``eval_every`` steps, a figure and an explorer that continues the run."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from threadpoolctl import threadpool_limits  # installed with scikit-learn

from helpers.infra.plotting import BLACK, COLOURS, GREY_DARK, LINESTYLES, new_figure, set_labels
from helpers.infra.progress import progress_bar
from helpers.infra.widgets import Explorer, slider


@dataclass
class Curve:
    """A live run's record, one entry per evaluation: step, mean training loss since the last,
    validation measure (a loss, or :class:`ScoreTraining`'s ρ), CPU seconds so far."""

    step: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    valid: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)


class LiveTraining:
    """A training run that the lesson drives step by step (see the module docstring)."""

    postfix = "heldout"            # the progress bar's label of the evaluation

    def __init__(self, step: Callable[[], float], evaluate: Callable[[], float], eval_every: int,
                 baselines: dict[str, float] | None = None, name: str = "your model",
                 unit: str = "nats"):
        if not callable(step) or not callable(evaluate):
            raise TypeError("step and evaluate must be functions: step() -> training loss, "
                            "evaluate() -> held-out loss")
        if int(eval_every) != eval_every or eval_every < 1:
            raise ValueError(f"eval_every must be a positive integer, got {eval_every!r}")
        self.step_fn, self.evaluate_fn, self.eval_every = step, evaluate, int(eval_every)
        self.baselines = {k: float(v) for k, v in (baselines or {}).items()}
        self.name, self.unit = name, unit
        self.curve, self.steps, self.cpu_seconds = Curve(), 0, 0.0
        self._since: list[float] = []
        self._ready = False

    # ---------------------------------------------------------------- training
    def _record(self) -> None:
        held = float(self.evaluate_fn())
        if not math.isfinite(held):
            raise FloatingPointError(f"the held-out loss is {held} after {self.steps} steps")
        c = self.curve
        c.step.append(self.steps)
        c.train_loss.append(float(np.mean(self._since)) if self._since else float("nan"))
        c.valid.append(held)
        c.cpu_seconds.append(self.cpu_seconds)
        self._since = []

    def train(self, steps: int, progress: bool = True, desc: str | None = None) -> "LiveTraining":
        """Run ``steps`` more steps (evaluating every ``eval_every`` and at the end)."""
        if int(steps) != steps or steps < 0:
            raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
        if not self.curve.step:
            self._record()                     # the untrained model: where the curve starts
        bar = progress_bar(total=int(steps), desc=desc or f"training {self.name}", unit="step",
                           disable=not progress)
        one_core = threadpool_limits(limits=1, user_api="blas")
        try:
            for _ in range(int(steps)):
                t0 = time.process_time()
                loss = float(self.step_fn())
                self.cpu_seconds += time.process_time() - t0
                if not math.isfinite(loss):
                    raise FloatingPointError(
                        f"the training loss became {loss} at step {self.steps + 1}: "
                        "a smaller learning rate, or clipping, would keep it finite")
                self.steps += 1
                self._since.append(loss)
                bar.update(1)
                if self.steps % self.eval_every == 0:
                    self._record()
                    bar.set_postfix({self.postfix: f"{self.curve.valid[-1]:.3f}"})
        finally:
            one_core.unregister()
            bar.close()
        if self.curve.step[-1] != self.steps:
            self._record()
        return self

    @property
    def heldout_loss(self) -> float:
        """The last held-out loss (the untrained model's before any training)."""
        if not self.curve.step:
            self._record()
        return self.curve.valid[-1]

    # ---------------------------------------------------------------- showing it
    def summary(self) -> str:
        """One line: steps, CPU time, held-out loss, and where it stands against the baselines."""
        if not self.curve.step:
            return f"{self.name}: not trained yet"
        loss = self.curve.valid[-1]
        below = [k for k, v in self.baselines.items() if loss < v]
        against = ", ".join(f"{k} {v:.3f}" for k, v in self.baselines.items())
        text = (f"{self.name} after {self.steps:,} steps ({self.cpu_seconds:.0f} CPU-s): held-out "
                f"{loss:.3f} {self.unit}")
        if self.baselines:
            text += f"; {against}" + (f" — below {', '.join(below)}" if below
                                      else " — above every baseline")
        return text

    def figure(self, title: str | None = None):
        """Training loss (dotted) and held-out loss (solid) against steps; baselines as lines."""
        fig, ax = new_figure()
        c = self.curve
        if c.step:
            ax.plot(c.step[1:], c.train_loss[1:], color=COLOURS["blue"], ls=":",
                    label=f"{self.name}, training batches")
            ax.plot(c.step, c.valid, color=COLOURS["blue"], ls="-", marker="o", ms=3,
                    label=f"{self.name}, held out")
        self._baseline_lines(ax)
        set_labels(ax, title or f"Training {self.name}", "training step", "loss", y_unit=self.unit)
        ax.legend(loc="upper right")
        return fig

    def explorer(self, more: tuple[int, int, int, int] = (500, 100, 5000, 100)) -> Explorer:
        """A slider (value, min, max, step) and a "Train on" button that continue this run."""
        value, lo, hi, step = more
        self._ready = False
        ex = Explorer(self._render, {"steps": slider(value, lo, hi, step, "more steps")},
                      title=f"Train {self.name} for longer", run_button="Train on")
        self._ready = True
        return ex

    def _baseline_lines(self, ax) -> None:
        for i, (name, v) in enumerate(self.baselines.items()):
            ax.axhline(v, color=GREY_DARK if i % 2 else BLACK, ls=LINESTYLES[1 + i % 3], lw=1.2,
                       label=name)

    def _render(self, steps: int):
        if self._ready:
            self.train(int(steps), progress=False)
        return self.figure(), self.summary()


class ScoreTraining(LiveTraining):
    """:class:`LiveTraining` for a rising validation ρ (lessons 07-08); ``plan(steps)`` runs
    before each :meth:`train`; ``reference`` = (label, steps, scores) draws another run."""


    postfix = "valid ρ"

    def __init__(self, step: Callable[[], float], evaluate: Callable[[], float], eval_every: int,
                 baselines: dict[str, float] | None = None, name: str = "your skip-gram",
                 plan: Callable[[int], None] | None = None, reference: tuple | None = None):
        super().__init__(step, evaluate, eval_every, baselines, name, unit="")
        self.plan, self.reference = plan, reference

    def train(self, steps: int, progress: bool = True, desc: str | None = None) -> "ScoreTraining":
        if self.plan is not None:
            self.plan(int(steps))
        return super().train(steps, progress, desc)

    @property
    def scores(self) -> list[float]:
        """The validation ρ after each evaluation (the untrained model's first)."""
        return self.curve.valid

    def summary(self) -> str:
        if not self.curve.step:
            return f"{self.name}: not trained yet"
        rho = self.scores[-1]
        text = (f"{self.name} after {self.steps:,} steps ({self.cpu_seconds:.0f} CPU-s of "
                f"training): ρ {rho:.3f} on the validation pairs of WordSim-353")
        if self.baselines:
            above = [k for k, v in self.baselines.items() if rho > v]
            text += "\n  " + ", ".join(f"{k} {v:.3f}" for k, v in self.baselines.items())
            text += (f"\n  — a higher ρ than {', '.join(above)} (point estimates on these pairs)"
                     if above else "\n  — below every baseline so far")
        return text

    def figure(self, title: str | None = None):
        """Training loss (left) and validation ρ (right) against steps; baselines as lines."""
        fig, (ax_loss, ax_rho) = new_figure(ncols=2, width=4.6)
        c = self.curve
        if len(c.step) > 1:
            ax_loss.plot(c.step[1:], c.train_loss[1:], color=COLOURS["blue"], marker="o", ms=3)
        ax_rho.plot(c.step, self.scores, color=COLOURS["vermillion"], marker="o", ms=3,
                    label=self.name)
        if self.reference is not None and c.step:
            label, xs, ys = self.reference
            shown = [(x, y) for x, y in zip(xs, ys, strict=True) if x <= max(c.step) * 1.02]
            if shown:
                ax_rho.plot(*zip(*shown), ls="none", marker="D", ms=7, mfc="none", mec=BLACK,
                            label=label)
        self._baseline_lines(ax_rho)
        set_labels(ax_loss, "Training loss (mean of the batches between points)", "training step",
                   "loss per pair", y_unit="nats")
        set_labels(ax_rho, title or "Similarity on the validation pairs", "training step",
                   "Spearman ρ (WordSim-353)")
        ax_rho.legend(loc="lower right", fontsize=7)
        return fig
