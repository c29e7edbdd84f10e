"""Early stopping: train until a validation metric stops improving, and keep the best state.

An evaluation *improves* when it beats the best so far by more than ``min_delta``; after
``patience`` evaluations in a row without an improvement, :meth:`EarlyStopping.update` returns
True. Every decision is recorded in ``decisions`` (for the training log).
"""
from __future__ import annotations

import copy
import math
from typing import Callable


class EarlyStopping:
    """Patience-based early stopping on one validation metric, remembering the best state.

    patience  : evaluations in a row without improvement before stopping (>= 1)
    min_delta : how much better than the best (>= 0) a value must be to count as an improvement
    mode      : 'min' (a loss, perplexity: lower is better) or 'max' (an accuracy)
    """

    def __init__(self, patience: int = 3, min_delta: float = 0.0, mode: str = "min"):
        if not isinstance(patience, int) or patience < 1:
            raise ValueError(f"patience must be an integer >= 1, got {patience!r}")
        if not math.isfinite(min_delta) or min_delta < 0:
            raise ValueError(f"min_delta must be finite and >= 0, got {min_delta!r}")
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        self.patience, self.min_delta, self.mode = patience, float(min_delta), mode
        self.best: float | None = None
        self.best_step: int | None = None
        self.best_state = None
        self.bad_evals = 0
        self.stopped = False
        self.decisions: list[dict] = []

    def improves(self, value: float) -> bool:
        """Would ``value`` count as an improvement on the best so far?"""
        if self.best is None:
            return True
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def update(self, value: float, step: int, snapshot: Callable[[], object] | None = None) -> bool:
        """Record the evaluation ``value`` after ``step`` training steps; True when training
        should stop. ``snapshot()`` (optional) returns the current state, deep-copied only on an
        improvement. A non-finite value is an error (a diverged run is not "the best so far")."""
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"the validation metric is {value} at step {step}; the run has "
                             "diverged")
        if self.stopped:
            raise RuntimeError(f"update called after early stopping decided to stop (at step "
                               f"{self.decisions[-1]['step']}); start a new EarlyStopping")
        improved = self.improves(value)
        if improved:
            self.best, self.best_step, self.bad_evals = value, step, 0
            if snapshot is not None:
                self.best_state = copy.deepcopy(snapshot())
        else:
            self.bad_evals += 1
        self.stopped = self.bad_evals >= self.patience
        self.decisions.append({"step": step, "value": value, "improved": improved,
                               "best": self.best, "best_step": self.best_step,
                               "bad_evals": self.bad_evals, "stop": self.stopped})
        return self.stopped

    def summary(self) -> str:
        """One line: the best value, where, and why training ended or is still going."""
        if self.best is None:
            return "no evaluation yet"
        if self.stopped:
            why = (f"stopped: no improvement larger than {self.min_delta:g} in {self.patience} "
                   "evaluations")
        else:
            why = (f"not stopped ({self.bad_evals} of {self.patience} evaluations without "
                   "improvement)")
        return f"best {self.best:.6g} at step {self.best_step}; {why}"
