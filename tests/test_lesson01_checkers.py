"""Lesson 01's checkers cannot be fooled (issue 30): each defect found by the independent check of
the checkers fails here against the checker as it was, and passes now."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.exercises import PASSED
from helpers.exercises.lesson01 import (
    EXERCISES,
    check_adam_update,
    check_init_choice,
    check_mlp_backward,
    check_softmax,
    relu_activation_stds,
)
from helpers.lib.layers import softmax
from helpers.lib.optim import Adam, adam_update


def _min_shift_softmax(z):
    e = np.exp(z - z.min(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_a_softmax_that_subtracts_the_row_minimum_fails(capsys):
    # on [[0, 800]] it returns [0, nan]; the old checks never spanned more than 2
    with np.errstate(all="ignore"):
        assert np.isnan(_min_shift_softmax(np.array([[0.0, 800.0]]))).any()
    result = check_softmax(_min_shift_softmax)
    out = capsys.readouterr().out
    assert result.status == "failed" and result.mistake == "shift_by_minimum", out
    assert "800" in out


def test_init_choice_measures_for_itself_and_ignores_the_student_s_numbers(capsys):
    fake = {"N(0, 1)": [1, 1, 1], "He": [9, 90, 900]}
    assert check_init_choice("N(0, 1)", act_std_by_scheme=fake).status == "failed"
    assert check_init_choice("N(0, 1)").status == "failed"
    assert check_init_choice("He").status == PASSED
    assert check_init_choice("He", depth=30).status == PASSED
    for bad in (0, 2, 1000, "15", 15.5, None, True):
        result = check_init_choice("He", depth=bad)        # a verdict, never a traceback
        assert result.status == "failed", bad
    capsys.readouterr()


def test_the_checker_s_measurement_is_the_lesson_s():
    """The checker measures with its own few lines of NumPy; the lesson's figure uses its layers
    (helpers.lessons.lesson01.init_statistics): the two tell the same story at every layer."""
    from helpers.lessons.lesson01 import init_statistics
    mine = relu_activation_stds(15)
    for scheme, stds in mine.items():
        theirs = init_statistics(scheme, "relu", depth=15, width=128)["act_std"]
        steady = all(0.5 < s < 2 for s in stds)
        assert steady == bool(np.all((theirs > 0.5) & (theirs < 2))), scheme
        assert np.allclose(np.log10(np.maximum(stds, 1e-300)), np.log10(np.maximum(theirs, 1e-300)),
                           atol=max(1.0, 0.1 * abs(np.log10(max(theirs[-1], 1e-300))))), scheme


def test_every_function_exercise_lists_the_course_s_shortcuts():
    for ex in EXERCISES:
        if hasattr(ex, "forbidden"):
            assert len(ex.forbidden) >= 2, f"{ex.title}: forbidden lists only its reference"
    assert softmax in check_softmax.forbidden
    assert any(getattr(f, "__name__", "") == "Linear" for f in check_mlp_backward.forbidden)
    assert Adam in check_adam_update.forbidden and adam_update in check_adam_update.forbidden


def test_the_mlp_backward_refuses_the_library_layers(capsys):
    from helpers.lib.layers import SoftmaxCrossEntropy, mlp

    def through_the_library(X, y, W1, b1, W2, b2):
        net = mlp([W1.shape[0], W1.shape[1], W2.shape[1]], np.random.default_rng(0))
        for p, v in zip(net.params, (W1, b1, W2, b2), strict=True):
            p[...] = v
        loss = SoftmaxCrossEntropy()
        loss.forward(net.forward(X), y)
        net.backward(loss.backward())
        return tuple(g.copy() for g in net.grads)

    assert check_mlp_backward.run_checks(through_the_library).status == PASSED   # right numbers ...
    result = check_mlp_backward(through_the_library)                             # ... but refused
    assert result.status == "failed" and "course's own" in capsys.readouterr().out


def test_adam_update_is_the_adam_class_and_torch():
    rng = np.random.default_rng(0)
    p = rng.standard_normal((3, 4))
    q, q_t = p.copy(), torch.tensor(p.copy(), requires_grad=True)
    opt, opt_t = Adam(lr=0.05, beta1=0.8, beta2=0.99, eps=1e-6), torch.optim.Adam([q_t], lr=0.05, betas=(0.8, 0.99),
                                                                                   eps=1e-6)
    m = v = np.zeros_like(p)
    for t in range(1, 8):
        g = 4 * p ** 3
        before = p.copy()
        p, m, v = adam_update(p, g, m, v, t, 0.05, 0.8, 0.99, 1e-6)
        np.testing.assert_array_equal(before, p - (p - before))            # inputs not changed in place
        opt.step([q], [4 * q ** 3])
        opt_t.zero_grad()
        (q_t ** 4).sum().backward()
        opt_t.step()
        np.testing.assert_allclose(p, q, rtol=1e-12)
        np.testing.assert_allclose(p, q_t.detach().numpy(), rtol=1e-9)
    with pytest.raises(ValueError, match="counted from 1"):
        adam_update(p, p, p, p, 0)
