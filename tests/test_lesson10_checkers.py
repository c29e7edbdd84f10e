"""Lesson 10's checkers, beyond what tests/helpers/exercises/test_hints.py tests of every checker: the defects
found by the independent check of the checkers (issue 30), each with the answer that used to pass,
and the experiment's own measurement, which must read the very model and sentences the lesson loads."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.course.data import SHA256, WSD_FILE, load_wsd_sentences
from helpers.course.models import load_model
from helpers.exercises import PASSED
from helpers.exercises import lesson10 as ex
from helpers.lessons.lesson10 import layer_table


# ---------------------------------------------------------------- nearest sense: cosine, not distance
def _distance_to_unit_centroid(query, support, senses):
    """Euclidean distance from the unit query to each sense's centroid of unit vectors: the rule that
    passed every check before the ±60° / 20° case was added."""
    senses = np.asarray(senses)
    unit = support / np.linalg.norm(support, axis=1, keepdims=True)
    q = query / np.linalg.norm(query)
    labels = sorted(set(senses.tolist()))
    return labels[int(np.argmin([np.linalg.norm(q - unit[senses == s].mean(0)) for s in labels]))]


def test_the_distance_to_the_unit_centroid_is_not_the_cosine(capsys):
    deg = np.radians([60.0, -60.0, 20.0])
    support = np.stack([np.cos(deg), np.sin(deg)], axis=1)
    assert _distance_to_unit_centroid(np.array([1.0, 0.0]), support, ["a", "a", "b"]) == "b"
    assert ex._nearest_sense_reference(np.array([1.0, 0.0]), support, ["a", "a", "b"]) == "a"
    result = ex.check_nearest_sense(_distance_to_unit_centroid)
    out = capsys.readouterr().out
    assert result.status == "failed" and result.mistake == "distance_to_centroid", out


# ---------------------------------------------------------------- the best layer: measured, never trusted
def test_the_best_layer_checker_ignores_numbers_passed_to_it(capsys):
    result = ex.check_best_layer(0, layer_table={"light": [0.9, 0.1, 0.1]})     # used to pass
    assert result.status == "failed", capsys.readouterr().out
    result = ex.check_best_layer(2, layer_table={"bank": [0.1, 0.2, 0.3]})      # used to raise a KeyError
    out = capsys.readouterr().out
    assert result.status == "failed" and "could not measure" in out and "Traceback" not in out
    assert ex.check_best_layer(ex._best_layer("light")).status == PASSED


def test_the_checker_measures_on_what_the_lesson_loads():
    assert ex.WSD_FILE == WSD_FILE and ex.WSD_SHA256 == SHA256[WSD_FILE]
    ours = ex._sense_sentences()
    theirs = load_wsd_sentences()
    assert [(e.word, e.sense, e.tokens, e.position) for e in theirs] == list(ours)
    model, tok = ex._shipped_encoder()
    shipped = load_model("mlm_bert")
    assert tok.itos == shipped.tok.itos and tok.merges == shipped.tok.merges
    for (k, a), (_, b) in zip(model.state_dict().items(), shipped.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
    words = ["light", "bank"]
    table = layer_table(shipped.model, shipped.tok, theirs, words, ex.N_SUPPORT, ex.REPEATS, ex.SEED)
    for w in words:
        np.testing.assert_allclose(ex.layer_accuracies(w), [np.mean(r) for r in table[w]], rtol=1e-12)


def test_an_unknown_word_gets_a_verdict_that_names_the_words(capsys):
    with pytest.raises(ValueError, match="not one of the lesson's words"):
        ex.layer_accuracies("banana")


# ---------------------------------------------------------------- the optimiser step
def test_the_reference_step_is_torch_s_clip_and_adamw():
    rng = np.random.default_rng(5)
    params = [rng.normal(size=(3, 4)), rng.normal(size=4)]
    grads = [[rng.normal(0, 2, (3, 4)), rng.normal(0, 2, 4)] for _ in range(3)]
    expected = ex._torch_steps(params, grads, [1e-2, 5e-3, 1e-3], (0.9, 0.98), 1e-8, 0.01, 1.0)
    p, m, v = params, [np.zeros((3, 4)), np.zeros(4)], [np.zeros((3, 4)), np.zeros(4)]
    for t, (g, lr, (tp, tm, tv, tn)) in enumerate(zip(grads, [1e-2, 5e-3, 1e-3], expected, strict=True), 1):
        p, m, v, norm = ex._adamw_reference(p, g, m, v, t, lr)
        assert norm == pytest.approx(tn, rel=1e-9)
        for a, b in zip(p + m + v, tp + tm + tv, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-15)


def test_an_in_place_step_that_returns_nothing_new_fails(capsys):
    def returns_inputs(params, grads, m, v, t, lr, **kw):
        return params, m, v, 0.0
    assert ex.check_adamw_step(returns_inputs).status == "failed"
