"""Properties of helpers.lib.recurrent and gradient_flow: the NumPy layers are torch.nn's (weights
copied in, biases or none), and states and upstream gradients of a wrong shape or holding nan are
refused."""

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import gradient_flow as GF
from helpers.lib import recurrent as R
from tests.props import (
    budget,
    closeness,
    covers,
    dims,
    float_arrays,
    inject,
    non_finite,
    raises_naming,
)

T = torch.tensor
TIME = {"rnn": (R.TimeRNN, torch.nn.RNN), "lstm": (R.TimeLSTM, torch.nn.LSTM), "gru": (R.TimeGRU, torch.nn.GRU)}
CELL = {"rnn": (R.RNNCell, torch.nn.RNNCell), "lstm": (R.LSTMCell, torch.nn.LSTMCell),
        "gru": (R.GRUCell, torch.nn.GRUCell)}


close = closeness(1e-9)


@covers("recurrent.TimeRNN", "recurrent.TimeLSTM", "recurrent.TimeGRU", "recurrent.copy_from_torch",
        "recurrent.fast_sigmoid")
@budget(3)
@given(st.data())
def test_time_layers_are_torchs_forward_and_backward_with_or_without_biases(data):
    kind = data.draw(st.sampled_from(sorted(TIME)))
    B, Tn, D, H = (data.draw(dims(1, 3)) for _ in range(4))
    ours_cls, torch_cls = TIME[kind]
    torch.manual_seed(data.draw(st.integers(0, 3)))
    module = torch_cls(D, H, batch_first=True, bias=data.draw(st.booleans())).double()
    layer = R.copy_from_torch(ours_cls(D, H, np.random.default_rng(0)), module)
    xs = data.draw(float_arrays((B, Tn, D)))
    h0 = data.draw(float_arrays((B, H)))
    tx, th = T(xs, requires_grad=True), T(h0[None], requires_grad=True)
    if kind == "lstm":
        c0 = data.draw(float_arrays((B, H)))
        tc = T(c0[None], requires_grad=True)
        ths, (_, tcT) = module(tx, (th, tc))
        hs = layer.forward(xs, h0, c0)
    else:
        ths, _ = module(tx, th)
        hs = layer.forward(xs, h0)
    close(hs, ths.detach())
    dhs = data.draw(float_arrays((B, Tn, H)))
    loss = (ths * T(dhs)).sum()
    if kind == "lstm":
        dcT = data.draw(float_arrays((B, H)))
        loss = loss + (tcT[0] * T(dcT)).sum()
        dx = layer.backward(dhs, dcT)
        close(layer.dc0, torch.autograd.grad(loss, tc, retain_graph=True)[0][0])
        raises_naming(lambda: layer.backward(dhs, np.ones((B, H + 1))), "dc_T", ValueError)
    else:
        dx = layer.backward(dhs)
    gx, gh = torch.autograd.grad(loss, (tx, th))
    close(dx, gx)
    close(layer.dh0, gh[0])
    close(R.fast_sigmoid(xs), torch.sigmoid(T(xs)), 1e-12)
    bad = inject(xs, data.draw(non_finite), data.draw(st.integers(0, 30)))
    raises_naming(lambda: layer.forward(bad), "xs", ValueError)
    raises_naming(lambda: layer.forward(xs, inject(h0, np.nan, 0), *(() if kind != "lstm" else (h0,))), "h0",
                  ValueError)
    raises_naming(lambda: layer.forward(xs, h0[:, :0] if H > 0 else h0, *(() if kind != "lstm" else (h0,))), "h0",
                  ValueError)
    raises_naming(lambda: layer.backward(dhs[:, :, :0]), "dhs", ValueError)
    raises_naming(lambda: layer.forward(xs[:, :, :0] if D else xs), "input", ValueError)


@covers("recurrent.RNNCell", "recurrent.LSTMCell", "recurrent.GRUCell")
@budget(2)
@given(st.data())
def test_cells_are_torchs_and_accumulate_their_gradients(data):
    kind = data.draw(st.sampled_from(sorted(CELL)))
    B, D, H = (data.draw(dims(1, 3)) for _ in range(3))
    ours_cls, torch_cls = CELL[kind]
    torch.manual_seed(0)
    module = torch_cls(D, H).double()
    cell = R.copy_from_torch(ours_cls(D, H, np.random.default_rng(0)), module)
    x, h = data.draw(float_arrays((B, D))), data.draw(float_arrays((B, H)))
    tx, th = T(x, requires_grad=True), T(h, requires_grad=True)
    dh = data.draw(float_arrays((B, H)))
    if kind == "lstm":
        c = data.draw(float_arrays((B, H)))
        tc = T(c, requires_grad=True)
        th2, tc2 = module(tx, (th, tc))
        h2, c2 = cell.forward(x, h, c)
        close(c2, tc2.detach())
        dc = data.draw(float_arrays((B, H)))
        (th2 * T(dh) + tc2 * T(dc)).sum().backward()
        dx, dhp, dcp = cell.backward(dh, dc)
        close(dcp, tc.grad)
    else:
        th2 = module(tx, th)
        h2 = cell.forward(x, h)
        (th2 * T(dh)).sum().backward()
        dx, dhp = cell.backward(dh)
    close(h2, th2.detach())
    close(dx, tx.grad)
    close(dhp, th.grad)
    close(cell.grads[0], module.weight_ih.grad.T)
    first = cell.grads[0].copy()
    cell.forward(x, h, *((c,) if kind == "lstm" else ()))
    cell.backward(dh, *((dc,) if kind == "lstm" else ()))
    close(cell.grads[0], 2 * first)                      # a cell accumulates until zero_grad
    cell.zero_grad()
    assert all(np.all(g == 0) for g in cell.grads)
    raises_naming(lambda: cell.forward(x, h[:1] if B > 1 else h[:, :0], *((c,) if kind == "lstm" else ())), "h_prev",
                  ValueError)
    raises_naming(lambda: cell.forward(inject(x, np.inf, 0), h, *((c,) if kind == "lstm" else ())), "x", ValueError)


@covers("recurrent.lstm_param_count", "recurrent.gru_param_count", "recurrent.rnn_param_count")
@budget()
@given(D=dims(1, 30), H=dims(1, 30))
def test_parameter_counts_are_the_layers_and_torchs(D, H):
    for count, kind in ((R.rnn_param_count, "rnn"), (R.lstm_param_count, "lstm"), (R.gru_param_count, "gru")):
        layer = TIME[kind][0](D, H, np.random.default_rng(0))
        assert count(D, H) == layer.n_params()
    assert R.lstm_param_count(D, H) == sum(p.numel() for p in torch.nn.LSTM(D, H).parameters()) - 4 * H
    assert R.gru_param_count(D, H) == sum(p.numel() for p in torch.nn.GRU(D, H).parameters()) - 2 * H


@covers("gradient_flow.random_recurrent_layer", "gradient_flow.gradient_norms_through_time",
        "gradient_flow.clipped_profile", "gradient_flow.lm_gradient_flow")
@budget(0.5)
@given(kind=st.sampled_from(["rnn", "lstm", "gru"]), scale=st.sampled_from([0.5, 1.0, 2.0]), Tn=dims(1, 8))
def test_gradient_flow_measures_the_backward_of_the_layer(kind, scale, Tn):
    layer = GF.random_recurrent_layer(kind, scale, input_size=3, hidden=4)
    Wh = layer.params[1][:, :4]
    close(np.linalg.svd(Wh, compute_uv=False).max(), scale)
    norms = GF.gradient_norms_through_time(layer, T=Tn, batch=2)
    assert norms.shape == (Tn,) and np.all(np.isfinite(norms)) and np.isclose(
        norms[0], np.linalg.norm(layer.dh_all[:, -1], axis=1).mean())
    before, after, norm = GF.clipped_profile(layer, 0.01, T=Tn)
    close(before, GF.gradient_norms_through_time(layer, T=Tn))
    assert np.all(after <= before + 1e-12) and norm >= 0
    E, W_out, b_out = np.ones((5, 3)), np.ones((5, 4)), np.zeros(5)
    ids = np.array([[0, 1, 2, 3][:max(2, min(4, Tn))]])
    g = GF.lm_gradient_flow(E, layer, W_out, b_out, ids)
    assert g.shape == (ids.shape[1] - 1,)
