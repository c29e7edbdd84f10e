"""Checkers for lesson 03 (LSTM gates): the LSTM step, its cell path and its backward pass, the
GRU step and its backward pass, and the forget gate's starting bias."""
from __future__ import annotations

import functools
import itertools
import textwrap

import numpy as np
import torch

from helpers.exercises import ExperimentExercise, FunctionExercise, Mistake, outputs_match
from helpers.exercises.expect import expect_close, expect_gradients, expect_tuple
from helpers.lib.gradcheck import numerical_gradient
from helpers.lib.recurrent import gru_step, gru_step_backward, lstm_step, lstm_step_backward
from helpers.lib.recurrent_tasks import train_long_range

# the course's other LSTMs and GRUs: the NumPy loops over time call the (refused) step; the
# shipped models and lesson 04's LSTMLM run PyTorch's
LSTM_COURSE = (torch.nn.LSTM, torch.nn.LSTMCell)
GRU_COURSE = (torch.nn.GRU, torch.nn.GRUCell)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _against_cell(kind: str, seed: int, B: int, D: int, H: int, backward: bool = False):
    """A check against ``torch.nn.LSTMCell`` or ``GRUCell`` holding the same weights: the step's
    outputs and its cache, or (``backward``) every gradient of sum(h dh) (+ sum(c dc))."""
    def check(f):
        rng, lstm = np.random.default_rng(seed), kind == "lstm"
        G, scale = (4 if lstm else 3), (0.7 if backward else 1.5)
        x, h, c, dh, dc = (rng.standard_normal((B, n)) for n in (D, H, H, H, H))
        Wx, Wh = rng.standard_normal((D, G * H)) * scale, rng.standard_normal((H, G * H)) * scale
        b, b_hn = rng.standard_normal(G * H) * scale, rng.standard_normal(H) * scale
        cell = (torch.nn.LSTMCell if lstm else torch.nn.GRUCell)(D, H).double()
        with torch.no_grad():
            b_hh = np.zeros_like(b) if lstm else np.r_[np.zeros(2 * H), b_hn]
            for p, w in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh),
                            (Wx.T, Wh.T, b, b_hh)):
                p.copy_(torch.as_tensor(w))
        xt, ht, ct = (torch.tensor(a, requires_grad=True) for a in (x, h, c))
        out = cell(xt, (ht, ct)) if lstm else (cell(xt, ht),)
        course = lstm_step(x, h, c, Wx, Wh, b) if lstm else gru_step(x, h, Wx, Wh, b, b_hn)
        what = f"batch {B}, input {D}, hidden {H}; torch.nn.{type(cell).__name__}"
        if not backward:
            got = f(x, h, c, Wx, Wh, b) if lstm else f(x, h, Wx, Wh, b, b_hn)
            expect_tuple(got, ("h", "c", "cache") if lstm else ("h", "cache"))
            for name, mine, ref in zip("hc", got, out):
                expect_close(mine, ref.detach().numpy(), f"{name} ({what})")
            names = LSTM_CACHE if lstm else GRU_CACHE
            expect_tuple(got[-1], names)
            for name, mine, ref in zip(names, got[-1], course[-1]):
                expect_close(mine, ref, f"cache entry {name} ({what})")
            return
        sum((o * torch.tensor(d)).sum() for o, d in zip(out, (dh, dc))).backward()
        got = f(dh, dc, course[-1], Wx, Wh) if lstm else f(dh, course[-1], Wx, Wh)
        expected = [xt.grad, ht.grad, ct.grad] if lstm else [xt.grad, ht.grad]
        expected += [cell.weight_ih.grad.T, cell.weight_hh.grad.T, cell.bias_ih.grad]
        if not lstm:
            expected.append(cell.bias_hh.grad[2 * H:])                       # b_hn
        names = LSTM_GRADS if lstm else GRU_GRADS
        expect_tuple(got, names)
        expect_gradients(got, [e.numpy() for e in expected], [f"{n} ({what})" for n in names],
                         "autograd")
    return check


# ---------------------------------------------------------------- warm-up: one LSTM step
ORDER = ("i", "f", "g", "o")
LSTM_CACHE = ("x", "h_prev", "c_prev", "i", "f", "g", "o", "c")


def _lstm_step(x, h_prev, c_prev, Wx, Wh, b, order=ORDER, candidate=np.tanh, new_c=True):
    """One LSTM step reading the gate blocks in ``order``; the keywords switch on mistakes."""
    H = h_prev.shape[1]
    a = x @ Wx + h_prev @ Wh + b
    blk = {name: a[:, k * H:(k + 1) * H] for k, name in enumerate(order)}
    i, f, g, o = _sigmoid(blk["i"]), _sigmoid(blk["f"]), candidate(blk["g"]), _sigmoid(blk["o"])
    c = f * c_prev + i * g
    return o * np.tanh(c if new_c else c_prev), c, (x, h_prev, c_prev, i, f, g, o, c)


def _wrong_order(out, *args):
    return any(outputs_match(tuple(out[:2]), _lstm_step(*args, order=order)[:2])
               for order in itertools.permutations(ORDER) if order != ORDER)


check_lstm_step = FunctionExercise(
    "LSTM step", [_against_cell("lstm", 0, 2, 3, 4), _against_cell("lstm", 1, 1, 1, 1),
                  _against_cell("lstm", 2, 5, 6, 3)],
    reference=lstm_step, step="warm-up", forbidden=LSTM_COURSE,
    mistakes=[
        Mistake("gate_order", "PyTorch stacks the gate blocks of Wx, Wh and b as i, f, g, o: "
                "columns 0:H, H:2H, 2H:3H, 3H:4H (other books use f, g, i, o or i, g, f, o).",
                when=_wrong_order,
                example=functools.partial(_lstm_step, order=("f", "g", "i", "o"))),
        Mistake("old_c_in_h", "h = o * tanh(c) with the NEW cell state c, not c_prev.",
                like=functools.partial(_lstm_step, new_c=False)),
        Mistake("sigmoid_candidate", "the candidate g is a tanh (values in -1..1, so the cell can "
                "also decrease); only the gates i, f, o are sigmoids.",
                like=functools.partial(_lstm_step, candidate=_sigmoid)),
    ])


# ---------------------------------------------------------------- warm-up: the cell path
def cell_jacobian(x, h_prev, c_prev, Wx, Wh, b, block: int = 1, fn=_sigmoid):
    """dC_t/dC_(t-1) of one LSTM step for one sequence (vectors): diag(f_t) (lesson 03 §2).
    (``block`` and ``fn`` pick another gate or none: the checker's typical mistakes.)"""
    s = slice(block * len(h_prev), (block + 1) * len(h_prev))
    return np.diag(fn(x @ Wx[:, s] + h_prev @ Wh[:, s] + b[s]))


def _cell_jacobian_case(seed, D, H):
    def check(f):
        rng = np.random.default_rng(seed)
        x, h, c = rng.standard_normal(D), rng.standard_normal(H), rng.standard_normal(H)
        Wx, Wh, b = (rng.standard_normal(s) * 1.5 for s in ((D, 4 * H), (H, 4 * H), 4 * H))
        got = f(x.copy(), h.copy(), c.copy(), Wx.copy(), Wh.copy(), b.copy())
        new_c = lambda i: lstm_step(x[None], h[None], c[None], Wx, Wh, b)[1][0, i]  # noqa: E731
        expected = np.stack([numerical_gradient(functools.partial(new_c, i), c) for i in range(H)])
        expect_close(got, expected, f"dC_t/dC_(t-1), hidden size {H} (row i: the derivatives of "
                     "C_t[i]; finite differences)", rtol=1e-5, atol=1e-7)
    return check


check_cell_jacobian = FunctionExercise(
    "the cell path's Jacobian", [_cell_jacobian_case(0, 3, 4), _cell_jacobian_case(1, 2, 1),
                                 _cell_jacobian_case(2, 2, 5)],
    reference=cell_jacobian, step="warm-up", forbidden=(lstm_step, *LSTM_COURSE),
    mistakes=[
        Mistake("input_gate", "C_t = f * C_(t-1) + i * g: C_(t-1) is multiplied by the forget "
                "gate, block H:2H of the pre-activations, not the input gate (block 0:H).",
                like=functools.partial(cell_jacobian, block=0)),
        Mistake("pre_activation", "the forget gate is the sigmoid of its pre-activation: f = "
                "sigmoid(x Wx_f + h Wh_f + b_f).",
                like=functools.partial(cell_jacobian, fn=lambda z: z)),
        Mistake("a_vector", "return the (H, H) matrix: C_t[i] depends on C_(t-1)[i] only, so it "
                "is np.diag(f), with zeros off the diagonal.",
                when=lambda out, *args: np.ndim(out) == 1,
                example=lambda *args: np.diag(cell_jacobian(*args))),
    ])


# ---------------------------------------------------------------- core: one LSTM step backward
LSTM_GRADS = ("dx", "dh_prev", "dc_prev", "dWx", "dWh", "db")


def _lstm_backward(dh, dc, cache, Wx, Wh, mistake=None):
    """The backward pass of one LSTM step, and its typical mistakes (``mistake``)."""
    x, h_prev, c_prev, i, f, g, o, c = cache
    tc = np.tanh(c)
    at = c_prev if mistake == "tanh_of_c_prev" else c
    dc = dc if mistake == "no_dh_into_dc" else dc + dh * o * (1 - np.tanh(at) ** 2)
    da = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
                         dh * tc * o * (1 - o)], axis=1)
    dc_prev = dc if mistake == "dc_prev_without_f" else dc * f
    return da @ Wx.T, da @ Wh.T, dc_prev, x.T @ da, h_prev.T @ da, da.sum(axis=0)


check_lstm_step_backward = FunctionExercise(
    "LSTM step backward",
    [_against_cell("lstm", 0, 2, 3, 4, True), _against_cell("lstm", 1, 1, 1, 1, True),
     _against_cell("lstm", 5, 3, 2, 2, True)],
    reference=lstm_step_backward, step="core", forbidden=(lstm_step_backward, *LSTM_COURSE),
    mistakes=[
        Mistake("no_dh_into_dc", "h = o * tanh(c) depends on the new cell state, so the gradient "
                "at c is the dc from the next step PLUS dh * o * (1 - tanh(c)**2). Add it before "
                "anything else uses dc.",
                like=functools.partial(_lstm_backward, mistake="no_dh_into_dc")),
        Mistake("tanh_of_c_prev", "the tanh in h = o * tanh(c) is taken of the NEW cell state c: "
                "its derivative is 1 - tanh(c)**2, not 1 - tanh(c_prev)**2.",
                like=functools.partial(_lstm_backward, mistake="tanh_of_c_prev")),
        Mistake("dc_prev_without_f", "c = f * c_prev + i * g, so the gradient handed to c_prev is "
                "dc * f: the cell path is multiplied by the forget gate (and by nothing else).",
                like=functools.partial(_lstm_backward, mistake="dc_prev_without_f")),
    ])


# ---------------------------------------------------------------- core: the GRU step, backward
GRU_CACHE = ("x", "h_prev", "r", "z", "n", "hn")
GRU_GRADS = ("dx", "dh_prev", "dWx", "dWh", "db", "db_hn")


def _gru_step(x, h_prev, Wx, Wh, b, b_hn, mistake=None):
    """One GRU step, and its typical mistakes (``mistake``)."""
    H = h_prev.shape[1]
    r_, z_, n_ = (slice(k * H, (k + 1) * H) for k in range(3))
    ax, ah = x @ Wx + b, h_prev @ Wh
    r, z, hn = _sigmoid(ax[:, r_] + ah[:, r_]), _sigmoid(ax[:, z_] + ah[:, z_]), ah[:, n_] + b_hn
    inner = {"reset_before_matrix": (r * h_prev) @ Wh[:, n_] + b_hn,
             "b_hn_outside": r * ah[:, n_] + b_hn}.get(mistake, r * hn)
    n = np.tanh(ax[:, n_] + inner)
    h = z * n + (1 - z) * h_prev if mistake == "z_swapped" else (1 - z) * n + z * h_prev
    return h, (x, h_prev, r, z, n, hn)


def _gru_backward(dh, cache, Wx, Wh, mistake=None):
    """The backward pass of one GRU step, and its typical mistakes (``mistake``)."""
    x, h_prev, r, z, n, hn = cache
    dan = dh * (1 - z) * (1 - n * n)
    dar = dan * hn * r * (1 - r)
    daz = dh * ((n - h_prev) if mistake == "dz_sign" else (h_prev - n)) * z * (1 - z)
    dax = np.concatenate([dar, daz, dan], axis=1)
    dah = np.concatenate([dar, daz, dan if mistake == "no_r_on_hn" else dan * r], axis=1)
    direct = 0 if mistake == "no_direct_path" else dh * z
    return (dax @ Wx.T, direct + dah @ Wh.T, x.T @ dax, h_prev.T @ dah, dax.sum(axis=0),
            dah[:, 2 * r.shape[1]:].sum(axis=0))


check_gru_step = FunctionExercise(
    "GRU step", [_against_cell("gru", 0, 2, 3, 4), _against_cell("gru", 1, 1, 1, 1),
                 _against_cell("gru", 2, 4, 2, 3)],
    reference=gru_step, step="core", forbidden=GRU_COURSE,
    mistakes=[
        Mistake("z_swapped", "h = (1 - z) * n + z * h_prev: in PyTorch's convention an update "
                "gate near 1 keeps the old state.",
                like=functools.partial(_gru_step, mistake="z_swapped")),
        Mistake("reset_before_matrix", "PyTorch applies the reset gate after the matrix: n = "
                "tanh(x Wx_n + b_n + r * (h_prev Wh_n + b_hn)), not (r * h_prev) Wh_n.",
                like=functools.partial(_gru_step, mistake="reset_before_matrix")),
        Mistake("b_hn_outside", "b_hn sits inside the reset gate: r * (h_prev Wh_n + b_hn), so "
                "the cache's hn includes it.",
                like=functools.partial(_gru_step, mistake="b_hn_outside")),
    ])

check_gru_step_backward = FunctionExercise(
    "GRU step backward",
    [_against_cell("gru", 0, 2, 3, 4, True), _against_cell("gru", 1, 1, 1, 1, True),
     _against_cell("gru", 5, 3, 2, 2, True)],
    reference=gru_step_backward, step="core", forbidden=(gru_step_backward, *GRU_COURSE),
    mistakes=[
        Mistake("no_direct_path", "h = (1 - z) * n + z * h_prev reaches h_prev directly too: "
                "dh_prev is dh * z plus what comes back through the gates and the candidate.",
                like=functools.partial(_gru_backward, mistake="no_direct_path")),
        Mistake("no_r_on_hn", "the candidate reads r * (h_prev Wh_n + b_hn): the gradient "
                "reaching h_prev Wh_n (and b_hn) is dan * r.",
                like=functools.partial(_gru_backward, mistake="no_r_on_hn")),
        Mistake("dz_sign", "dh/dz = h_prev - n (z weighs the old state), so daz = dh * (h_prev - "
                "n) * z * (1 - z).", like=functools.partial(_gru_backward, mistake="dz_sign")),
    ])


# ---------------------------------------------------------------- experiment: the forget-gate bias
@functools.lru_cache(maxsize=1)
def smallest_forget_bias() -> float:
    """The smallest bias of 0, 1, 2, 3, 4 with which the LSTM reaches 0.9 accuracy on the
    long-range task at distance 30 (300 steps, hidden 32), measured here (it takes no setting)."""
    return next(fb for fb in (0.0, 1.0, 2.0, 3.0, 4.0)
                if train_long_range("lstm", 30, forget_bias=fb) >= 0.9)


check_forget_bias = ExperimentExercise(
    "the smallest forget-gate bias with which the LSTM remembers the cue over 30 distractors",
    smallest_forget_bias, atol=0.01,
    explanation=textwrap.fill(
        "The cell path multiplies what it carries by f_t at every step. With bias 0 the forget "
        "gates start near sigma(0) = 0.5, and after 30 steps the cue and its gradient are scaled "
        "by about 0.5**30 = 1e-9: nothing reaches the loss to teach the gates to stay open. Bias "
        "1 starts them at 0.73 (0.73**30 = 8e-5), still too little here; bias 2 at 0.88 "
        "(0.88**30 = 0.02): enough gradient survives for training to find the cue and open the "
        "gates further. Jozefowicz et al. (2015) recommend a positive forget bias for this "
        "reason.", 96),
    mistakes=[
        Mistake("default_init", "0 is PyTorch's default: the forget gates start at sigma(0) = "
                "0.5. Train with it: at distance 30 the LSTM is at chance like the RNN.", like=0.0),
        Mistake("the_lesson_s_value", "3 is the bias the lesson's run used, and it works; the "
                "question asks whether a smaller one works too: try the values below it.",
                like=3.0),
        Mistake("largest", "every bias from the answer up works; the question asks for the "
                "smallest one.", like=4.0),
    ])

EXERCISES = [check_lstm_step, check_cell_jacobian, check_lstm_step_backward, check_gru_step,
             check_gru_step_backward, check_forget_bias]
