"""Checkers for lesson 02 (recurrent networks and backprop through time)."""
from __future__ import annotations

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, run_checks
from helpers.lib.recurrent import RNNCell

NAMES = ("dx", "dh_prev", "dWx", "dWh", "db")


def _case(seed: int, B: int, D: int, H: int):
    rng = np.random.default_rng(seed)
    cell = RNNCell(D, H, rng)
    for p in cell.params:
        p *= 2.0
    x, h_prev, dh = rng.standard_normal((B, D)), rng.standard_normal((B, H)), rng.standard_normal((B, H))
    h = cell.forward(x, h_prev)
    cell.zero_grad()
    dx, dh_prev = cell.backward(dh)
    Wx, Wh, _ = cell.params
    inputs = (dh, x, h_prev, h, Wx.copy(), Wh.copy())
    return inputs, (dx, dh_prev, *[g.copy() for g in cell.grads])


def check_rnn_step_backward(candidate) -> bool:
    """``candidate(dh, x, h_prev, h, Wx, Wh) -> (dx, dh_prev, dWx, dWh, db)`` for one step
    h = tanh(x Wx + h_prev Wh + b); shapes x (B, D), h_prev/h/dh (B, H), Wx (D, H), Wh (H, H)."""

    def check(seed, B, D, H):
        def run(f):
            inputs, expected = _case(seed, B, D, H)
            got = f(*inputs)
            if not isinstance(got, (tuple, list)) or len(got) != 5:
                raise ExerciseFailed("return a tuple of five arrays: (dx, dh_prev, dWx, dWh, db)")
            for name, g, e in zip(NAMES, got, expected, strict=True):
                if name == "db" and np.shape(g) == (1, H):
                    raise ExerciseFailed("db should have shape (H,): sum the batch axis away (axis=0)")
                hint = ""
                if name in ("dWx", "dWh", "db") and np.shape(g) == np.shape(e) and np.allclose(g, e / B):
                    hint = " (you divided by the batch size; the loss here is a sum, not a mean)"
                try:
                    expect_close(g, e, f"{name} (batch {B}, input {D}, hidden {H})", rtol=1e-6, atol=1e-9)
                except ExerciseFailed as err:
                    raise ExerciseFailed(str(err) + hint + (
                        " — remember tanh'(a) = 1 - h**2, applied before the products" if name in ("dx", "dh_prev") else "")) from None
        return run

    return run_checks("RNN step backward", candidate,
                      [check(0, 3, 4, 5), check(1, 1, 2, 3), check(2, 8, 6, 6)])
