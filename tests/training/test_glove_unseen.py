"""training.glove_unseen: its record holds every run epoch by epoch, its GloVe run is the
lesson's, and the run scored on the report half is the best with unseen cells on validation."""
import numpy as np
import pytest
import scipy.sparse as sp

import training.glove_unseen as gu
from helpers.course.study_records import read_log


@pytest.fixture(scope="module")
def record():
    return read_log("wv_glove_unseen.json")


def test_the_record_holds_every_run_epoch_by_epoch(record):
    assert [(r["label"], r["k"], r["f0"], r["margin"], r["floor"]) for r in record["runs"]] == \
        [run[:5] for run in gu.RUNS]
    for r, run in zip(record["runs"], gu.RUNS, strict=True):
        assert r["diverged"] or r["epochs"] == list(range(1, run[5] + 1))
        assert r["cpu_seconds"] == sorted(r["cpu_seconds"]) and len(r["valid"]) == len(r["epochs"])
        for scores in r["valid"]:
            assert all(low <= est <= high for est, low, high in scores.values())


def test_its_glove_run_is_the_lessons(record):
    live = read_log("wv_glove_live.json")["runs"][0]
    assert live["label"] == "the shipped settings" and record["runs"][0]["k"] == 0
    for ours, theirs in zip(record["runs"][0]["valid"], live["valid"], strict=False):
        assert ours.keys() == theirs.keys()
        for key, interval in ours.items():
            assert interval == pytest.approx(theirs[key], abs=1e-9)


def test_the_report_half_scores_the_best_run_with_unseen_cells(record):
    runs = [r for r in record["runs"] if r["k"] and not r["diverged"]]
    best = max(runs, key=lambda r: r["valid"][-1]["raw rows both"][0])
    assert record["chosen"]["label"] == best["label"]
    assert set(record["chosen"]["report"]) == set(best["valid"][0])


def test_the_count_floor_is_the_smallest_count_of_the_window():
    counts = sp.csr_matrix(np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 0.0], [0.5, 0.0, 2.0]]))
    model = gu.CountFloorGloVe(counts, dim=2, unseen=4)
    np.testing.assert_allclose(model.unseen_floor([0, 1], [0, 2]),
                               [-np.log(gu.GLOVE["window"])] * 2)
