"""helpers.lessons.lesson02: the challenge scores the model itself and refuses shipped weights,
and the explorer redraws."""
import numpy as np
import pytest

from helpers.course.char_live import live_split
from helpers.course.models import load_model
from helpers.lessons import lesson02 as L


class _Unigram:
    """A 'model' predicting the training frequencies everywhere: it never sees the targets."""

    def __init__(self, ids, V):
        counts = np.bincount(ids, minlength=V) + 1.0
        self.logits = np.log(counts / counts.sum())

    def forward(self, x):
        return np.broadcast_to(self.logits, x.shape + self.logits.shape)


def test_the_challenge_scores_the_model_itself_and_not_shipped_weights(capsys, monkeypatch):
    split = live_split()
    monkeypatch.setattr(L, "SHIPPED_READ", [])

    def todo():
        raise NotImplementedError

    assert L.run_challenge(todo) is None and "not attempted yet" in capsys.readouterr().out
    result = L.run_challenge(lambda: _Unigram(split.train, split.V),
                             extra={"the lesson's run": 1.771})
    out = capsys.readouterr().out
    assert 3.0 < result["test_loss"] < 3.5 and result["counts"]
    assert "<- you" in out and "the lesson's run" in out
    assert list(result["standings"].values()) == sorted(result["standings"].values())
    assert not L.run_challenge(lambda: _Unigram(split.train, split.V), cpu_minutes=1e-9)["counts"]
    assert "over the budget" in capsys.readouterr().out
    shipped = L.run_challenge(lambda: (load_model("char_lstm"), _Unigram(split.train, split.V))[1])
    assert not shipped["counts"] and "char_lstm.npz" in capsys.readouterr().out
    with pytest.raises(ValueError, match="seq_len"):
        L.run_challenge(lambda: None, seq_len=100)
    with pytest.raises(TypeError, match="forward"):
        L.run_challenge(lambda: 3)


def test_the_gradient_explorer_shows_an_explosion():
    first = L.render_gradient_flow(scale=1.0, steps=20)[1]
    assert "explodes" in L.render_gradient_flow(scale=3.0, steps=20)[1] != first
