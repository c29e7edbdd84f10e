"""Tests of helpers.course.study_records: the readers of the studies' committed records, and the
paired comparison lesson 07 draws from the shipped study of subsampling and the window."""
from types import SimpleNamespace

import numpy as np
import pytest

from helpers.course.models import load_model
from helpers.course.study_records import (
    TricksResult,
    chosen_run,
    load_budget,
    load_count_records,
    load_search,
    load_settings_record,
    paired_setting_difference,
)
from helpers.course.word_vectors import load_word_vectors

METRICS = ("wordsim", "simlex", "analogy")


def test_the_records_are_read_from_data_models_logs():
    assert load_settings_record()["best"] in load_settings_record()["settings"]
    assert set(load_budget()["chosen"]) >= {"wv_torch_skipgram", "wv_numpy_skipgram"}
    assert set(load_search()["chosen"]) == {"lr", "x_max", "window", "dim"}
    recs = load_model("wv_count_records")
    assert set(recs) == {"LSA", "PPMI-SVD"}
    assert recs is load_count_records(SimpleNamespace(meta={"records": recs}))


def test_the_chosen_run_is_the_shipped_glove_s_training():
    search = load_search()
    shipped = load_word_vectors("glove").metadata
    run = chosen_run(search)
    assert run["settings"] == {k: shipped["settings"][k] for k in run["settings"]}
    assert np.allclose(run["valid_wordsim"], shipped["curve"]["valid_wordsim"], atol=1e-5)
    # without a combined run, the run of a stage at the chosen settings
    stage_run = {"settings": {"lr": 1}, "valid_wordsim": [0.1]}
    toy = {"combined": None, "chosen": {"lr": 1},
           "stages": [{"runs": [{"settings": {"lr": 2}}, stage_run]}]}
    assert chosen_run(toy) is stage_run


def _result(S=3, n=60, seed=0) -> TricksResult:
    """Synthetic results: 'good' cosines follow the gold scores, 'noisy' barely, 'same' = 'good'."""
    rng = np.random.default_rng(seed)
    gold = rng.random(n)
    good = gold[None] + 0.3 * rng.standard_normal((S, n))
    noisy = gold[None] + 3.0 * rng.standard_normal((S, n))
    hits_good, hits_bad = (rng.random((S, 400)) < 0.6), (rng.random((S, 400)) < 0.2)
    items = {
        "wordsim": np.stack([good, noisy, good], axis=1),
        "simlex": np.stack([good, noisy, good], axis=1),
        "analogy": np.stack([hits_good, hits_bad, hits_good], axis=1).astype(np.uint8),
    }
    names = ["shipped", "noisy", "same"]
    return TricksResult(names, {x: x for x in names}, list(range(S)), {}, {}, items,
                        {"wordsim": gold, "simlex": gold}, {})


def test_paired_difference_separates_a_real_difference_and_calls_identical_runs_a_tie():
    r = _result()
    for metric in METRICS:
        d = paired_setting_difference(r, metric, "shipped", "noisy", n_boot=300)
        assert d.low > 0, (metric, str(d))
        same = paired_setting_difference(r, metric, "shipped", "same", n_boot=300)
        assert same.estimate == same.low == same.high == 0
    flipped = paired_setting_difference(r, "wordsim", "noisy", "shipped", n_boot=300)
    ahead = paired_setting_difference(r, "wordsim", "shipped", "noisy", n_boot=300)
    assert flipped.estimate == pytest.approx(-ahead.estimate)


def test_paired_difference_bad_inputs():
    r = _result()
    with pytest.raises(ValueError, match="unknown metric 'accuracy'"):
        paired_setting_difference(r, "accuracy", "shipped", "noisy")
    with pytest.raises(
        ValueError,
        match=r"unknown variant 'fixed'; the measurement has \['shipped', 'noisy', 'same'\]",
    ):
        paired_setting_difference(r, "wordsim", "shipped", "fixed")
    with pytest.raises(ValueError, match="two different variants"):
        paired_setting_difference(r, "wordsim", "shipped", "shipped")
    with pytest.raises(ValueError, match="n_boot >= 1"):
        paired_setting_difference(r, "wordsim", "shipped", "noisy", n_boot=0)


def test_the_shipped_tricks_study_reads_back_whole():
    shipped = load_model("wv_tricks")
    s = shipped.metadata["settings"]
    S, V, E = len(s["seeds"]), len(s["variants"]), s["epochs"]
    assert shipped.variants == ["shipped", "no_subsampling", "fixed_window"] and (S, V, E) == (
        3,
        3,
        10,
    )
    for key, c in shipped.curves.items():
        assert c.shape == (S, V, E) and np.all(np.isfinite(c)), key
    for key, f in shipped.final.items():
        assert f.shape == (S, V) and np.all(np.isfinite(f)), key
    assert np.all(shipped.curves["cpu_seconds"] > 0) and shipped.cpu_seconds().shape == (S, V)
    # the final report-half ρ is the curve's last point, and the stored items give the scores back
    assert np.array_equal(
        shipped.final["report/wordsim"], shipped.curves["report/wordsim"][:, :, -1]
    )
    assert np.allclose(
        shipped.items["analogy"].mean(axis=2), shipped.final["report/analogy"], atol=1e-12
    )
