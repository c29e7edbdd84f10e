"""Exercise checkers: graded steps, targeted hints, and "not attempted yet"."""
from __future__ import annotations

import copy
import textwrap
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from helpers.exercises.expect import (  # noqa: F401  (re-exported for the checker modules)
    ExerciseFailed,
    as_array,
    expect_close,
    expect_equal,
    expect_gradients,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
    numerical_gradients,
    short_repr,
    torch_gradients,
)
from helpers.exercises.guard import Refused, Watch
from helpers.infra.source import show_source

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"
STEPS = ("warm-up", "core", "experiment")


# ---------------------------------------------------------------- results and mistakes
@dataclass(frozen=True)
class Result:
    """A checker's verdict (true only when passed), its message and the mistake recognised."""

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
    """A likely mistake, how to recognise it (``like``: a wrong implementation or value, or
    ``when``: a predicate), and the hint that fixes it; ``example``: a wrong answer for the
    tests (required with ``when``)."""

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
    """True when two outputs are the same: numbers within tolerance, containers element-wise."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(outputs_match(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(outputs_match(a[k], b[k], rtol, atol) for k in a)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is b
    try:
        x, y = as_array(a), as_array(b)
    except (TypeError, ValueError):
        return False
    if x.shape != y.shape or x.dtype.kind not in "biuf" or y.dtype.kind not in "biuf":
        return x.shape == y.shape and bool(np.all(x == y))
    if (x.dtype.kind == "b") != (y.dtype.kind == "b"):
        return False
    return bool(np.allclose(x.astype(float), y.astype(float), rtol=rtol, atol=atol, equal_nan=True))


def _copy(v: Any) -> Any:
    try:
        return copy.deepcopy(v)
    except Exception:  # an uncopyable object (a generator ...): keep the object itself
        return v


# ---------------------------------------------------------------- the two kinds of exercise
class Exercise:
    """What both kinds share: a title, a step, the likely mistakes, an optional explanation."""

    def __init__(self, title: str, *, step: str, mistakes: Sequence[Mistake] = (),
                 explanation: str | None = None):
        if step not in STEPS:
            raise ValueError(f"step must be one of {STEPS}, got {step!r}")
        names = [m.name for m in mistakes]
        if len(set(names)) != len(names):
            raise ValueError(f"{title}: two mistakes share a name: {names}")
        self.title, self.step, self.explanation = title, step, explanation
        self.mistakes = tuple(mistakes)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.title!r} ({self.step}), "
                f"{len(self.mistakes)} mistakes>")

    def _report(self, status: str, text: str, mistake: Mistake | None = None) -> Result:
        VERDICTS[self.title] = status
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
    """One call of the student's function: copies of its arguments and result (or its error)."""

    args: tuple
    kwargs: dict
    result: Any = None
    error: BaseException | None = None


class _Recorder:
    """The student's function, recording every call (under ``watch`` when given)."""

    def __init__(self, fn: Callable, watch: Watch | None = None):
        self.fn, self.calls, self.watch = fn, [], watch

    def __call__(self, *args, **kwargs):
        call = Call(_copy(args), _copy(kwargs))
        self.calls.append(call)
        try:
            if self.watch is None:
                result = self.fn(*args, **kwargs)
            else:
                with self.watch:
                    result = self.fn(*args, **kwargs)
        except BaseException as e:
            call.error = e
            raise
        if self.watch is not None and self.watch.refusal:     # refused, and the answer caught it
            raise Refused(self.watch.refusal)
        call.result = _copy(result)
        return result


class FunctionExercise(Exercise):
    """The student writes a function; calling the exercise with it runs ``checks`` in order,
    tries ``mistakes`` when one fails, and refuses what ``forbidden`` names."""

    def __init__(self, title: str, checks: Sequence[Callable[[Callable], None]], *,
                 reference: Callable | None, mistakes: Sequence[Mistake] = (), step: str = "core",
                 explanation: str | None = None, forbidden: Sequence[Any] = ()):
        super().__init__(title, step=step, mistakes=mistakes, explanation=explanation)
        if not checks:
            raise ValueError(f"{title}: an exercise needs at least one check")
        self.checks, self.reference = tuple(checks), reference
        self.forbidden = tuple(forbidden) + ((reference,) if reference is not None else ())

    def __call__(self, candidate: Callable) -> Result:
        """Run the checks on the student's function; print and return the verdict."""
        if candidate is None or candidate is Ellipsis:
            return self._report(NOT_ATTEMPTED, f"… {self.title}: not attempted yet — write the "
                                               "function and pass it to the checker.")
        if not callable(candidate):
            return self._report(FAILED, f"✗ {self.title}: expected a function, got "
                                        f"{type(candidate).__name__} {short_repr(candidate)}")
        return self.run_checks(candidate, watch=Watch(self.forbidden))

    def run_checks(self, candidate: Callable, watch: Watch | None = None) -> Result:
        """Run the checks on ``candidate``, under ``watch`` if given."""
        name = getattr(candidate, "__name__", "your function")
        recorder = _Recorder(candidate, watch)
        n = len(self.checks)
        for i, check in enumerate(self.checks, 1):
            try:
                check(recorder)
                continue
            except Refused as e:
                return self._report(FAILED, f"✗ {self.title}: {name} is refused: {e}. The "
                                            "exercise is to write it yourself with NumPy.")
            except NotImplementedError:
                if recorder.calls and isinstance(recorder.calls[0].error, NotImplementedError):
                    return self._report(NOT_ATTEMPTED, f"… {self.title}: not attempted yet — "
                                        f"replace the raise NotImplementedError in {name}.")
                detail = "your function still raises NotImplementedError here: finish it"
            except ExerciseFailed as e:
                detail = str(e)
            except Exception as e:
                mine = bool(recorder.calls) and recorder.calls[-1].error is e
                detail = (f"your code raised {type(e).__name__}: {str(e).strip()}"
                          f"{_where(e, candidate)}" if mine else
                          f"your output could not be checked ({type(e).__name__}: {e}): is its "
                          "type and shape what the task asks for?")
            mistake = self.recognise(recorder.calls)
            return self._report(FAILED, f"✗ {self.title} (check {i} of {n}): {detail}", mistake)
        return self._passed(f"✓ {self.title}: all {n} checks passed.")

    def recognise(self, calls: Sequence[Call]) -> Mistake | None:
        """The first declared mistake that explains the recorded ``calls`` (None if none does)."""
        for mistake in self.mistakes:
            if mistake.like is not None and _behaves_like(mistake.like, calls):
                return mistake
            if mistake.when is not None and any(
                    _holds(mistake.when, c.result, *c.args, **c.kwargs)
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
    """' (in f, line 3: code)' for the last line of the student's own code in the traceback."""
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    if not frames:
        return ""
    f = frames[-1]
    return f" (in {f.name}, line {f.lineno}" + (f": {f.line.strip()})" if f.line else ")")


class ExperimentExercise(Exercise):
    """The student enters a measured number or a choice: ``expected`` (a value, or
    ``expected(**context)``), right within ``atol + rtol·|expected|``; ``choices``: case ignored."""

    def __init__(self, title: str, expected: Any, *, explanation: str,
                 mistakes: Sequence[Mistake] = (), rtol: float = 0.0, atol: float = 0.0,
                 choices: Sequence[str] | None = None, example_context: dict | None = None):
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
            return self._report(NOT_ATTEMPTED, f"… {self.title}: not attempted yet — replace the "
                                               "None with your answer.")
        if self.choices is not None:
            if not isinstance(answer, str) or _norm(answer) not in map(_norm, self.choices):
                return self._report(FAILED, f"✗ {self.title}: expected one of "
                                            f"{', '.join(map(repr, self.choices))}, "
                                            f"got {short_repr(answer)}")
        elif _as_number(answer) is None:
            return self._report(FAILED, f"✗ {self.title}: expected a finite number, "
                                        f"got {short_repr(answer)}")
        try:
            right = self.right_answer(**context)
        except Exception as e:  # a missing, empty or invalid setting: a verdict, not a traceback
            why = f"{type(e).__name__}: {str(e).strip() or 'no message'}"
            return self._report(FAILED, f"✗ {self.title}: the checker could not measure the right "
                                        f"answer with the settings given ({why}); call it as the "
                                        "lesson's cell does")
        if self._same(answer, right):
            return self._passed(f"✓ {self.title}: right.")
        if self.choices is not None:
            detail = f"{answer!r} is not what the measurement shows"
        else:
            tol = (f"±{self.atol:g}" if not self.rtol
                   else f"±({self.atol:g} + {self.rtol:g}·|value|)")
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
    """``answer`` as a finite float, or None (a bool and a string are not numbers)."""
    if isinstance(answer, (bool, str, bytes)):
        return None
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None


def _norm(choice: Any) -> str:
    return str(choice).strip().lower()


# ---------------------------------------------------------------- the student's code, used
# What this kernel has seen: the latest verdict of each exercise, and where each function ran.
VERDICTS: dict[str, str] = {}
USED: dict[str, list[str]] = {}


def your_or_reference(result: Result, yours: Callable, reference: Callable, what: str,
                      where: str = "") -> Callable:
    """The student's ``yours`` once its checker's ``result`` passed, else ``reference``."""
    if not isinstance(result, Result):
        raise TypeError(f"your_or_reference: result must be what the checker returned (a Result), "
                        f"got {type(result).__name__}")
    if where:
        USED.setdefault(result.title, [])
        if where not in USED[result.title]:
            USED[result.title].append(where)
    if result:
        name = getattr(yours, "__name__", "your function")
        print(f"→ the lesson goes on with your {what} ({name}).")
        return yours
    print(f"→ the lesson goes on with the course's {what} until yours passes its checker "
          f"({result.status}).")
    return reference


def course_version(result: Result, obj: Any) -> None:
    """Show the course's code of ``obj`` once the student's answer (``result``) passed."""
    if not isinstance(result, Result):
        raise TypeError("course_version: result must be what the checker returned (a Result), "
                        f"got {type(result).__name__}")
    if result:
        show_source(obj)
    else:
        name = getattr(obj, "__qualname__", getattr(obj, "__name__", "it"))
        print(f"The course's {name} appears here once your answer to '{result.title}' passes "
              "its checker: re-run this cell then.")


def your_work(exercises: Sequence[Exercise]) -> None:
    """Print each exercise's verdict in this session and what ran on the student's code."""
    width = max(len(ex.title) for ex in exercises)
    print(f"{'exercise':<{width}}  {'verdict':<14}  what ran on your code")
    for ex in exercises:
        verdict = VERDICTS.get(ex.title, "not run yet")
        used = "; ".join(USED.get(ex.title, [])) or "-"
        if verdict != PASSED and used != "-":
            used = f"(the course's version, until yours passes) {used}"
        print(f"{ex.title:<{width}}  {verdict:<14}  {used}")
