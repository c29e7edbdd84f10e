"""The live character-level trainings of lessons 02–04: the student's NumPy model on Shakespeare.

Every lesson that trains a character model in front of the student uses the same data and the
same yardsticks, so their numbers compare across lessons and with the shipped PyTorch models:

* data: :func:`helpers.course.shakespeare.char_split` — train on 40 works, validate on *Othello*,
  test on *Hamlet* (84 characters; nothing of the two held-out plays is trained on);
* training batches: ``batch`` random windows of ``seq_len + 1`` characters of the training works
  (:func:`random_batch`), the inputs and the targets one character later;
* scores: the mean negative log-likelihood in nats per character over the first predictions of a
  held-out play, in non-overlapping windows of ``seq_len`` (:func:`heldout_loss`): the validation
  play steers choices and draws the curve, the test play (*Hamlet*, its first 32,768 predictions,
  the characters the shipped models are scored on) gives the number the lesson reports;
* baselines: interpolated Kneser-Ney character n-grams on the same split, each order with the
  discount chosen on the validation play (:func:`kn_baselines`).
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from helpers.course.char_lms import SUBSET, load_char_ngram
from helpers.course.shakespeare import CharSplit, char_split
from helpers.lib.ngram import kneser_ney_nlls

LIVE = dict(batch=32, seq_len=64, lr=3e-3, clip=1.0)   # the settings the lessons start from
TEST_PREDICTIONS = SUBSET        # Hamlet's predictions 1 .. 32,768, as the shipped models are scored
VALID_PREDICTIONS = 8_192        # Othello's first predictions: the curve's point, cheap to score often

__all__ = ["LIVE", "TEST_PREDICTIONS", "VALID_PREDICTIONS", "live_split", "random_batch", "windows",
           "heldout_loss", "kn_baselines"]


def live_split() -> CharSplit:
    """The character split of lessons 02–04 (cached: every call returns the same object)."""
    return char_split()


def random_batch(ids: np.ndarray, batch: int, seq_len: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` random windows of ``ids`` (1-D int array): inputs x and targets y, both (batch,
    seq_len) int64, with ``y[:, t] = x[:, t + 1]`` inside the text (the character after x[:, t])."""
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise TypeError(f"ids must be a 1-D integer array, got {ids.dtype} of shape {ids.shape}")
    if batch < 1 or seq_len < 1:
        raise ValueError(f"batch and seq_len must be ≥ 1, got {batch} and {seq_len}")
    if len(ids) < seq_len + 2:
        raise ValueError(f"need more than {seq_len + 1} ids for windows of {seq_len}, got {len(ids)}")
    starts = rng.integers(0, len(ids) - seq_len - 1, size=batch)
    rows = ids[starts[:, None] + np.arange(seq_len + 1)]
    return rows[:, :-1].astype(np.int64), rows[:, 1:].astype(np.int64)


def windows(ids: np.ndarray, seq_len: int, predictions: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``predictions`` predictions of ``ids`` as non-overlapping windows: inputs x and
    targets y of shape (predictions // seq_len, seq_len); y scores ids[1 .. predictions]."""
    ids = np.asarray(ids)
    if seq_len < 1 or predictions < seq_len:
        raise ValueError(f"need seq_len ≥ 1 and predictions ≥ seq_len, got {seq_len} and {predictions}")
    if predictions % seq_len:
        raise ValueError(f"predictions ({predictions}) must be a multiple of seq_len ({seq_len}): "
                         "every window full, the same characters for every model")
    if len(ids) < predictions + 1:
        raise ValueError(f"the text has {len(ids)} ids, fewer than the {predictions + 1} needed")
    n = predictions // seq_len
    x = ids[:predictions].reshape(n, seq_len).astype(np.int64)
    y = ids[1:predictions + 1].reshape(n, seq_len).astype(np.int64)
    return x, y


def heldout_loss(loss_fn: Callable[[np.ndarray, np.ndarray], float], ids: np.ndarray, seq_len: int,
                 predictions: int, batch: int = 64) -> float:
    """Mean NLL (nats per character) of a model over the first ``predictions`` predictions of
    ``ids``: ``loss_fn(x, y)`` is the model's mean loss on a batch of windows (x, y of shape
    (b, seq_len), every window starting from the model's initial state). Batches of ``batch``
    windows; the mean is over characters, so the last, smaller batch weighs what it holds."""
    x, y = windows(ids, seq_len, predictions)
    total = 0.0
    for i in range(0, len(x), batch):
        loss = float(loss_fn(x[i:i + batch], y[i:i + batch]))
        if not np.isfinite(loss):
            raise FloatingPointError(f"the model's loss on held-out windows {i}..{i + batch} is {loss}")
        total += loss * len(x[i:i + batch])
    return total / len(x)


@functools.lru_cache(maxsize=4)
def kn_baselines(orders: tuple[int, ...] = (3, 4)) -> dict[int, dict]:
    """Kneser-Ney character n-grams of ``orders`` on the live split: for each order
    ``{"discount": chosen on the validation play (the stored baseline's table), "test_loss": mean
    NLL of Hamlet's predictions 1 .. 32,768 in nats/char}``. The first order − 2 predictions have no
    full context and are not scored (a difference of at most a few characters in 32,768)."""
    split = live_split()
    rows = {r["n"]: r for r in load_char_ngram()["rows"]}
    out = {}
    for n in orders:
        if n not in rows:
            raise ValueError(f"no stored Kneser-Ney order {n}; the stored table has orders {sorted(rows)}")
        D = float(rows[n]["discount"])
        nll = kneser_ney_nlls(split.train, split.test[:TEST_PREDICTIONS + 1], n, split.V, D)
        out[n] = {"discount": D, "valid_loss": float(rows[n]["valid_loss"]), "test_loss": float(nll.mean())}
    return out
