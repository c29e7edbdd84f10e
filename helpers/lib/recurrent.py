"""NumPy recurrent layers: RNN, LSTM and GRU cells and their time-unrolled versions.

All follow the course layer protocol (``params``, ``grads`` filled in place by
``backward``, forward caches what backward needs). Weight layout, shared by every class:

- ``Wx`` (D, G*H): input -> gates,  ``Wh`` (H, G*H): previous hidden -> gates,
  ``b`` (G*H,): one bias per gate unit. G = 1 (RNN), 4 (LSTM), 3 (GRU).
- Gate blocks are in PyTorch's order, so a ``torch.nn`` module's weights copy in as
  ``Wx = weight_ih_l0.T``, ``Wh = weight_hh_l0.T``, ``b = bias_ih_l0 + bias_hh_l0``
  (see :func:`copy_from_torch`): LSTM ``i, f, g, o``; GRU ``r, z, n``.
- PyTorch keeps two bias vectors where one suffices (their sum is all that matters),
  except in the GRU's candidate ``n = tanh(x W_in + b_in + r * (h W_hn + b_hn))``, where
  ``b_hn`` sits inside the reset gate; the GRU therefore has the extra parameter ``bhn``.

Shapes: x (B, D) for a cell, xs (B, T, D) for a time layer (batch first, like
``batch_first=True``); hidden states (B, H). Arrays are float64 by default (gradient
checks need it); pass ``dtype=np.float32`` for speed.
"""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import check_finite
from helpers.lib.layers import Layer

GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def fast_sigmoid(z: np.ndarray) -> np.ndarray:
    """sigmoid(z) = (1 + tanh(z/2)) / 2: exact, never overflows, and one ufunc call. Taught in lesson 02, section 3."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _init(kind: str, d_in: int, hidden: int, rng: np.random.Generator, dtype) -> list[np.ndarray]:
    """PyTorch's default: every weight and bias uniform in [-1/sqrt(H), 1/sqrt(H)]."""
    if d_in < 1 or hidden < 1:
        raise ValueError(f"input size and hidden size must be positive, got {d_in} and {hidden}")
    G, k = GATES[kind], 1.0 / np.sqrt(hidden)
    shapes = [(d_in, G * hidden), (hidden, G * hidden), (G * hidden,)] + ([(hidden,)] if kind == "gru" else [])
    return [rng.uniform(-k, k, s).astype(dtype) for s in shapes]


def _check_input(name: str, x: np.ndarray, d_in: int, ndim: int) -> None:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} expects a NumPy array as input, got {type(x).__name__}")
    what = "(batch, input)" if ndim == 2 else "(batch, time, input)"
    if x.ndim != ndim:
        raise ValueError(f"{name} expects a {ndim}-D input {what}, got {x.ndim}-D shape {x.shape}")
    if x.shape[-1] != d_in:
        raise ValueError(f"{name}: input feature size (dimension {ndim - 1}) is {x.shape[-1]}, "
                         f"expected {d_in}; input shape {x.shape}")
    if ndim == 3 and x.shape[1] == 0:
        raise ValueError(f"{name}: the sequence is empty (time dimension 1 has length 0)")
    check_finite(x, "x" if ndim == 2 else "xs", f"{name}.forward")


def _check_state(name: str, s: np.ndarray, batch: int, hidden: int) -> None:
    if not isinstance(s, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array (batch, hidden), got {type(s).__name__}")
    if s.ndim != 2:
        raise ValueError(f"{name} must be 2-D (batch, hidden), got shape {s.shape}")
    if s.shape[0] != batch:
        raise ValueError(f"{name}: batch size (dimension 0) is {s.shape[0]}, but the input has batch {batch}")
    if s.shape[1] != hidden:
        raise ValueError(f"{name}: hidden size (dimension 1) is {s.shape[1]}, expected {hidden}")
    check_finite(s, name, "the recurrent layer (its state)")


class _Recurrent(Layer):
    kind = "rnn"

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator, dtype=np.float64):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.params = _init(self.kind, input_size, hidden_size, rng, dtype)
        self.grads = [np.zeros_like(p) for p in self.params]

    def n_params(self) -> int:
        """Number of scalar parameters."""
        return sum(p.size for p in self.params)


# ---------------------------------------------------------------- cells (one time step)
class RNNCell(_Recurrent):
    """h = tanh(x Wx + h_prev Wh + b). Taught in lesson 02, section 3.

    forward(x (B, D), h_prev (B, H)) -> h (B, H);
    backward(dh (B, H)) -> (dx (B, D), dh_prev (B, H)), and *adds* to ``grads`` (a cell is
    applied once per time step with the same weights, so its gradients accumulate; call
    :meth:`zero_grad` before a new sequence).
    """

    kind = "rnn"

    def zero_grad(self):
        for g in self.grads:
            g[...] = 0

    def forward(self, x, h_prev):
        Wx, Wh, b = self.params
        _check_input("RNNCell", x, self.input_size, 2)
        _check_state("h_prev", h_prev, x.shape[0], self.hidden_size)
        h = np.tanh(x @ Wx + h_prev @ Wh + b)
        self.cache = (x, h_prev, h)
        return self.remember(h)

    def backward(self, dh):
        self.check_dout(dh=dh)
        Wx, Wh, _ = self.params
        x, h_prev, h = self.cache
        da = dh * (1 - h * h)                       # tanh' = 1 - tanh^2
        self.grads[0] += x.T @ da
        self.grads[1] += h_prev.T @ da
        self.grads[2] += da.sum(axis=0)
        return da @ Wx.T, da @ Wh.T


class LSTMCell(RNNCell):
    """One LSTM step, forward and backward. Taught in lesson 03, section 2.

    One LSTM step, gates in PyTorch's order i, f, g (candidate C~), o:

    [i f g o] = [s(.) s(.) tanh(.) s(.)] of (x Wx + h_prev Wh + b)
    c = f * c_prev + i * g,   h = o * tanh(c)

    forward(x (B, D), h_prev (B, H), c_prev (B, H)) -> (h, c);
    backward(dh, dc) -> (dx, dh_prev, dc_prev); gradients accumulate as in :class:`RNNCell`.
    """

    kind = "lstm"

    def forward(self, x, h_prev, c_prev):
        Wx, Wh, b = self.params
        H = self.hidden_size
        _check_input("LSTMCell", x, self.input_size, 2)
        _check_state("h_prev", h_prev, x.shape[0], H)
        _check_state("c_prev", c_prev, x.shape[0], H)
        a = x @ Wx + h_prev @ Wh + b
        i, f = fast_sigmoid(a[:, :H]), fast_sigmoid(a[:, H:2 * H])
        g, o = np.tanh(a[:, 2 * H:3 * H]), fast_sigmoid(a[:, 3 * H:])
        c = f * c_prev + i * g
        tc = np.tanh(c)
        h = o * tc
        self.cache = (x, h_prev, c_prev, i, f, g, o, tc)
        return self.remember((h, c))

    def backward(self, dh, dc):
        self.check_dout(dh=dh, dc=dc)
        Wx, Wh, _ = self.params
        x, h_prev, c_prev, i, f, g, o, tc = self.cache
        dc = dc + dh * o * (1 - tc * tc)
        da = np.concatenate([dc * g * i * (1 - i),          # input gate
                             dc * c_prev * f * (1 - f),     # forget gate
                             dc * i * (1 - g * g),          # candidate
                             dh * tc * o * (1 - o)], axis=1)  # output gate
        self.grads[0] += x.T @ da
        self.grads[1] += h_prev.T @ da
        self.grads[2] += da.sum(axis=0)
        return da @ Wx.T, da @ Wh.T, dc * f


class GRUCell(RNNCell):
    """One GRU step, forward and backward. Taught in lesson 03, section 8.

    One GRU step (PyTorch's formulation, gates r, z, n):

    r = s(x Wx_r + h Wh_r + b_r),  z = s(x Wx_z + h Wh_z + b_z)
    n = tanh(x Wx_n + b_n + r * (h Wh_n + bhn)),   h' = (1 - z) * n + z * h

    params [Wx (D,3H), Wh (H,3H), b (3H,), bhn (H,)].
    forward(x (B, D), h_prev (B, H)) -> h (B, H); backward(dh) -> (dx, dh_prev).
    """

    kind = "gru"

    def forward(self, x, h_prev):
        Wx, Wh, b, bhn = self.params
        H = self.hidden_size
        _check_input("GRUCell", x, self.input_size, 2)
        _check_state("h_prev", h_prev, x.shape[0], H)
        gx, gh = x @ Wx + b, h_prev @ Wh
        gh[:, 2 * H:] += bhn
        r = fast_sigmoid(gx[:, :H] + gh[:, :H])
        z = fast_sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
        n = np.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
        self.cache = (x, h_prev, r, z, n, gh[:, 2 * H:])
        return self.remember(n + z * (h_prev - n))

    def backward(self, dh):
        self.check_dout(dh=dh)
        Wx, Wh, _, _ = self.params
        x, h_prev, r, z, n, ghn = self.cache
        dan = dh * (1 - z) * (1 - n * n)
        dar = dan * ghn * r * (1 - r)
        daz = dh * (h_prev - n) * z * (1 - z)
        dgx = np.concatenate([dar, daz, dan], axis=1)
        dgh = np.concatenate([dar, daz, dan * r], axis=1)
        self.grads[0] += x.T @ dgx
        self.grads[1] += h_prev.T @ dgh
        self.grads[2] += dgx.sum(axis=0)
        self.grads[3] += dgh[:, 2 * self.hidden_size:].sum(axis=0)
        return dgx @ Wx.T, dh * z + dgh @ Wh.T


# ---------------------------------------------------------------- time-unrolled layers
class TimeRNN(_Recurrent):
    """A simple RNN unrolled over T steps: h_t = tanh(x_t Wx + h_{t-1} Wh + b). Taught in lesson 02, section 3.

    forward(xs (B, T, D), h0 (B, H) or None) -> hs (B, T, H), every hidden state.
    backward(dhs (B, T, H)) -> dxs (B, T, D) (backprop through time); fills ``grads``
    (overwrites: one call covers the whole sequence), sets ``dh0`` (B, H) and ``dh_all``
    (B, T, H): dL/dh_t of every step, through all later steps (for gradient-flow plots).

    ``stateful=True`` is for truncated BPTT: when ``h0`` is not given, the last hidden
    state of the previous call is the initial state of this one (the sequence goes on),
    but no gradient flows back into the previous call. :meth:`reset_state` forgets it.

    For speed the input projection x_t Wx of all T steps is one matrix product, and so are
    the weight gradients; only the h_{t-1} Wh products must run step by step.
    """

    kind = "rnn"
    name = "TimeRNN"

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator,
                 stateful: bool = False, dtype=np.float64):
        super().__init__(input_size, hidden_size, rng, dtype)
        self.stateful = stateful
        self.state = None  # (h,) or (h, c) carried between calls when stateful

    def reset_state(self):
        """Start the next sequence from zeros."""
        self.state = None

    def _initial(self, xs, given):
        B, H = xs.shape[0], self.hidden_size
        names = ("h0", "c0")[:len(given)]
        if given[0] is None and self.stateful and self.state is not None:
            given = self.state
            names = tuple(n + " (state carried from the previous batch)" for n in names)
        out = []
        for name, s in zip(names, given, strict=True):
            if s is None:
                s = np.zeros((B, H), self.params[0].dtype)
            _check_state(name, s, B, H)
            out.append(s)
        return out

    def forward(self, xs, h0=None):
        Wx, Wh, b = self.params
        _check_input(self.name, xs, self.input_size, 3)
        (h,) = self._initial(xs, (h0,))
        B, T, _ = xs.shape
        ax = (xs.reshape(B * T, -1) @ Wx + b).reshape(B, T, -1)
        hs = np.empty((T + 1, B, self.hidden_size), ax.dtype)   # time-major: hs[0] = h0
        hs[0] = h
        for t in range(T):
            hs[t + 1] = np.tanh(ax[:, t] + hs[t] @ Wh)
        self.cache = (xs, hs)
        if self.stateful:
            self.state = (hs[-1].copy(),)
        return self.remember(hs[1:].transpose(1, 0, 2))

    def backward(self, dhs):
        self.check_dout(dhs=dhs)
        Wx, Wh, _ = self.params
        xs, hs = self.cache
        B, T, D = xs.shape
        dhs = np.asarray(dhs).transpose(1, 0, 2)   # (T, B, H)
        da = np.empty_like(hs[1:])
        dh = np.zeros_like(hs[0])
        dh_all = np.empty_like(da)
        for t in range(T - 1, -1, -1):
            dh_all[t] = dhs[t] + dh
            da[t] = dh_all[t] * (1 - hs[t + 1] ** 2)
            dh = da[t] @ Wh.T
        self.dh0, self.dh_all = dh, dh_all.transpose(1, 0, 2)
        self._weight_grads(xs, hs[:-1], da)
        return (da.reshape(T * B, -1) @ Wx.T).reshape(T, B, D).transpose(1, 0, 2)

    def _weight_grads(self, xs, h_prev, dax, dah=None):
        """Weight gradients of all steps at once. xs (B,T,D); h_prev, dax, dah time-major."""
        T, B, _ = dax.shape
        dah = dax if dah is None else dah
        x_tm = xs.transpose(1, 0, 2).reshape(T * B, -1)
        self.grads[0][...] = x_tm.T @ dax.reshape(T * B, -1)
        self.grads[1][...] = h_prev.reshape(T * B, -1).T @ dah.reshape(T * B, -1)
        self.grads[2][...] = dax.sum(axis=(0, 1))


class TimeLSTM(TimeRNN):
    """An LSTM unrolled over T steps (gates i, f, g, o as in :class:`LSTMCell`). Taught in lesson 03, section 2.

    forward(xs (B, T, D), h0=None, c0=None) -> hs (B, T, H); the last cell state is ``c_T``.
    backward(dhs (B, T, H), dc_T=None) -> dxs (B, T, D); ``dc_T`` (B, H) is dL/dc_T from beyond
    the last step (None: 0); fills ``grads``, sets ``dh0`` and ``dc0``.
    ``gates`` (after forward) holds the activations (B, T, 4H), for plots.
    ``stateful`` as in :class:`TimeRNN` (carries both h and c).
    """

    kind = "lstm"
    name = "TimeLSTM"

    def forward(self, xs, h0=None, c0=None):
        Wx, Wh, b = self.params
        H = self.hidden_size
        _check_input(self.name, xs, self.input_size, 3)
        if (h0 is None) != (c0 is None):
            raise ValueError("give both h0 and c0, or neither")
        h, c = self._initial(xs, (h0, c0))
        B, T, _ = xs.shape
        ax = (xs.reshape(B * T, -1) @ Wx + b).reshape(B, T, -1)
        hs = np.empty((T + 1, B, H), ax.dtype)
        cs = np.empty((T + 1, B, H), ax.dtype)
        acts = np.empty((T, B, 4 * H), ax.dtype)  # i, f, g, o after their non-linearities
        hs[0], cs[0] = h, c
        for t in range(T):
            a = ax[:, t] + hs[t] @ Wh
            acts[t] = fast_sigmoid(a)
            acts[t, :, 2 * H:3 * H] = np.tanh(a[:, 2 * H:3 * H])
            i, f, g, o = acts[t, :, :H], acts[t, :, H:2 * H], acts[t, :, 2 * H:3 * H], acts[t, :, 3 * H:]
            cs[t + 1] = f * cs[t] + i * g
            hs[t + 1] = o * np.tanh(cs[t + 1])
        self.cache = (xs, hs, cs, acts)
        self.c_T = cs[-1]
        if self.stateful:
            self.state = (hs[-1].copy(), cs[-1].copy())
        return self.remember(hs[1:].transpose(1, 0, 2))

    @property
    def gates(self) -> np.ndarray:
        return self.cache[3].transpose(1, 0, 2)

    def backward(self, dhs, dc_T=None):
        self.check_dout(dhs=dhs)
        Wx, Wh, _ = self.params
        xs, hs, cs, acts = self.cache
        H = self.hidden_size
        B, T, D = xs.shape
        dhs = np.asarray(dhs).transpose(1, 0, 2)
        da = np.empty_like(acts)
        dh = np.zeros_like(hs[0])
        if dc_T is not None and np.shape(dc_T) != cs[0].shape:
            raise ValueError(f"TimeLSTM.backward: dc_T must have shape {cs[0].shape} like the last cell state "
                             f"c_T (B, H), got {np.shape(dc_T)}")
        dc = np.zeros_like(cs[0]) if dc_T is None else np.array(dc_T, dtype=cs.dtype)
        dh_all = np.empty_like(hs[1:])
        for t in range(T - 1, -1, -1):
            i, f, g, o = acts[t, :, :H], acts[t, :, H:2 * H], acts[t, :, 2 * H:3 * H], acts[t, :, 3 * H:]
            tc = np.tanh(cs[t + 1])
            dh = dh_all[t] = dhs[t] + dh
            dc = dc + dh * o * (1 - tc * tc)
            da[t, :, :H] = dc * g * i * (1 - i)
            da[t, :, H:2 * H] = dc * cs[t] * f * (1 - f)
            da[t, :, 2 * H:3 * H] = dc * i * (1 - g * g)
            da[t, :, 3 * H:] = dh * tc * o * (1 - o)
            dc = dc * f                      # the additive path: only a gate multiplies it
            dh = da[t] @ Wh.T
        self.dh0, self.dc0, self.dh_all = dh, dc, dh_all.transpose(1, 0, 2)
        self._weight_grads(xs, hs[:-1], da)
        return (da.reshape(T * B, -1) @ Wx.T).reshape(T, B, D).transpose(1, 0, 2)


class TimeGRU(TimeRNN):
    """A GRU unrolled over T steps (gates r, z, n as in :class:`GRUCell`). Taught in lesson 03, section 8.

    forward(xs (B, T, D), h0=None) -> hs (B, T, H); backward(dhs) -> dxs; sets ``dh0``.
    params [Wx (D,3H), Wh (H,3H), b (3H,), bhn (H,)].
    """

    kind = "gru"
    name = "TimeGRU"

    def forward(self, xs, h0=None):
        Wx, Wh, b, bhn = self.params
        H = self.hidden_size
        _check_input(self.name, xs, self.input_size, 3)
        (h,) = self._initial(xs, (h0,))
        B, T, _ = xs.shape
        ax = (xs.reshape(B * T, -1) @ Wx + b).reshape(B, T, -1)
        hs = np.empty((T + 1, B, H), ax.dtype)
        rzn = np.empty((T, B, 3 * H), ax.dtype)
        ghn = np.empty((T, B, H), ax.dtype)      # h_{t-1} Wh_n + bhn, needed by backward
        hs[0] = h
        for t in range(T):
            gh = hs[t] @ Wh
            ghn[t] = gh[:, 2 * H:] + bhn
            rzn[t, :, :2 * H] = fast_sigmoid(ax[:, t, :2 * H] + gh[:, :2 * H])
            r, z = rzn[t, :, :H], rzn[t, :, H:2 * H]
            n = rzn[t, :, 2 * H:] = np.tanh(ax[:, t, 2 * H:] + r * ghn[t])
            hs[t + 1] = n + z * (hs[t] - n)
        self.cache = (xs, hs, rzn, ghn)
        if self.stateful:
            self.state = (hs[-1].copy(),)
        return self.remember(hs[1:].transpose(1, 0, 2))

    def backward(self, dhs):
        self.check_dout(dhs=dhs)
        Wx, Wh, _, _ = self.params
        xs, hs, rzn, ghn = self.cache
        H = self.hidden_size
        B, T, D = xs.shape
        dhs = np.asarray(dhs).transpose(1, 0, 2)
        dax = np.empty_like(rzn)
        dah = np.empty_like(rzn)
        dh = np.zeros_like(hs[0])
        dh_all = np.empty_like(hs[1:])
        for t in range(T - 1, -1, -1):
            r, z, n = rzn[t, :, :H], rzn[t, :, H:2 * H], rzn[t, :, 2 * H:]
            dh = dh_all[t] = dhs[t] + dh
            dan = dh * (1 - z) * (1 - n * n)
            dax[t, :, :H] = dah[t, :, :H] = dan * ghn[t] * r * (1 - r)
            dax[t, :, H:2 * H] = dah[t, :, H:2 * H] = dh * (hs[t] - n) * z * (1 - z)
            dax[t, :, 2 * H:] = dan
            dah[t, :, 2 * H:] = dan * r
            dh = dh * z + dah[t] @ Wh.T
        self.dh0, self.dh_all = dh, dh_all.transpose(1, 0, 2)
        self._weight_grads(xs, hs[:-1], dax, dah)
        self.grads[3][...] = dah[:, :, 2 * H:].sum(axis=(0, 1))
        return (dax.reshape(T * B, -1) @ Wx.T).reshape(T, B, D).transpose(1, 0, 2)


# ---------------------------------------------------------------- PyTorch interop
def copy_from_torch(layer: _Recurrent, module) -> _Recurrent:
    """Copy a PyTorch recurrent layer's weights into the NumPy layer. Taught in lesson 02, section 3.

    Copy a one-layer ``torch.nn.RNN``/``LSTM``/``GRU`` (or ``RNNCell``/``LSTMCell``/
    ``GRUCell``) into ``layer``'s params, in place. Returns ``layer``.

    The two PyTorch biases are summed; for the GRU, ``b_hn`` (inside the reset gate) goes to
    ``bhn`` and only the r and z parts of ``bias_hh`` are folded into ``b``. A module made with
    ``bias=False`` has no biases: the layer's are set to 0.
    """
    sfx = "_l0" if hasattr(module, "num_layers") else ""
    expected = {"rnn": "RNN", "lstm": "LSTM", "gru": "GRU"}[layer.kind]
    if expected not in type(module).__name__:
        raise TypeError(f"cannot copy a {type(module).__name__} into a {type(layer).__name__}")
    if getattr(module, "nonlinearity", "tanh") != "tanh":
        raise ValueError("only tanh RNNs match the NumPy layer")
    if getattr(module, "num_layers", 1) != 1 or getattr(module, "bidirectional", False):
        raise ValueError("copy_from_torch handles one unidirectional layer")
    # .detach(): the copies carry no autograd history (no torch import needed here)
    w_ih = getattr(module, "weight_ih" + sfx).detach().cpu().double().numpy()
    w_hh = getattr(module, "weight_hh" + sfx).detach().cpu().double().numpy()
    G = GATES[layer.kind] * layer.hidden_size
    if getattr(module, "bias", True):
        b_ih = getattr(module, "bias_ih" + sfx).detach().cpu().double().numpy()
        b_hh = getattr(module, "bias_hh" + sfx).detach().cpu().double().numpy()
    else:                                  # made with bias=False: no biases, i.e. biases of 0
        b_ih = b_hh = np.zeros(G)
    if w_ih.shape != (layer.params[0].shape[1], layer.params[0].shape[0]):
        raise ValueError(f"PyTorch weight_ih has shape {w_ih.shape}, the layer needs "
                         f"{layer.params[0].shape[::-1]} (input {layer.input_size}, hidden {layer.hidden_size})")
    dt = layer.params[0].dtype
    layer.params[0][...] = w_ih.T.astype(dt)
    layer.params[1][...] = w_hh.T.astype(dt)
    if layer.kind == "gru":
        H = layer.hidden_size
        layer.params[2][...] = (b_ih + np.concatenate([b_hh[:2 * H], np.zeros(H)])).astype(dt)
        layer.params[3][...] = b_hh[2 * H:].astype(dt)
    else:
        layer.params[2][...] = (b_ih + b_hh).astype(dt)
    return layer


def lstm_param_count(input_size: int, hidden_size: int) -> int:
    """4 (H + I) H + 4 H: four gate blocks, each an (H+I) -> H affine map with one bias. Taught in lesson 03, section 3."""
    return 4 * (hidden_size + input_size) * hidden_size + 4 * hidden_size


def gru_param_count(input_size: int, hidden_size: int) -> int:
    """3 (H + I) H + 3 H + H: three gate blocks plus the candidate's second bias b_hn. Taught in lesson 03, section 8."""
    return 3 * (hidden_size + input_size) * hidden_size + 4 * hidden_size


def rnn_param_count(input_size: int, hidden_size: int) -> int:
    """(H + I) H + H for h = tanh(x Wx + h Wh + b). Taught in lesson 02, section 1."""
    return (hidden_size + input_size) * hidden_size + hidden_size
