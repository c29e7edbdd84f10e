"""Lesson 09's checkers cannot be fooled (issue 30): each test below failed with the checkers as they
were before this rework (a constant 'queen' passed 3CosAdd; solutions excluding only some of the query
words passed both analogy checkers; 3CosMul's epsilon went untested; the queen-rank experiment raised a
traceback on a three-word vocabulary and could not measure without its context)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from helpers.exercises import NOT_ATTEMPTED, PASSED
from helpers.exercises import lesson09 as L
from helpers.lib.extrinsic import softmax_regression_loss_grad
from helpers.lib.layers import softmax
from helpers.lib.metrics import analogy, analogy_rank, nearest_neighbours

PROPER_SUBSETS = ["".join(s) for k in range(3) for s in itertools.combinations("abc", k)]


def test_a_constant_word_fails_3cosadd(capsys):
    assert L.check_three_cos_add(lambda *args: "queen").status == "failed"
    assert L.check_three_cos_mul(lambda *args: "queen").status == "failed"
    capsys.readouterr()


@pytest.mark.parametrize("exclude", PROPER_SUBSETS)
def test_every_exclusion_rule_is_needed(exclude, capsys):
    add = L.check_three_cos_add(L.three_cos_add_excluding(exclude))
    mul = L.check_three_cos_mul(L.three_cos_mul_excluding(exclude))
    out = capsys.readouterr().out
    assert add.status == "failed" and mul.status == "failed", out
    assert add.mistake in ("query_words_kept", "some_query_words_kept"), out
    assert mul.mistake in ("query_words_kept", "some_query_words_kept"), out


def test_each_query_word_wins_in_one_test_space_unless_excluded():
    for (name, E, words, (a, b, c)), winner in zip(L.query_word_cases(), ("c", "b", "a"), strict=True):
        for variant in (L._cosadd_variant, L._three_cos_mul_variant):
            kept = variant(E, words, a, b, c, exclude="abc".replace(winner, ""))
            assert kept == {"a": a, "b": b, "c": c}[winner], (name, variant.__name__, kept)


@pytest.mark.parametrize("eps", [0.0, 1e-6, 1e-5, 1e-2, 0.1])
def test_3cosmul_tells_its_epsilon_from_others(eps, capsys):
    assert L.check_three_cos_mul(L.three_cos_mul_with_epsilon(eps)).status == "failed"
    assert L.check_three_cos_mul(L.three_cos_mul_with_epsilon(1e-3)).status == PASSED
    capsys.readouterr()


def test_the_queen_rank_experiment_measures_for_itself(capsys):
    right = L.check_queen_rank_mul.right_answer()          # no context: the checker's own example space
    assert right == analogy_rank(**L._example_space(), a="man", b="king", c="woman", d="queen", method="mul")
    assert L.check_queen_rank_mul(right).status == PASSED
    E = np.random.default_rng(0).normal(size=(10, 3))
    words = ["man", "king", "woman", "queen"] + [f"x{i}" for i in range(6)]
    for context in (dict(vectors=E[:3], vocab=words[:3]), dict(vectors=E, vocab=words[:5]),
                    dict(vectors=E, vocab=["a"] * 10), dict(vectors=E), dict(vectors="E", vocab=words),
                    dict(vectors=np.full((10, 3), np.nan), vocab=words)):
        result = L.check_queen_rank_mul(5, **context)           # a verdict, never a traceback
        assert result.status == "failed" and "could not measure" in result.message, result.message
    assert L.check_queen_rank_mul(analogy_rank(E, words, "man", "king", "woman", "queen", "mul"),
                                  vectors=E, vocab=words).status == PASSED
    assert L.check_queen_rank_mul(None, vectors=E, vocab=words).status == NOT_ATTEMPTED
    capsys.readouterr()


@pytest.mark.parametrize("exercise", [L.check_three_cos_add, L.check_three_cos_mul])
@pytest.mark.parametrize("shortcut", ["analogy", "nearest_neighbours"])
def test_the_analogy_checkers_refuse_the_course_s_functions(exercise, shortcut, capsys):
    namespace = {"__name__": "__main__", "analogy": analogy, "nearest_neighbours": nearest_neighbours, "np": np}
    exec("def via_analogy(v, w, a, b, c):\n    return analogy(v, w, a, b, c)[0][0]\n"
         "def via_neighbours(v, w, a, b, c):\n"
         "    E = v / np.linalg.norm(v, axis=1, keepdims=True)\n    i = {x: k for k, x in enumerate(w)}\n"
         "    return nearest_neighbours(v, w, E[i[b]] - E[i[a]] + E[i[c]], exclude=[a, b, c])[0][0]\n", namespace)
    fn = namespace["via_analogy" if shortcut == "analogy" else "via_neighbours"]
    result = exercise(fn)
    assert result.status == "failed" and "is refused" in result.message
    capsys.readouterr()


def test_the_gradient_checker_refuses_the_course_s_softmax_and_its_loss(capsys):
    namespace = {"__name__": "__main__", "softmax": softmax, "np": np}
    exec("def mine(X, y, W, b, l2):\n    Z = X @ W + b\n    P = softmax(Z)\n    n = len(y)\n    G = P.copy()\n"
         "    G[np.arange(n), y] -= 1\n    G /= n\n    m = Z.max(axis=1)\n"
         "    nll = m + np.log(np.exp(Z - m[:, None]).sum(axis=1)) - Z[np.arange(n), y]\n"
         "    return float(nll.mean() + 0.5 * l2 * (W * W).sum()), X.T @ G + l2 * W, G.sum(0)\n",
         namespace)
    assert L.check_logreg_gradient.run_checks(namespace["mine"]).status == PASSED     # right, but ...
    assert L.check_logreg_gradient(namespace["mine"]).status == "failed"               # ... the course's softmax
    assert L.check_logreg_gradient(softmax_regression_loss_grad).status == "failed"
    capsys.readouterr()


def test_the_course_s_softmax_regression_is_the_checker_s_reference(capsys):
    assert L.check_logreg_gradient.run_checks(softmax_regression_loss_grad).status == PASSED
    rng = np.random.default_rng(0)
    X, y, W, b = rng.normal(size=(7, 3)), rng.integers(0, 4, 7), rng.normal(size=(3, 4)), rng.normal(size=4)
    for got, want in zip(softmax_regression_loss_grad(X, y, W, b, 0.3), L._logreg_reference(X, y, W, b, 0.3),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="y must be class ids"):
        softmax_regression_loss_grad(X, y + 10, W, b, 0.3)
    capsys.readouterr()


# the checker's earlier reference: a stable softmax, but the log of a probability that can underflow
# (the checker's own named mistake, log_of_underflow)
_shifted_softmax_then_log = L._log_of_underflow


def test_the_loss_must_stay_finite_where_the_true_topic_s_probability_underflows(capsys):
    """A document whose own topic scores 2,000 below the best has p_y = e^-2000 = 0 in float64, yet its
    loss is 2,000: -log of the shifted softmax gives inf (that answer passed the checker before)."""
    result = L.check_logreg_gradient(_shifted_softmax_then_log)
    assert result.status == "failed" and "its log is not" in result.message, result.message
    X, W, b, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2000.0, 0.0], [0.0, 1500.0]]), np.zeros(2), np.array([1, 0])
    loss, _, _ = softmax_regression_loss_grad(X, y, W, b, 0.0)
    assert loss == pytest.approx(1750.0)
    assert L._logreg_reference(X, y, W, b, 0.0)[0] == pytest.approx(1750.0)
    capsys.readouterr()
