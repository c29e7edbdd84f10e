"""Lesson 08's checkers beyond test_hints.py: a correct in-place AdaGrad step passes, and the
n-gram experiment measures for itself and names a bad context."""
import numpy as np

from helpers.exercises.lesson08 import (
    check_adagrad_step,
    check_best_ngram_length,
    single_length_hits,
)


def test_a_correct_in_place_adagrad_step_passes(capsys):
    def in_place(param, grad, G, lr):
        step = lr * grad
        param -= step / np.sqrt(G)
        G += step * step
        return param, G

    assert check_adagrad_step(in_place), capsys.readouterr().out

    def torch_order(param, grad, G, lr):
        return param - lr * grad / np.sqrt(G + grad ** 2), G + grad ** 2

    result = check_adagrad_step(torch_order)
    assert result.mistake == "torch_order" and "glove.c divides" in capsys.readouterr().out


def test_the_ngram_experiment_measures_for_itself_and_names_a_bad_context(capsys):
    hits = single_length_hits()
    assert set(hits) == {3, 4, 5, 6} and all(0 <= h <= 1 for h in hits.values())
    assert check_best_ngram_length(max(hits, key=hits.get))
    result = check_best_ngram_length(3, fasttext="not a model", words=["government"])
    assert not result and "fastText model" in capsys.readouterr().out
