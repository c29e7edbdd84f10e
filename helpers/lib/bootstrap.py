"""Uncertainty of a statistic: the percentile bootstrap over items.

A number measured on a benchmark of n items (a correlation over rated pairs, an accuracy over
questions) would come out a little different on another sample of items. The bootstrap measures
how much: draw n items with replacement, recompute, repeat, and read the spread of the results.
:func:`bootstrap_interval` does it for any statistic of one or more item columns; the word-vector
versions (similarity and analogy intervals, paired differences) are in :mod:`helpers.lib.metrics`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Interval:
    """A statistic and its percentile bootstrap interval. Taught in lesson 09, section 2.

    estimate : the statistic on the items as given
    low, high: the (1 - level) / 2 and (1 + level) / 2 percentiles of the statistic over
               ``n_boot`` resamples of the items (with replacement), seeded
    """

    estimate: float
    low: float
    high: float
    level: float = 0.95
    n_items: int = 0
    n_boot: int = 0

    def overlaps(self, other: "Interval") -> bool:
        """True when the two intervals overlap (then a ranking of the two is a tie)."""
        return self.low <= other.high and other.low <= self.high

    def __str__(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def bootstrap_interval(statistic, *columns, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> Interval:
    """Percentile bootstrap interval of a statistic over items. Taught in lesson 09, section 2.

    ``columns``: one or more arrays of the same length n (e.g. cosines and human scores of
    n pairs, or the 0/1 correctness of n analogy questions); each resample draws n item
    indices with replacement (``np.random.default_rng(seed)``) and takes the same rows of
    every column, so pairs stay pairs. ``statistic(*columns) -> float``. Resamples whose
    statistic is undefined (nan, e.g. a constant column) are dropped. Returns an Interval.
    """
    cols = [np.asarray(c) for c in columns]
    if not cols:
        raise ValueError("bootstrap_interval needs at least one column of items")
    n = len(cols[0])
    if any(len(c) != n for c in cols):
        raise ValueError(f"the columns must have the same length, got {[len(c) for c in cols]}")
    if n < 2:
        raise ValueError(f"a bootstrap needs at least 2 items, got {n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    rng = np.random.default_rng(seed)
    stats = np.empty(n_boot)
    for i in range(n_boot):
        idx = rng.integers(0, n, n)
        stats[i] = statistic(*(c[idx] for c in cols))
    stats = stats[np.isfinite(stats)]
    if not len(stats):
        raise ValueError("the statistic was undefined (nan) on every resample")
    lo, hi = np.percentile(stats, [50 * (1 - level), 50 * (1 + level)])
    return Interval(float(statistic(*cols)), float(lo), float(hi), level, n, n_boot)
