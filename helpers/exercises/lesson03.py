"""Checkers for lesson 03 (LSTM gates)."""
from __future__ import annotations

import itertools

import numpy as np

from helpers.exercises import ExerciseFailed, expect_close, run_checks
from helpers.lib.recurrent import LSTMCell

ORDER = ("i", "f", "g", "o")


def _reference(x, h_prev, c_prev, Wx, Wh, b, order=ORDER):
    """LSTM step with the four gate blocks of Wx/Wh/b read in ``order`` (a permutation of ifgo)."""
    H = h_prev.shape[1]
    a = x @ Wx + h_prev @ Wh + b
    blocks = {name: a[:, k * H:(k + 1) * H] for k, name in enumerate(order)}
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    i, f, g, o = sig(blocks["i"]), sig(blocks["f"]), np.tanh(blocks["g"]), sig(blocks["o"])
    c = f * c_prev + i * g
    return o * np.tanh(c), c


def check_lstm_step(candidate) -> bool:
    """``candidate(x, h_prev, c_prev, Wx, Wh, b) -> (h, c)``: one LSTM step with PyTorch's gate
    order i, f, g, o in the columns of Wx (D, 4H), Wh (H, 4H) and b (4H,)."""

    def check(seed, B, D, H):
        def run(f):
            rng = np.random.default_rng(seed)
            cell = LSTMCell(D, H, rng)
            for p in cell.params:
                p *= 4.0
            x, h_prev, c_prev = (rng.standard_normal((B, n)) for n in (D, H, H))
            Wx, Wh, b = (p.copy() for p in cell.params)
            expected = cell.forward(x, h_prev, c_prev)
            got = f(x, h_prev, c_prev, Wx, Wh, b)
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise ExerciseFailed("return a pair (h, c)")
            h, c = (np.asarray(v, float) for v in got)
            if h.shape == expected[0].shape and not np.allclose(h, expected[0]):
                for order in itertools.permutations(ORDER):
                    if order != ORDER and np.allclose(h, _reference(x, h_prev, c_prev, Wx, Wh, b, order)[0]):
                        raise ExerciseFailed(f"your gates read the blocks in the order {','.join(order)}; "
                                             "PyTorch's order is i, f, g, o (columns 0:H, H:2H, 2H:3H, 3H:4H)")
                if np.allclose(c, expected[1]):
                    raise ExerciseFailed("c is right but h is not: h = o * tanh(c), with the NEW c")
            expect_close(c, expected[1], f"c (batch {B}, input {D}, hidden {H})")
            expect_close(h, expected[0], f"h (batch {B}, input {D}, hidden {H})")
        return run

    return run_checks("LSTM step", candidate, [check(0, 2, 3, 4), check(1, 1, 1, 1), check(2, 5, 6, 3)])
