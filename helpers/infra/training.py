"""The lessons' small epoch loop: a progress bar, and a history of the losses and metrics."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from helpers.infra.progress import progress_bar


@dataclass
class History:
    """What a training run measured: ``step_loss`` (every step), ``epochs`` (one dict per epoch:
    {'epoch', 'train_loss' (the mean), 'seconds', **evaluate()}) and the run's wall ``seconds``."""

    step_loss: list[float] = field(default_factory=list)
    epochs: list[dict] = field(default_factory=list)
    seconds: float = 0.0


def train_loop(step: Callable[[object], float], batches: Callable[[int], Iterable], epochs: int,
               evaluate: Callable[[], dict] | None = None, desc: str = "training",
               progress: bool = True) -> History:
    """``epochs`` passes of ``step(batch) -> loss`` over ``batches(epoch)``, ``evaluate()`` after
    each; a non-finite loss stops the run with an error."""
    hist = History()
    start = time.perf_counter()
    bar = progress_bar(total=None, desc=desc, disable=not progress, unit="step")
    try:
        for epoch in range(1, epochs + 1):
            t0, losses = time.perf_counter(), []
            for batch in batches(epoch):
                loss = float(step(batch))
                if not math.isfinite(loss):
                    raise FloatingPointError(f"loss became {loss} at epoch {epoch}, step "
                                             f"{len(losses) + 1}; try a smaller learning rate")
                losses.append(loss)
                bar.update(1)
                if len(losses) % 10 == 0:
                    bar.set_postfix(epoch=epoch, loss=f"{loss:.3f}")
            hist.step_loss += losses
            record = {"epoch": epoch, "train_loss": sum(losses) / max(len(losses), 1),
                      "seconds": time.perf_counter() - t0}
            if evaluate is not None:
                record.update(evaluate())
            hist.epochs.append(record)
    finally:
        bar.close()
    hist.seconds = time.perf_counter() - start
    return hist
