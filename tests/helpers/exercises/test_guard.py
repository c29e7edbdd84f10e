"""helpers.exercises.guard: the watch over a student's answer refuses the shortcuts."""
import importlib
import sys

import numpy as np
import pytest
import scipy.optimize
import torch
import torch.func
import torch.optim._functional

from helpers.exercises import FunctionExercise, expect_close
from helpers.exercises.guard import Refused, Watch
from helpers.lib import layers
from helpers.lib.layers import Linear, softmax


def _run(fn, *args, forbidden=(softmax, Linear)):
    watch = Watch(forbidden)
    try:
        with watch:
            fn(*args)
    except Refused:
        pass
    return watch.refusal


def own_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


Z = np.array([[1.0, 2.0, 3.0]])


@pytest.mark.parametrize("route", ["name", "attribute", "getattr", "importlib", "reload",
                                   "local import", "subclass", "helper function", "lambda"])
def test_the_course_s_code_is_refused_however_it_is_reached(route):
    def name(z):
        return softmax(z)

    def attribute(z):
        return layers.softmax(z)

    def via_getattr(z):
        return getattr(layers, "soft" + "max")(z)

    def via_importlib(z):
        return importlib.import_module("helpers.lib.layers").softmax(z)

    def via_reload(z):
        return importlib.reload(importlib.import_module("helpers.lib.layers")).softmax(z)

    def local_import(z):
        from helpers.lib.layers import softmax as s
        return s(z)

    def subclass(z):
        class Mine(Linear):
            pass
        return Mine(3, 2, rng=np.random.default_rng(0)).forward(z)

    def helper(z):
        return name(z) * 1.0

    routes = {"name": name, "attribute": attribute, "getattr": via_getattr,
              "importlib": via_importlib, "reload": via_reload, "local import": local_import,
              "subclass": subclass, "helper function": helper, "lambda": lambda z: softmax(z)}
    why = _run(routes[route], Z)
    assert why is not None and "course's own helpers.lib.layers." in why, why


def test_autograd_torch_func_optimisers_clipping_and_scipy_are_refused():
    def backward():
        x = torch.ones(2, requires_grad=True)
        (x * x).sum().backward()

    def grad():
        x = torch.ones(2, requires_grad=True)
        torch.autograd.grad((x * x).sum(), x)

    def engine():   # the C engine without the Python wrappers
        x = torch.ones(2, requires_grad=True)
        y = (x * x).sum()
        torch.autograd.Variable._execution_engine.run_backward(
            (y,), (torch.ones(()),), False, False, (x,), False)

    def func():
        torch.func.grad(lambda t: (t * t).sum())(torch.ones(2))

    def optimiser():
        w = torch.nn.Parameter(torch.ones(2))
        w.grad = torch.ones(2)
        torch.optim.SGD([w], lr=0.1).step()

    def subclassed_optimiser():
        class Mine(torch.optim.Adam):
            pass
        w = torch.nn.Parameter(torch.ones(2))
        w.grad = torch.ones(2)
        Mine([w]).step()

    def functional_adam():
        torch.optim._functional.adam(
            [torch.ones(2)], [torch.ones(2)], [torch.zeros(2)], [torch.zeros(2)], [],
            [torch.tensor(1.0)], amsgrad=False, beta1=0.9, beta2=0.999, lr=0.1,
            weight_decay=0.0, eps=1e-8, maximize=False)

    def clip():
        torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(torch.ones(2))], 1.0)

    def scipy_grad():
        scipy.optimize.approx_fprime(np.ones(2), lambda v: float(v @ v))

    def scipy_minimise():
        scipy.optimize.minimize(lambda v: float(v @ v), np.ones(2))

    for fn, word in [(backward, "autograd"), (grad, "autograd"), (engine, "autograd"),
                     (func, "torch.func"), (optimiser, "optimiser"), (clip, "clipping"),
                     (subclassed_optimiser, "optimiser"), (functional_adam, "optimiser"),
                     (scipy_grad, "SciPy"),
                     (scipy_minimise, "SciPy")]:
        why = _run(fn)
        assert why is not None and word in why, (fn.__name__, why)

    def fine(z):                            # plain NumPy and torch.no_grad are fine
        with torch.no_grad():
            torch.zeros(2) + 1
        return own_softmax(z)
    assert _run(fine, Z) is None


def test_a_caught_refusal_is_still_a_refusal_and_the_profiler_is_restored():
    def sneaky(z):
        try:
            return softmax(z)
        except BaseException:
            return own_softmax(z)
    before = sys.getprofile()
    assert "course's own" in _run(sneaky, Z)
    assert sys.getprofile() is before


def test_a_forbidden_library_function_is_refused():
    def torch_softmax(z):
        return torch.softmax(torch.as_tensor(z), -1).numpy()
    why = _run(torch_softmax, Z, forbidden=[torch.softmax])
    assert "softmax, which does the exercise's work" in why
    assert _run(torch_softmax, Z, forbidden=[]) is None


def test_an_exercise_refuses_a_caught_refusal_and_names_why(capsys):
    check = lambda f: expect_close(f(Z), own_softmax(Z), "softmax")  # noqa: E731
    exercise = FunctionExercise("softmax", [check], reference=own_softmax, forbidden=[softmax])

    def sneaky(z):
        try:
            torch.func.grad(lambda t: (t * t).sum())(torch.ones(2))
        except BaseException:
            pass
        return own_softmax(z)

    result = exercise(sneaky)
    assert result.status == "failed" and "is refused: torch.func" in result.message
    assert exercise.run_checks(softmax).status == "passed"       # the tests' route for references
    capsys.readouterr()
