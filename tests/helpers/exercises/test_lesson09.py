"""Lesson 09's checkers beyond test_hints.py: each exclusion rule and each epsilon matters, and
the checkers' wrong variants at their defaults are the course's code."""
import itertools

import numpy as np
import pytest

from helpers.exercises import lesson09 as L
from helpers.lib.extrinsic import softmax_regression_loss_grad
from helpers.lib.metrics import analogy_scores

PROPER_SUBSETS = ["".join(s) for k in range(3) for s in itertools.combinations("abc", k)]


@pytest.mark.parametrize("exclude", PROPER_SUBSETS)
@pytest.mark.parametrize("rule", ["add", "mul"])
def test_every_exclusion_rule_is_needed(rule, exclude, capsys):
    check = L.check_three_cos_add if rule == "add" else L.check_three_cos_mul
    result = check(lambda V, a, b, c: L._scores(V, a, b, c, rule, exclude=exclude))
    out = capsys.readouterr().out
    assert result.status == "failed", out
    assert result.mistake in ("query_words_kept", "some_query_words_kept"), out


def test_a_query_word_wins_each_near_question_unless_excluded():
    E = L.random_space()
    for (a, b, c), winner in zip([(0, 1, 5), (0, 7, 2), (0, 1, 2)], "cba"):
        kept = L._scores(E, [a], [b], [c], exclude="abc".replace(winner, ""))[0]
        assert kept.argmax() == {"a": a, "b": b, "c": c}[winner]


@pytest.mark.parametrize("eps", [1e-6, 1e-5, 1e-2, 0.1])
def test_3cosmul_tells_its_epsilon_from_others(eps, capsys):
    assert L.check_three_cos_mul(lambda *q: L._scores(*q, "mul", eps=eps)).status == "failed"
    capsys.readouterr()


def test_the_checkers_variants_at_their_defaults_are_the_course_s_code():
    rng = np.random.default_rng(0)
    E, (a, b, c) = rng.normal(size=(20, 4)), rng.integers(0, 20, (3, 5))
    for rule in ("add", "mul"):
        np.testing.assert_allclose(L._scores(E, a, b, c, rule), analogy_scores(E, a, b, c, rule))
    problem = (rng.normal(size=(7, 3)), rng.integers(0, 4, 7), rng.normal(size=(3, 4)),
               rng.normal(size=4), 0.3)
    for got, want in zip(L._logreg(*problem), softmax_regression_loss_grad(*problem)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert L.check_gradient_entry.right_answer() == pytest.approx(L._hand_entry(), abs=1e-6)
