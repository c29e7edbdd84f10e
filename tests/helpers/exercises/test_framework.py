"""The exercise framework (helpers/exercises/__init__.py and expect.py) on made-up exercises:
verdicts, mistakes by wrong implementation or predicate, experiments, gradient expectations."""
import numpy as np
import pytest
import torch

from helpers.exercises import (
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    Result,
    course_version,
    expect_close,
    expect_gradients,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
    numerical_gradients,
    outputs_match,
    torch_gradients,
    your_or_reference,
)


def _square_checks():
    def small(f):
        expect_close(f(np.array([1.0, 2.0])), [1.0, 4.0], "square([1, 2])")

    def negative(f):
        expect_close(f(np.array([-3.0])), [9.0], "square([-3])")
    return [small, negative]


SQUARE = FunctionExercise(
    "square", _square_checks(), reference=lambda x: x ** 2, step="warm-up",
    explanation="Squares are even.",
    mistakes=[Mistake("doubled", "square means x * x, not 2 * x.", like=lambda x: 2 * x),
              Mistake("abs_value", "you returned |x|.", example=lambda x: np.abs(x),
                      when=lambda out, x: np.allclose(out, np.abs(x))),
              Mistake("wrong_type", "return an array, not a list.", like=lambda x: 1 / 0)])


# ---------------------------------------------------------------- function exercises
def test_three_states_and_their_messages(capsys):
    def my_square(x):
        raise NotImplementedError

    r = SQUARE(my_square)
    assert r.status == NOT_ATTEMPTED and not r
    assert "replace the raise NotImplementedError in my_square" in capsys.readouterr().out
    r = SQUARE(lambda x: x ** 2)
    assert r.status == PASSED and r
    assert capsys.readouterr().out == "✓ square: all 2 checks passed.\n  Squares are even.\n"
    r = SQUARE(lambda x: x + 1)
    out = capsys.readouterr().out
    assert r.status == FAILED and not r and r.mistake is None
    assert out.startswith("✗ square (check 1 of 2): square([1, 2]): expected [1. 4.], got [2. 3.]")
    assert "Hint" not in out and "Squares are even" not in out
    assert SQUARE(None).status == NOT_ATTEMPTED
    assert SQUARE(3).status == FAILED
    assert "expected a function, got int 3" in capsys.readouterr().out
    assert Result("t", PASSED, "✓ t")._ipython_display_() is None     # no second display
    assert FunctionExercise("square", _square_checks(), reference=None)(lambda x: x ** 2)
    assert not FunctionExercise("square", _square_checks(), reference=None)(lambda x: x)


def test_your_or_reference_goes_on_with_the_student_s_function_only_once_it_passed(capsys):
    def mine():
        return 1

    def ref():
        return 2

    assert your_or_reference(Result("t", PASSED, "✓"), mine, ref, "step") is mine
    assert your_or_reference(Result("t", NOT_ATTEMPTED, "…"), mine, ref, "step") is ref
    out = capsys.readouterr().out
    assert "your step" in out and "course's step" in out
    with pytest.raises(TypeError):
        your_or_reference(True, mine, ref, "step")


def test_the_course_version_is_shown_only_after_the_students_answer_passed(capsys):
    def course_square(x):
        return x * x * 1.0

    course_version(SQUARE(lambda x: x + 1), course_square)
    out = capsys.readouterr().out
    assert "x * x * 1.0" not in out and "once your answer to 'square' passes" in out
    course_version(SQUARE(lambda x: x ** 2), course_square)
    assert "return x * x * 1.0" in capsys.readouterr().out
    with pytest.raises(TypeError, match="result must be what the checker returned"):
        course_version(True, course_square)


def test_a_mistake_is_recognised_by_a_wrong_implementation_a_predicate_or_an_exception(capsys):
    r = SQUARE(lambda x: x + x)                  # written differently from `like`, same outputs
    assert r.mistake == "doubled"
    assert "Hint: square means x * x, not 2 * x." in capsys.readouterr().out
    r = SQUARE(np.abs)
    assert r.mistake == "abs_value" and r.message.endswith("Hint: you returned |x|.")
    assert SQUARE(lambda x: 1 / 0).mistake == "wrong_type"       # the same exception type
    r = SQUARE(lambda x: [][1])                  # IndexError: no mistake raises that
    assert r.mistake is None and "your code raised IndexError" in capsys.readouterr().out


def test_crashes_are_reported_with_the_students_line_or_blamed_on_the_output(capsys):
    def my_square(x):
        y = x ** 2
        return y[5]

    assert SQUARE(my_square).status == FAILED
    out = capsys.readouterr().out
    assert "your code raised IndexError" in out and "in my_square, line" in out
    assert "return y[5])" in out

    def check(f):
        f(1.0)["key"]                           # the check fails on an unexpected output type
    r = FunctionExercise("t", [check], reference=None)(lambda x: 2.0)
    assert r.status == FAILED
    assert "your output could not be checked (TypeError" in capsys.readouterr().out

    def half_done(x):
        if len(x) > 1:
            return x ** 2
        raise NotImplementedError
    assert SQUARE(half_done).status == FAILED                   # unfinished, not unattempted
    assert "still raises NotImplementedError" in capsys.readouterr().out


def test_the_wrong_implementation_replays_the_arguments_from_before_the_call(capsys):
    def in_place(x):
        x[:] = 0                                # changes its input, then returns it
        return x

    def check(f):
        expect_close(f(np.array([1.0, 2.0])), [1.0, 4.0], "square([1, 2])")

    seen = []
    like = lambda x: seen.append(x.copy()) or x * 0  # noqa: E731
    ex = FunctionExercise("t", [check], reference=None,
                          mistakes=[Mistake("zeroed", "h", like=like)])
    assert ex(in_place).mistake == "zeroed"
    assert np.array_equal(seen[0], [1.0, 2.0]), "the replay saw the input before the student's call"


@pytest.mark.parametrize("declare, message", [
    (lambda: Mistake("m", "h"), "exactly one of like"),
    (lambda: Mistake("m", "h", like=abs, when=lambda out, x: True), "exactly one of like"),
    (lambda: Mistake("m", "h", when=lambda out, x: True), "needs an example"),
    (lambda: Mistake("m", " ", like=abs), "hint is empty"),
    (lambda: FunctionExercise("t", _square_checks(), reference=None, step="hard"),
     "step must be one of"),
    (lambda: FunctionExercise("t", _square_checks(), reference=None,
                              mistakes=[Mistake("m", "a", like=abs), Mistake("m", "b", like=abs)]),
     "share a name"),
    (lambda: FunctionExercise("t", [], reference=None), "at least one check")])
def test_declarations_are_validated(declare, message):
    with pytest.raises(ValueError, match=message):
        declare()


# ---------------------------------------------------------------- experiments
PERPLEXITY = ExperimentExercise(
    "best temperature", lambda curve: min(curve, key=curve.get), atol=0.05,
    explanation="Lower temperature sharpens the distribution.",
    example_context={"curve": {0.5: 90.0, 1.0: 80.0}},
    mistakes=[Mistake("highest", "you picked the worst temperature.",
                      like=lambda curve: max(curve, key=curve.get)),
              Mistake("percent", "give a temperature, not a percentage.", example=100,
                      when=lambda answer, curve: answer > 10)])


def test_an_experiment_checks_a_number_within_tolerance_and_explains_only_when_right(capsys):
    ctx = PERPLEXITY.example_context
    assert PERPLEXITY(None, **ctx).status == PERPLEXITY(..., **ctx).status == NOT_ATTEMPTED
    assert "not attempted yet" in capsys.readouterr().out
    assert PERPLEXITY(1.04, **ctx) and "Lower temperature sharpens" in capsys.readouterr().out
    r = PERPLEXITY(0.5, **ctx)
    out = capsys.readouterr().out
    assert r.mistake == "highest" and "Lower temperature" not in out and "not within ±0.05" in out
    assert "1" not in out.split("Hint")[0].replace("0.5", ""), "the right value stays hidden"
    assert PERPLEXITY(100, **ctx).mistake == "percent"
    for bad in ("one", True, [1.0], float("nan")):
        assert PERPLEXITY(bad, **ctx).status == FAILED
        assert "expected a finite number" in capsys.readouterr().out
    assert PERPLEXITY(np.float32(1.0), **ctx) and PERPLEXITY(torch.tensor(1.0), **ctx)
    broken = ExperimentExercise("t", 1.0, atol=0.1, explanation="e",
                                mistakes=[Mistake("m", "h", like=lambda curve: curve["missing"])])
    assert broken(2.0, curve={}).status == FAILED, "a mistake that cannot be evaluated is skipped"


def test_an_experiment_with_choices():
    ex = ExperimentExercise("which matrix", "W", choices=["W", "C", "W+C"], explanation="W.",
                            mistakes=[Mistake("context", "C is the context matrix.", like="C"),
                                      Mistake("sum", "the sum helps only a little.", like="W+C"),
                                      Mistake("blank", "pick one.", example=" ",
                                              when=lambda a: not a.strip())])
    assert ex(" w ") and not ex("C") and ex("C").mistake == "context"
    assert ex("w+c").mistake == "sum" and ex("V").mistake is None and ex(3).status == FAILED
    assert "expected one of 'W', 'C', 'W+C', got 'V'" in ex("V").message
    assert ex.right_answer() == "W"


def test_outputs_match():
    assert outputs_match((np.ones(2), "a"), [np.ones(2) + 1e-12, np.str_("a")])
    assert not outputs_match(np.ones(2), np.ones(3))
    assert not outputs_match(np.ones(2), np.ones(2) + 1e-3)
    assert not outputs_match(np.ones(2, bool), np.ones(2)), "a float mask is not a boolean mask"
    assert outputs_match(float("nan"), np.nan) and outputs_match(torch.ones(2), np.ones(2))
    assert not outputs_match(None, 0) and not outputs_match("1", 1)
    assert outputs_match({"a": 1}, {"a": 1.0})


# ---------------------------------------------------------------- gradients
def test_torch_and_numerical_gradients_of_a_matrix_product():
    rng = np.random.default_rng(0)
    X, W = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    dout = rng.standard_normal((3, 2))
    X0, ids = X.copy(), np.array([0, 2])
    out, (dX, dW, d_ids) = torch_gradients(lambda X, W, ids: (X @ W)[ids], [X, W, ids], dout[:2])
    assert np.allclose(out, (X @ W)[ids])
    expected_dX = np.zeros_like(X)
    expected_dX[ids] = dout[:2] @ W.T
    assert np.allclose(dX, expected_dX) and np.allclose(dW, X[ids].T @ dout[:2]) and d_ids is None
    nX, nW = numerical_gradients(lambda X, W: np.sum((X @ W) * dout), [X, W])
    assert np.allclose(nX, dout @ W.T, atol=1e-8) and np.allclose(nW, X.T @ dout, atol=1e-8)
    assert np.array_equal(X, X0), "inputs untouched"
    _, (unused,) = torch_gradients(lambda a: torch.ones(2, dtype=torch.float64).sum(), [np.ones(3)])
    assert np.array_equal(unused, np.zeros(3))


def test_expectations_name_the_value_or_gradient_and_the_problem():
    rng = np.random.default_rng(1)
    X, W = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    dout = rng.standard_normal((3, 2))
    right, names = [dout @ W.T, X.T @ dout], ["dX", "dW"]
    loss = lambda X, W: np.sum((X @ W) * dout)  # noqa: E731
    expect_gradients_match_torch(right, lambda X, W: X @ W, [X, W], names, dout=dout)
    expect_gradients_match_numerical(right, loss, [X, W], names)
    with pytest.raises(ExerciseFailed, match=r"dW: expected shape \(4, 2\), got \(2, 4\) \(the tr"):
        expect_gradients_match_torch([right[0], right[1].T], lambda X, W: X @ W, [X, W], names,
                                     dout=dout)
    with pytest.raises(ExerciseFailed, match=r"dX: relative error .* against finite differences"):
        expect_gradients_match_numerical([2 * right[0], right[1]], loss, [X, W], names)
    with pytest.raises(ExerciseFailed, match="expected finite numbers"):
        expect_gradients([np.full(2, np.nan)], [np.zeros(2)], ["db"], "PyTorch")
    with pytest.raises(ExerciseFailed, match=r"return a tuple of 2 values \(dX, dW\), got a ndarr"):
        expect_tuple(np.zeros(2), names)
    with pytest.raises(ExerciseFailed, match=r"v: expected shape \(2,\), got \(3,\)"):
        expect_close([1, 2, 3], [1, 2], "v")
    with pytest.raises(ExerciseFailed, match=r"v: expected \[1\. 4\.\], got \[1\. 5\.\]"):
        expect_close([1, 5], [1, 4], "v")
