"""Lesson 10's checkers beyond test_hints.py: wrong answers that once passed, and the experiment's
own measurement, which must read the very model and sentences the lesson loads."""
import numpy as np
import pytest
import torch

from helpers.course.data import load_wsd_sentences
from helpers.course.models import load_model
from helpers.exercises import PASSED
from helpers.exercises import lesson10 as ex
from helpers.lessons.lesson10 import layer_table


# ---------------------------------------------------------------- nearest sense: cosine
def _distance_to_unit_centroid(query, support, senses):
    """The sense whose centroid of unit vectors is nearest the unit query (Euclidean): a rule the
    ±60° / 20° case catches."""
    senses = np.asarray(senses)
    unit = support / np.linalg.norm(support, axis=1, keepdims=True)
    q = query / np.linalg.norm(query)
    labels = sorted(set(senses.tolist()))
    return labels[int(np.argmin([np.linalg.norm(q - unit[senses == s].mean(0)) for s in labels]))]


def test_the_distance_to_the_unit_centroid_is_not_the_cosine(capsys):
    deg = np.radians([60.0, -60.0, 20.0])
    support = np.stack([np.cos(deg), np.sin(deg)], axis=1)
    assert _distance_to_unit_centroid(np.array([1.0, 0.0]), support, ["a", "a", "b"]) == "b"
    assert ex.course_classify(np.array([1.0, 0.0]), support, ["a", "a", "b"]) == "a"
    result = ex.check_nearest_sense(_distance_to_unit_centroid)
    out = capsys.readouterr().out
    assert result.status == "failed" and result.mistake == "distance_to_centroid", out


# ---------------------------------------------------------------- the best layer: measured
def test_the_best_layer_checker_ignores_numbers_passed_to_it(capsys):
    result = ex.check_best_layer(0, layer_table={"light": [0.9, 0.1, 0.1]})
    assert result.status == "failed", capsys.readouterr().out
    result = ex.check_best_layer(2, layer_table={"bank": [0.1, 0.2, 0.3]})
    out = capsys.readouterr().out
    assert result.status == "failed" and "could not measure" in out and "Traceback" not in out
    assert ex.check_best_layer(ex._best_layer("light")).status == PASSED


def test_the_checker_measures_on_what_the_lesson_loads():
    ex._shipped_encoder.cache_clear()
    before = torch.random.get_rng_state()
    model, tok = ex._shipped_encoder()
    assert torch.equal(torch.random.get_rng_state(), before), "loading moved torch's random state"
    shipped = load_model("mlm_bert")
    assert tok.itos == shipped.tok.itos and tok.merges == shipped.tok.merges
    ours_state, shipped_state = model.state_dict(), shipped.model.state_dict()
    for (k, a), (_, b) in zip(ours_state.items(), shipped_state.items(), strict=True):
        assert torch.equal(a, b), k
    words = ["light", "bank"]
    table = layer_table(shipped.model, shipped.tok, load_wsd_sentences(), words, ex.N_SUPPORT,
                        ex.REPEATS, ex.SEED)
    for w in words:
        np.testing.assert_allclose(ex.layer_accuracies(w), [np.mean(r) for r in table[w]],
                                   rtol=1e-12)


def test_an_unknown_word_gets_a_verdict_that_names_the_words(capsys):
    with pytest.raises(ValueError, match="not one of the lesson's words"):
        ex.layer_accuracies("banana")


# ---------------------------------------------------------------- the optimiser step
