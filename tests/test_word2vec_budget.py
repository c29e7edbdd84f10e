"""The epoch-budget and bucket-count record of gensim's skip-gram and fastText
(``helpers.course.word2vec_budget``, ``data/models/logs/wv_budget.json``), read by lessons 07 and 08."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.course import word2vec_budget as budget
from helpers.course.word_vector_models import train_gensim_vectors
from helpers.course.word_vectors import load_word_vectors
from helpers.infra.runlog import RunLog

RECORD = budget.load_budget()


def test_a_matrix_against_itself_differs_by_exactly_zero():
    sv = load_word_vectors("gensim-skipgram")
    assert budget.paired_wordsim_difference(sv.W, sv.W, sv.vocab, n_boot=200) == [0.0, 0.0, 0.0]


def test_the_paired_difference_sees_damaged_vectors():
    sv = load_word_vectors("gensim-skipgram")
    noisy = sv.W + np.random.default_rng(0).normal(0, 3 * np.abs(sv.W).mean(), sv.W.shape).astype(np.float32)
    est, low, high = budget.paired_wordsim_difference(noisy, sv.W, sv.vocab, n_boot=500)
    assert est < 0 and high < 0


@pytest.mark.parametrize("name, change, message", [
    ("wv_glove", dict(max_epochs=30), "budget runs are for"),
    ("wv_gensim_skipgram", dict(window=3), "changes max_epochs or buckets"),
])
def test_a_run_outside_the_study_is_refused(name, change, message):
    with pytest.raises(ValueError, match=message):
        budget.budget_run(name, change)


def test_the_record_holds_every_run_with_its_best_epoch():
    runs = RECORD["runs"]
    assert [(r["model"], r["change"]) for r in runs] == [(m, c) for m, c in budget.RUNS]
    for r in runs:
        assert len(r["epoch"]) == r["settings"]["max_epochs"], r["change"]
        assert r["best_valid_wordsim"] == max(r["valid_wordsim"])
        assert r["valid_wordsim"][r["best_epoch"] - 1] == r["best_valid_wordsim"]
        low, high = r["vs_shipped"][1:]
        assert low <= r["vs_shipped"][0] <= high


def test_the_first_epoch_of_a_recorded_run_is_what_the_script_makes():
    """Deterministic (one worker, seed 0): the first epoch of the first run, retrained, gives its
    recorded validation scores exactly."""
    r = RECORD["runs"][0]
    arrays, _, _ = train_gensim_vectors(dict(r["settings"]), RunLog(), max_steps=1, progress=False)
    assert float(arrays["curve/valid_wordsim"][0]) == r["valid_wordsim"][0]
    assert float(arrays["curve/valid_simlex"][0]) == r["valid_simlex"][0]
