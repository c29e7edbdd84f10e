"""Three silent results left after issue 28's second round, each now an error that names the problem
(each test failed before its fix: the result was wrong without a word, or a bare NumPy error)."""
import numpy as np
import pytest

from helpers.lib import sgns
from helpers.lib.checks import IdOutOfRangeError
from helpers.lib.glove_numpy import add_rows, glove_cell


def test_add_rows_refuses_an_id_outside_the_table():
    target = np.zeros((4, 2))
    with pytest.raises(IdOutOfRangeError, match="add_rows"):      # before: -1 silently added to the last row
        add_rows(target, np.array([0, -1]), np.ones((2, 2)))
    assert not target.any()
    add_rows(target, np.array([1, 1, 3]), np.ones((3, 2)))
    np.testing.assert_array_equal(target[:, 0], [0, 2, 0, 1])


@pytest.mark.parametrize("x", [0.0, -2.0, np.nan])
def test_glove_cell_refuses_a_count_that_is_not_positive(x):
    w = np.ones((2, 3))
    with pytest.raises(ValueError, match="count x must be > 0"):   # before: loss inf or nan
        glove_cell(w, w, np.zeros(2), np.zeros(2), np.array([1.0, x]))


@pytest.mark.parametrize("which", ["centers", "contexts", "negatives"])
def test_sgd_step_names_an_id_outside_the_vocabulary(which):
    V, d = 5, 3
    W, C = np.ones((V, d)), np.zeros((V, d))
    args = {"centers": np.array([0, 1]), "contexts": np.array([2, 3]), "negatives": np.array([[1], [4]])}
    args[which] = np.full_like(args[which], V)                    # before: a bare IndexError from W[centers]
    with pytest.raises(IdOutOfRangeError, match=f"sgd_step.*{which}|{which}.*sgd_step"):
        sgns.sgd_step(W, C, args["centers"], args["contexts"], args["negatives"], 0.1)
