"""The records behind the shipped GloVe's settings (helpers.course.glove_tuning):
data/models/logs/wv_glove_tuning.json (short runs of learning rate and x_max) and
data/models/logs/wv_glove_long_runs.json (three learning rates given up to 50 epochs at x_max 100)."""
import numpy as np

import helpers.course.glove_tuning as gt


def test_the_shipped_settings_are_the_short_runs_best():
    from helpers.course.word_vector_models import SETTINGS
    runs = [r for r in gt.load_tuning()["runs"] if not r["diverged"]]
    best = max(runs, key=lambda r: max(r["valid_wordsim"]))
    shipped = SETTINGS["wv_glove"]
    assert (shipped["lr"], shipped["x_max"]) == (best["lr"], best["x_max"]) == (0.2, 10.0)


def test_the_long_runs_are_complete_and_consistent():
    record = gt.load_long_runs()
    assert sorted(r["settings"]["lr"] for r in record["runs"]) == [0.05, 0.1, 0.2]
    for r in record["runs"]:
        assert r["settings"]["x_max"] == record["fixed"]["x_max"] == 100.0
        curve = np.asarray(r["valid_wordsim"])
        assert len(curve) == r["epochs_run"] <= record["fixed"]["max_epochs"]
        assert r["best_epoch"] == int(np.argmax(curve)) + 1 and r["best_valid_wordsim"] == curve.max()
        # stopped by the limit, or by patience (8 epochs without a new best)
        assert r["epochs_run"] == record["fixed"]["max_epochs"] or \
            r["epochs_run"] - r["best_epoch"] >= record["fixed"]["patience"]


def test_no_long_run_reaches_the_shipped_model():
    """The lesson's reading of the long runs: a learning rate given 50 epochs at x_max 100 stays below
    the shipped run (lr 0.2, x_max 10) at its best epoch."""
    from helpers.course.word_vectors import load_word_vectors
    shipped = max(load_word_vectors("glove").metadata["curve"]["valid_wordsim"])
    assert all(r["best_valid_wordsim"] < shipped - 0.03 for r in gt.load_long_runs()["runs"])
