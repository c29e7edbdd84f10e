"""Lesson 02's own checks that are not cells of the lesson: the word split's near-duplicate
guard, the gradient-flow measurement (the rise near the window start, explained), the checker
defects of issue 30, and the challenge's scorer."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.course.corpus import document_groups
from helpers.course.models import load_model
from helpers.course.recurrent_lms import lm_data
from helpers.course.trained_word_lms import flow_at, trained_gradient_flow
from helpers.exercises import lesson02 as X
from helpers.lessons.lesson02 import challenge_standings, run_challenge
from helpers.lib.near_duplicates import seen_ngram_share
from helpers.lib.recurrent_lm import NumpyLM


@pytest.fixture(scope="module")
def words():
    return lm_data(3000)


def test_the_word_split_keeps_copies_together(words):
    """The lesson's folded note: a plain split by document puts about one in seven test 20-grams
    in the training text word for word; the shipped split, with copies kept together, under 1 %."""
    sizes = np.bincount(np.array(document_groups()))
    assert (sizes > 1).sum() > 100
    plain = lm_data(3000, keep_copies_together=False)
    naive, shipped = seen_ngram_share(plain.train, plain.test), seen_ngram_share(words.train, words.test)
    assert 0.1 < naive < 0.2 and shipped < 0.01 and naive > 10 * shipped


def test_the_rise_near_the_window_start_is_the_zero_state(words):
    """Issue 31: lesson 02 showed the trained RNN's gradient rising again near k = 53. It is the
    zero state that starts a window: a plain mean over windows from zeros rises there; the lesson's
    measurement (warmed-up windows, geometric mean over windows) falls steadily."""
    model = load_model("rnn_lm").model
    cold = trained_gradient_flow(model, words.test, warm_up=0)
    warm = trained_gradient_flow(model, words.test)
    assert cold.mean(0)[53] > 10 * cold.mean(0)[45]                 # the rise, from zero states
    typical = [flow_at(warm, k).estimate for k in range(0, 60, 5)]
    assert all(a > b for a, b in zip(typical, typical[1:]))          # gone: a steady fall
    plain = warm.mean(0)
    assert all(plain[k] > plain[k + 5] for k in range(30, 54, 5))
    assert flow_at(warm, 30).high < 1e-3


def test_the_same_windows_in_both_lessons(words):
    """One measurement: the same model, text and seed give the same windows and numbers."""
    model = load_model("rnn_lm").model
    np.testing.assert_array_equal(trained_gradient_flow(model, words.test), trained_gradient_flow(model, words.test))


def test_the_explosion_checker_says_which_settings_it_measures(capsys):
    """Issue 30: check_explosion_scale(2.0, hidden=0) raised a traceback; now a verdict that names
    the explorer's sizes."""
    for hidden in (0, 7, None):
        result = X.check_explosion_scale(2.0, hidden=hidden)
        assert result.status == "failed"
        assert "32, 64, 128" in capsys.readouterr().out
    assert X.check_explosion_scale(X._explosion_scale(64), hidden=64)


def test_the_clipping_checker_refuses_the_course_s_clipping(capsys):
    from helpers.lib.optim import clip_global_norm

    def shortcut(grads, max_norm):
        return grads, clip_global_norm(grads, max_norm)

    assert not X.check_clip_gradients(shortcut)
    assert "course's own" in capsys.readouterr().out


class _Unigram:
    """A 'model' predicting the training frequencies at every position: it never sees the targets."""

    def __init__(self, ids, V):
        counts = np.bincount(ids, minlength=V) + 1.0
        self.logits = np.log(counts / counts.sum())

    def forward(self, x):
        return np.broadcast_to(self.logits, x.shape + self.logits.shape)


def test_the_challenge_scores_the_model_itself(capsys):
    from helpers.course.char_live import live_split

    split = live_split()
    assert run_challenge(None) is None
    assert "not attempted yet" in capsys.readouterr().out

    def todo():
        raise NotImplementedError

    assert run_challenge(todo) is None
    assert "not attempted yet" in capsys.readouterr().out
    result = run_challenge(lambda: _Unigram(split.train, split.V), extra={"the lesson's run": 1.771})
    out = capsys.readouterr().out
    assert 3.0 < result["test_loss"] < 3.5 and result["counts"] and "<- you" in out and "the lesson's run" in out
    assert list(result["standings"].values()) == sorted(result["standings"].values())
    assert not run_challenge(lambda: _Unigram(split.train, split.V), cpu_minutes=1e-9)["counts"]
    assert "does not count" in capsys.readouterr().out
    with pytest.raises(ValueError, match="seq_len"):
        run_challenge(lambda: None, seq_len=100)
    with pytest.raises(TypeError, match="forward"):
        run_challenge(lambda: 3)
    rows = challenge_standings()
    assert rows["Kneser-Ney 4-gram"] < rows["Kneser-Ney 3-gram"] and min(rows.values()) == pytest.approx(1.4288, abs=1e-3)


def test_a_numpy_model_enters_the_challenge(capsys):
    from helpers.course.char_live import live_split

    split = live_split()
    result = run_challenge(lambda: NumpyLM(split.V, 4, 8, "rnn"))
    assert abs(result["test_loss"] - np.log(split.V)) < 0.5          # untrained: about a uniform guess
