"""Tests of training.glove_search: its record (data/models/logs/wv_glove_search.json) is
complete and consistent with its own rules, and the shipped GloVe's settings are its choice."""
import numpy as np
import pytest

import training.glove_search as gs
from helpers.course.study_records import read_log


@pytest.fixture(scope="module")
def record():
    return read_log("wv_glove_search.json")


def test_every_run_stopped_by_its_rule_and_kept_its_best_epoch(record):
    fixed = record["fixed"]
    runs = [r for st in record["stages"] for r in st["runs"]]
    for run in runs + ([record["combined"]] if record["combined"] else []):
        curve = np.asarray(run["valid_wordsim"])
        if run["diverged"] and not len(curve):
            assert run["best_epoch"] is None and run["best_valid_wordsim"] is None
            continue
        assert len(curve) == run["epochs_run"] - int(run["diverged"]) <= fixed["max_epochs"]
        assert run["best_epoch"] == int(np.argmax(curve)) + 1
        assert run["best_valid_wordsim"] == curve.max()
        if not run["diverged"]:   # stopped by the limit, or by patience (epochs without a new best)
            assert (run["epochs_run"] == fixed["max_epochs"]
                    or run["epochs_run"] - run["best_epoch"] >= fixed["patience"])


def test_each_stage_starts_from_the_choices_before_it(record):
    base = dict(record["start"])
    sequential, side_by_side = record["stages"][:gs.SEQUENTIAL], record["stages"][gs.SEQUENTIAL:]
    for stage in sequential:
        for run in stage["runs"]:
            assert {k: v for k, v in run["settings"].items() if k != stage["setting"]} == \
                {k: v for k, v in base.items() if k != stage["setting"]}
        base[stage["setting"]] = stage["chosen"]
    for stage in side_by_side:           # each varied from the same base
        for run in stage["runs"]:
            assert {k: v for k, v in run["settings"].items() if k != stage["setting"]} == \
                {k: v for k, v in base.items() if k != stage["setting"]}
    assert record["chosen"] == dict(base, **{st["setting"]: st["chosen"] for st in side_by_side})


def test_each_choice_follows_the_rule_and_sits_inside_its_grid(record):
    for stage in record["stages"]:
        fine = [r for r in stage["runs"] if r["best_valid_wordsim"] is not None]
        best = max(fine, key=lambda r: r["best_valid_wordsim"])
        assert stage["chosen"] == gs.choose(stage["setting"], stage["runs"])
        values = sorted(r["settings"][stage["setting"]] for r in stage["runs"])
        name = stage["setting"]
        if name in gs.EXTEND:            # not at an edge, unless the grid reached its limit
            lo, hi = gs.LIMITS[name]
            b = best["settings"][name]
            down, up = gs.EXTEND[name]
            assert (
                (values[0] < b < values[-1])
                or (b == values[0] and not lo <= down(b))
                or (b == values[-1] and not up(b) <= hi)
            ), f"stage {name}: the best value {b} sits at an edge of {values}"
        for r in fine:  # the paired interval against the stage's best holds its estimate
            if r is best:
                assert r["vs_best"] is None
            else:
                est, low, high = r["vs_best"]
                assert low <= est <= high


def test_the_shipped_glove_has_the_chosen_settings():
    from training.word_vector_models import SETTINGS
    shipped = SETTINGS["wv_glove"]
    chosen = read_log("wv_glove_search.json")["chosen"]
    assert {k: shipped[k] for k in gs.TUNED} == chosen
    assert shipped["max_epochs"] == gs.START["max_epochs"]
    assert shipped["patience"] == gs.START["patience"]


def test_run_settings_refuses_an_untuned_setting():
    with pytest.raises(ValueError, match="alpha"):
        gs.run_settings(alpha=0.5)
