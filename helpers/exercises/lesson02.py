"""Checkers for lesson 02 (recurrent networks and backprop through time)."""
from __future__ import annotations

import functools
import textwrap

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
    short_repr,
)
from helpers.lib.gradient_flow import gradient_norms_through_time, random_recurrent_layer
from helpers.lib.layers import SoftmaxCrossEntropy
from helpers.lib.optim import clip_global_norm
from helpers.lib.recurrent import RNNCell, TimeRNN
from helpers.lib.recurrent_lm import clip_gradients, rnn_bptt


def _wrapped(text: str) -> str:
    """An explanation as lines of at most 96 characters (an HTML export wraps longer ones mid-word)."""
    return textwrap.fill(text, 96)

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


def _log_of_product(probs, targets):
    with np.errstate(divide="ignore"):
        return float(-np.log(np.prod(probs[np.arange(len(targets)), targets])))


def _peaked_loss_case(f):
    """Probabilities as small as 1e-200: the log of each must be taken, never of their product."""
    p = np.array([[1e-200, 1 - 1e-200], [0.5, 0.5], [1 - 1e-200, 1e-200]])
    _loss_case(f, p, np.array([0, 1, 1]), "probabilities as small as 1e-200 (about 921.7 nats in all)")


check_sequence_loss = FunctionExercise(
    "the summed loss of a sequence",
    [lambda f: _loss_case(f, COW_PROBS, COW_TARGETS, "the table of section 2 (L_total = 4.0174 nats)"),
     _random_loss_case, _peaked_loss_case],
    reference=_sequence_loss_reference, step="warm-up",
    forbidden=(SoftmaxCrossEntropy, torch.nn.functional.cross_entropy, torch.nn.functional.nll_loss),
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
        Mistake("log_of_product", "the product of many probabilities underflows to 0 (and log 0 = -inf): "
                "take the log of each probability and add the logs.", like=_log_of_product),
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
    reference=rnn_bptt, step="core", forbidden=(TimeRNN, TimeRNN.backward, RNNCell, RNNCell.backward),
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


# ---------------------------------------------------------------- core: the training step's clipping
def _clip_case(seed: int, shapes, scale: float, max_norm: float, what: str):
    def check(f):
        rng = np.random.default_rng(seed)
        grads = [rng.standard_normal(s) * scale for s in shapes]
        expected = [g.copy() for g in grads]
        norm = clip_gradients(expected, max_norm)[1]
        got = f([g.copy() for g in grads], max_norm)
        expect_tuple(got, ("grads", "norm"))
        clipped, got_norm = got
        if np.ndim(got_norm) != 0:
            raise ExerciseFailed(f"{what}: the norm must be one number, got shape {np.shape(got_norm)}")
        expect_close(float(got_norm), norm, f"{what}: the global norm before clipping", rtol=1e-6)
        if not isinstance(clipped, (list, tuple)) or len(clipped) != len(grads):
            raise ExerciseFailed(f"{what}: expected a list of {len(grads)} gradient arrays, got {short_repr(clipped)}")
        for k, (c, e) in enumerate(zip(clipped, expected, strict=True)):
            expect_close(c, e, f"{what}: clipped gradient {k} (shape {e.shape})", rtol=1e-6, atol=1e-12)
    return check


def _per_array(grads, max_norm):
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
    return [g * min(1.0, max_norm / np.linalg.norm(g)) for g in grads], norm


def _always_rescaled(grads, max_norm):
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
    return [g * max_norm / norm for g in grads], norm


def _by_value(grads, max_norm):
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
    return [np.clip(g, -max_norm, max_norm) for g in grads], norm


def _norm_after(grads, max_norm):
    clipped, norm = clip_gradients([g.copy() for g in grads], max_norm)
    return clipped, min(norm, max_norm)


def _no_square_root(grads, max_norm):
    sq = float(sum(float((g * g).sum()) for g in grads))
    return [g * max_norm / sq if sq > max_norm else g for g in grads], sq


check_clip_gradients = FunctionExercise(
    "global-norm gradient clipping",
    [_clip_case(0, [(3, 4), (4,), (2, 2, 2)], 10.0, 1.0, "three arrays, global norm about 37, clipped at 1"),
     _clip_case(1, [(5, 3), (3,)], 0.05, 1.0, "a global norm of about 0.2, below the threshold 1"),
     _clip_case(2, [(20, 20), (2,)], 2.0, 5.0, "one big array and one small one, clipped at 5"),
     _clip_case(3, [(1,)], 30.0, 0.5, "a single number"),
     _clip_case(4, [(6, 4), (4,), (4, 6), (6,)], 1.5, 4.0, "four arrays, clipped at 4")],
    reference=clip_gradients, step="core",
    forbidden=(clip_global_norm, torch.nn.utils.clip_grad_norm_, torch.nn.utils.clip_grad_value_),
    mistakes=[
        Mistake("per_array", "the norm is global: one number over ALL the arrays, sqrt(sum of every squared "
                "entry), and every array is scaled by the same factor max_norm / norm; clipping each array "
                "on its own changes the direction of the update.", like=_per_array),
        Mistake("always_rescaled", "clip only when the norm exceeds max_norm: a smaller gradient is left as it "
                "is (the factor is min(1, max_norm / norm)).", like=_always_rescaled),
        Mistake("by_value", "np.clip cuts each entry to ±max_norm (clipping by value) and changes the "
                "direction; scale all arrays by one factor instead.", like=_by_value),
        Mistake("norm_after", "return the norm before clipping (what the gradient was), not after: the "
                "training loop watches it to see explosions.", like=_norm_after),
        Mistake("no_square_root", "the L2 norm is the square root of the sum of squares.", like=_no_square_root),
    ])


# ---------------------------------------------------------------- experiment: where does it explode?
SCALE_GRID = np.round(np.arange(0.25, 4.0001, 0.25), 2)      # the explorer's slider
HIDDEN_SIZES = (32, 64, 128)                                 # the explorer's dropdown


def first_scale_exceeding(k: int = 30, hidden: int = 64, threshold: float = 1.0) -> float:
    """The smallest recurrent scale on the explorer's grid at which the gradient norm k steps
    back exceeds ``threshold`` (render_gradient_flow's setting: 60 steps, seed 0)."""
    if hidden not in HIDDEN_SIZES:
        raise ValueError(f"hidden must be one of the explorer's sizes {HIDDEN_SIZES}, got {hidden!r}")
    for s in SCALE_GRID:
        if gradient_norms_through_time(random_recurrent_layer("rnn", float(s), hidden=hidden), 60)[k] > threshold:
            return float(s)
    raise ValueError(f"no scale up to {SCALE_GRID[-1]} makes the gradient {k} steps back exceed {threshold}")


@functools.lru_cache(maxsize=8)
def _explosion_scale(hidden=64):
    return first_scale_exceeding(30, hidden)


check_explosion_scale = ExperimentExercise(
    "the scale at which the gradient 30 steps back exceeds 1",
    _explosion_scale, atol=0.01, example_context={"hidden": 64},
    explanation=_wrapped("Each step back multiplies the gradient by diag(1 - h_t^2) W_h^T. With W_h = scale x an "
                "orthogonal matrix the second factor has gain exactly `scale`, but tanh' < 1 shrinks it, and "
                "more so as a larger scale saturates the states: the product grows only once the scale is "
                "well above 1, not at 1."),
    mistakes=[
        Mistake("unit_gain", "1 is where the recurrent matrix alone has gain 1; tanh' = 1 - h^2 < 1 takes "
                "some of it away at every step. Move the slider and read the curve at k = 30.", like=1.0),
        Mistake("last_below", "that is the last scale at which the gradient 30 steps back is still below 1; "
                "the question asks for the first one at which it is above.",
                like=lambda hidden=64: _explosion_scale(hidden) - 0.25),
        Mistake("above_loss", "the question is about the norm exceeding 1, not exceeding the gradient at "
                "the loss (k = 0, about 1 already); read the y-axis value at k = 30.",
                like=lambda hidden=64: first_scale_exceeding(30, hidden, 10.0)),
    ])

EXERCISES = [check_sequence_loss, check_rnn_bptt, check_clip_gradients, check_explosion_scale]
