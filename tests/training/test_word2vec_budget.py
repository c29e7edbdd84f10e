"""Tests of training.word2vec_budget: the schedule-length and bucket-count record
(``data/models/logs/wv_budget.json``) holds every run, and its rule chose the shipped schedules."""
import numpy as np
import pytest

from helpers.course.shipped_vectors import load_word_vectors
from helpers.course.study_records import load_budget
from training import word2vec_budget as budget
from training.runlog import RunLog
from training.word_vector_models import SETTINGS, train_gensim_vectors

RECORD = load_budget()


def test_the_paired_difference_is_zero_against_itself_and_sees_damaged_vectors():
    sv = load_word_vectors("gensim-skipgram")
    assert budget.paired_wordsim_difference(sv.W, sv.W, sv.vocab, n_boot=200) == [0.0, 0.0, 0.0]
    noise = np.random.default_rng(0).normal(0, 3 * np.abs(sv.W).mean(), sv.W.shape)
    noisy = sv.W + noise.astype(np.float32)
    est, low, high = budget.paired_wordsim_difference(noisy, sv.W, sv.vocab, n_boot=500)
    assert est < 0 and high < 0


@pytest.mark.parametrize("name, change, message", [
    ("wv_glove", dict(max_epochs=30), "budget runs are for"),
    ("wv_gensim_skipgram", dict(window=3), "changes max_epochs or buckets"),
    ("wv_torch_skipgram", dict(buckets=5_000), "only fastText has buckets"),
])
def test_a_run_outside_the_study_is_refused(name, change, message):
    with pytest.raises(ValueError, match=message):
        budget.budget_run(name, change)


def test_every_run_runs_its_whole_schedule():
    assert budget.budget_settings("wv_gensim_skipgram", dict(max_epochs=30))["patience"] == 30
    # the course's trainers keep their schedule's last epoch (keep="last"): no early stop either
    for name in ("wv_torch_skipgram", "wv_numpy_skipgram"):
        s = budget.budget_settings(name, dict(max_epochs=40))
        assert s["keep"] == "last" and s["patience"] == 40


def _toy(model, scores):
    return [{"model": model, "change": {"max_epochs": e}, "best_valid_wordsim": v}
            for e, v in scores.items()]


def test_the_chosen_schedule_is_the_shortest_within_the_tolerance_of_the_best():
    runs = _toy("m", {10: 0.40, 20: 0.452, 40: 0.456, 80: 0.455}) + _toy("other", {10: 0.9})
    runs.append({"model": "m", "change": {"max_epochs": 20, "buckets": 5},    # not a schedule
                 "best_valid_wordsim": 0.99})
    assert budget.chosen_schedule(runs, "m", tolerance=0.005) == 20
    assert budget.chosen_schedule(runs, "m", tolerance=0.001) == 40
    assert budget.chosen_schedule(runs, "m", tolerance=0.1) == 10
    with pytest.raises(ValueError, match="no schedule"):
        budget.chosen_schedule(runs, "missing")


def test_a_shared_schedule_is_chosen_on_the_mean_of_the_models_that_share_it():
    torch_scores = {10: 0.446, 20: 0.445, 40: 0.432}
    numpy_scores = {10: 0.463, 20: 0.476, 40: 0.485}
    torch_runs = _toy("wv_torch_skipgram", torch_scores)
    numpy_runs = _toy("wv_numpy_skipgram", numpy_scores)
    # alone (as a model that shares nothing), each would choose another schedule; together, one
    # (the mean: 0.4545, 0.4605, 0.4585)
    assert budget.chosen_schedule(_toy("a", torch_scores), "a") == 10
    assert budget.chosen_schedule(_toy("b", numpy_scores), "b") == 40
    with pytest.raises(ValueError, match="no schedule"):     # a shared one needs every model's run
        budget.chosen_schedule(torch_runs, "wv_torch_skipgram")
    both = torch_runs + numpy_runs
    assert budget.chosen_schedule(both, "wv_torch_skipgram") == 20
    assert budget.chosen_schedule(both, "wv_numpy_skipgram") == 20
    # a schedule only one of them ran does not count
    only_one = both + _toy("wv_numpy_skipgram", {80: 0.9})
    assert budget.chosen_schedule(only_one, "wv_torch_skipgram") == 20


def test_the_record_holds_every_run_with_its_best_epoch():
    runs = RECORD["runs"]
    assert [(r["model"], r["change"]) for r in runs] == [(m, c) for m, c in budget.RUNS]
    for r in runs:
        assert r["settings"] == budget.budget_settings(r["model"], r["change"])
        if r["settings"].get("keep") == "last":   # the course's trainers: the last epoch is kept
            assert len(r["epoch"]) == r["best_epoch"] == r["settings"]["max_epochs"]
        else:                                     # gensim: the whole schedule, the best epoch
            assert len(r["epoch"]) == r["settings"]["max_epochs"], r["change"]
            assert r["best_valid_wordsim"] == max(r["valid_wordsim"])
        assert r["valid_wordsim"][r["best_epoch"] - 1] == r["best_valid_wordsim"]
        if budget.is_reference(r):
            assert r["vs_20"] is None
        else:
            low, high = r["vs_20"][1:]
            assert low <= r["vs_20"][0] <= high


def test_the_shipped_schedules_are_the_chosen_ones():
    runs = RECORD["runs"]
    assert RECORD["tolerance"] == budget.TOLERANCE
    for model in budget.SCHEDULES:
        chosen = budget.chosen_schedule(runs, model)
        assert RECORD["chosen"][model] == chosen
        assert SETTINGS[model]["max_epochs"] == chosen, model
        assert SETTINGS[model]["patience"] == chosen  # every shipped run runs its whole schedule


def test_the_shipped_models_are_the_records_runs_at_their_chosen_schedule():
    """The run of the chosen schedule is the shipped training: the same validation curve."""
    for model in budget.SCHEDULES:
        chosen = {"max_epochs": RECORD["chosen"][model]}
        run = next(r for r in RECORD["runs"] if r["model"] == model and r["change"] == chosen)
        shipped = load_word_vectors(budget.SHIPPED_NAME[model]).metadata["curve"]
        assert run["valid_wordsim"] == pytest.approx(shipped["valid_wordsim"], abs=1e-6), model


def test_the_first_epoch_of_a_recorded_run_is_what_the_script_makes():
    """One worker, seed 0: the first run's first epoch, retrained, gives its recorded scores."""
    r = RECORD["runs"][0]
    arrays, _, _ = train_gensim_vectors(dict(r["settings"]), RunLog(), max_steps=1, progress=False)
    assert float(arrays["curve/valid_wordsim"][0]) == r["valid_wordsim"][0]
    assert float(arrays["curve/valid_simlex"][0]) == r["valid_simlex"][0]
