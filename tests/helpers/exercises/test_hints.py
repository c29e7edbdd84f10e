"""Every exercise of every lesson: its reference passes, the stub is "not attempted yet", each
declared mistake gets exactly its hint, autograd and the course's code are refused, the notebooks
call the checkers. An exercise listed in a module's ``EXERCISES`` is tested here."""
import importlib
import pkgutil
import re

import pytest
import torch

import helpers.exercises as framework
from helpers.exercises import NOT_ATTEMPTED, PASSED, Exercise, ExperimentExercise, FunctionExercise
from helpers.exercises.guard import Watch
from tests.lesson_text import NOTEBOOKS, code_cells, load, source, tags

MODULES = sorted(m.name for m in pkgutil.iter_modules(framework.__path__)
                 if re.fullmatch(r"lesson\d\d", m.name))


def _module(name: str):
    return importlib.import_module(f"helpers.exercises.{name}")


EXERCISES = [(name, ex) for name in MODULES for ex in getattr(_module(name), "EXERCISES", [])]
IDS = [f"{n}-{e.title}" for n, e in EXERCISES]
MISTAKES = [(name, ex, m) for name, ex in EXERCISES for m in ex.mistakes]
FUNCTIONS = [(n, e) for n, e in EXERCISES if isinstance(e, FunctionExercise)]
FUNCTION_IDS = [f"{n}-{e.title}" for n, e in FUNCTIONS]
EXPERIMENTS = [(n, e) for n, e in EXERCISES if isinstance(e, ExperimentExercise)]


def _stub(*args, **kwargs):
    raise NotImplementedError  # your code here


def _check(ex: Exercise, answer):
    """Run the checker as a notebook would, with the experiment's example context. A wrong answer
    is the checker's own code (it may call the reference), so it runs without the guard."""
    if isinstance(ex, ExperimentExercise):
        if callable(answer):
            answer = answer(**ex.example_context)
        return ex(answer, **ex.example_context)
    return ex.run_checks(answer)


# ---------------------------------------------------------------- the registry
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
            assert isinstance(obj, Exercise), f"{name}.{attr} is not an Exercise"
    titles = [ex.title for ex in module.EXERCISES]
    assert len(set(titles)) == len(titles), f"{name}: two exercises share a title: {titles}"


@pytest.mark.parametrize("name,ex", EXERCISES, ids=IDS)
def test_each_exercise_declares_at_least_three_distinct_mistakes(name, ex):
    assert len(ex.mistakes) >= 3, f"{name} '{ex.title}': the three likeliest mistakes need hints"
    hints = [m.hint for m in ex.mistakes]
    for i, h in enumerate(hints):
        assert not any(h in o for o in hints[:i] + hints[i + 1:]), \
            f"{name} '{ex.title}': the hint of {ex.mistakes[i].name!r} is part of another hint"
    if isinstance(ex, FunctionExercise):
        assert callable(ex.reference), f"{name} '{ex.title}': no reference"


# ---------------------------------------------------------------- reference, stub, mistakes
@pytest.mark.parametrize("name,ex", EXERCISES, ids=IDS)
def test_the_reference_passes(name, ex, capsys):
    if isinstance(ex, FunctionExercise):       # the library's own function, refused from a student
        result = ex.run_checks(ex.reference)
    else:
        result = _check(ex, ex.right_answer(**ex.example_context))
    out = capsys.readouterr().out
    assert result.status == PASSED and result, f"{name} '{ex.title}': the reference fails:\n{out}"
    assert out.startswith("✓") and "Hint:" not in out
    if ex.explanation:
        assert ex.explanation.strip().splitlines()[0] in out, "the explanation follows a pass"


@pytest.mark.parametrize("name,ex", EXERCISES, ids=IDS)
def test_the_untouched_stub_is_not_attempted_yet(name, ex, capsys):
    experiment = isinstance(ex, ExperimentExercise)
    for stub in [None, ...] if experiment else [_stub]:
        result = ex(stub, **ex.example_context) if experiment else ex(stub)
        out = capsys.readouterr().out
        assert result.status == NOT_ATTEMPTED and not result, out
        assert "not attempted yet" in out and "Hint:" not in out and "✗" not in out
        if ex.explanation:
            assert ex.explanation.strip().splitlines()[0] not in out, "the explanation waits"


@pytest.mark.parametrize("name,ex,mistake", MISTAKES,
                         ids=[f"{n}-{e.title}-{m.name}" for n, e, m in MISTAKES])
def test_each_typical_mistake_gets_its_own_hint(name, ex, mistake, capsys):
    result = _check(ex, mistake.typical_answer)
    out = capsys.readouterr().out
    assert result.status == "failed", f"{name} '{ex.title}': {mistake.name!r} passes:\n{out}"
    assert result.mistake == mistake.name, \
        f"{name} '{ex.title}': expected {mistake.name!r}'s hint, got {result.mistake!r}:\n{out}"
    assert out.count(mistake.hint) == 1 and out.count("Hint:") == 1, out
    assert not any(other.hint in out for other in ex.mistakes if other is not mistake)
    verdict, hint = out.rstrip("\n").split("\n  Hint: ")
    assert re.fullmatch(rf"✗ {re.escape(ex.title)}( \(check \d+ of \d+\))?: \S.*", verdict, re.S), \
        f"the hint comes under the verdict and its expected/got message:\n{out}"
    assert hint == mistake.hint
    if ex.explanation:
        assert ex.explanation.strip().splitlines()[0] not in out, "the explanation waits"


# ---------------------------------------------------------------- the notebooks use them
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebook_calls_every_checker_of_its_lesson(path):
    """(Each solution asserting its checker: tests/notebooks/test_student_edition.py.)"""
    module = _module(f"lesson{path.name[:2]}")
    names = {id(obj): attr for attr, obj in vars(module).items() if isinstance(obj, Exercise)}
    exercise_cells = "\n".join(source(c) for c in code_cells(load(path))
                               if {"exercise", "check"} & set(tags(c)))
    for ex in module.EXERCISES:
        assert re.search(rf"\b{names[id(ex)]}\(", exercise_cells), \
            f"{path.name}: no cell tagged 'exercise' (or 'check') calls {names[id(ex)]}"


# ---------------------------------------------------------------- checkers that cannot be fooled
@pytest.mark.parametrize("name,ex", FUNCTIONS, ids=FUNCTION_IDS)
def test_a_constant_answer_fails(name, ex, capsys):
    for constant in (0.0, 1.0):
        result = ex(lambda *args, _c=constant, **kwargs: _c)
        out = capsys.readouterr().out
        assert result.status == "failed", f"{name} '{ex.title}': {constant} passes:\n{out}"


@pytest.mark.parametrize("name,ex", FUNCTIONS, ids=FUNCTION_IDS)
def test_every_forbidden_object_is_watched(name, ex):
    """The guard needs code to recognise (a function, method, property or a class with methods of
    its own), or a library builtin."""
    for forbidden in ex.forbidden:
        watch = Watch([forbidden])
        assert watch.course or watch.builtins, f"{name} '{ex.title}': cannot see {forbidden!r}"


@pytest.mark.parametrize("cheat", ["autograd", "the reference by getattr"])
@pytest.mark.parametrize("name,ex", FUNCTIONS, ids=FUNCTION_IDS)
def test_an_answer_through_autograd_or_the_course_is_refused(name, ex, cheat, capsys):
    """Every checker runs the answer under the guard (tests/helpers/exercises/test_guard.py
    tests each shortcut it refuses) and refuses its own reference, however it is reached."""
    namespace = {"torch": torch, "importlib": importlib, "ref": ex.reference}
    if cheat == "autograd":
        route = ("x = torch.ones(2, requires_grad=True)\n    (x * x).sum().backward()\n"
                 "    answer = ref")
    else:
        route = "answer = getattr(importlib.import_module(ref.__module__), ref.__name__)"
    exec(f"def cheat(*args, **kwargs):\n    {route}\n    return answer(*args, **kwargs)\n",
         namespace)
    result = ex(namespace["cheat"])
    out = capsys.readouterr().out
    assert result.status == "failed" and "is refused" in out, \
        f"{name} '{ex.title}': an answer through {cheat} is not refused:\n{out}"


@pytest.mark.parametrize("name,ex", EXPERIMENTS, ids=[f"{n}-{e.title}" for n, e in EXPERIMENTS])
def test_an_experiment_measures_for_itself_and_always_gives_a_verdict(name, ex, capsys):
    right = ex.right_answer()                  # works with no context: the checker measures
    result = ex(right)
    out = capsys.readouterr().out
    assert result.status == PASSED, f"{name} '{ex.title}': right answer, no context:\n{out}"
    assert ex("none of these" if ex.choices else 1e9).status == "failed"
    for key in ex.example_context:
        for empty in (None, {}, [], 0):
            result = ex(right, **{**ex.example_context, key: empty})   # a verdict, no traceback
            assert isinstance(result, framework.Result)
    capsys.readouterr()
