"""Every exercise of every lesson (issue 17): its reference passes, the untouched stub reports
"not attempted yet", and each declared mistake's typical wrong answer gets exactly that mistake's
hint. Each checker module lists its exercises in ``EXERCISES``; an exercise added there is tested
here without anything else to write. The lesson notebooks must use the checkers they declare.
"""
from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import helpers.exercises as framework
from helpers.exercises import NOT_ATTEMPTED, PASSED, Exercise, ExperimentExercise, FunctionExercise
from helpers.exercises.guard import Watch

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MODULES = sorted(m.name for m in pkgutil.iter_modules(framework.__path__) if re.fullmatch(r"lesson\d\d", m.name))
MIN_MISTAKES = 3


def _module(name: str):
    return importlib.import_module(f"helpers.exercises.{name}")


def _exercises():
    return [(name, ex) for name in MODULES for ex in getattr(_module(name), "EXERCISES", [])]


EXERCISES = _exercises()
MISTAKES = [(name, ex, m) for name, ex in EXERCISES for m in ex.mistakes]


def _stub(*args, **kwargs):
    raise NotImplementedError  # your code here


def _check(ex: Exercise, answer):
    """Run the checker as a notebook would, with the experiment's example measurement. A typical
    wrong answer is the checker's own code (it may call the reference and spoil its result), so it
    runs through the checks without the guard, which the cheat tests below exercise."""
    if isinstance(ex, ExperimentExercise):
        if callable(answer):
            answer = answer(**ex.example_context)
        return ex(answer, **ex.example_context)
    return ex.run_checks(answer)


def _check_reference(ex: Exercise):
    """The reference through the checks alone (it may be the library's own function, which the
    checker refuses from a student)."""
    if isinstance(ex, FunctionExercise):
        return ex.run_checks(ex.reference)
    return _check(ex, _reference(ex))


def _reference(ex: Exercise):
    return ex.right_answer(**ex.example_context) if isinstance(ex, ExperimentExercise) else ex.reference


# ----------------------------------------------------------------------------- the registry
def test_one_checker_module_per_lesson():
    assert MODULES == [f"lesson{p.name[:2]}" for p in NOTEBOOKS]


@pytest.mark.parametrize("name", MODULES)
def test_the_registry_lists_every_exercise_of_the_module(name):
    module = _module(name)
    assert isinstance(getattr(module, "EXERCISES", None), list), f"{name} has no EXERCISES list"
    declared = [obj for obj in vars(module).values() if isinstance(obj, Exercise)]
    assert set(map(id, declared)) == set(map(id, module.EXERCISES)), \
        f"{name}: every Exercise defined in the module must be listed in EXERCISES, and only those"
    for attr, obj in vars(module).items():
        if attr.startswith("check_"):
            assert isinstance(obj, Exercise), f"{name}.{attr} is not an Exercise (declare it as data)"
    titles = [ex.title for ex in module.EXERCISES]
    assert len(set(titles)) == len(titles), f"{name}: two exercises share a title: {titles}"


@pytest.mark.parametrize("name,ex", EXERCISES, ids=[f"{n}-{e.title}" for n, e in EXERCISES])
def test_each_exercise_declares_at_least_three_distinct_mistakes(name, ex):
    assert len(ex.mistakes) >= MIN_MISTAKES, \
        f"{name} '{ex.title}': {len(ex.mistakes)} mistakes declared; the three most likely need hints"
    hints = [m.hint for m in ex.mistakes]
    for i, h in enumerate(hints):
        others = hints[:i] + hints[i + 1:]
        assert not any(h in o for o in others), f"{name} '{ex.title}': the hint of {ex.mistakes[i].name!r} is " \
                                                "part of another hint, so the tests cannot tell them apart"
    if isinstance(ex, FunctionExercise):
        assert callable(ex.reference), f"{name} '{ex.title}': a FunctionExercise needs its reference"


# ----------------------------------------------------------------------------- reference, stub, mistakes
@pytest.mark.parametrize("name,ex", EXERCISES, ids=[f"{n}-{e.title}" for n, e in EXERCISES])
def test_the_reference_passes(name, ex, capsys):
    result = _check_reference(ex)
    out = capsys.readouterr().out
    assert result.status == PASSED and result, f"{name} '{ex.title}': the reference fails:\n{out}"
    assert out.startswith("✓") and "Hint:" not in out
    if ex.explanation:
        assert ex.explanation.strip().splitlines()[0] in out, "the explanation is printed after a right answer"


@pytest.mark.parametrize("name,ex", EXERCISES, ids=[f"{n}-{e.title}" for n, e in EXERCISES])
def test_the_untouched_stub_is_not_attempted_yet(name, ex, capsys):
    stubs = [None, ...] if isinstance(ex, ExperimentExercise) else [_stub]
    for stub in stubs:
        result = ex(stub, **ex.example_context) if isinstance(ex, ExperimentExercise) else ex(stub)
        out = capsys.readouterr().out
        assert result.status == NOT_ATTEMPTED and not result, out
        assert "not attempted yet" in out and "Hint:" not in out and "✗" not in out
        if ex.explanation:
            assert ex.explanation.strip().splitlines()[0] not in out, "the explanation waits for a right answer"


@pytest.mark.parametrize("name,ex,mistake", MISTAKES, ids=[f"{n}-{e.title}-{m.name}" for n, e, m in MISTAKES])
def test_each_typical_mistake_gets_its_own_hint(name, ex, mistake, capsys):
    result = _check(ex, mistake.typical_answer)
    out = capsys.readouterr().out
    assert result.status == "failed", f"{name} '{ex.title}': the typical answer of {mistake.name!r} passes:\n{out}"
    assert result.mistake == mistake.name, \
        f"{name} '{ex.title}': expected the hint of {mistake.name!r}, got {result.mistake!r}:\n{out}"
    assert out.count(mistake.hint) == 1 and out.count("Hint:") == 1, out
    for other in ex.mistakes:
        assert other is mistake or other.hint not in out
    verdict, hint = out.rstrip("\n").split("\n  Hint: ")
    assert re.fullmatch(rf"✗ {re.escape(ex.title)}( \(check \d+ of \d+\))?: \S.*", verdict, re.S), \
        f"the hint comes under the verdict and its expected/got message:\n{out}"
    assert hint == mistake.hint
    if ex.explanation:
        assert ex.explanation.strip().splitlines()[0] not in out, "the explanation waits for a right answer"


# ----------------------------------------------------------------------------- the notebooks use them
def _cells(path: Path, tag: str) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"]
            if c["cell_type"] == "code" and tag in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebook_calls_every_checker_of_its_lesson(path):
    module = _module(f"lesson{path.name[:2]}")
    names = {id(obj): attr for attr, obj in vars(module).items() if isinstance(obj, Exercise)}
    solutions = ROOT / "solutions" / f"{path.stem}_solutions.ipynb"
    exercise_cells = "\n".join(_cells(path, "exercise") + _cells(path, "check"))
    solution_cells = "\n".join(_cells(solutions, "solution") if solutions.exists() else _cells(path, "solution"))
    for ex in module.EXERCISES:
        name = names[id(ex)]
        assert re.search(rf"\b{name}\(", exercise_cells), \
            f"{path.name}: no cell tagged 'exercise' (or 'check') calls {name}"
        assert re.search(rf"(?m)^assert {name}\(", solution_cells), \
            f"{path.name}: no cell tagged 'solution' (in solutions/ or the lesson) asserts {name}(..._solution)"


# ----------------------------------------------------------------------------- checkers that cannot be fooled
def _lesson(name: str) -> str:
    return name[-2:]


FUNCTIONS = [(n, e) for n, e in EXERCISES if isinstance(e, FunctionExercise)]
EXPERIMENTS = [(n, e) for n, e in EXERCISES if isinstance(e, ExperimentExercise)]
SHORTCUTS = [(n, e, f) for n, e in FUNCTIONS for f in e.forbidden]


@pytest.mark.parametrize("name,ex", FUNCTIONS, ids=[f"{n}-{e.title}" for n, e in FUNCTIONS])
def test_a_constant_answer_fails(name, ex, capsys):
    for constant in (0.0, 1.0):
        result = ex(lambda *args, _c=constant, **kwargs: _c)
        out = capsys.readouterr().out
        assert result.status == "failed", f"{name} '{ex.title}': a function returning {constant} is not failed:\n{out}"


@pytest.mark.parametrize("name,ex", FUNCTIONS, ids=[f"{n}-{e.title}" for n, e in FUNCTIONS])
def test_the_reference_itself_is_refused(name, ex, capsys):
    result = ex(ex.reference)
    out = capsys.readouterr().out
    assert result.status == "failed" and "is refused" in out, f"{name} '{ex.title}': the reference passes:\n{out}"


@pytest.mark.parametrize("name,ex,forbidden", SHORTCUTS,
                         ids=[f"{n}-{e.title}-{getattr(f, '__name__', f)}" for n, e, f in SHORTCUTS])
def test_every_forbidden_object_is_watched(name, ex, forbidden):
    """The guard refuses a forbidden object when its code runs: it must have code to recognise (a
    function, method, property or a class with methods of its own), or be a library builtin."""
    watch = Watch([forbidden])
    assert watch.course or watch.builtins, f"{name} '{ex.title}': {forbidden!r} has no code the guard can see"


CHEATS = {   # each does something forbidden, then answers with the reference
    "autograd": "x = torch.ones(2, requires_grad=True)\n    (x * x).sum().backward()",
    "torch.func": "torch.func.grad(lambda t: (t * t).sum())(torch.ones(2))",
    "torch optimiser": "w = torch.nn.Parameter(torch.ones(2)); w.grad = torch.ones(2)\n"
                       "    torch.optim.Adam([w]).step()",
    "functional adam": "torch.optim._functional.adam([torch.ones(2)], [torch.ones(2)], [torch.zeros(2)], "
                       "[torch.zeros(2)], [], [torch.tensor(1.0)], amsgrad=False, beta1=0.9, beta2=0.999, "
                       "lr=0.1, weight_decay=0.0, eps=1e-8, maximize=False)",
    "clipping": "torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(torch.ones(2))], 1.0)",
    "scipy": "scipy.optimize.approx_fprime(np.ones(2), lambda v: float(v @ v))",
    "getattr": "getattr(importlib.import_module(ref.__module__), ref.__name__)",
}


@pytest.mark.parametrize("cheat", sorted(CHEATS))
@pytest.mark.parametrize("name,ex", FUNCTIONS, ids=[f"{n}-{e.title}" for n, e in FUNCTIONS])
def test_answers_through_autograd_optimisers_scipy_or_the_course_are_refused(name, ex, cheat, capsys):
    import importlib

    import numpy as np
    import scipy.optimize
    import torch
    import torch.func
    import torch.optim._functional
    namespace = {"__name__": "__main__", "torch": torch, "np": np, "scipy": scipy,
                 "importlib": importlib, "ref": ex.reference}
    route = CHEATS[cheat] + ("" if cheat == "getattr" else "\n    answer = ref")
    if cheat == "getattr":
        route = "answer = " + route
    exec(f"def cheat(*args, **kwargs):\n    {route}\n    return answer(*args, **kwargs)\n", namespace)
    result = ex(namespace["cheat"])
    out = capsys.readouterr().out
    assert result.status == "failed" and "is refused" in out, \
        f"{name} '{ex.title}': an answer through {cheat} is not refused:\n{out}"


@pytest.mark.parametrize("name,ex", EXPERIMENTS, ids=[f"{n}-{e.title}" for n, e in EXPERIMENTS])
def test_an_experiment_measures_for_itself_and_always_gives_a_verdict(name, ex, capsys):
    right = ex.right_answer()                  # works with no context: the checker measures
    result = ex(right)
    out = capsys.readouterr().out
    assert result.status == PASSED, f"{name} '{ex.title}': the right answer without context fails:\n{out}"
    wrong = "none of these" if ex.choices else 1e9
    assert ex(wrong).status == "failed", f"{name} '{ex.title}': a constant wrong answer passes"
    for key in ex.example_context:
        for empty in (None, {}, [], 0):
            result = ex(right, **{**ex.example_context, key: empty})   # a verdict, never a traceback
            assert isinstance(result, framework.Result)
    capsys.readouterr()


def test_your_or_reference_goes_on_with_the_student_s_function_only_once_it_passed(capsys):
    passed = framework.Result("t", PASSED, "✓")
    failed = framework.Result("t", NOT_ATTEMPTED, "…")
    def mine():
        return 1
    def ref():
        return 2
    assert framework.your_or_reference(passed, mine, ref, "step") is mine
    assert framework.your_or_reference(failed, mine, ref, "step") is ref
    out = capsys.readouterr().out
    assert "your step" in out and "course's step" in out
    with pytest.raises(TypeError):
        framework.your_or_reference(True, mine, ref, "step")
