"""helpers.course.trained_word_lms: the gradient that reaches back in a trained layer, the block
bootstrap of a per-token difference, and the geometric means of the gradient ratios."""
import numpy as np
import pytest

from helpers.course.trained_word_lms import (
    block_bootstrap_diff,
    flow_at,
    flow_ratio,
    trained_gradient_flow,
)
from helpers.lib.rnn_lm import RecurrentLM


def test_trained_gradient_flow_its_summaries_and_errors():
    model = RecurrentLM(30, "rnn", 8, 16, seed=0)
    ids = np.random.default_rng(0).integers(0, 30, 500)
    g = trained_gradient_flow(model, ids, T=20, windows=4, warm_up=10)
    assert g.shape == (4, 20) and np.all(g > 0) and np.all(g[:, 0] == 1)
    assert np.isclose(flow_at(g, 5).estimate, 10 ** np.log10(g[:, 5]).mean())
    assert np.isclose(flow_ratio(g, g / 10, 5).estimate, 10.0)
    with pytest.raises(ValueError, match="too few"):
        trained_gradient_flow(model, ids[:25], T=20, windows=4, warm_up=10)
    with pytest.raises(ValueError, match="same windows"):
        flow_ratio(g, g[:2], 5)


def test_block_bootstrap():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 5000), rng.normal(0.5, 1.0, 5000)
    d, lo, hi = block_bootstrap_diff(a, b, block=100)
    assert lo < d < hi and lo < 0.5 < hi
    assert block_bootstrap_diff(a, a, block=100) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same tokens"):
        block_bootstrap_diff(a, b[:-1])
    with pytest.raises(ValueError, match="two blocks"):
        block_bootstrap_diff(a[:150], b[:150], block=100)
