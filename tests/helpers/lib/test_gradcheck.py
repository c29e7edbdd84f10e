"""helpers.lib.gradcheck: finite differences pass right gradients and fail wrong ones, and the
checker refuses what it cannot check."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import gradcheck, layers
from tests.props import budget, closeness, float_arrays, raises_naming

close = closeness(1e-10)


@budget()
@given(st.data())
def test_the_gradient_checker_passes_right_gradients_and_fails_wrong_ones(data):
    A, x = data.draw(float_arrays((3, 3))), data.draw(float_arrays((3,)))
    f = lambda: float(x @ A @ x)                                              # noqa: E731
    exact = (A + A.T) @ x
    close(gradcheck.numerical_gradient(f, x), exact, 1e-6)
    assert gradcheck.check_function(f, [x], [exact]).ok
    report = gradcheck.check_function(f, [x], [exact + 1.0])
    assert not report.ok and "BAD" in str(report)
    a, b = data.draw(float_arrays((4,))), data.draw(float_arrays((4,)))
    denom = np.max(np.abs(a) + np.abs(b))
    close(gradcheck.relative_error(a, b), 0.0 if denom == 0 else np.max(np.abs(a - b)) / denom)
    raises_naming(lambda: gradcheck.relative_error(a, b[:2]), "shapes", ValueError)
    gradcheck.assert_close_to_torch(a, torch.tensor(a), "a")


def test_finite_differences_restore_the_array_and_want_float64():
    x = np.array([1.0, 2.0, 3.0])
    assert gradcheck.relative_error(gradcheck.numerical_gradient(lambda: float((x ** 3).sum()), x),
                                    3 * x ** 2) < 1e-9
    assert np.array_equal(x, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="float64"):
        gradcheck.numerical_gradient(lambda: 0.0, np.zeros(2, np.float32))
    with pytest.raises(AssertionError, match=r"dW: differs from PyTorch by up to 1.000e\+00 at "
                                             r"index \(1,\)"):
        gradcheck.assert_close_to_torch(np.array([0.0, 1.0]), torch.tensor([0.0, 0.0]), "dW")


def test_check_layer_catches_a_wrong_backward_and_a_missing_gradient():
    class WrongTanh(layers.Activation):
        def backward(self, dout):
            return dout * (1 - self.out)                   # missing the square

    rng = np.random.default_rng(0)
    assert not gradcheck.check_layer(WrongTanh("tanh"), rng.standard_normal((3, 3)), rng=rng).ok
    layer = layers.Linear(3, 2, rng)
    layer.grads = layer.grads[:1]                          # a layer that forgot its bias gradient
    with pytest.raises(ValueError, match="Linear has 2 params but 1 grads"):
        gradcheck.check_layer(layer, np.ones((2, 3)))
    x = np.ones(3)
    with pytest.raises(ValueError, match=r"check_function: 2 arrays \(wrt\), 1 analytic gradients"):
        gradcheck.check_function(lambda: float(x.sum()), [x, x], [np.ones(3)])
