"""Shared pieces of the property-based tests: the budget, strategies for awkward inputs, and the
assertion that an error names its argument. A property asserts either the reference result
(PyTorch, a library doing the same job, or the formula, in float64) or a ValueError/TypeError
naming the argument.
"""
import re

import numpy as np
import pytest
from hypothesis import assume, settings  # noqa: F401  (assume: re-exported for the tests)
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def covers(*names: str):
    """Label the public objects ("module.Name") a property test covers; the test is unchanged."""
    return lambda test: test


def budget(weight: float = 1.0):
    """``@settings`` with the loaded profile's max_examples times ``weight`` (at least 1):
    ``make test`` runs the ``ci`` profile, ``make fuzz`` the ``fuzz`` one (tests/conftest.py)."""
    return settings(max_examples=max(1, round(settings.default.max_examples * weight)))


# ---------------------------------------------------------------- errors that name their argument
def raises_naming(call, name: str, types=(ValueError, TypeError)):
    """Run ``call()``: it must raise one of ``types`` naming ``name``. Returns the error."""
    with pytest.raises(types) as err:
        call()
    message = str(err.value)
    assert re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message), \
        f"the {type(err.value).__name__} does not name {name!r}: {message}"
    return err.value


# ---------------------------------------------------------------- comparisons
def closeness(default_tol: float):
    """``close(a, b, tol=default_tol)``: assert two arrays equal in float64 to ``tol``, relative
    and absolute (each property file picks the default its references reach)."""
    def close(a, b, tol=default_tol):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                   rtol=tol, atol=tol)
    return close


# ---------------------------------------------------------------- strategies
def small_floats(lo: float = -3.0, hi: float = 3.0):
    """Finite floats in [lo, hi]; a magnitude below 1e-6 becomes 0 (squares of subnormal numbers
    underflow in every float64 norm, NumPy's and PyTorch's alike)."""
    floats = st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64)
    return floats.map(lambda x: 0.0 if abs(x) < 1e-6 else x)


def float_arrays(shape, lo: float = -3.0, hi: float = 3.0):
    return hnp.arrays(np.float64, shape, elements=small_floats(lo, hi))


def dims(lo: int = 1, hi: int = 4):
    """A dimension; 1 (batch 1, length 1) is always among the first examples."""
    return st.integers(lo, hi)


@st.composite
def corrupted(draw, valid: np.ndarray, V: int):
    """``valid`` (integer ids in [0, V)) with one entry made bad: -1, V or far outside, or the
    whole array turned to float or bool. Returns (bad array, 'range' or 'dtype')."""
    how = draw(st.sampled_from(["-1", "V", "far", "float", "bool"]))
    if how == "float":
        return valid.astype(np.float64), "dtype"
    if how == "bool":
        return (valid % 2).astype(bool), "dtype"
    bad = valid.copy()
    flat = bad.reshape(-1)
    i = draw(st.integers(0, flat.size - 1))
    flat[i] = {"-1": -1, "V": V, "far": V + 1000}[how]
    return bad, "range"


def check_bad_ids(call, valid: np.ndarray, V: int, name: str, draw_bad) -> None:
    """``call(bad)`` raises naming ``name`` (ValueError for a range, TypeError for a dtype) for a
    corruption drawn by ``draw_bad`` (a ``corrupted`` draw)."""
    bad, kind = draw_bad
    raises_naming(lambda: call(bad), name, ValueError if kind == "range" else TypeError)


def mask_forms(mask: np.ndarray):
    """The forms a boolean mask may be given in: (name, array, what must happen) with 'same' (the
    result of the bool mask), ValueError (an integer other than 0/1) or TypeError (a float)."""
    forms = [("bool", mask, "same"), ("int64", mask.astype(np.int64), "same"),
             ("int8", mask.astype(np.int8), "same"), ("uint8", mask.astype(np.uint8), "same"),
             ("float", mask.astype(np.float64), TypeError)]
    twos = mask.astype(np.int64)
    twos.reshape(-1)[0] = 2
    forms.append(("int with a 2", twos, ValueError))
    return forms


def inject(x: np.ndarray, value: float, index: int) -> np.ndarray:
    """A float copy of ``x`` with entry ``index`` (flattened, wrapped) set to ``value``."""
    y = np.array(x, dtype=np.float64, copy=True)
    y.reshape(-1)[index % y.size] = value
    return y


non_finite = st.sampled_from([np.nan, np.inf, -np.inf])
