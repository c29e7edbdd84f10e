"""A small training loop with a tqdm progress bar and a returned loss history."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from helpers.infra.progress import progress_bar


@dataclass
class History:
    """What a training run measured.

    step_loss : training loss of every step, in order
    epochs    : one dict per epoch: {'epoch', 'train_loss' (mean), 'seconds', **evaluate()}
    seconds   : total wall-clock time of the run
    stopped_early : True when ``max_seconds`` ended the run
    """

    step_loss: list[float] = field(default_factory=list)
    epochs: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    stopped_early: bool = False

    def metric(self, name: str) -> list[float]:
        """The per-epoch values of ``name`` (e.g. 'valid_loss')."""
        if not self.epochs or name not in self.epochs[0]:
            have = sorted(self.epochs[0]) if self.epochs else []
            raise KeyError(f"no per-epoch metric {name!r}; recorded: {have}")
        return [e[name] for e in self.epochs]


def train_loop(step: Callable[[object], float], batches: Callable[[int], Iterable], epochs: int,
               evaluate: Callable[[], dict] | None = None, desc: str = "training",
               max_seconds: float | None = None, progress: bool = True,
               budget_clock: Callable[[], float] = time.perf_counter) -> History:
    """Run ``epochs`` passes of ``step(batch) -> loss`` over ``batches(epoch)``.

    ``evaluate()`` (optional) runs after each epoch and returns metrics to record.
    ``max_seconds`` stops after the step that exceeds this budget (for same-budget
    comparisons), measured by ``budget_clock``: wall-clock time by default, or e.g.
    ``time.thread_time`` for CPU time, which other processes on a busy machine do not eat
    into. ``history.seconds`` is always wall-clock time. A non-finite loss stops the run
    with a clear error.
    """
    hist = History()
    start, budget_start = time.perf_counter(), budget_clock()
    bar = progress_bar(total=None, desc=desc, disable=not progress, unit="step")
    try:
        for epoch in range(1, epochs + 1):
            t0, losses = time.perf_counter(), []
            for batch in batches(epoch):
                loss = float(step(batch))
                if not math.isfinite(loss):
                    raise FloatingPointError(f"loss became {loss} at epoch {epoch}, step {len(losses) + 1}; "
                                             "try a smaller learning rate")
                losses.append(loss)
                bar.update(1)
                if len(losses) % 10 == 0:
                    bar.set_postfix(epoch=epoch, loss=f"{loss:.3f}")
                if max_seconds is not None and budget_clock() - budget_start > max_seconds:
                    hist.stopped_early = True
                    break
            hist.step_loss += losses
            record = {"epoch": epoch, "train_loss": sum(losses) / max(len(losses), 1),
                      "seconds": time.perf_counter() - t0}
            if evaluate is not None:
                record.update(evaluate())
            hist.epochs.append(record)
            if hist.stopped_early:
                break
    finally:
        bar.close()
    hist.seconds = time.perf_counter() - start
    return hist
