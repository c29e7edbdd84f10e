"""GloVe's search (helpers.course.glove_tuning): the rules that turn runs into settings, and the
record against the shipped model (data/models/logs/wv_glove_tuning.json, data/models/wv_glove)."""
from __future__ import annotations

import numpy as np
import pytest

import helpers.course.glove_tuning as gt


def _fake_runs(monkeypatch, best):
    """tuning_run replaced by a score that peaks at ``best`` (no training)."""
    calls = []

    def fake(settings):
        calls.append(dict(settings))
        score = 0.5 - 0.05 * sum(abs(np.log(settings[k] / best[k])) for k in best)
        return ({"settings": {k: settings[k] for k in gt.TUNED}, "valid_wordsim": [score], "best_epoch": 1,
                 "best_valid_wordsim": score, "diverged": False, "epochs_run": 1, "stopped_by": "-", "cpu_seconds": 0.0},
                np.zeros((3, 2), np.float32))
    monkeypatch.setattr(gt, "tuning_run", fake)
    monkeypatch.setenv("NLP_COURSE_WORKERS", "1")
    monkeypatch.setattr(gt, "paired_wordsim_difference", lambda A, B, vocab: [0.0, -0.1, 0.1])
    monkeypatch.setattr(gt, "course_corpus", lambda: type("C", (), {"vocab": None})())
    return calls


def test_the_search_extends_a_grid_whose_best_is_at_an_end(monkeypatch):
    calls = _fake_runs(monkeypatch, {"lr": 0.4, "x_max": 3.0, "window": 10, "dim": 200})
    record = gt.search(log=lambda line: None)
    assert record["chosen"]["lr"] == 0.4 and record["chosen"]["window"] == 10
    lrs = sorted(r["settings"]["lr"] for r in record["stages"][0]["runs"])
    assert lrs == [0.05, 0.1, 0.2, 0.4, 0.8]                  # extended past 0.2 until the best is inside
    assert record["chosen"]["x_max"] == pytest.approx(10 / 3)  # the grid's step, the best inside [1.1, 10]
    assert record["chosen"]["dim"] == 200                     # 200 is far better than 100 here
    assert all(c["max_epochs"] == 50 and c["patience"] == 8 for c in calls)
    best = [r for r in record["stages"][0]["runs"] if r["settings"]["lr"] == 0.4][0]
    assert best["vs_best"] is None and all(r["vs_best"] is not None for r in record["stages"][0]["runs"] if r is not best)


def test_a_larger_dimension_must_earn_its_size():
    runs = [{"settings": {"dim": d}, "best_valid_wordsim": v} for d, v in ((50, 0.30), (100, 0.352), (200, 0.355))]
    assert gt.choose("dim", runs) == 100                      # 200 adds less than the tolerance
    assert gt.choose("lr", [{"settings": {"lr": 0.1}, "best_valid_wordsim": 0.2},
                            {"settings": {"lr": 0.2}, "best_valid_wordsim": None}]) == 0.1   # a diverged run
    with pytest.raises(ValueError, match="changes"):
        gt.run_settings(alpha=0.5)


# ----------------------------------------------------------------------------- the committed record
def test_the_shipped_glove_has_the_settings_the_record_chose():
    from helpers.course.word_vector_models import SETTINGS
    record = gt.load_tuning()
    shipped = SETTINGS["wv_glove"]
    assert {k: shipped[k] for k in gt.TUNED} == record["chosen"]
    assert {k: shipped[k] for k in record["fixed"]} == record["fixed"]        # the same budget and fixed settings


def test_the_shipped_run_is_the_record_s_run_of_those_settings():
    """make models NAME=wv_glove repeats the search's run of the chosen settings: the same curve."""
    from helpers.course.word_vectors import load_word_vectors
    record = gt.load_tuning()
    runs = [r for r in gt.all_runs(record) if r["settings"] == record["chosen"]]
    if record.get("combined"):
        runs.append(record["combined"])
    curve = load_word_vectors("glove").metadata["curve"]
    np.testing.assert_allclose(curve["valid_wordsim"], runs[0]["valid_wordsim"], atol=1e-4)


def test_every_run_had_the_whole_budget_and_no_choice_sits_at_an_edge():
    record = gt.load_tuning()
    for r in gt.all_runs(record):
        if r["diverged"]:
            continue
        assert r["epochs_run"] == gt.START["max_epochs"] or r["epochs_run"] - r["best_epoch"] >= gt.START["patience"], \
            f"{r['settings']}: stopped after {r['epochs_run']} epochs, best {r['best_epoch']}, neither the limit nor patience"
    for st in record["stages"]:
        name = st["setting"]
        if name not in gt.EXTEND:
            continue
        values = sorted(r["settings"][name] for r in st["runs"])
        i = values.index(st["chosen"])
        down, up = gt.EXTEND[name]
        lo, hi = gt.LIMITS[name]
        assert i > 0 or down(values[0]) < lo, f"{name}: the choice {st['chosen']} is the smallest value tried"
        assert i < len(values) - 1 or up(values[-1]) > hi, f"{name}: the choice {st['chosen']} is the largest value tried"
