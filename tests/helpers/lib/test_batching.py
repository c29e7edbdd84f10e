"""helpers.lib.batching.random_windows: every valid window can be drawn, the last one included."""
import numpy as np
import pytest

from helpers.lib.batching import random_windows


def test_every_start_is_drawn_the_last_one_included():
    ids = np.arange(10)
    x, y = random_windows(ids, 2000, 7, np.random.default_rng(0))
    assert x.shape == y.shape == (2000, 7) and x.dtype == y.dtype == np.int64
    assert np.array_equal(x[:, 1:], y[:, :-1]) and np.array_equal(y, x + 1)
    counts = np.bincount(x[:, 0])                # the valid starts: 0 .. len(ids) - seq_len - 1
    assert len(counts) == 3 and counts.min() > 550                       # about 667 each


def test_a_stream_of_exactly_one_window_gives_that_window():
    x, y = random_windows(np.array([5, 6, 7, 8]), 3, 3, np.random.default_rng(0))
    assert x.tolist() == [[5, 6, 7]] * 3 and y.tolist() == [[6, 7, 8]] * 3


def test_bad_input_is_named():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="needs 4 tokens, the stream has 3"):
        random_windows(np.arange(3), 1, 3, rng)
    with pytest.raises(TypeError, match="1-D integer array"):
        random_windows(np.zeros(10), 1, 3, rng)
    with pytest.raises(ValueError, match="batch_size and seq_len must be >= 1"):
        random_windows(np.arange(10), 0, 3, rng)
