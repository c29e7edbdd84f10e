"""Lesson 01's checkers beyond what every checker is tested for: the initialisation experiment
measures for itself, and a right answer built from the course's layers is refused."""
import numpy as np

from helpers.exercises import PASSED
from helpers.exercises.lesson01 import check_init_choice, check_mlp_backward
from helpers.lib.layers import SoftmaxCrossEntropy, mlp


def test_the_initialisation_checker_measures_for_itself(capsys):
    assert check_init_choice("N(0, 1)", act_std_by_scheme={"N(0, 1)": [1, 1, 1]}).status == "failed"
    assert check_init_choice("He").status == PASSED
    assert check_init_choice("He", depth=30).status == PASSED
    for bad in (0, 2, 1000, "15", 15.5, None, True):          # a verdict, never a traceback
        assert check_init_choice("He", depth=bad).status == "failed", bad
    capsys.readouterr()


def test_the_backward_pass_refuses_the_course_s_layers(capsys):
    def through_the_library(X, y, W1, b1, W2, b2):
        net = mlp([W1.shape[0], W1.shape[1], W2.shape[1]], np.random.default_rng(0))
        for p, v in zip(net.params, (W1, b1, W2, b2), strict=True):
            p[...] = v
        loss_fn = SoftmaxCrossEntropy()
        loss = loss_fn.forward(net.forward(X), y)
        dX = net.backward(loss_fn.backward())
        return loss, (dX, *(g.copy() for g in net.grads))

    assert check_mlp_backward.run_checks(through_the_library).status == PASSED   # right numbers,
    result = check_mlp_backward(through_the_library)                            # but refused
    assert result.status == "failed" and "course's own" in capsys.readouterr().out
