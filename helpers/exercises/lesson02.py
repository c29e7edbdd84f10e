"""Checkers for lesson 02 (recurrent networks and backprop through time)."""
from __future__ import annotations

import numpy as np
import torch

from helpers.exercises import (
    FunctionExercise,
    Mistake,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)

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

EXERCISES = [check_rnn_step_backward]
