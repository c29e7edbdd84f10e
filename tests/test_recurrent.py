"""NumPy recurrent layers: finite-difference gradients, PyTorch equivalence, bad input."""
import numpy as np
import pytest
import torch

from helpers.lib.gradcheck import assert_close_to_torch, check_function, check_layer
from helpers.lib.recurrent import (
    GRUCell,
    LSTMCell,
    RNNCell,
    TimeGRU,
    TimeLSTM,
    TimeRNN,
    copy_from_torch,
    gru_param_count,
    lstm_param_count,
    rnn_param_count,
)

TIME = {"rnn": (TimeRNN, torch.nn.RNN), "lstm": (TimeLSTM, torch.nn.LSTM), "gru": (TimeGRU, torch.nn.GRU)}
CELL = {"rnn": (RNNCell, torch.nn.RNNCell), "lstm": (LSTMCell, torch.nn.LSTMCell), "gru": (GRUCell, torch.nn.GRUCell)}


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("B,T", [(3, 4), (1, 1)])
def test_time_layer_gradients_finite_differences(kind, B, T):
    rng = np.random.default_rng(1)
    layer = TIME[kind][0](3, 4, rng)
    for p in layer.params:   # larger weights than the default init: gates away from 0.5
        p *= 3
    xs = rng.standard_normal((B, T, 3))
    report = check_layer(layer, xs)
    assert report.ok, report
    assert len(report.errors) == len(layer.params) + 1


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_gradient_with_respect_to_initial_state(kind):
    rng = np.random.default_rng(2)
    layer = TIME[kind][0](2, 3, rng)
    xs, h0 = rng.standard_normal((2, 5, 2)), rng.standard_normal((2, 3))
    c0 = rng.standard_normal((2, 3)) if kind == "lstm" else None
    dout = rng.standard_normal((2, 5, 3))
    extra = (c0,) if kind == "lstm" else ()

    def f():
        return float(np.sum(layer.forward(xs, h0, *extra) * dout))

    f()
    layer.backward(dout)
    wrt, analytic = [h0], [layer.dh0]
    if kind == "lstm":
        wrt.append(c0)
        analytic.append(layer.dc0)
    report = check_function(f, wrt, [a.copy() for a in analytic])
    assert report.ok, report


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_cells_gradients_finite_differences(kind):
    rng = np.random.default_rng(3)
    cell = CELL[kind][0](3, 4, rng)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    c = rng.standard_normal((2, 4))
    dh, dc = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))

    def f():
        if kind == "lstm":
            h1, c1 = cell.forward(x, h, c)
            return float(np.sum(h1 * dh) + np.sum(c1 * dc))
        return float(np.sum(cell.forward(x, h) * dh))

    f()
    cell.zero_grad()
    back = cell.backward(dh, dc) if kind == "lstm" else cell.backward(dh)
    wrt = [x, h, c][:len(back)] + cell.params
    analytic = list(back) + [g.copy() for g in cell.grads]
    report = check_function(f, wrt, analytic)
    assert report.ok, report


def _torch_copy(kind, D, H, seed):
    mod = TIME[kind][1](D, H, batch_first=True).double()
    with torch.no_grad():
        g = torch.Generator().manual_seed(seed)
        for p in mod.parameters():   # non-default values so the bias split matters
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.5)
    return mod


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("B,T,D,H", [(4, 6, 5, 3), (1, 1, 2, 2), (1, 7, 3, 5), (3, 1, 4, 4)])
def test_time_layers_match_torch(kind, B, T, D, H):
    rng = np.random.default_rng(B * 100 + T)
    mod = _torch_copy(kind, D, H, seed=T)
    ours = copy_from_torch(TIME[kind][0](D, H, rng), mod)
    xs = rng.standard_normal((B, T, D))
    h0 = rng.standard_normal((B, H))
    c0 = rng.standard_normal((B, H))
    dout = rng.standard_normal((B, T, H))

    xt = torch.tensor(xs, requires_grad=True)
    h0t = torch.tensor(h0[None], requires_grad=True)
    c0t = torch.tensor(c0[None], requires_grad=True)
    if kind == "lstm":
        out_t, _ = mod(xt, (h0t, c0t))
        out = ours.forward(xs, h0, c0)
    else:
        out_t, _ = mod(xt, h0t)
        out = ours.forward(xs, h0)
    (out_t * torch.tensor(dout)).sum().backward()
    dxs = ours.backward(dout)

    assert_close_to_torch(out, out_t, f"{kind} outputs", rtol=1e-10, atol=1e-12)
    assert_close_to_torch(dxs, xt.grad, f"{kind} d inputs", rtol=1e-10, atol=1e-12)
    assert_close_to_torch(ours.dh0, h0t.grad[0], f"{kind} d h0", rtol=1e-10, atol=1e-12)
    if kind == "lstm":
        assert_close_to_torch(ours.dc0, c0t.grad[0], "lstm d c0", rtol=1e-10, atol=1e-12)
    assert_close_to_torch(ours.grads[0], mod.weight_ih_l0.grad.T, f"{kind} dWx", rtol=1e-10, atol=1e-12)
    assert_close_to_torch(ours.grads[1], mod.weight_hh_l0.grad.T, f"{kind} dWh", rtol=1e-10, atol=1e-12)
    # our single bias b = b_ih + b_hh gets the gradient both PyTorch biases get (they are equal)
    assert_close_to_torch(ours.grads[2], mod.bias_ih_l0.grad, f"{kind} db", rtol=1e-10, atol=1e-12)
    if kind == "gru":
        assert_close_to_torch(ours.grads[3], mod.bias_hh_l0.grad[2 * H:], "gru d bhn", rtol=1e-10, atol=1e-12)
    else:
        assert_close_to_torch(ours.grads[2], mod.bias_hh_l0.grad, f"{kind} db (hh)", rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_cells_match_torch_cells(kind):
    rng = np.random.default_rng(5)
    tcell = CELL[kind][1](3, 4).double()
    with torch.no_grad():
        for p in tcell.parameters():
            p.mul_(3)
    cell = copy_from_torch(CELL[kind][0](3, 4, rng), tcell)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    if kind == "lstm":
        h1, c1 = cell.forward(x, h, c)
        h1t, c1t = tcell(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
        assert_close_to_torch(c1, c1t, "cell state", rtol=1e-10)
    else:
        h1, h1t = cell.forward(x, h), tcell(torch.tensor(x), torch.tensor(h))
    assert_close_to_torch(h1, h1t, f"{kind} cell output", rtol=1e-10)


def test_time_layer_equals_cell_loop():
    rng = np.random.default_rng(6)
    layer, cell = TimeLSTM(3, 4, rng), LSTMCell(3, 4, rng)
    for p, q in zip(cell.params, layer.params, strict=True):
        p[...] = q
    xs = rng.standard_normal((2, 5, 3))
    h = c = np.zeros((2, 4))
    for t in range(5):
        h, c = cell.forward(xs[:, t], h, c)
    np.testing.assert_allclose(layer.forward(xs)[:, -1], h, rtol=1e-12)
    np.testing.assert_allclose(layer.c_T, c, rtol=1e-12)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_stateful_equals_one_long_sequence(kind):
    """Two stateful calls on halves give the hidden states of one call on the whole."""
    rng = np.random.default_rng(7)
    full = TIME[kind][0](3, 4, rng)
    half = TIME[kind][0](3, 4, rng, stateful=True)
    for p, q in zip(half.params, full.params, strict=True):
        p[...] = q
    xs = rng.standard_normal((2, 8, 3))
    whole = full.forward(xs)
    parts = np.concatenate([half.forward(xs[:, :5]), half.forward(xs[:, 5:])], axis=1)
    np.testing.assert_allclose(parts, whole, rtol=1e-12)
    # truncated BPTT: the second call's gradients stop at its start ...
    half.backward(np.ones((2, 3, 4)))
    g_trunc = half.grads[1].copy()
    full.forward(xs)
    full.backward(np.concatenate([np.zeros((2, 5, 4)), np.ones((2, 3, 4))], axis=1))
    assert not np.allclose(g_trunc, full.grads[1])
    # ... and reset_state starts again from zeros
    half.reset_state()
    np.testing.assert_allclose(half.forward(xs[:, :5]), whole[:, :5], rtol=1e-12)


def test_not_stateful_starts_from_zero_each_call():
    rng = np.random.default_rng(8)
    layer = TimeRNN(3, 4, rng)
    xs = rng.standard_normal((2, 4, 3))
    np.testing.assert_array_equal(layer.forward(xs), layer.forward(xs))


def test_gate_order_is_pytorchs():
    """Setting only the forget-gate bias of a torch LSTM must change our f gate, block 2."""
    mod = torch.nn.LSTM(2, 3, batch_first=True).double()
    with torch.no_grad():
        for p in mod.parameters():
            p.zero_()
        mod.bias_ih_l0[3:6] = 5.0     # PyTorch: i, f, g, o -> f is rows 3..5
    lstm = copy_from_torch(TimeLSTM(2, 3, np.random.default_rng(0)), mod)
    lstm.forward(np.zeros((1, 1, 2)))
    gates = lstm.gates[0, 0]
    np.testing.assert_allclose(gates[3:6], 1 / (1 + np.exp(-5.0)))
    np.testing.assert_allclose(gates[[0, 1, 2, 9, 10, 11]], 0.5)


def test_parameter_counts_notes_example():
    assert lstm_param_count(300, 256) == 570_368          # the notes' example
    rng = np.random.default_rng(0)
    assert TimeLSTM(300, 256, rng, dtype=np.float32).n_params() == 570_368
    torch_count = sum(p.numel() for p in torch.nn.LSTM(300, 256).parameters())
    assert torch_count - 570_368 == 4 * 256              # PyTorch's second bias vector
    assert TimeGRU(300, 256, rng, dtype=np.float32).n_params() == gru_param_count(300, 256)
    assert sum(p.numel() for p in torch.nn.GRU(300, 256).parameters()) == gru_param_count(300, 256) + 2 * 256
    assert TimeRNN(300, 256, rng).n_params() == rnn_param_count(300, 256) == 142_592


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_wrong_shapes_name_the_dimension(kind):
    rng = np.random.default_rng(0)
    layer = TIME[kind][0](3, 4, rng)
    with pytest.raises(ValueError, match=r"input feature size \(dimension 2\) is 5, expected 3"):
        layer.forward(np.zeros((2, 6, 5)))
    with pytest.raises(ValueError, match=r"3-D input \(batch, time, input\), got 2-D"):
        layer.forward(np.zeros((6, 3)))
    with pytest.raises(ValueError, match=r"time dimension 1 has length 0"):
        layer.forward(np.zeros((2, 0, 3)))
    extra = (np.zeros((2, 4)),) if kind == "lstm" else ()
    with pytest.raises(ValueError, match=r"h0: hidden size \(dimension 1\) is 5, expected 4"):
        layer.forward(np.zeros((2, 6, 3)), np.zeros((2, 5)), *extra)
    with pytest.raises(ValueError, match=r"h0: batch size \(dimension 0\) is 3, but the input has batch 2"):
        layer.forward(np.zeros((2, 6, 3)), np.zeros((3, 4)), *extra)


def test_stateful_batch_change_is_explained():
    layer = TimeLSTM(3, 4, np.random.default_rng(0), stateful=True)
    layer.forward(np.zeros((2, 5, 3)))
    with pytest.raises(ValueError, match=r"state carried from the previous batch.*batch size \(dimension 0\) is 2"):
        layer.forward(np.zeros((3, 5, 3)))
    with pytest.raises(ValueError, match=r"c_prev: hidden size \(dimension 1\) is 2, expected 4"):
        LSTMCell(3, 4, np.random.default_rng(0)).forward(np.zeros((1, 3)), np.zeros((1, 4)), np.zeros((1, 2)))


def test_copy_from_torch_rejects_mismatch():
    layer = TimeLSTM(3, 4, np.random.default_rng(0))
    with pytest.raises(TypeError, match="cannot copy a GRU into a TimeLSTM"):
        copy_from_torch(layer, torch.nn.GRU(3, 4))
    with pytest.raises(ValueError, match=r"weight_ih has shape \(16, 5\)"):
        copy_from_torch(layer, torch.nn.LSTM(5, 4))


def test_float32_layers_stay_float32():
    layer = TimeLSTM(8, 6, np.random.default_rng(0), dtype=np.float32)
    out = layer.forward(np.ones((2, 3, 8), np.float32))
    dx = layer.backward(np.ones_like(out))
    assert out.dtype == dx.dtype == layer.grads[0].dtype == np.float32
