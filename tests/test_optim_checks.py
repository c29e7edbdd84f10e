"""Optimisers and gradient helpers refuse lists that do not pair up (issue 13, defect 2).

Before the fix every optimiser zipped ``params`` with ``grads`` and with its state, so an extra
parameter, a missing gradient or a parameter added after the first step was silently never
updated. And no ``zip`` in the library may truncate silently: each states ``strict=``.
"""
import ast
from pathlib import Path

import numpy as np
import pytest

from helpers.lib import optim
from helpers.lib.optim import OPTIMIZERS, Adam, add_weight_penalty, clip_global_norm

ROOT = Path(__file__).resolve().parents[1]


def _all_optimizers():
    """Every optimiser class of the library: the OPTIMIZERS table and any Optimizer subclass."""
    classes = set(OPTIMIZERS.values())
    todo = [getattr(optim, "Optimizer", None)] if hasattr(optim, "Optimizer") else []
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("helpers.lib"):
                classes.add(sub)
            todo.append(sub)
    return sorted(classes, key=lambda c: c.__name__)


OPTIMIZER_CLASSES = _all_optimizers()
STATEFUL = [c for c in OPTIMIZER_CLASSES if c.__name__ != "SGD"]


def test_the_optimizer_table_lists_every_optimizer():
    assert {c.__name__ for c in OPTIMIZER_CLASSES} == {"SGD", "Momentum", "RMSProp", "Adam", "AdamW"}


def test_adam_given_a_second_array_after_its_first_step_refuses_it():
    # the example: stepped on one array, then on two; the second would stay at its start
    a, b = np.ones(3), np.ones(2)
    opt = Adam(0.1)
    opt.step([a], [np.ones(3)])
    with pytest.raises(ValueError, match=r"Adam.step: the optimiser's state was made for 1 parameter, "
                                         r"but it is now given 2 \(a parameter was added\)"):
        opt.step([a, b], [np.ones(3), np.ones(2)])
    assert np.all(b == 1)


@pytest.mark.parametrize("cls", OPTIMIZER_CLASSES, ids=lambda c: c.__name__)
def test_mismatched_lists_are_refused(cls):
    a, b = np.ones(3), np.ones((2, 2))
    name = cls.__name__
    with pytest.raises(ValueError, match=rf"{name}.step: 2 parameters but 1 gradient"):
        cls().step([a, b], [np.ones(3)])
    with pytest.raises(ValueError, match=rf"{name}.step: 1 parameter but 2 gradients"):
        cls().step([a], [np.ones(3), np.ones((2, 2))])
    with pytest.raises(ValueError, match=rf"{name}.step: gradient 1 has shape \(4,\), but parameter 1 has shape \(2, 2\)"):
        cls().step([a, b], [np.ones(3), np.ones(4)])
    with pytest.raises(TypeError, match=r"parameters must be a list of arrays, got one array of shape \(3,\)"):
        cls().step(a, np.ones(3))
    with pytest.raises(TypeError, match="parameter 0 is a float, not a NumPy array"):
        cls().step([1.0], [np.ones(())])
    with pytest.raises(ValueError, match="parameters 0 and 1 are the same array"):
        cls().step([a, a], [np.ones(3), np.ones(3)])
    assert np.all(a == 1) and np.all(b == 1)               # nothing was updated


@pytest.mark.parametrize("cls", STATEFUL, ids=lambda c: c.__name__)
def test_a_params_list_that_changes_after_the_first_step_is_refused(cls):
    a, b = np.ones(3), np.ones(2)
    opt = cls()
    opt.step([a, b], [np.ones(3), np.ones(2)])
    name = cls.__name__
    with pytest.raises(ValueError, match=rf"{name}.step: .* made for 2 parameters, but it is now given 3 "
                                         r"\(a parameter was added\)"):
        opt.step([a, b, np.ones(4)], [np.ones(3), np.ones(2), np.ones(4)])
    with pytest.raises(ValueError, match=r"now given 1 \(a parameter was removed\)"):
        opt.step([a], [np.ones(3)])
    with pytest.raises(ValueError, match=r"parameter 1 \(shape \(2,\)\) is not the array .* replaced by a new array"):
        opt.step([a, b.copy()], [np.ones(3), np.ones(2)])
    with pytest.raises(ValueError, match="parameter 0 .* replaced"):
        opt.step([b, a], [np.ones(2), np.ones(3)])          # the same arrays in another order
    before = a.copy()
    opt.step([a, b], [np.ones(3), np.ones(2)])              # the original list still works
    assert not np.allclose(a, before)
    opt.reset()                                             # and after reset() a new list is fine
    c = np.ones(4)
    opt.step([c], [np.ones(4)])
    assert not np.allclose(c, 1)


@pytest.mark.parametrize("cls", OPTIMIZER_CLASSES, ids=lambda c: c.__name__)
def test_a_generator_of_params_is_accepted_once_and_updates_everything(cls):
    ps = [np.ones(2), np.ones(3)]
    cls(0.1).step((p for p in ps), (np.ones_like(p) for p in ps))
    assert all(np.all(p < 1) for p in ps)


def test_adam_reset_restarts_the_bias_correction():
    p1, p2 = np.zeros(2), np.zeros(2)
    opt = Adam(0.1)
    opt.step([p1], [np.ones(2)])
    opt.reset()
    opt.step([p2], [np.ones(2)])
    assert np.allclose(p1, p2)            # the same first step: t and the moments started afresh


def test_weight_penalty_refuses_mismatched_lists_and_bad_strengths():
    w, g = [np.ones(3), np.ones(2)], [np.zeros(3), np.zeros(2)]
    with pytest.raises(ValueError, match="add_weight_penalty: 2 weights but 1 gradient"):
        add_weight_penalty(w, g[:1], l2=0.1)
    with pytest.raises(ValueError, match=r"gradient 1 has shape \(3,\), but weight 1 has shape \(2,\)"):
        add_weight_penalty(w, [np.zeros(3), np.zeros(3)], l2=0.1)
    with pytest.raises(TypeError, match="weights must be a list of arrays"):
        add_weight_penalty(np.ones(3), [np.zeros(3)], l2=0.1)
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="penalty strengths must be finite and >= 0"):
            add_weight_penalty(w, g, l2=bad)
    assert np.all(g[0] == 0) and np.all(g[1] == 0)
    assert add_weight_penalty(w, g, l2=0.5) == pytest.approx(2.5)
    assert np.allclose(g[1], 1.0)


def test_clip_global_norm_refuses_what_it_cannot_clip():
    with pytest.raises(TypeError, match=r"clip_global_norm: the gradients must be a list of arrays, got one array"):
        clip_global_norm(np.array([3.0, 4.0]), 1.0)      # 1-D: iterating gives scalars, never scaled
    with pytest.raises(TypeError, match="gradient 1 is a float"):
        clip_global_norm([np.ones(2), 3.0], 1.0)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="max_norm must be positive"):
            clip_global_norm([np.ones(2)], bad)
    g = [np.ones(2), np.array([1.0, np.inf])]
    with pytest.raises(ValueError, match=r"gradient 1 \(shape \(2,\)\) holds inf or nan; training has diverged"):
        clip_global_norm(g, 1.0)
    with pytest.raises(ValueError, match="gradient 0 .* holds inf or nan"):
        clip_global_norm([np.array([np.nan])], 1.0)
    gen = (x for x in [np.array([3.0]), np.array([4.0])])   # a generator is read once, then scaled
    assert clip_global_norm(gen, 1.0) == 5.0


# ---------------------------------------------------------------- no silent zip truncation
def _zips_without_strict(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip":
            strict = next((k.value for k in node.keywords if k.arg == "strict"), None)
            yield node.lineno, strict


def test_every_zip_in_the_library_says_whether_lengths_must_agree():
    """``zip`` stops at the shortest input without a word. In helpers/lib every zip says
    ``strict=True`` (lengths must agree: a mismatch raises) or ``strict=False`` with a comment
    on the same line saying why the lengths may differ."""
    problems = []
    for path in sorted((ROOT / "helpers" / "lib").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for line, strict in _zips_without_strict(ast.parse(source)):
            where = f"helpers/lib/{path.name}:{line}: {lines[line - 1].strip()}"
            if strict is None:
                problems.append(f"{where}   (no strict=)")
            elif isinstance(strict, ast.Constant) and strict.value is False and "#" not in lines[line - 1]:
                problems.append(f"{where}   (strict=False needs a comment saying why lengths differ)")
    assert not problems, "zip() calls that may truncate silently:\n" + "\n".join(problems)


def test_the_zips_made_strict_now_raise_on_a_mismatch():
    from helpers.lib.gradcheck import check_function, check_layer
    from helpers.lib.layers import Linear
    from training.glove_torch import GloVeTorch

    layer = Linear(3, 2, np.random.default_rng(0))
    layer.grads = layer.grads[:1]               # a layer that forgot its bias gradient
    with pytest.raises(ValueError, match="Linear has 2 params but 1 grads"):
        check_layer(layer, np.ones((2, 3)))     # used to check param[0] only, and pass
    x = np.ones(3)
    with pytest.raises(ValueError, match=r"check_function: 2 arrays \(wrt\), 1 analytic gradients"):
        check_function(lambda: float(x.sum()), [x, x], [np.ones(3)])
    with pytest.raises(ValueError, match=r"load_numpy expects the four arrays \[W, W~, b, b~\], got 2"):
        GloVeTorch(4, 2).load_numpy([np.zeros((4, 2)), np.zeros((4, 2))])
