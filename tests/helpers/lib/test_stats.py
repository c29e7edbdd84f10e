"""The one statistics module (helpers.lib.stats) against SciPy and a plain loop."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from helpers.lib import stats as S

rng = np.random.default_rng(0)
X, Y, GOLD = rng.normal(size=(3, 120))


def test_spearman_rows_is_scipy_row_by_row_with_ties_and_nan_for_a_constant_row():
    x, y = np.round(rng.normal(size=(6, 40)), 1), rng.normal(size=(6, 40))
    x[5] = 1.0
    got = S.spearman_rows(x, y)
    for i in range(5):
        assert got[i] == pytest.approx(spearmanr(x[i], y[i]).statistic, abs=1e-12)
    assert np.isnan(got[5]) and np.isnan(S.spearman(x[5], y[5]))


def test_bootstrap_interval_is_the_percentile_interval_of_a_plain_loop():
    r = np.random.default_rng(7)
    boots = []
    for _ in range(300):
        i = r.integers(0, 120, 120)
        boots.append(np.mean(X[i] - Y[i]))
    lo, hi = np.percentile(boots, [2.5, 97.5])
    got = S.bootstrap_interval(lambda a, b: np.mean(a - b), X, Y, n_boot=300, seed=7)
    assert (got.estimate, got.low, got.high) == pytest.approx((np.mean(X - Y), lo, hi), abs=1e-12)
    assert tuple(got) == (got.estimate, got.low, got.high) and got.n_items == 120
    mean = S.bootstrap_mean(X - Y, n_boot=300, seed=7)
    assert tuple(mean) == pytest.approx(tuple(got), abs=1e-12)


def test_block_bootstrap_resamples_whole_blocks_and_drops_a_partial_one():
    d = np.repeat(rng.normal(size=10), 5)                      # ten blocks of five equal values
    full = S.bootstrap_mean(d, n_boot=500, block=5)
    partial = S.bootstrap_mean(np.append(d, [99.0, 99.0]), n_boot=500, block=5)
    assert partial.low == pytest.approx(full.low)
    per_block = S.bootstrap_mean(d[::5], n_boot=500)             # the same draws over block means
    assert (full.low, full.high) == pytest.approx((per_block.low, per_block.high))


def test_the_paired_difference_cancels_what_two_scores_share():
    noise = rng.normal(size=120)
    a, b = GOLD + noise, GOLD + noise + 0.05 * rng.normal(size=120)
    paired = S.paired_spearman_difference(a, b, GOLD)
    assert paired.estimate == pytest.approx(S.spearman(a, GOLD) - S.spearman(b, GOLD))
    separate = S.spearman_interval(a, GOLD)
    assert paired.high - paired.low < (separate.high - separate.low) / 3
    same = S.paired_spearman_difference(a, a, GOLD)
    assert (same.estimate, same.low, same.high) == (0.0, 0.0, 0.0)


def test_the_tie_rule():
    assert S.verdict(S.Interval(0.1, 0.02, 0.2), "A", "B") == "A ahead"
    assert S.verdict(S.Interval(-0.1, -0.2, -0.01), "A", "B") == "B ahead"
    assert S.verdict(S.Interval(0.1, -0.02, 0.2), "A", "B") == "tie"


@pytest.mark.parametrize("call", [
    lambda: S.resamples(1), lambda: S.resamples(5, n_boot=0), lambda: S.interval(0.0, [np.nan]),
    lambda: S.interval(0.0, [1.0], level=1.0), lambda: S.bootstrap_mean(np.ones((2, 2))),
    lambda: S.bootstrap_mean(np.ones(5), block=0), lambda: S.spearman_interval(X, Y[:-1]),
    lambda: S.bootstrap_interval(np.mean, X, Y[:3])])
def test_bad_input_is_refused_by_name(call):
    with pytest.raises(ValueError):
        call()
