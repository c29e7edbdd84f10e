"""Checkers for lesson 03 (LSTM gates)."""
from __future__ import annotations

import itertools

import numpy as np

from helpers.exercises import (
    ExerciseFailed,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_tuple,
    outputs_match,
)
from helpers.lib.recurrent import LSTMCell

ORDER = ("i", "f", "g", "o")


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _gates(x, h_prev, Wx, Wh, b, order=ORDER):
    """The four gate blocks of x Wx + h_prev Wh + b, read in ``order`` (a permutation of i, f, g, o)."""
    H = h_prev.shape[1]
    a = x @ Wx + h_prev @ Wh + b
    blocks = {name: a[:, k * H:(k + 1) * H] for k, name in enumerate(order)}
    return _sigmoid(blocks["i"]), _sigmoid(blocks["f"]), np.tanh(blocks["g"]), _sigmoid(blocks["o"]), blocks["g"]


def _lstm_step_reference(x, h_prev, c_prev, Wx, Wh, b, order=ORDER):
    i, f, g, o, _ = _gates(x, h_prev, Wx, Wh, b, order)
    c = f * c_prev + i * g
    return o * np.tanh(c), c


def _against_torch_cell(seed, B, D, H):
    def check(f):
        rng = np.random.default_rng(seed)
        cell = LSTMCell(D, H, rng)                 # the library's cell, itself matched against torch.nn.LSTM
        for p in cell.params:
            p *= 4.0
        x, h_prev, c_prev = (rng.standard_normal((B, n)) for n in (D, H, H))
        Wx, Wh, b = (p.copy() for p in cell.params)
        h_expected, c_expected = cell.forward(x, h_prev, c_prev)
        got = f(x, h_prev, c_prev, Wx, Wh, b)
        expect_tuple(got, ("h", "c"))
        order = _order_read(got, x, h_prev, c_prev, Wx, Wh, b)
        if order is not None:
            raise ExerciseFailed(f"h and c (batch {B}, input {D}, hidden {H}): expected the gate blocks in the "
                                 f"order i,f,g,o, got the outputs of the order {','.join(order)}")
        expect_close(got[1], c_expected, f"c (batch {B}, input {D}, hidden {H})")
        expect_close(got[0], h_expected, f"h (batch {B}, input {D}, hidden {H})")
    return check


def _order_read(h_c, x, h_prev, c_prev, Wx, Wh, b):
    """The wrong gate order whose LSTM step gives (h, c), or None."""
    for order in itertools.permutations(ORDER):
        if order != ORDER and outputs_match(h_c, _lstm_step_reference(x, h_prev, c_prev, Wx, Wh, b, order)):
            return order
    return None


def _read_in_another_order(h_c, *args):
    return _order_read(h_c, *args) is not None


def _gate_order_of_the_book(x, h_prev, c_prev, Wx, Wh, b):
    H = h_prev.shape[1]
    a = x @ Wx + h_prev @ Wh + b
    f, g, i, o = _sigmoid(a[:, :H]), np.tanh(a[:, H:2 * H]), _sigmoid(a[:, 2 * H:3 * H]), _sigmoid(a[:, 3 * H:])
    c = f * c_prev + i * g
    return o * np.tanh(c), c


def _old_c_in_h(x, h_prev, c_prev, Wx, Wh, b):
    i, f, g, o, _ = _gates(x, h_prev, Wx, Wh, b)
    return o * np.tanh(c_prev), f * c_prev + i * g


def _sigmoid_candidate(x, h_prev, c_prev, Wx, Wh, b):
    i, f, _, o, a_g = _gates(x, h_prev, Wx, Wh, b)
    c = f * c_prev + i * _sigmoid(a_g)
    return o * np.tanh(c), c


def _no_tanh_on_c(x, h_prev, c_prev, Wx, Wh, b):
    i, f, g, o, _ = _gates(x, h_prev, Wx, Wh, b)
    c = f * c_prev + i * g
    return o * c, c


check_lstm_step = FunctionExercise(
    "LSTM step", [_against_torch_cell(0, 2, 3, 4), _against_torch_cell(1, 1, 1, 1), _against_torch_cell(2, 5, 6, 3)],
    reference=_lstm_step_reference, step="core",
    mistakes=[
        Mistake("gate_order", "PyTorch stacks the gate blocks of Wx, Wh and b as i, f, g, o: columns 0:H, "
                "H:2H, 2H:3H, 3H:4H (the from-scratch book uses f, g, i, o, TensorFlow i, g, f, o).", when=_read_in_another_order, example=_gate_order_of_the_book),
        Mistake("old_c_in_h", "c is right but h is not: h = o * tanh(c) with the NEW cell state c, not c_prev.",
                like=_old_c_in_h),
        Mistake("sigmoid_candidate", "the candidate g is a tanh (values in -1..1, so the cell can also "
                "decrease); only the gates i, f, o are sigmoids.", like=_sigmoid_candidate),
        Mistake("no_tanh_on_c", "h = o * tanh(c): squash the cell state before the output gate scales it.",
                like=_no_tanh_on_c),
    ])

EXERCISES = [check_lstm_step]
