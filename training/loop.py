"""The one training loop of ``make models``: steps, evaluations, early stopping and the run log.

A recipe supplies what differs between models: ``step(k)`` (one optimiser step, returning its
loss), ``evaluate(k)`` (a dict of validation numbers after step k) and ``snapshot()`` /
``restore(state)`` of its weights. :func:`train_steps` owns the rest: the progress bar, the log
of every step and evaluation, the stop rule, the curve, and the weights kept at the end::

    run = train_steps(step, 4000, log, evaluate=evaluate, eval_every=250, metric="valid_loss",
                      patience=3, snapshot=snapshot, restore=restore,
                      curve=("step", "valid_loss", "train_loss"))
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import torch

from helpers.infra.progress import progress_bar
from training.early_stopping import EarlyStopping
from training.runlog import RunLog


@dataclass
class Run:
    """What :func:`train_steps` did: the ``steps`` taken, the ``curve`` {name: one value per
    evaluation}, the ``best`` metric and its ``best_step`` (None without early stopping), why it
    stopped (``stopped_by``) and which weights it ``kept`` ('best' or 'last')."""

    steps: int
    curve: dict
    best: float | None
    best_step: int | None
    stopped_by: str
    kept: str


def train_steps(step: Callable[[int], float], max_steps: int, log: RunLog, *,
                evaluate: Callable[[int], dict] | None = None, eval_every: int | None = None,
                eval_at_end: bool = False, curve: tuple = (), metric: str | None = None,
                mode: str = "min", patience: int | None = None, min_delta: float = 0.0,
                snapshot: Callable[[], object] | None = None,
                restore: Callable[[object], None] | None = None,
                optimizer: torch.optim.Optimizer | None = None, lr_decay: float | None = None,
                limit: int | None = None, cap_reason: str | None = None,
                log_fields: dict | None = None, desc: str = "training",
                progress: bool = True) -> Run:
    """Run ``step(k)`` for k = 1 .. ``max_steps`` (the budget), logging every loss.

    Every ``eval_every`` steps (and at the budget's last step when ``eval_at_end``) the record
    ``{'step': k, **evaluate(k), 'train_loss'}`` (the mean loss since the last evaluation) is logged
    and its ``curve`` names appended to the curve. With a ``metric`` (a key of the record),
    early stopping (:class:`~training.early_stopping.EarlyStopping`, ``mode``, ``patience``,
    ``min_delta``) ends the run and, at the end of a whole run, ``restore``s the best
    ``snapshot()``; an evaluation without improvement also multiplies the learning rate of
    ``optimizer`` by ``lr_decay`` when one is given (reduce on plateau).

    ``limit`` ends the run sooner (a replay of the first steps, a short run): then the last
    weights are kept. ``cap_reason`` says why a run that reached its budget stopped;
    ``log_fields`` are added to every logged event. A non-finite loss is an error.
    """
    stopper = EarlyStopping(patience, min_delta, mode) if metric is not None else None
    cap = max_steps if limit is None else min(limit, max_steps)
    reason = cap_reason or f"the step cap max_steps={max_steps}"
    if limit is not None and limit < max_steps:
        reason = f"max_steps={limit}"
    fields = dict(log_fields or {})
    values = {name: [] for name in curve}
    since, t0, c0 = [], time.perf_counter(), time.process_time()
    bar = progress_bar(total=cap, desc=desc, unit="step", disable=not progress)
    k = 0
    for k in range(1, cap + 1):
        loss = float(step(k))
        if not math.isfinite(loss):
            raise FloatingPointError(f"the training loss is {loss} at step {k}")
        log.step(loss)
        since.append(loss)
        bar.update(1)
        at_end = eval_at_end and limit is None and k == cap
        if not ((eval_every and k % eval_every == 0) or at_end):
            continue
        record = {"step": k, **evaluate(k), "train_loss": float(np.mean(since))}
        since = []
        for name in curve:
            values[name].append(record[name])
        decision, stop = {}, False
        if stopper is not None:
            stop = stopper.update(record[metric], k, snapshot)
            decision = {key: v for key, v in stopper.decisions[-1].items()
                        if key not in ("step", "value")}
            bar.set_postfix({metric: f"{record[metric]:.4g}", "best_step": stopper.best_step})
        log.event("eval", **fields, **record, seconds=time.perf_counter() - t0,
                  cpu_seconds=time.process_time() - c0, **decision)
        if stop:
            reason = f"early stopping: {stopper.summary()}"
            break
        if lr_decay and not decision["improved"]:
            for group in optimizer.param_groups:
                group["lr"] *= lr_decay
            log.event("lr", **fields, step=k, lr=optimizer.param_groups[0]["lr"])
    bar.close()
    kept = "last"
    if stopper is not None and limit is None and stopper.best_state is not None:
        restore(stopper.best_state)
        kept = "best"
    best_step = stopper.best_step if stopper else None
    log.event("stop", **fields, reason=reason, steps=k, best_step=best_step, kept=kept)
    return Run(k, values, stopper.best if stopper else None, best_step, reason, kept)


def torch_snapshot(model: torch.nn.Module) -> tuple[Callable, Callable]:
    """(snapshot, restore) of ``model``'s weights for :func:`train_steps`: a detached copy of its
    state_dict, and loading one back."""
    return (lambda: {k: v.detach().clone() for k, v in model.state_dict().items()},
            model.load_state_dict)


def model_arrays(model: torch.nn.Module, curve: dict, vocab=None) -> dict:
    """The arrays of a shipped torch model: its weights under ``model/``, the curve under
    ``curve/`` and, when given, a :class:`~helpers.lib.text.Vocab` under ``vocab/``."""
    arrays = {f"model/{k}": v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    arrays |= {f"curve/{k}": np.asarray(list(v), dtype=np.float64) for k, v in curve.items()}
    if vocab is not None:
        arrays |= {f"vocab/{k}": a for k, a in vocab.to_arrays()[0].items()}
    return arrays


def round_to_float16(tensors) -> None:
    """Round floating ``tensors`` in place to float16 precision (as they are stored), so that the
    metrics measured after training are those of the shipped file."""
    with torch.no_grad():
        for t in tensors:
            if t.is_floating_point():
                t.copy_(t.half().float())


def timings_to_meta(timings: Mapping[str, np.ndarray]) -> dict:
    """Timing arrays as nested lists for an artefact's metadata (NaN -> None), out of the .npz."""
    values = {name: [None if np.isnan(v) else float(v)
                     for v in np.asarray(a, dtype=np.float64).reshape(-1)]
              for name, a in timings.items()}
    return {"values": values, "shapes": {name: list(np.shape(a)) for name, a in timings.items()}}
