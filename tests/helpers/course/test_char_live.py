"""helpers.course.char_live: the split by work, live batches and held-out windows, the held-out
loss weighting every character once, and the stored Kneser-Ney baseline."""
import numpy as np
import pytest

from helpers.course.char_live import (
    char_split,
    heldout_loss,
    kn_baselines,
    load_char_ngram,
    random_batch,
    windows,
)
from helpers.lib.ngram import kneser_ney_nlls


def test_char_split_is_by_work():
    s = char_split()
    assert s.V == 84 and s.valid_work == "othello" and s.test_work == "hamlet"
    assert len(s.train) > 4_000_000 and len(s.valid) > 100_000 and len(s.test) > 100_000
    assert s.decode(s.encode("To be, or not")) == "To be, or not"
    with pytest.raises(KeyError, match="two different works"):
        char_split("hamlet", "hamlet")


def test_batches_and_windows_are_the_text_shifted_by_one():
    ids = np.arange(1000) % 84
    x, y = random_batch(ids, 4, 16, np.random.default_rng(0))
    assert x.shape == y.shape == (4, 16) and np.array_equal((x + 1) % 84, y)
    xw, yw = windows(ids, 16, 64)
    assert xw.shape == (4, 16) and np.array_equal(yw.ravel(), ids[1:65])
    with pytest.raises(ValueError, match="multiple"):
        windows(ids, 16, 60)
    with pytest.raises(TypeError):
        random_batch(ids.astype(float), 4, 16, np.random.default_rng(0))


def test_the_live_batches_keep_the_draw_the_committed_runs_were_made_with():
    x, _ = random_batch(np.arange(500), 64, 16, np.random.default_rng(3))
    starts = np.random.default_rng(3).integers(0, 500 - 16 - 1, size=64)
    np.testing.assert_array_equal(x[:, 0], starts)


def test_heldout_loss_weighs_every_character_once():
    ids = np.arange(10_000) % 84
    calls = []
    def loss_fn(x, y):
        calls.append(len(x))
        return float(len(x))
    expected = (4 * 4 + 4 * 4 + 2 * 2) / 10
    assert heldout_loss(loss_fn, ids, 64, 64 * 10, batch=4) == pytest.approx(expected)
    assert calls == [4, 4, 2]


def test_the_yardsticks_are_scored_on_the_models_characters():
    """The curves' Othello characters (the first 8,192 predictions) and Hamlet's first 32,768."""
    base = kn_baselines((3, 4))
    for n, valid, test in ((3, 2.112, 2.037), (4, 1.792, 1.749)):
        assert round(base[n]["valid_loss"], 3) == valid and round(base[n]["test_loss"], 3) == test


def test_the_stored_char_ngram_reproduces_its_test_losses():
    stored, split = load_char_ngram(), char_split()
    n, D = stored["chosen"]["n"], stored["chosen"]["discount"]
    assert stored["chosen"]["valid_loss"] == min(r["valid_loss"] for r in stored["rows"])
    head = kneser_ney_nlls(split.train, split.test[:2001], n, split.V, D)    # test[n - 1 .. 2000]
    np.testing.assert_allclose(stored["test_nll"][n - 2:2000], head, rtol=1e-6)
    assert np.isnan(stored["test_nll"][:n - 2]).all()
