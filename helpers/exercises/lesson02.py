"""Checkers for lesson 02 (recurrent networks and backprop through time)."""
from __future__ import annotations

import numpy as np
import torch

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.lib.gradient_flow import gradient_norms_through_time, random_recurrent_layer

NAMES = ("dx", "dh_prev", "dWx", "dWh", "db")


def _case(seed: int, B: int, D: int, H: int):
    """Inputs of one step h = tanh(x Wx + h_prev Wh + b), an upstream gradient dh, and b."""
    rng = np.random.default_rng(seed)
    x, h_prev, dh = rng.standard_normal((B, D)), rng.standard_normal((B, H)), rng.standard_normal((B, H))
    Wx, Wh, b = rng.standard_normal((D, H)), rng.standard_normal((H, H)) * 0.5, rng.standard_normal(H) * 0.5
    h = np.tanh(x @ Wx + h_prev @ Wh + b)
    return (dh, x, h_prev, h, Wx, Wh), b


def _rnn_step_backward_reference(dh, x, h_prev, h, Wx, Wh):
    da = dh * (1 - h ** 2)
    return da @ Wx.T, da @ Wh.T, x.T @ da, h_prev.T @ da, da.sum(axis=0)


def _against_torch(seed, B, D, H):
    def check(f):
        (dh, x, h_prev, h, Wx, Wh), b = _case(seed, B, D, H)
        got = f(dh, x, h_prev, h, Wx, Wh)
        expect_tuple(got, NAMES)
        expect_gradients_match_torch(
            got, lambda x, h_prev, Wx, Wh, b: torch.tanh(x @ Wx + h_prev @ Wh + b), [x, h_prev, Wx, Wh, b],
            [f"{n} (batch {B}, input {D}, hidden {H})" for n in NAMES], dout=dh)
    return check


def _against_finite_differences(f):
    (dh, x, h_prev, h, Wx, Wh), b = _case(7, 2, 3, 4)
    got = f(dh, x, h_prev, h, Wx, Wh)
    expect_tuple(got, NAMES)
    expect_gradients_match_numerical(
        got, lambda x, h_prev, Wx, Wh, b: np.sum(np.tanh(x @ Wx + h_prev @ Wh + b) * dh), [x, h_prev, Wx, Wh, b],
        [f"{n} (finite differences, batch 2, input 3, hidden 4)" for n in NAMES])


def _no_tanh_derivative(dh, x, h_prev, h, Wx, Wh):
    return dh @ Wx.T, dh @ Wh.T, x.T @ dh, h_prev.T @ dh, dh.sum(axis=0)


def _tanh_of_h(dh, x, h_prev, h, Wx, Wh):
    da = dh * (1 - np.tanh(h) ** 2)
    return da @ Wx.T, da @ Wh.T, x.T @ da, h_prev.T @ da, da.sum(axis=0)


def _mean_over_batch(dh, x, h_prev, h, Wx, Wh):
    da = dh * (1 - h ** 2)
    B = len(x)
    return da @ Wx.T, da @ Wh.T, x.T @ da / B, h_prev.T @ da / B, da.sum(axis=0) / B


def _transposed_weight_gradients(dh, x, h_prev, h, Wx, Wh):
    da = dh * (1 - h ** 2)
    return da @ Wx.T, da @ Wh.T, da.T @ x, da.T @ h_prev, da.sum(axis=0)


def _db_kept_batch_axis(dh, x, h_prev, h, Wx, Wh):
    da = dh * (1 - h ** 2)
    return da @ Wx.T, da @ Wh.T, x.T @ da, h_prev.T @ da, da.sum(axis=0, keepdims=True)


def _untransposed_weights(dh, x, h_prev, h, Wx, Wh):
    da = dh * (1 - h ** 2)
    return da @ Wx, da @ Wh, x.T @ da, h_prev.T @ da, da.sum(axis=0)


check_rnn_step_backward = FunctionExercise(
    "RNN step backward",
    [_against_torch(0, 3, 4, 5), _against_torch(1, 1, 2, 3), _against_torch(2, 8, 6, 6), _against_finite_differences],
    reference=_rnn_step_backward_reference, step="core",
    mistakes=[
        Mistake("no_tanh_derivative", "the gradient goes through tanh first: da = dh * (1 - h**2), then the "
                "products use da, not dh.", like=_no_tanh_derivative),
        Mistake("tanh_of_h", "h is already tanh(a): tanh'(a) = 1 - h**2, not 1 - tanh(h)**2.", like=_tanh_of_h),
        Mistake("mean_over_batch", "you divided the weight gradients by the batch size; the loss here is a sum "
                "over the batch, so sum without dividing.", like=_mean_over_batch),
        Mistake("transposed_weight_gradients", "dWx must have Wx's shape (D, H): x.T @ da, not da.T @ x "
                "(and dWh = h_prev.T @ da).", like=_transposed_weight_gradients),
        Mistake("db_kept_batch_axis", "db should have b's shape (H,): sum the batch axis away with "
                "da.sum(axis=0), without keepdims.", like=_db_kept_batch_axis),
        Mistake("untransposed_weights", "a = x @ Wx sends the gradient back through the transpose: "
                "dx = da @ Wx.T and dh_prev = da @ Wh.T.", like=_untransposed_weights),
    ])



# ---------------------------------------------------------------- warm-up: the sequence loss
COW_PROBS = np.array([[0.40, 0.30, 0.20, 0.10], [0.30, 0.20, 0.30, 0.20], [0.50, 0.10, 0.20, 0.20]])
COW_TARGETS = np.array([1, 2, 3])        # cow, eats, grass in the vocabulary [a, cow, eats, grass]


def _sequence_loss_reference(probs, targets):
    return float(-np.log(probs[np.arange(len(targets)), targets]).sum())


def _loss_case(f, probs, targets, what):
    got = f(probs.copy(), targets.copy())
    if np.ndim(got) != 0:
        raise ExerciseFailed(f"{what}: expected one number (the summed loss), got shape {np.shape(got)}")
    expect_close(float(got), _sequence_loss_reference(probs, targets), what, rtol=1e-9)


def _random_loss_case(f):
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(7), size=11)
    _loss_case(f, p, rng.integers(0, 7, 11), "a random sequence of 11 steps over 7 words")


check_sequence_loss = FunctionExercise(
    "the sequence loss of 'a cow eats grass'",
    [lambda f: _loss_case(f, COW_PROBS, COW_TARGETS, "the notes' table (L_total = 4.0174 nats)"), _random_loss_case],
    reference=_sequence_loss_reference, step="warm-up",
    mistakes=[
        Mistake("mean_not_sum", "L_total is the sum of the per-step losses, not their mean (do not divide by T).",
                like=lambda probs, targets: float(-np.log(probs[np.arange(len(targets)), targets]).mean())),
        Mistake("log10", "the losses are in nats: use the natural logarithm np.log, not np.log10.",
                like=lambda probs, targets: float(-np.log10(probs[np.arange(len(targets)), targets]).sum())),
        Mistake("no_minus", "the loss is -log p: the log of a probability is negative, so flip its sign.",
                like=lambda probs, targets: float(np.log(probs[np.arange(len(targets)), targets]).sum())),
        Mistake("whole_rows", "pick one probability per row, the one of that row's target "
                "(probs[np.arange(T), targets]), not probs[targets] (whole rows).",
                like=lambda probs, targets: float(-np.log(probs[targets]).sum())),
    ])


# ---------------------------------------------------------------- core: BPTT over a whole sequence
BPTT_NAMES = ("dxs", "dh0", "dWx", "dWh", "db")


def _bptt_case(seed: int, B: int, T: int, D: int, H: int):
    """xs (B, T, D), h0 (B, H), weights, the forward states hs (B, T+1, H) and upstream dhs (B, T, H)."""
    rng = np.random.default_rng(seed)
    xs, h0 = rng.standard_normal((B, T, D)), rng.standard_normal((B, H))
    Wx, Wh, b = rng.standard_normal((D, H)) * 0.7, rng.standard_normal((H, H)) * 0.5, rng.standard_normal(H) * 0.3
    hs = np.zeros((B, T + 1, H))
    hs[:, 0] = h0
    for t in range(T):
        hs[:, t + 1] = np.tanh(xs[:, t] @ Wx + hs[:, t] @ Wh + b)
    return xs, h0, Wx, Wh, b, hs, rng.standard_normal((B, T, H))


def _bptt(dhs, xs, hs, Wx, Wh, carry=True, accumulate=True, state=1, steps=reversed):
    """BPTT of a tanh RNN over all T steps; the keywords switch on the typical mistakes:
    ``carry=False`` forgets the gradient from later steps, ``accumulate=False`` assigns the shared
    weights' gradients instead of adding them up, ``state=0`` takes tanh' of the previous state,
    ``steps=iter`` walks forwards. Returns (dxs, dh0, dWx, dWh, db)."""
    T = xs.shape[1]
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
    dxs, dh_next = np.zeros_like(xs), np.zeros_like(hs[:, 0])
    for t in steps(range(T)):
        da = (dhs[:, t] + (dh_next if carry else 0)) * (1 - hs[:, t + state] ** 2)
        if accumulate:
            dWx, dWh, db = dWx + xs[:, t].T @ da, dWh + hs[:, t].T @ da, db + da.sum(axis=0)
        else:
            dWx, dWh, db = xs[:, t].T @ da, hs[:, t].T @ da, da.sum(axis=0)
        dxs[:, t] = da @ Wx.T
        dh_next = da @ Wh.T
    return dxs, dh_next, dWx, dWh, db


def _rnn_bptt_reference(dhs, xs, hs, Wx, Wh):
    return _bptt(dhs, xs, hs, Wx, Wh)

def _torch_forward(xs, h0, Wx, Wh, b):
    h, out = h0, []
    for t in range(xs.shape[1]):
        h = torch.tanh(xs[:, t] @ Wx + h @ Wh + b)
        out.append(h)
    return torch.stack(out, dim=1)


def _bptt_against_autograd(seed, B, T, D, H):
    def check(f):
        xs, h0, Wx, Wh, b, hs, dhs = _bptt_case(seed, B, T, D, H)
        got = f(dhs.copy(), xs.copy(), hs.copy(), Wx.copy(), Wh.copy())
        expect_tuple(got, BPTT_NAMES)
        expect_gradients_match_torch(got, _torch_forward, [xs, h0, Wx, Wh, b],
                                     [f"{n} (PyTorch autograd, batch {B}, {T} steps)" for n in BPTT_NAMES], dout=dhs)
    return check


def _bptt_against_nn_rnn(f):
    """torch.nn.RNN with our weights (its (out, in) layout; b_hh = 0), the same upstream gradients."""
    B, T, D, H = 2, 9, 3, 4
    xs, h0, Wx, Wh, b, hs, dhs = _bptt_case(11, B, T, D, H)
    rnn = torch.nn.RNN(D, H, batch_first=True).double()
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(torch.tensor(Wx.T))
        rnn.weight_hh_l0.copy_(torch.tensor(Wh.T))
        rnn.bias_ih_l0.copy_(torch.tensor(b))
        rnn.bias_hh_l0.zero_()
    xt, h0t = torch.tensor(xs, requires_grad=True), torch.tensor(h0[None], requires_grad=True)
    out, _ = rnn(xt, h0t)
    (out * torch.tensor(dhs)).sum().backward()
    got = f(dhs.copy(), xs.copy(), hs.copy(), Wx.copy(), Wh.copy())
    expect_tuple(got, BPTT_NAMES)
    for name, mine, ref in zip(BPTT_NAMES, got, (xt.grad, h0t.grad[0], rnn.weight_ih_l0.grad.T,
                                                 rnn.weight_hh_l0.grad.T, rnn.bias_ih_l0.grad)):
        expect_close(np.asarray(mine), ref.numpy(), f"{name} against torch.nn.RNN (batch {B}, {T} steps)", rtol=1e-7)


def _bptt_against_finite_differences(f):
    xs, h0, Wx, Wh, b, hs, dhs = _bptt_case(3, 2, 5, 3, 4)
    got = f(dhs.copy(), xs.copy(), hs.copy(), Wx.copy(), Wh.copy())
    expect_tuple(got, BPTT_NAMES)

    def loss(xs, h0, Wx, Wh, b):
        h, total = h0, 0.0
        for t in range(xs.shape[1]):
            h = np.tanh(xs[:, t] @ Wx + h @ Wh + b)
            total += float(np.sum(h * dhs[:, t]))
        return total
    expect_gradients_match_numerical(got, loss, [xs, h0, Wx, Wh, b],
                                     [f"{n} (finite differences, batch 2, 5 steps)" for n in BPTT_NAMES])


def _bptt_one_step_only(dhs, xs, hs, Wx, Wh):           # forgets the gradient from later steps
    return _bptt(dhs, xs, hs, Wx, Wh, carry=False)


def _bptt_overwrites(dhs, xs, hs, Wx, Wh):              # = instead of += for the shared weights
    return _bptt(dhs, xs, hs, Wx, Wh, accumulate=False)


def _bptt_off_by_one(dhs, xs, hs, Wx, Wh):              # tanh' of the previous state
    return _bptt(dhs, xs, hs, Wx, Wh, state=0)


def _bptt_forward_order(dhs, xs, hs, Wx, Wh):           # walks t = 0 .. T-1: later gradients not there yet
    return _bptt(dhs, xs, hs, Wx, Wh, steps=iter)

check_rnn_bptt = FunctionExercise(
    "BPTT over a whole sequence",
    [_bptt_against_autograd(0, 3, 6, 4, 5), _bptt_against_nn_rnn, _bptt_against_finite_differences,
     _bptt_against_autograd(1, 1, 1, 2, 3)],
    reference=_rnn_bptt_reference, step="core",
    mistakes=[
        Mistake("one_step_only", "h_t also feeds every later step: the gradient reaching h_t is dhs[:, t] "
                "plus the gradient handed back from step t+1 (da_{t+1} @ Wh.T). Carry it in a variable "
                "across the loop.", like=_bptt_one_step_only),
        Mistake("overwrites", "the weights are shared by every step, so their gradients add up over the "
                "steps: accumulate with += into arrays started at zero, do not assign.", like=_bptt_overwrites),
        Mistake("off_by_one", "hs[:, t + 1] is h_t, the output of step t (hs[:, 0] is h0): tanh' at step t is "
                "1 - hs[:, t + 1]**2, while dWh uses the step's input state hs[:, t].", like=_bptt_off_by_one),
        Mistake("forward_order", "walk the steps backwards, t = T-1 down to 0: the gradient from later steps "
                "must be known before step t uses it.", like=_bptt_forward_order),
    ])


# ---------------------------------------------------------------- experiment: where does it explode?
SCALE_GRID = np.round(np.arange(0.25, 4.0001, 0.25), 2)      # the explorer's slider


def first_scale_exceeding(k: int = 30, hidden: int = 64, threshold: float = 1.0) -> float:
    """The smallest recurrent scale on the explorer's grid at which the gradient norm k steps
    back exceeds ``threshold`` (render_gradient_flow's setting: 60 steps, seed 0)."""
    for s in SCALE_GRID:
        if gradient_norms_through_time(random_recurrent_layer("rnn", float(s), hidden=hidden), 60)[k] > threshold:
            return float(s)
    raise ValueError(f"no scale up to {SCALE_GRID[-1]} makes the gradient {k} steps back exceed {threshold}")


check_explosion_scale = ExperimentExercise(
    "the scale at which the gradient 30 steps back exceeds 1",
    lambda hidden=64: first_scale_exceeding(30, hidden), atol=0.01, example_context={"hidden": 64},
    explanation="Each step back multiplies the gradient by diag(1 - h_t^2) W_h^T. With W_h = scale x an "
                "orthogonal matrix the second factor has gain exactly `scale`, but tanh' < 1 shrinks it, and "
                "more so as a larger scale saturates the states: the product grows only once the scale is "
                "well above 1, not at 1.",
    mistakes=[
        Mistake("unit_gain", "1 is where the recurrent matrix alone has gain 1; tanh' = 1 - h^2 < 1 takes "
                "some of it away at every step. Move the slider and read the curve at k = 30.", like=1.0),
        Mistake("last_below", "that is the last scale at which the gradient 30 steps back is still below 1; "
                "the question asks for the first one at which it is above.",
                like=lambda hidden=64: first_scale_exceeding(30, hidden) - 0.25),
        Mistake("above_loss", "the question is about the norm exceeding 1, not exceeding the gradient at "
                "the loss (k = 0, about 1 already); read the y-axis value at k = 30.",
                like=lambda hidden=64: first_scale_exceeding(30, hidden, 10.0)),
    ])

EXERCISES = [check_sequence_loss, check_rnn_bptt, check_rnn_step_backward, check_explosion_scale]
