"""Bootstrap intervals, paired differences and Spearman's rho (lesson 01 §6); a difference whose
95 % interval contains 0 is a tie."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.stats import rankdata, spearmanr


@dataclass
class Interval:
    """A statistic and its bootstrap interval; unpacks as (estimate, low, high) (lesson 01 §6)."""

    estimate: float
    low: float
    high: float
    level: float = 0.95
    n_items: int = 0
    n_boot: int = 0

    def __iter__(self):
        return iter((self.estimate, self.low, self.high))

    def __str__(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def resamples(n: int, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """Indices (n_boot, n) of ``n_boot`` resamples of ``n`` items (lesson 01 §6)."""
    if n < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {n}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def interval(estimate: float, boots: np.ndarray, level: float = 0.95) -> Interval:
    """The percentile interval of the bootstrap values ``boots`` (nan ones, from resamples where
    the statistic is undefined, left out) around ``estimate`` (lesson 01 §6)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    boots = np.asarray(boots, np.float64)
    finite = boots[np.isfinite(boots)]
    if not finite.size:
        raise ValueError("the statistic was undefined (nan) on every resample")
    low, high = np.percentile(finite, [50 * (1 - level), 50 * (1 + level)])
    return Interval(float(estimate), float(low), float(high), level, 0, boots.size)


def bootstrap_interval(statistic: Callable[..., float], *columns, n_boot: int = 1000,
                       level: float = 0.95, seed: int = 0) -> Interval:
    """Percentile bootstrap interval of ``statistic(*columns)``, each resample taking the same rows
    of every column (lesson 01 §6)."""
    cols = [np.asarray(c) for c in columns]
    if not cols or any(len(c) != len(cols[0]) for c in cols):
        raise ValueError(f"give one or more columns of the same length, "
                         f"got {[len(c) for c in cols]}")
    idx = resamples(len(cols[0]), n_boot, seed)
    boots = np.array([statistic(*(c[i] for c in cols)) for i in idx], dtype=np.float64)
    result = interval(statistic(*cols), boots, level)
    result.n_items = len(cols[0])
    return result


def bootstrap_mean(values, n_boot: int = 2000, seed: int = 0, level: float = 0.95,
                   block: int = 1) -> Interval:
    """Mean of per-item ``values`` (n,) with its bootstrap interval (lesson 01 §6); ``block > 1``
    resamples runs of consecutive items, a last partial block dropped."""
    values = np.asarray(values, np.float64)
    if values.ndim != 1:
        raise ValueError(f"bootstrap_mean: expected a 1-D array of per-item values, "
                         f"got shape {values.shape}")
    if block < 1:
        raise ValueError(f"block must be at least 1, got {block}")
    n_blocks = values.size // block
    means = values[:n_blocks * block].reshape(n_blocks, block).mean(axis=1)
    boots = means[resamples(n_blocks, n_boot, seed)].mean(axis=1)
    result = interval(values.mean(), boots, level)
    result.n_items = values.size
    return result


def spearman(x, y) -> float:
    """Spearman's rho of two samples; nan when either is constant (lesson 09 §2)."""
    x, y = np.asarray(x), np.asarray(y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``x`` with the same row of ``y``, (..., n) -> (...)
    (lesson 09 §2): Pearson's correlation of the average ranks; nan for a constant row."""
    rx, ry = rankdata(x, axis=-1), rankdata(y, axis=-1)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=-1) / np.sqrt((rx ** 2).sum(axis=-1) * (ry ** 2).sum(axis=-1))


def spearman_interval(scores, gold, n_boot: int = 1000, seed: int = 0,
                      level: float = 0.95) -> Interval:
    """Spearman's rho of ``scores`` with ``gold`` (n,) and its bootstrap interval (lesson 09 §2)."""
    scores, gold = _same_items(scores, gold)
    idx = resamples(gold.size, n_boot, seed)
    result = interval(spearman(scores, gold), spearman_rows(scores[idx], gold[idx]), level)
    result.n_items = gold.size
    return result


def paired_spearman_difference(a, b, gold, n_boot: int = 1000, seed: int = 0,
                               level: float = 0.95) -> Interval:
    """rho(a, gold) - rho(b, gold) on the same n items, with a paired bootstrap interval
    (lesson 09 §2)."""
    a, gold = _same_items(a, gold)
    b, _ = _same_items(b, gold)
    idx = resamples(gold.size, n_boot, seed)
    boots = spearman_rows(a[idx], gold[idx]) - spearman_rows(b[idx], gold[idx])
    result = interval(spearman(a, gold) - spearman(b, gold), boots, level)
    result.n_items = gold.size
    return result


def verdict(difference: Interval, better: str, worse: str) -> str:
    """The course's rule for a difference better - worse: '<better> ahead' when its interval is
    above 0, '<worse> ahead' when below, else 'tie' (lesson 01 §6)."""
    if difference.low > 0:
        return f"{better} ahead"
    if difference.high < 0:
        return f"{worse} ahead"
    return "tie"


def _same_items(x, y) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError(f"expected two 1-D arrays of the same length >= 3, "
                         f"got {x.shape} and {y.shape}")
    return x, y
