"""Tests of helpers.lib.bootstrap: the percentile bootstrap over items and its interval."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from helpers.lib.bootstrap import Interval, bootstrap_interval


def test_bootstrap_interval_contains_the_estimate_and_is_seeded():
    x = np.random.default_rng(1).normal(2.0, 1.0, 400)
    iv = bootstrap_interval(np.mean, x, n_boot=500, seed=3)
    assert (
        isinstance(iv, Interval)
        and iv.low < iv.estimate < iv.high
        and iv.estimate == pytest.approx(x.mean())
    )
    # the 95 % interval of a mean is about +-1.96 standard errors
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert iv.high - iv.low == pytest.approx(2 * 1.96 * se, rel=0.2)
    assert bootstrap_interval(np.mean, x, n_boot=500, seed=3) == iv
    assert bootstrap_interval(np.mean, x, n_boot=500, seed=4) != iv
    narrow = bootstrap_interval(np.mean, x, n_boot=500, seed=3, level=0.5)
    assert iv.low < narrow.low < narrow.high < iv.high
    assert not Interval(0.1, 0.0, 0.2).overlaps(Interval(0.5, 0.3, 0.7))
    assert Interval(0.1, 0.0, 0.35).overlaps(Interval(0.5, 0.3, 0.7))


def test_bootstrap_keeps_pairs_together():
    x = np.arange(50.0)
    iv = bootstrap_interval(lambda a, b: float(spearmanr(a, b).statistic), x, 2 * x, n_boot=200)
    # resampled pairs stay perfectly correlated
    assert (
        iv.estimate == pytest.approx(1)
        and iv.low == pytest.approx(1)
        and iv.high == pytest.approx(1)
    )


def test_bootstrap_bad_input():
    with pytest.raises(ValueError, match=r"the same length, got \[3, 2\]"):
        bootstrap_interval(np.mean, [1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2 items, got 1"):
        bootstrap_interval(np.mean, [1.0])
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\), got 95"):
        bootstrap_interval(np.mean, [1.0, 2.0], level=95)
