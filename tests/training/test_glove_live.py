"""training.glove_live: its record holds every run epoch by epoch, each run's best epoch is its
best on validation, and the run scored on the report half is the best on validation."""
import pytest

import training.glove_live as gl
from helpers.course.study_records import read_log


@pytest.fixture(scope="module")
def record():
    return read_log("wv_glove_live.json")


def test_the_record_holds_every_run_epoch_by_epoch(record):
    assert [(r["label"], r["change"], r["words"], r["at_least"], len(r["epochs"]))
            for r in record["runs"]] == [tuple(run) for run in gl.RUNS]
    for r in record["runs"]:
        assert r["cpu_seconds"] == sorted(r["cpu_seconds"]) and len(r["valid"]) == len(r["epochs"])
        for scores in r["valid"]:
            assert set(scores) == {f"{rows} {key}" for rows in ("raw rows", "PPMI rows")
                                   for key in ("wordsim", "simlex", "both")}
            assert all(low <= high for _, low, high in scores.values())
        both = [s["raw rows both"][0] for s in r["valid"]]
        assert both[r["best_epoch"] - 1] == max(both)


def test_the_report_half_scores_the_best_run_on_validation(record):
    best = max(record["runs"], key=lambda r: r["valid"][r["best_epoch"] - 1]["raw rows both"][0])
    assert record["chosen"]["label"] == best["label"]
    assert set(record["chosen"]["report"]) == set(best["valid"][0])
