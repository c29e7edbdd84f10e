"""The NumPy language models of lessons 02–03 (helpers.lib.recurrent_lm): every hand-written gradient
against finite differences and PyTorch autograd, the shipped PyTorch models copied in, the pieces
a lesson swaps for the student's own, the training step's clipping and Adam, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.lib.gradcheck import check_function
from helpers.lib.optim import Adam, clip_global_norm
from helpers.lib.recurrent import TimeLSTM, TimeRNN
from helpers.lib.recurrent_lm import (
    NumpyLM,
    adam_update,
    clip_gradients,
    lstm_bptt,
    lstm_forward,
    rnn_bptt,
    rnn_forward,
    stream_nll,
)
from helpers.lib.rnn_lm import RecurrentLM
from helpers.lib.transformer import LSTMLM

V, D, H, B, T = 7, 3, 4, 2, 5


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_every_gradient_matches_finite_differences(kind):
    model = NumpyLM(V, D, H, kind, np.random.default_rng(1), dtype=np.float64)
    for p in model.params:
        p *= 1.5                                      # away from the linear regime
    x, y = _data()
    model.train_loss(x, y)
    report = check_function(lambda: model.loss(x, y), model.params, [g.copy() for g in model.grads],
                            names=list(NumpyLM.NAMES))
    assert report.ok, report


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_loss_and_gradients_equal_pytorch_with_the_same_weights(kind):
    torch_model = RecurrentLM(V, kind, emb_dim=D, hidden=H, seed=3).double()
    ours = NumpyLM.from_torch(torch_model, dtype=np.float64)
    x, y = _data(2)
    logits, _ = torch_model(torch.as_tensor(x))
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), torch.as_tensor(y).reshape(-1))
    loss.backward()
    assert ours.train_loss(x, y) == pytest.approx(loss.item(), rel=1e-12)
    rnn = torch_model.rnn
    expected = [torch_model.embed.weight.grad, rnn.weight_ih_l0.grad.T, rnn.weight_hh_l0.grad.T,
                rnn.bias_ih_l0.grad, torch_model.out.weight.grad.T, torch_model.out.bias.grad]
    for name, mine, ref in zip(NumpyLM.NAMES, ours.grads, expected, strict=True):
        np.testing.assert_allclose(mine, ref.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


def test_the_shipped_lstm_architecture_copies_in_and_gives_the_same_logits():
    torch_model = LSTMLM(V, emb_dim=D, hidden=H, seed=0).double()
    ours = NumpyLM.from_torch(torch_model, dtype=np.float64)
    x, _ = _data(4)
    with torch.no_grad():
        expected = torch_model(torch.as_tensor(x)).numpy()
    np.testing.assert_allclose(ours.forward(x), expected, rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match="nn.RNN or nn.LSTM"):
        NumpyLM.from_torch(RecurrentLM(V, "gru", emb_dim=D, hidden=H))


def test_stream_nll_carries_the_state_like_evaluate_nll():
    from training.word_lms import evaluate_nll
    torch_model = RecurrentLM(V, "lstm", emb_dim=D, hidden=H, seed=5)
    ids = np.random.default_rng(6).integers(0, V, 500)
    assert stream_nll(NumpyLM.from_torch(torch_model, np.float64), ids, 4, 16) == pytest.approx(
        evaluate_nll(torch_model, ids, batch_size=4, seq_len=16), rel=1e-6)


def test_the_recurrence_is_the_course_s_time_layers():
    rng = np.random.default_rng(7)
    xs, h0, c0 = rng.standard_normal((B, T, D)), rng.standard_normal((B, H)), rng.standard_normal((B, H))
    rnn, lstm = TimeRNN(D, H, rng), TimeLSTM(D, H, rng)
    dhs = rng.standard_normal((B, T, H))
    hs = rnn_forward(xs, h0, *rnn.params)
    np.testing.assert_allclose(hs[:, 1:], rnn.forward(xs, h0), rtol=1e-12)
    dxs, dh0, *dW = rnn_bptt(dhs, xs, hs, *rnn.params[:2])
    np.testing.assert_allclose(dxs, rnn.backward(dhs), rtol=1e-10)
    np.testing.assert_allclose(dh0, rnn.dh0, rtol=1e-10)
    for mine, ref in zip(dW, rnn.grads, strict=True):
        np.testing.assert_allclose(mine, ref, rtol=1e-10)
    hs, cs, caches = lstm_forward(xs, h0, c0, *lstm.params)
    np.testing.assert_allclose(hs[:, 1:], lstm.forward(xs, h0, c0), rtol=1e-12)
    np.testing.assert_allclose(cs[:, -1], lstm.c_T, rtol=1e-12)
    dxs, dh0, dc0, *dW = lstm_bptt(dhs, caches, *lstm.params[:2])
    np.testing.assert_allclose(dxs, lstm.backward(dhs), rtol=1e-10)
    np.testing.assert_allclose(dh0, lstm.dh0, rtol=1e-10)
    np.testing.assert_allclose(dc0, lstm.dc0, rtol=1e-10)
    for mine, ref in zip(dW, lstm.grads, strict=True):
        np.testing.assert_allclose(mine, ref, rtol=1e-10)


def test_the_model_trains_with_the_functions_it_is_given():
    calls = []

    def spy(*args):
        calls.append(1)
        return rnn_bptt(*args)

    model = NumpyLM(V, D, H, "rnn")
    model.bptt = spy
    x, y = _data()
    model.train_loss(x, y)
    assert calls == [1]
    lstm = NumpyLM(V, D, H, "lstm")
    lstm.step_backward = lambda *a: (_ for _ in ()).throw(RuntimeError("the student's step backward"))
    with pytest.raises(RuntimeError, match="student's"):
        lstm.train_loss(x, y)


def test_a_few_hundred_steps_learn_a_repeating_text():
    text = np.tile(np.arange(V), 40)
    for kind in ("rnn", "lstm"):
        model, opt = NumpyLM(V, 8, 16, kind, np.random.default_rng(0)), Adam(0.02)
        x, y = text[None, :-1].repeat(2, 0)[:, :60], text[None, 1:].repeat(2, 0)[:, :60]
        before = model.loss(x, y)
        for _ in range(150):
            model.train_loss(x, y)
            grads, _ = clip_gradients(model.grads, 1.0)
            opt.step(model.params, grads)
        assert model.loss(x, y) < 0.1 < before, kind
        assert list(model.sample([0], 6, temperature=0.05, rng=np.random.default_rng(0))) == [1, 2, 3, 4, 5, 6]


def test_adam_update_and_clipping_are_the_course_s_optimiser_and_clipping():
    rng = np.random.default_rng(8)
    a = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    b = [p.copy() for p in a]
    m, v = [np.zeros_like(p) for p in b], [np.zeros_like(p) for p in b]
    opt = Adam(0.01)
    for t in range(1, 6):
        grads = [rng.standard_normal(p.shape) for p in a]
        opt.step(a, grads)
        out = adam_update(b, grads, m, v, t, lr=0.01)
        assert out[0] is b
    for p, q in zip(a, b, strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-12)
    g1, g2 = [rng.standard_normal((5, 5)) * 9], None
    g2 = [g1[0].copy()]
    grads, norm = clip_gradients(g1, 2.0)
    assert grads is g1 and norm == pytest.approx(clip_global_norm(g2, 2.0))
    np.testing.assert_allclose(g1[0], g2[0])


def test_bad_input_gets_a_clear_error():
    model = NumpyLM(V, D, H)
    with pytest.raises(ValueError, match="kind must be one of"):
        NumpyLM(V, D, H, "gru")
    with pytest.raises(IndexError, match=r"\[0, 7\)"):
        model.loss(np.array([[0, 7]]), np.array([[1, 2]]))
    with pytest.raises(ValueError, match="targets must have shape"):
        model.loss(np.array([[0, 1]]), np.array([[1, 2, 3]]))
    with pytest.raises(TypeError, match="2-D integer"):
        model.loss(np.array([0.5, 1.0]), np.array([1, 2]))
    with pytest.raises(ValueError, match="temperature"):
        model.sample([0], 3, temperature=0)
