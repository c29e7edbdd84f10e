"""Exercise checkers: graded steps, targeted hints, and "not attempted yet".

Each lesson's checker module (``helpers.exercises.lesson01`` ...) declares its exercises as data
and lists them in ``EXERCISES``; ``tests/test_exercise_hints.py`` tests every one of them.
There are two kinds:

* :class:`FunctionExercise` — the student writes a function. Its ``checks`` call it on worked
  examples, random cases, finite differences and PyTorch, and raise :class:`ExerciseFailed` with
  an "expected ..., got ..." message (:func:`expect_close`, :func:`expect_equal`,
  :func:`expect_gradients_match_torch`, :func:`expect_gradients_match_numerical` ...).
* :class:`ExperimentExercise` — the student runs something and enters a number or a choice; it
  is compared with the right value within a tolerance, and the explanation is printed only after
  a correct answer.

Both declare the likely :class:`Mistake` s: a name, the hint, and how to recognise the mistake —
``like`` (a known wrong implementation whose outputs the student's match, or a wrong value) or
``when`` (a predicate over the student's output). When a check fails, the first mistake that
matches prints its hint under the expected/got message. A checker is called with the student's
answer, prints one verdict and returns a :class:`Result` (true only when passed)::

    ✓ stable softmax: all 5 checks passed.
    ✗ stable softmax (check 3 of 5): softmax([[1000, 1001, 1002]]): expected finite ..., got [nan ...]
      Hint: np.exp(1000) overflows to inf, and inf / inf is nan: subtract each row's maximum first.
    … stable softmax: not attempted yet — replace the `raise NotImplementedError` in `my_softmax`.

The student's stub never crashes the notebook: every exception is caught and reported.
"""
from __future__ import annotations

import copy
import textwrap
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch

from helpers.lib.gradcheck import numerical_gradient, relative_error

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"
STEPS = ("warm-up", "core", "experiment")


class ExerciseFailed(AssertionError):
    """One check of an exercise failed; the message says expected vs got."""


# ----------------------------------------------------------------------------- results and mistakes
@dataclass(frozen=True)
class Result:
    """The verdict of a checker: ``status`` is "passed", "failed" or "not attempted".

    True only when passed, so a solution cell can ``assert check_x(x_solution)``. ``message`` is the
    text the checker printed; ``mistake`` the name of the recognised :class:`Mistake` (or None).
    """

    title: str
    status: str
    message: str
    mistake: str | None = None

    def __bool__(self) -> bool:
        return self.status == PASSED

    def _ipython_display_(self) -> None:
        """Show nothing as a cell's last value: the checker has already printed its verdict."""


@dataclass(frozen=True)
class Mistake:
    """A likely mistake in one exercise, how to recognise it, and the hint that fixes it.

    Give exactly one way to recognise it:

    * ``like`` — for a function exercise, a wrong implementation (same signature as the student's
      function): the mistake is recognised when the student's function returns the same outputs
      (or raises the same exception type) on every call the checks made. For an experiment, a
      wrong value (or ``like(**context) -> value``), matched with the exercise's tolerance.
    * ``when`` — a predicate: ``when(output, *args)`` for a function exercise, true for at least
      one call the checks made; ``when(answer, **context)`` for an experiment.

    ``example`` is a typical wrong answer, written the way a student would (a function or a
    value); the tests feed it to the checker and expect exactly this hint. It defaults to ``like``
    and is required with ``when``.
    """

    name: str
    hint: str
    like: Any = None
    when: Callable[..., bool] | None = None
    example: Any = None

    def __post_init__(self):
        if (self.like is None) == (self.when is None):
            raise ValueError(f"mistake {self.name!r}: give exactly one of like=... or when=...")
        if self.when is not None and self.example is None:
            raise ValueError(f"mistake {self.name!r}: a mistake recognised by when=... needs an "
                             "example=... (a typical wrong answer for the tests)")
        if not self.hint.strip():
            raise ValueError(f"mistake {self.name!r}: the hint is empty")

    @property
    def typical_answer(self) -> Any:
        """The wrong answer the tests feed to the checker (``example``, else ``like``)."""
        return self.like if self.example is None else self.example


def outputs_match(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """True when two outputs are the same: numbers and arrays (or tensors) of the same shape within
    tolerance, strings and other objects equal, tuples/lists/dicts element by element."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(outputs_match(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(outputs_match(a[k], b[k], rtol, atol) for k in a)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is b
    try:
        x, y = _as_array(a), _as_array(b)
    except (TypeError, ValueError):
        return False
    if x.shape != y.shape or x.dtype.kind not in "biuf" or y.dtype.kind not in "biuf":
        return x.shape == y.shape and bool(np.all(x == y))
    if (x.dtype.kind == "b") != (y.dtype.kind == "b"):
        return False
    return bool(np.allclose(x.astype(float), y.astype(float), rtol=rtol, atol=atol, equal_nan=True))


def _as_array(v: Any) -> np.ndarray:
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu().numpy()
    return np.asarray(v)


def _copy(v: Any) -> Any:
    try:
        return copy.deepcopy(v)
    except Exception:  # an uncopyable object (a generator ...): keep the object itself
        return v


# ----------------------------------------------------------------------------- the two kinds of exercise
class Exercise:
    """What both kinds share: a title, a step, the likely mistakes, an optional explanation."""

    def __init__(self, title: str, *, step: str, mistakes: Sequence[Mistake] = (), explanation: str | None = None):
        if step not in STEPS:
            raise ValueError(f"step must be one of {STEPS}, got {step!r}")
        names = [m.name for m in mistakes]
        if len(set(names)) != len(names):
            raise ValueError(f"{title}: two mistakes share a name: {names}")
        self.title, self.step, self.mistakes, self.explanation = title, step, tuple(mistakes), explanation

    def describe(self) -> str:
        """One line for a lesson's closing note: step, title and the mistakes recognised."""
        return f"{self.step} — {self.title}; recognises: {', '.join(m.name for m in self.mistakes) or '-'}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.title!r} ({self.step}), {len(self.mistakes)} mistakes>"

    def _report(self, status: str, text: str, mistake: Mistake | None = None) -> Result:
        if mistake is not None:
            text += f"\n  Hint: {mistake.hint}"
        print(text)
        return Result(self.title, status, text, mistake.name if mistake else None)

    def _passed(self, text: str) -> Result:
        if self.explanation:
            text += "\n" + textwrap.indent(self.explanation.strip(), "  ")
        return self._report(PASSED, text)


@dataclass
class Call:
    """One call of the student's function during the checks: copies of the arguments taken
    before the call, and a copy of what it returned (or the exception it raised)."""

    args: tuple
    kwargs: dict
    result: Any = None
    error: BaseException | None = None


class _Recorder:
    """Wraps the student's function and records every call, so mistakes can be recognised."""

    def __init__(self, fn: Callable):
        self.fn, self.calls = fn, []

    def __call__(self, *args, **kwargs):
        call = Call(_copy(args), _copy(kwargs))
        self.calls.append(call)
        try:
            result = self.fn(*args, **kwargs)
        except BaseException as e:
            call.error = e
            raise
        call.result = _copy(result)
        return result


class FunctionExercise(Exercise):
    """The student writes a function; calling the exercise with it checks it.

    ``checks``: functions ``check(f)`` that call ``f`` and raise :class:`ExerciseFailed` with an
    "expected ..., got ..." message; they run in order and the first failure is reported.
    ``reference``: a correct implementation (the tests check that it passes).
    ``mistakes``: the likely :class:`Mistake` s, tried in order when a check fails.
    ``explanation``: printed after the last check passes (optional).
    """

    def __init__(self, title: str, checks: Sequence[Callable[[Callable], None]], *, reference: Callable | None,
                 mistakes: Sequence[Mistake] = (), step: str = "core", explanation: str | None = None):
        super().__init__(title, step=step, mistakes=mistakes, explanation=explanation)
        if not checks:
            raise ValueError(f"{title}: an exercise needs at least one check")
        self.checks, self.reference = tuple(checks), reference

    def __call__(self, candidate: Callable) -> Result:
        """Run the checks on the student's function; print and return the verdict."""
        if candidate is None or candidate is Ellipsis:
            return self._report(NOT_ATTEMPTED, f"… {self.title}: not attempted yet — write the function "
                                               "and pass it to the checker.")
        name = getattr(candidate, "__name__", "your function")
        if not callable(candidate):
            return self._report(FAILED, f"✗ {self.title}: expected a function, got {type(candidate).__name__} "
                                        f"{_short(candidate)}")
        recorder = _Recorder(candidate)
        n = len(self.checks)
        for i, check in enumerate(self.checks, 1):
            try:
                check(recorder)
                continue
            except NotImplementedError:
                if recorder.calls and isinstance(recorder.calls[0].error, NotImplementedError):
                    return self._report(NOT_ATTEMPTED, f"… {self.title}: not attempted yet — replace the "
                                                       f"`raise NotImplementedError` in `{name}`.")
                detail = "your function still raises NotImplementedError here: finish it"
            except ExerciseFailed as e:
                detail = str(e)
            except Exception as e:
                mine = bool(recorder.calls) and recorder.calls[-1].error is e
                detail = (f"your code raised {type(e).__name__}: {str(e).strip()}{_where(e, candidate)}" if mine else
                          f"your output could not be checked ({type(e).__name__}: {e}): is its type and "
                          "shape what the task asks for?")
            mistake = self.recognise(recorder.calls)
            return self._report(FAILED, f"✗ {self.title} (check {i} of {n}): {detail}", mistake)
        return self._passed(f"✓ {self.title}: all {n} checks passed.")

    def recognise(self, calls: Sequence[Call]) -> Mistake | None:
        """The first declared mistake that explains the recorded ``calls`` (None if none does)."""
        for mistake in self.mistakes:
            if mistake.like is not None and _behaves_like(mistake.like, calls):
                return mistake
            if mistake.when is not None and any(_holds(mistake.when, c.result, *c.args, **c.kwargs)
                                                for c in calls if c.error is None):
                return mistake
        return None


def _behaves_like(wrong: Callable, calls: Sequence[Call]) -> bool:
    """True when ``wrong`` gives the same outputs (or the same exception type) on every call."""
    if not calls:
        return False
    for call in calls:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                out = wrong(*_copy(call.args), **_copy(call.kwargs))
        except Exception as e:
            if call.error is None or type(call.error) is not type(e):
                return False
            continue
        if call.error is not None or not outputs_match(out, call.result):
            return False
    return True


def _holds(predicate: Callable[..., bool], *args, **kwargs) -> bool:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return bool(predicate(*args, **kwargs))
    except Exception:
        return False


def _where(error: BaseException, fn: Callable) -> str:
    """' (in f, line 3: `code`)' for the last line of the student's own code in the traceback."""
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    if not frames:
        return ""
    f = frames[-1]
    return f" (in {f.name}, line {f.lineno}" + (f": `{f.line.strip()}`)" if f.line else ")")


def _short(v: Any, n: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= n else text[:n - 3] + "..."


class ExperimentExercise(Exercise):
    """The student runs something and enters a number or a choice; calling the exercise with the
    answer checks it, and the explanation is printed only after a correct answer.

    ``expected``: the right value, or ``expected(**context) -> value`` when it depends on what the
    notebook measured (the notebook passes that as keyword arguments to the checker).
    Numbers are right within ``atol + rtol * |expected|``; with ``choices`` (strings) the answer must
    be one of them (case and surrounding spaces ignored). ``example_context``: keyword arguments
    the tests pass to the checker (a realistic measurement).
    """

    def __init__(self, title: str, expected: Any, *, explanation: str, mistakes: Sequence[Mistake] = (),
                 rtol: float = 0.0, atol: float = 0.0, choices: Sequence[str] | None = None,
                 example_context: dict | None = None):
        super().__init__(title, step="experiment", mistakes=mistakes, explanation=explanation)
        if not explanation.strip():
            raise ValueError(f"{title}: an experiment needs its explanation")
        self.expected, self.rtol, self.atol = expected, rtol, atol
        self.choices = None if choices is None else tuple(choices)
        self.example_context = dict(example_context or {})

    def right_answer(self, **context) -> Any:
        """The expected value for this ``context`` (what the measurement says)."""
        return self.expected(**context) if callable(self.expected) else self.expected

    def _same(self, answer: Any, value: Any) -> bool:
        if self.choices is not None:
            return _norm(answer) == _norm(value)
        return abs(float(answer) - float(value)) <= self.atol + self.rtol * abs(float(value))

    def _is_like(self, answer: Any, like: Any, context: dict) -> bool:
        return self._same(answer, like(**context) if callable(like) else like)

    def __call__(self, answer: Any, **context) -> Result:
        """Check the student's ``answer``; print and return the verdict."""
        if answer is None or answer is Ellipsis:
            return self._report(NOT_ATTEMPTED, f"… {self.title}: not attempted yet — replace the `None` with "
                                               "your answer.")
        if self.choices is not None:
            if not isinstance(answer, str) or _norm(answer) not in map(_norm, self.choices):
                return self._report(FAILED, f"✗ {self.title}: expected one of {', '.join(map(repr, self.choices))}, "
                                            f"got {_short(answer)}")
        elif _as_number(answer) is None:
            return self._report(FAILED, f"✗ {self.title}: expected a finite number, got {_short(answer)}")
        if self._same(answer, self.right_answer(**context)):
            return self._passed(f"✓ {self.title}: right.")
        if self.choices is not None:
            detail = f"{answer!r} is not what the measurement shows"
        else:
            tol = f"±{self.atol:g}" if not self.rtol else f"±({self.atol:g} + {self.rtol:g}·|value|)"
            detail = f"{float(answer):g} is not within {tol} of the value the run measures"
        return self._report(FAILED, f"✗ {self.title}: {detail}", self.recognise(answer, **context))

    def recognise(self, answer: Any, **context) -> Mistake | None:
        """The first declared mistake that explains ``answer`` (None if none does)."""
        for mistake in self.mistakes:
            if mistake.like is not None:
                if _holds(self._is_like, answer, mistake.like, context):
                    return mistake
            elif _holds(mistake.when, answer, **context):
                return mistake
        return None


def _as_number(answer: Any) -> float | None:
    """``answer`` as a finite float, or None when it is not a number (a bool and a string are not)."""
    if isinstance(answer, (bool, str, bytes)):
        return None
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None


def _norm(choice: Any) -> str:
    return str(choice).strip().lower()


# ----------------------------------------------------------------------------- expectations for checks
def expect_close(got, expected, what: str, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """Fail unless ``got`` equals ``expected`` (arrays or numbers) within tolerance; the message
    names ``what`` and says expected vs got (shapes first)."""
    got_a, exp_a = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if got_a.shape != exp_a.shape:
        raise ExerciseFailed(f"{what}: expected shape {exp_a.shape}, got {got_a.shape}")
    if not np.all(np.isfinite(got_a)):
        raise ExerciseFailed(f"{what}: expected finite numbers, got {np.array2string(got_a, precision=4)}")
    if not np.allclose(got_a, exp_a, rtol=rtol, atol=atol):
        raise ExerciseFailed(f"{what}: expected {np.array2string(exp_a, precision=4)}, "
                             f"got {np.array2string(got_a, precision=4)}")


def expect_equal(got, expected, what: str) -> None:
    """Fail unless ``got == expected`` (exact; arrays compared element-wise, shapes first)."""
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        ok = np.shape(got) == np.shape(expected) and np.array_equal(got, expected)
    else:
        ok = got == expected
    if not ok:
        raise ExerciseFailed(f"{what}: expected {expected!r}, got {got!r}")


def expect_tuple(got, names: Sequence[str]) -> None:
    """Fail unless ``got`` is a tuple (or list) of ``len(names)`` values, named in the message."""
    if not isinstance(got, (tuple, list)) or len(got) != len(names):
        what = f"{type(got).__name__} of length {len(got)}" if isinstance(got, (tuple, list)) else type(got).__name__
        raise ExerciseFailed(f"return a tuple of {len(names)} values ({', '.join(names)}), got a {what}")


# ----------------------------------------------------------------------------- gradients
def torch_gradients(forward: Callable[..., torch.Tensor], inputs: Sequence[np.ndarray],
                    dout: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """The output of a PyTorch computation and its gradients with respect to each input.

    ``forward(*tensors) -> tensor`` is the forward pass the student differentiates by hand, written
    with torch operations. Floating ``inputs`` become float64 tensors that require gradients,
    integer ones (token ids) int64 tensors. The scalar differentiated is ``sum(output * dout)``
    (``dout`` has the output's shape), or the output itself when ``dout`` is None (a scalar loss).
    Returns (output as a float64 array, [gradient array of each input's shape, None for integers]).
    """
    tensors = []
    for a in inputs:
        a = np.asarray(a)
        if a.dtype.kind == "f":
            tensors.append(torch.tensor(a, dtype=torch.float64, requires_grad=True))
        else:
            tensors.append(torch.tensor(a, dtype=torch.int64))
    out = forward(*tensors)
    scalar = out if dout is None else (out * torch.as_tensor(np.asarray(dout), dtype=torch.float64)).sum()
    if scalar.requires_grad:                   # False when the output depends on no input
        scalar.backward()
    grads = []
    for t in tensors:
        if not t.requires_grad:
            grads.append(None)
        elif t.grad is None:                   # the output does not depend on this input
            grads.append(np.zeros(tuple(t.shape)))
        else:
            grads.append(t.grad.numpy().copy())
    return out.detach().numpy().astype(np.float64), grads


def numerical_gradients(loss: Callable[..., float], inputs: Sequence[np.ndarray], h: float = 1e-5) -> list[np.ndarray | None]:
    """Centred finite-difference gradients of the scalar ``loss(*inputs)`` with respect to each
    floating input (None for integer inputs); float64 copies are perturbed, never the inputs."""
    arrays = [np.array(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else np.asarray(a) for a in inputs]
    grads = []
    for a in arrays:
        grads.append(numerical_gradient(lambda: float(loss(*arrays)), a, h) if a.dtype.kind == "f" else None)
    return grads


def expect_gradients(got: Sequence, expected: Sequence, names: Sequence[str], against: str,
                     tol: float = 1e-6) -> None:
    """Fail unless each ``got[i]`` equals ``expected[i]`` (skipped where expected is None): shape
    first (saying when it is the transpose), then a relative error below ``tol``. ``against``
    names the source of the expected values in the message ("PyTorch", "finite differences")."""
    for name, g, e in zip(names, got, expected, strict=True):
        if e is None:
            continue
        try:
            g = _as_array(g).astype(float)
        except (TypeError, ValueError):
            raise ExerciseFailed(f"{name}: expected an array of numbers of shape {np.shape(e)}, "
                                 f"got {_short(g)}") from None
        if g.shape != np.shape(e):
            transposed = g.ndim == 2 and g.shape == np.shape(e)[::-1]
            raise ExerciseFailed(f"{name}: expected shape {np.shape(e)}, got {g.shape}"
                                 + (" (the transpose)" if transposed else ""))
        if not np.all(np.isfinite(g)):
            raise ExerciseFailed(f"{name}: expected finite numbers, got {np.array2string(g, precision=4)}")
        err = relative_error(g, e)
        if err > tol:
            raise ExerciseFailed(f"{name}: relative error {err:.1e} against {against} (tolerance {tol:.0e}); "
                                 f"expected {np.array2string(np.asarray(e), precision=4, threshold=12)}, "
                                 f"got {np.array2string(g, precision=4, threshold=12)}")


def expect_gradients_match_torch(got: Sequence, forward: Callable[..., torch.Tensor], inputs: Sequence[np.ndarray],
                                 names: Sequence[str], dout: np.ndarray | None = None, tol: float = 1e-6) -> None:
    """Fail unless the student's gradients ``got`` (one per input, same order) equal PyTorch
    autograd's for ``forward`` (see :func:`torch_gradients`). Integer inputs are skipped."""
    _, expected = torch_gradients(forward, inputs, dout)
    expect_gradients(got, expected, names, "PyTorch autograd", tol)


def expect_gradients_match_numerical(got: Sequence, loss: Callable[..., float], inputs: Sequence[np.ndarray],
                                     names: Sequence[str], tol: float = 1e-6) -> None:
    """Fail unless the student's gradients ``got`` (one per input, same order) equal the centred
    finite differences of the scalar ``loss(*inputs)`` (see :func:`numerical_gradients`)."""
    expect_gradients(got, numerical_gradients(loss, inputs), names, "finite differences", tol)


# ----------------------------------------------------------------------------- the one-off form
def run_checks(title: str, candidate: Callable, checks: Sequence[Callable[[Callable], None]]) -> Result:
    """Run ``checks`` on ``candidate`` without declared mistakes (an ad-hoc exercise); print and
    return the verdict. Lesson exercises use :class:`FunctionExercise`, so their mistakes get hints."""
    return FunctionExercise(title, checks, reference=None)(candidate)
