"""Lessons 02-03: gradient flow (helpers.lib.gradient_flow),
the synthetic tasks (helpers.lib.recurrent_tasks), the lessons' explorers (helpers.lessons.lesson02,
lesson03), the exercise checkers."""
import numpy as np
import pytest

from helpers.exercises.lesson02 import check_rnn_bptt
from helpers.exercises.lesson03 import check_lstm_step
from helpers.infra.widgets import Explorer, slider
from helpers.lessons.lesson02 import cow_losses, render_gradient_flow, render_temperature
from helpers.lessons.lesson03 import render_forget_bias_flow, render_long_range
from helpers.lib.gradient_flow import (
    gradient_norms_through_time,
    lm_gradient_flow,
    random_recurrent_layer,
)
from helpers.lib.recurrent_tasks import long_range_batch, train_long_range, train_recall
from helpers.lib.rnn_lm import EOS, LMData, RecurrentLM, to_numpy_layers
from helpers.lib.text import UNK, Vocab


def test_cow_table_worked_example():
    losses = cow_losses()
    np.testing.assert_allclose(losses, [-np.log(0.3), -np.log(0.3), -np.log(0.2)])
    assert round(sum(losses), 4) == 4.0174


@pytest.fixture(scope="module")
def tiny():
    """A tiny repetitive corpus."""
    words = ("the cat sat on the mat " * 60).split() + [EOS]
    vocab = Vocab.build(words, specials=(UNK, EOS))
    ids = vocab.encode(words)
    return LMData(vocab, ids, ids[:200], ids[:200])


def test_the_gradient_flow_of_a_recurrent_lm(tiny):
    E, layer, W_out, b_out = to_numpy_layers(RecurrentLM(len(tiny.vocab), "lstm", 8, 16, seed=0))
    g = lm_gradient_flow(E, layer, W_out, b_out, np.stack([tiny.train[:13], tiny.train[5:18]]))
    assert g.shape == (12,) and np.all(g > 0)


def test_gradient_norms_vanish_and_explode():
    small = gradient_norms_through_time(random_recurrent_layer("rnn", 0.5), 40)
    big = gradient_norms_through_time(random_recurrent_layer("rnn", 3.0), 40)
    assert small[-1] < 1e-10 * small[0]
    assert big[-1] > 1e4 * big[0]
    lstm_open = gradient_norms_through_time(random_recurrent_layer("lstm", 1.0, forget_bias=5.0), 40)
    lstm_closed = gradient_norms_through_time(random_recurrent_layer("lstm", 1.0, forget_bias=0.0), 40)
    assert lstm_open[-1] / lstm_open[0] > 1e3 * lstm_closed[-1] / lstm_closed[0]


def test_clipping_tames_explosion():
    wild = train_recall(3.0, None, steps=60, lr=0.2)
    tame = train_recall(3.0, 5.0, steps=60, lr=0.2)
    assert np.nanmax(wild["loss"]) > 1e3
    assert np.all(np.isfinite(tame["loss"])) and tame["loss"][-10:].mean() < 2


def test_long_range_task():
    ids, labels = long_range_batch(50, 7, np.random.default_rng(0))
    assert ids.shape == (50, 8) and np.array_equal(ids[:, 0], labels) and ids[:, 1:].min() >= 2
    with pytest.raises(ValueError, match="distance must be at least 1"):
        long_range_batch(5, 0, np.random.default_rng(0))
    assert train_long_range("lstm", 3, steps=150) > 0.95
    assert train_long_range("rnn", 3, steps=150) > 0.95


def test_gradient_flow_explorer_redraws():
    ex = Explorer(render_gradient_flow, {"scale": slider(1.0, 0.25, 4.0, 0.25, "scale"),
                                         "steps": slider(20, 10, 60, 10, "steps")})
    first = ex.summary
    ex.controls["scale"].value = 3.0
    assert ex.renders == 2 and ex.summary != first and "explodes" in ex.summary
    assert "error" not in ex.summary


def test_forget_bias_explorer_and_long_range_render():
    ex = Explorer(render_forget_bias_flow, {"forget_bias": slider(0.0, -2.0, 6.0, 0.5, "b_f"),
                                            "steps": slider(20, 10, 60, 10, "steps")})
    first = ex.summary
    ex.controls["forget_bias"].value = 4.0
    assert ex.renders == 2 and ex.summary != first
    fig, summary = render_long_range(steps=60, hidden=8, max_distance=5)
    assert summary.startswith("RNN: d=5:") and "LSTM" in summary and "W_h = I" in summary


def test_long_range_explorer_train_button():
    ex = Explorer(render_long_range, {"steps": slider(40, 20, 100, 20, "steps"),
                                      "max_distance": slider(5, 5, 15, 10, "max d")}, run_button="Train")
    first = ex.summary
    ex.controls["max_distance"].value = 15
    assert ex.renders == 1            # nothing runs until the button is pressed
    ex.button.click()
    assert ex.renders == 2 and ex.summary != first and "d=15" in ex.summary


def test_temperature_explorer(tiny):
    model = RecurrentLM(len(tiny.vocab), "rnn", emb_dim=4, hidden=8)
    ex = Explorer(lambda temperature: render_temperature(temperature, model=model, vocab=tiny.vocab, prompt=("the",), top=4),
                  {"temperature": slider(1.0, 0.1, 3.0, 0.1, "T")})
    first = ex.summary
    ex.controls["temperature"].value = 0.3
    assert ex.summary != first and ex.summary.startswith("T=0.3")


def test_exercise_checkers_accept_solutions_and_explain_mistakes(capsys):
    def good(dhs, xs, hs, Wx, Wh):
        dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
        dxs, dh = np.zeros_like(xs), np.zeros_like(hs[:, 0])
        for t in reversed(range(xs.shape[1])):
            da = (dhs[:, t] + dh) * (1 - hs[:, t + 1] ** 2)
            dWx, dWh, db = dWx + xs[:, t].T @ da, dWh + hs[:, t].T @ da, db + da.sum(axis=0)
            dxs[:, t], dh = da @ Wx.T, da @ Wh.T
        return dxs, dh, dWx, dWh, db

    def no_carry(dhs, xs, hs, Wx, Wh):
        out = good(dhs, xs, hs, Wx, Wh)
        da = dhs * (1 - hs[:, 1:] ** 2)
        return (da @ Wx.T, da[:, 0] @ Wh.T, np.einsum("btd,bth->dh", xs, da),
                np.einsum("btk,bth->kh", hs[:, :-1], da), da.sum(axis=(0, 1))) if out else out

    def todo(*args):
        raise NotImplementedError

    assert check_rnn_bptt(good)
    assert not check_rnn_bptt(no_carry)
    assert "handed back from step t+1" in capsys.readouterr().out
    assert not check_rnn_bptt(todo)
    assert "not attempted yet" in capsys.readouterr().out

    def lstm_ok(x, h_prev, c_prev, Wx, Wh, b, order="ifgo"):
        H = h_prev.shape[1]
        a = x @ Wx + h_prev @ Wh + b
        blk = {n: a[:, k * H:(k + 1) * H] for k, n in enumerate(order)}
        sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
        i, f, g, o = sig(blk["i"]), sig(blk["f"]), np.tanh(blk["g"]), sig(blk["o"])
        c = f * c_prev + i * g
        return o * np.tanh(c), c, (x, h_prev, c_prev, i, f, g, o, c)

    assert check_lstm_step(lstm_ok)
    assert not check_lstm_step(lambda *a: lstm_ok(*a, order="figo"))
    assert "order f,i,g,o" in capsys.readouterr().out
