"""Silent results left after issue 28's second round, each now an error that names the problem
(each test failed before its fix: the result was wrong without a word, or a bare NumPy error)."""
import numpy as np
import pytest

from helpers.lib.recurrent_tasks import recall_task


@pytest.mark.parametrize("lag", [30, 45, 60, 100, -1])
def test_recall_task_refuses_a_lag_outside_the_sequence(lag):
    # before: lag = T or >= 2T gave an all-zero target; T < lag < 2T or lag < 0 a bare broadcast error
    with pytest.raises(ValueError, match="recall_task: lag must be >= 0 and <= 29"):
        recall_task(2, 30, lag, np.random.default_rng(0))
    x, y = recall_task(2, 30, 29, np.random.default_rng(0))
    np.testing.assert_array_equal(y[:, 29], x[:, 0, 0])
