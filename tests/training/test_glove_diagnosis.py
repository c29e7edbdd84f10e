"""Tests of training.glove_diagnosis: its record (data/models/logs/wv_glove_diagnosis.json) holds
every run of RUNS, each consistent with itself, and its unchanged run is the shipped run."""
import numpy as np
import pytest
import scipy.sparse as sp

import training.glove_diagnosis as gd
from helpers.course.shipped_vectors import load_word_vectors
from helpers.course.study_records import read_log


@pytest.fixture(scope="module")
def record():
    return read_log("wv_glove_diagnosis.json")


def test_the_record_holds_every_run_with_its_best_epoch(record):
    assert record["epochs"] == gd.EPOCHS
    assert [((r["weighting"], r["at_least"]), r["change"]) for r in record["runs"]] == \
        [(key, change) for key, change in gd.RUNS]
    for r in record["runs"]:
        curve = np.asarray(r["valid_wordsim"])
        assert len(curve) == len(r["train_loss"]) == gd.EPOCHS
        assert r["best_valid_wordsim"] == curve.max() and r["best_epoch"] == np.argmax(curve) + 1
    assert {(c["weighting"], c["at_least"]) for c in record["counts"]} == {k for k, _ in gd.RUNS}


def test_the_unchanged_run_is_the_shipped_run(record):
    """Same counts, settings, start and order of pairs: the same scores, epoch for epoch."""
    shipped = load_word_vectors("glove").metadata["curve"]["valid_wordsim"]
    run = record["runs"][0]
    assert run["change"] == {} and run["at_least"] == 0.0
    assert run["valid_wordsim"][:len(shipped)] == pytest.approx(shipped[:gd.EPOCHS], abs=1e-6)


def test_dropping_cells_keeps_only_the_counts_at_or_above_the_threshold(monkeypatch):
    toy = sp.csr_matrix(np.array([[0.0, 0.5, 2.0], [0.5, 0.0, 1.0], [2.0, 1.0, 0.0]]))
    monkeypatch.setattr(gd, "cooccurrence_matrix", lambda *a, **k: toy.copy())
    X = gd.counts_of("harmonic", 1.0)
    assert X.nnz == 4 and X.data.min() == 1.0
    assert gd.counts_of("harmonic", 0.0).nnz == 6
