"""Checkers for lesson 02 (recurrent networks and backpropagation through time)."""
from __future__ import annotations

import functools
import textwrap

import numpy as np
import torch

from helpers.exercises import ExperimentExercise, FunctionExercise, Mistake
from helpers.exercises.expect import (
    ExerciseFailed,
    expect_close,
    expect_gradients,
    expect_tuple,
    short_repr,
)
from helpers.lib import recurrent
from helpers.lib.gradcheck import numerical_gradient
from helpers.lib.optim import clip_adam_step, clip_global_norm
from helpers.lib.recurrent import gradient_norms, random_recurrent_lm, rnn_forward

# the course's other RNNs: the backward in gradient_through_time, PyTorch's (the shipped word RNN)
RECURRENT_COURSE = (recurrent.gradient_through_time, torch.nn.RNN, torch.nn.RNNCell)


def _case(seed: int, B: int, T: int, D: int, H: int):
    """xs (B, T, D), h0 (B, H), Wx, Wh, b, the states hs (B, T+1, H) and upstream dhs (B, T, H)."""
    rng = np.random.default_rng(seed)
    xs, h0 = rng.standard_normal((B, T, D)), rng.standard_normal((B, H))
    Wx, Wh = rng.standard_normal((D, H)) * 0.7, rng.standard_normal((H, H)) * 0.5
    b = rng.standard_normal(H) * 0.3
    return xs, h0, Wx, Wh, b, rnn_forward(xs, h0, Wx, Wh, b), rng.standard_normal((B, T, H))


# ---------------------------------------------------------------- warm-up: one step back
def step_jacobian(h, Wh):
    """The tanh RNN's one-step Jacobian dh_t/dh_{t-1} = diag(1 - h_t^2) Wh^T (lesson 02 §3)."""
    return (1 - h ** 2)[:, None] * Wh.T


def _jacobian_case(seed: int, D: int, H: int):
    def check(f):
        xs, h0, Wx, Wh, b, hs, _ = _case(seed, 1, 1, D, H)
        got, h_prev = f(hs[0, 1].copy(), Wh.copy()), h0[0].copy()
        step = lambda: np.tanh(xs[0, 0] @ Wx + h_prev @ Wh + b)  # noqa: E731
        expected = np.stack([numerical_gradient(lambda i=i: step()[i], h_prev) for i in range(H)])
        expect_close(got, expected, f"dh_t/dh_(t-1) for hidden size {H} (row i: the derivatives of "
                     "h_t[i]; finite differences)", rtol=1e-5, atol=1e-7)
    return check


check_step_jacobian = FunctionExercise(
    "the one-step Jacobian", [_jacobian_case(0, 3, 4), _jacobian_case(1, 2, 1),
                              _jacobian_case(2, 4, 6)],
    reference=step_jacobian, step="warm-up", forbidden=(recurrent.rnn_bptt, *RECURRENT_COURSE),
    mistakes=[
        Mistake("no_tanh_prime", "h_t = tanh(a_t): on its way to h_(t-1) the gradient also passes "
                "tanh'(a_t) = 1 - h_t**2, one factor per row i.", like=lambda h, Wh: Wh.T.copy()),
        Mistake("not_transposed", "a_t = ... + h_(t-1) Wh, so a_t[i] reads column i of Wh: the "
                "entry (i, j) is (1 - h_t[i]**2) * Wh[j, i], that is diag(1 - h**2) @ Wh.T.",
                like=lambda h, Wh: (1 - h ** 2)[:, None] * Wh),
        Mistake("columns_scaled", "tanh' belongs to the output h_t[i], the row of the Jacobian: "
                "scale the rows, (1 - h**2)[:, None] * Wh.T, not the columns.",
                like=lambda h, Wh: Wh.T * (1 - h ** 2)[None, :]),
    ])


# ---------------------------------------------------------------- core: BPTT over a whole sequence
NAMES = ("dxs", "dh0", "dWx", "dWh", "db")


def _bptt(dhs, xs, hs, Wx, Wh, carry=True, accumulate=True, state=1):
    """BPTT with the typical mistakes switched on by the keywords."""
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0])
    dxs, dh_next = np.zeros_like(xs), np.zeros_like(hs[:, 0])
    for t in reversed(range(xs.shape[1])):
        da = (dhs[:, t] + (dh_next if carry else 0)) * (1 - hs[:, t + state] ** 2)
        if not accumulate:
            dWx, dWh, db = 0 * dWx, 0 * dWh, 0 * db
        dWx, dWh, db = dWx + xs[:, t].T @ da, dWh + hs[:, t].T @ da, db + da.sum(axis=0)
        dxs[:, t] = da @ Wx.T
        dh_next = da @ Wh.T
    return dxs, dh_next, dWx, dWh, db


def _against_nn_rnn(seed, B, T, D, H):
    """torch.nn.RNN with the same weights (its (out, in) layout; bias_hh = 0), autograd."""
    def check(f):
        xs, h0, Wx, Wh, b, hs, dhs = _case(seed, B, T, D, H)
        rnn = torch.nn.RNN(D, H, batch_first=True).double()
        with torch.no_grad():
            for p, w in zip(rnn.parameters(), (Wx.T, Wh.T, b, np.zeros(H))):
                p.copy_(torch.as_tensor(w))
        xt, h0t = torch.tensor(xs, requires_grad=True), torch.tensor(h0[None], requires_grad=True)
        (rnn(xt, h0t)[0] * torch.tensor(dhs)).sum().backward()
        got = f(dhs.copy(), xs.copy(), hs.copy(), Wx.copy(), Wh.copy())
        expect_tuple(got, NAMES)
        expected = [xt.grad, h0t.grad[0], rnn.weight_ih_l0.grad.T, rnn.weight_hh_l0.grad.T,
                    rnn.bias_ih_l0.grad]
        expect_gradients(got, [e.numpy() for e in expected],
                         [f"{n} (batch {B}, {T} steps)" for n in NAMES], "torch.nn.RNN")
    return check


check_rnn_bptt = FunctionExercise(
    "BPTT over a whole sequence",
    [_against_nn_rnn(0, 3, 6, 4, 5), _against_nn_rnn(3, 2, 5, 3, 4),
     _against_nn_rnn(1, 1, 1, 2, 3)],
    reference=recurrent.rnn_bptt, step="core", forbidden=RECURRENT_COURSE,
    mistakes=[
        Mistake("one_step_only", "h_t also feeds every later step: the gradient reaching h_t is "
                "dhs[:, t] plus the gradient handed back from step t+1 (da_(t+1) @ Wh.T). Carry it "
                "in a variable across the loop.", like=functools.partial(_bptt, carry=False)),
        Mistake("overwrites", "the weights are shared by every step, so their gradients add up "
                "over the steps: accumulate with += into arrays started at zero, do not assign.",
                like=functools.partial(_bptt, accumulate=False)),
        Mistake("off_by_one", "hs[:, t + 1] is h_t, the output of step t (hs[:, 0] is h0): tanh' "
                "at step t is 1 - hs[:, t + 1]**2, while dWh uses the step's input state hs[:, t].",
                like=functools.partial(_bptt, state=0)),
    ])


# ---------------------------------------------------------------- core: the step's clipping
def clip_reference(grads, max_norm):
    """Global-norm clipping as the exercise returns it: (gradients, norm before) (lesson 02 §4)."""
    return grads, clip_global_norm(grads, max_norm)


def _norm(grads):
    return float(np.sqrt(sum(float((g * g).sum()) for g in grads)))


def _clip_case(seed: int, shapes, scale: float, max_norm: float, what: str):
    def check(f):
        rng = np.random.default_rng(seed)
        grads = [rng.standard_normal(s) * scale for s in shapes]
        expected = [g.copy() for g in grads]
        norm = clip_global_norm(expected, max_norm)
        got = f([g.copy() for g in grads], max_norm)
        expect_tuple(got, ("grads", "norm"))
        if np.ndim(got[1]) != 0:
            raise ExerciseFailed(f"{what}: the norm must be one number, got {short_repr(got[1])}")
        expect_close(float(got[1]), norm, f"{what}: the global norm before clipping", rtol=1e-6)
        if not isinstance(got[0], (list, tuple)) or len(got[0]) != len(grads):
            raise ExerciseFailed(f"{what}: expected a list of {len(grads)} arrays, got "
                                 f"{short_repr(got[0])}")
        for k, (c, e) in enumerate(zip(got[0], expected)):
            expect_close(c, e, f"{what}: clipped gradient {k}", rtol=1e-6, atol=1e-12)
    return check


check_clip_gradients = FunctionExercise(
    "global-norm gradient clipping",
    [_clip_case(0, [(3, 4), (4,), (2, 2, 2)], 10.0, 1.0, "three arrays, global norm 37, clip at 1"),
     _clip_case(1, [(5, 3), (3,)], 0.05, 1.0, "a global norm of about 0.2, below the threshold 1"),
     _clip_case(2, [(20, 20), (2,)], 2.0, 5.0, "one big array and one small one, clipped at 5"),
     _clip_case(3, [(1,)], 30.0, 0.5, "a single number")],
    reference=clip_reference, step="core", forbidden=(clip_global_norm, clip_adam_step),
    mistakes=[
        Mistake("per_array", "the norm is global: one number over ALL the arrays, sqrt(sum of "
                "every squared entry), and every array is scaled by the same factor max_norm / "
                "norm; clipping each array on its own changes the direction of the update.",
                like=lambda gs, c: ([g * min(1.0, c / np.linalg.norm(g)) for g in gs], _norm(gs))),
        Mistake("always_rescaled", "clip only when the norm exceeds max_norm: a smaller gradient "
                "is left as it is (the factor is min(1, max_norm / norm)).",
                like=lambda gs, c: ([g * c / _norm(gs) for g in gs], _norm(gs))),
        Mistake("by_value", "np.clip cuts each entry to ±max_norm (clipping by value) and changes "
                "the direction; scale all arrays by one factor instead.",
                like=lambda gs, c: ([np.clip(g, -c, c) for g in gs], _norm(gs))),
        Mistake("norm_after", "return the norm before clipping (what the gradient was), not "
                "after: the training loop watches it to see explosions.",
                like=lambda gs, c: (clip_reference(gs, c)[0], min(_norm(gs), c))),
    ])


# ---------------------------------------------------------------- experiment: when it explodes
SCALES = tuple(float(s) for s in np.arange(0.25, 4.0001, 0.25))


@functools.lru_cache(maxsize=16)
def first_scale_exceeding(k: int = 30, hidden: int = 64, threshold: float = 1.0) -> float:
    """The smallest scale 0.25, 0.5, ..., 4 at which the gradient ``k`` steps back in a random RNN
    (60 steps, :func:`~helpers.lib.recurrent.gradient_norms`) exceeds ``threshold``."""
    if hidden not in (32, 64, 128):
        raise ValueError(f"hidden must be one of the explorer's sizes 32, 64, 128, got {hidden!r}")
    for s in SCALES:
        if gradient_norms(random_recurrent_lm("rnn", s, hidden), 60)[k] > threshold:
            return s
    raise ValueError(f"no scale up to 4 makes the gradient {k} steps back exceed {threshold}")


check_explosion_scale = ExperimentExercise(
    "the scale at which the gradient 30 steps back exceeds 1", first_scale_exceeding, atol=0.01,
    example_context={"hidden": 64},
    explanation=textwrap.fill(
        "Each step back multiplies the gradient by diag(1 - h_t^2) W_h^T. With W_h = scale x an "
        "orthogonal matrix the second factor has gain exactly the scale, but tanh' < 1 takes some "
        "of it away at every step, and more as a larger scale saturates the states: the product "
        "grows only once the scale is well above 1.", 96),
    mistakes=[
        Mistake("unit_gain", "1 is where the recurrent matrix alone has gain 1; tanh' = 1 - h^2 < "
                "1 takes some of it away at every step. Measure the gradient at k = 30 for every "
                "scale.", like=1.0),
        Mistake("last_below", "that is the last scale at which the gradient 30 steps back is "
                "still below 1; the question asks for the first one above.",
                like=lambda hidden=64: first_scale_exceeding(30, hidden) - 0.25),
        Mistake("norm_not_scale", "that is the gradient's norm 30 steps back; the answer is the "
                "recurrent scale at which that norm first exceeds 1.",
                like=lambda hidden=64: float(gradient_norms(
                    random_recurrent_lm("rnn", first_scale_exceeding(30, hidden), hidden))[30])),
    ])

EXERCISES = [check_step_jacobian, check_rnn_bptt, check_clip_gradients, check_explosion_scale]
