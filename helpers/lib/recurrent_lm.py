"""NumPy recurrent language models, built and trained live in lessons 02 (tanh RNN) and 03 (LSTM).

The model is four pieces, each a few lines of NumPy with its hand-written backward pass::

    ids (B, T) -> embedding E[ids] (B, T, D) -> recurrence h_1..h_T (B, T, H)
               -> logits h_t W_y + b_y (B, T, V) -> softmax cross-entropy against the next ids

The recurrence is given as plain functions, so a lesson trains the model with the student's
own functions once they pass their checkers (``helpers.exercises.your_or_reference``):

* the tanh RNN: :func:`rnn_forward` and the backward pass through time :func:`rnn_bptt`;
* the LSTM: one step :func:`lstm_step` and its backward :func:`lstm_step_backward`, which
  :func:`lstm_forward` and :func:`lstm_bptt` loop over time.

Row-vector convention throughout (one row per sequence of the batch):
``h_t = tanh(x_t W_x + h_{t-1} W_h + b)``; the LSTM's four gate blocks sit side by side in
PyTorch's order i, f, g, o, so the weights of ``torch.nn.RNN``/``LSTM`` copy in transposed
(:meth:`NumpyLM.from_torch`). Arrays are float32 by default (training speed); pass
``dtype=np.float64`` for gradient checks.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from helpers.lib.batching import bptt_batches
from helpers.lib.checks import check_ids
from helpers.lib.layers import log_softmax
from helpers.lib.optim import adam_update as optim_adam_update
from helpers.lib.optim import clip_global_norm

KINDS = {"rnn": 1, "lstm": 4}     # gate blocks per kind


# ---------------------------------------------------------------- the tanh RNN (lesson 02)
def rnn_forward(xs, h0, Wx, Wh, b):
    """The tanh RNN over a whole sequence. Taught in lesson 02, section 3.

    xs (B, T, D) inputs, h0 (B, H), Wx (D, H), Wh (H, H), b (H,) -> hs (B, T+1, H), with
    hs[:, 0] = h0 and hs[:, t+1] = tanh(xs[:, t] Wx + hs[:, t] Wh + b)."""
    B, T, _ = xs.shape
    ax = xs @ Wx + b                      # the input's share of every step at once (it needs no h)
    hs = np.empty((B, T + 1, Wh.shape[0]), dtype=ax.dtype)
    hs[:, 0] = h0
    for t in range(T):
        hs[:, t + 1] = np.tanh(ax[:, t] + hs[:, t] @ Wh)
    return hs


def rnn_bptt(dhs, xs, hs, Wx, Wh):
    """Backpropagation through time for :func:`rnn_forward`. Taught in lesson 02, section 3.

    dhs (B, T, H): dL/dh_t arriving from the outputs; xs, hs as in :func:`rnn_forward`.
    Returns (dxs (B, T, D), dh0 (B, H), dWx, dWh, db) for a loss summed over the batch."""
    T = xs.shape[1]
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0], dtype=Wh.dtype)
    dxs, dh_next = np.zeros_like(xs), np.zeros_like(hs[:, 0])
    for t in reversed(range(T)):
        da = (dhs[:, t] + dh_next) * (1 - hs[:, t + 1] ** 2)   # from y_t and from step t+1, through tanh
        dWx += xs[:, t].T @ da                                  # shared weights: every step adds its share
        dWh += hs[:, t].T @ da
        db += da.sum(axis=0)
        dxs[:, t] = da @ Wx.T
        dh_next = da @ Wh.T                                     # handed back to step t-1
    return dxs, dh_next, dWx, dWh, db


# ---------------------------------------------------------------- the LSTM (lesson 03)
def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))       # = 1 / (1 + e^-z), without overflow


def lstm_step(x, h_prev, c_prev, Wx, Wh, b):
    """One LSTM step. Taught in lesson 03, section 2.

    x (B, D), h_prev and c_prev (B, H), Wx (D, 4H), Wh (H, 4H), b (4H,), gate blocks i, f, g, o.
    Returns (h, c, cache): c = f * c_prev + i * g, h = o * tanh(c), and what the backward pass
    needs, cache = (x, h_prev, c_prev, i, f, g, o, c)."""
    H = h_prev.shape[1]
    a = x @ Wx + h_prev @ Wh + b
    i, f, o = _sigmoid(a[:, :H]), _sigmoid(a[:, H:2 * H]), _sigmoid(a[:, 3 * H:])
    g = np.tanh(a[:, 2 * H:3 * H])
    c = f * c_prev + i * g
    return o * np.tanh(c), c, (x, h_prev, c_prev, i, f, g, o, c)


def lstm_step_backward(dh, dc, cache, Wx, Wh):
    """The backward pass of :func:`lstm_step`. Taught in lesson 03, section 2.

    dh, dc (B, H): dL/dh_t and dL/dC_t arriving from above and from the next step; ``cache`` as
    :func:`lstm_step` returned it. Returns (dx, dh_prev, dc_prev, dWx, dWh, db), shaped like
    x, h_prev, c_prev, Wx, Wh and b."""
    x, h_prev, c_prev, i, f, g, o, c = cache
    tc = np.tanh(c)
    dc = dc + dh * o * (1 - tc * tc)                 # h = o * tanh(c) also depends on c
    da = np.concatenate([dc * g * i * (1 - i),      # input gate
                         dc * c_prev * f * (1 - f),  # forget gate
                         dc * i * (1 - g * g),       # candidate (a tanh)
                         dh * tc * o * (1 - o)],     # output gate
                        axis=1)
    return da @ Wx.T, da @ Wh.T, dc * f, x.T @ da, h_prev.T @ da, da.sum(axis=0)


def lstm_forward(xs, h0, c0, Wx, Wh, b, step: Callable = lstm_step):
    """The LSTM over a whole sequence, one ``step`` at a time. Taught in lesson 03, section 2.

    xs (B, T, D), h0 and c0 (B, H) -> (hs, cs, caches): hs and cs (B, T+1, H) with hs[:, 0] = h0
    and cs[:, 0] = c0, and the T steps' caches for :func:`lstm_bptt`."""
    B, T, _ = xs.shape
    hs = np.empty((B, T + 1, h0.shape[1]), dtype=Wh.dtype)
    cs = np.empty_like(hs)
    hs[:, 0], cs[:, 0], caches = h0, c0, []
    for t in range(T):
        hs[:, t + 1], cs[:, t + 1], cache = step(xs[:, t], hs[:, t], cs[:, t], Wx, Wh, b)
        caches.append(cache)
    return hs, cs, caches


def lstm_bptt(dhs, caches, Wx, Wh, step_backward: Callable = lstm_step_backward):
    """Backpropagation through time for :func:`lstm_forward`. Taught in lesson 03, section 2.

    dhs (B, T, H): dL/dh_t from the outputs; ``caches``: the T steps' caches. Walks the steps
    backwards, handing each step's dh_prev and dc_prev to the step before, and sums the shared
    weights' gradients. Returns (dxs (B, T, D), dh0, dc0 (B, H), dWx, dWh, db)."""
    B, T, H = dhs.shape
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[1], dtype=Wh.dtype)
    dxs = np.zeros((B, T, Wx.shape[0]), dtype=Wx.dtype)
    dh_next, dc_next = np.zeros((B, H), Wh.dtype), np.zeros((B, H), Wh.dtype)
    for t in reversed(range(T)):
        dx, dh_next, dc_next, dWx_t, dWh_t, db_t = step_backward(dhs[:, t] + dh_next, dc_next, caches[t], Wx, Wh)
        dxs[:, t] = dx
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dxs, dh_next, dc_next, dWx, dWh, db


# ---------------------------------------------------------------- the training step's pieces
def clip_gradients(grads, max_norm: float):
    """Global-norm clipping, as the training step of lesson 02 calls it. Taught in lesson 02, section 4.

    Returns (grads, norm): the gradients scaled together (in place) so that their joint L2 norm is
    at most ``max_norm``, and the norm before clipping (:func:`helpers.lib.optim.clip_global_norm`)."""
    return grads, clip_global_norm(grads, max_norm)



def adam_update(params, grads, m, v, t, lr=3e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam step on parallel lists of arrays. Taught in lesson 03, section 4.

    m, v: the running means of g and g² (lists shaped like ``params``); t: this step's number,
    from 1. theta <- theta - lr * m_hat / (sqrt(v_hat) + eps), with the bias corrections
    m_hat = m / (1 - beta1^t) and v_hat = v / (1 - beta2^t). Returns (params, m, v), here the
    same arrays, updated in place: lesson 01's :func:`helpers.lib.optim.adam_update` on each."""
    for p, g, m_i, v_i in zip(params, grads, m, v, strict=True):
        p[...], m_i[...], v_i[...] = optim_adam_update(p, g, m_i, v_i, t, lr, beta1, beta2, eps)
    return params, m, v


# ---------------------------------------------------------------- the language model
class NumpyLM:
    """Embedding -> tanh RNN or LSTM -> linear -> softmax, in NumPy. Taught in lesson 02, section 4.

    ``params`` = [E (V, D), Wx (D, G*H), Wh (H, G*H), b (G*H,), Wy (H, V), by (V,)] with G = 1
    (``kind='rnn'``) or 4 (``'lstm'``); ``grads`` alike, filled by :meth:`train_loss`.
    Initialised as PyTorch initialises ``nn.Embedding``, ``nn.RNN``/``nn.LSTM`` and ``nn.Linear``
    (E ~ N(0, 1); the rest uniform in ±1/sqrt(H)); an LSTM's forget-gate biases start at
    ``forget_bias`` when it is given. The recurrence's functions are attributes (``bptt`` for the RNN; ``step``
    and ``step_backward`` for the LSTM): replace them with your own, same signatures.

    ``forward(ids (B, T), state=None) -> logits (B, T, V)``, and ``last_state`` (the state after
    the last step: h (B, H), or (h, c)); ``loss(ids, targets)``: mean NLL in nats, forward only;
    ``train_loss(ids, targets)``: the same, and the gradients of every parameter.
    """

    NAMES = ("E", "Wx", "Wh", "b", "Wy", "by")

    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, kind: str = "rnn",
                 rng: np.random.Generator | None = None, dtype=np.float32, forget_bias: float | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
        if min(vocab_size, emb_dim, hidden) < 1:
            raise ValueError(f"vocab_size, emb_dim and hidden must be positive, got {vocab_size}, {emb_dim}, {hidden}")
        rng = np.random.default_rng(0) if rng is None else rng
        G, k = KINDS[kind], 1 / np.sqrt(hidden)
        self.kind, self.V, self.D, self.H = kind, vocab_size, emb_dim, hidden
        shapes = [(emb_dim, G * hidden), (hidden, G * hidden), (G * hidden,), (hidden, vocab_size), (vocab_size,)]
        self.params = [rng.standard_normal((vocab_size, emb_dim)).astype(dtype)]
        self.params += [rng.uniform(-k, k, s).astype(dtype) for s in shapes]
        if kind == "lstm" and forget_bias is not None:
            self.params[3][hidden:2 * hidden] = forget_bias
        self.grads = [np.zeros_like(p) for p in self.params]
        self.bptt, self.step, self.step_backward = rnn_bptt, lstm_step, lstm_step_backward
        self.last_state = None

    def n_params(self) -> int:
        """Number of scalar parameters."""
        return sum(p.size for p in self.params)

    # ------------------------------------------------------------ forward and backward
    def _zero_state(self, B: int):
        h = np.zeros((B, self.H), self.params[0].dtype)
        return h if self.kind == "rnn" else (h, h.copy())

    def _recurrence(self, xs, state):
        _, Wx, Wh, b, _, _ = self.params
        if self.kind == "rnn":
            hs = rnn_forward(xs, state, Wx, Wh, b)
            return hs, hs[:, -1], None
        hs, cs, caches = lstm_forward(xs, state[0], state[1], Wx, Wh, b, step=self.step)
        return hs, (hs[:, -1], cs[:, -1]), caches

    def forward(self, ids, state=None):
        """Logits (B, T, V) of the next token at every position of ``ids`` (B, T)."""
        ids = _check_ids(ids, self.V)
        E, _, _, _, Wy, by = self.params
        xs = E[ids]                                               # (B, T, D): the embedding rows
        hs, self.last_state, caches = self._recurrence(xs, self._zero_state(len(ids)) if state is None else state)
        self.cache = (ids, xs, hs, caches)
        return hs[:, 1:] @ Wy + by

    def loss(self, ids, targets, state=None) -> float:
        """Mean negative log-likelihood (nats per token) of ``targets`` (B, T), forward only."""
        logp = log_softmax(self.forward(ids, state))
        targets = _check_ids(targets, self.V, "targets", shape=logp.shape[:2])
        return float(-np.take_along_axis(logp, targets[..., None], axis=2).mean())

    def train_loss(self, ids, targets) -> float:
        """The mean NLL of ``targets`` given ``ids`` (both (B, T)), each row from a zero state;
        fills ``grads`` with its gradient (the hand-written backward pass of every piece)."""
        logits = self.forward(ids)
        targets = _check_ids(targets, self.V, "targets", shape=logits.shape[:2])
        ids, xs, hs, caches = self.cache
        E, Wx, Wh, b, Wy, by = self.params
        B, T, V = logits.shape
        # softmax cross-entropy: dL/dlogits = (softmax - one-hot) / (B T)
        logp = log_softmax(logits)
        loss = float(-np.take_along_axis(logp, targets[..., None], axis=2).mean())
        dlogits = np.exp(logp)
        np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], axis=2) - 1,
                          axis=2)
        dlogits /= B * T
        # output layer: logits = h_t Wy + by
        h = hs[:, 1:].reshape(B * T, -1)
        dWy, dby = h.T @ dlogits.reshape(B * T, V), dlogits.sum(axis=(0, 1))
        dhs = dlogits @ Wy.T                                      # (B, T, H)
        # the recurrence, backwards through time
        if self.kind == "rnn":
            dxs, _, dWx, dWh, db = self.bptt(dhs, xs, hs, Wx, Wh)
        else:
            dxs, _, _, dWx, dWh, db = lstm_bptt(dhs, caches, Wx, Wh, step_backward=self.step_backward)
        # the embedding: each row of E collects the gradients of the positions that read it
        dE = np.zeros_like(E)
        np.add.at(dE, ids.reshape(-1), dxs.reshape(B * T, -1))
        for g, d in zip(self.grads, (dE, dWx, dWh, db, dWy, dby), strict=True):
            g[...] = d
        return loss

    # ------------------------------------------------------------ generating text
    def sample(self, start, n: int, temperature: float = 1.0, rng: np.random.Generator | None = None,
               banned=()) -> np.ndarray:
        """``n`` tokens drawn one at a time after the ids ``start`` (1-D, at least one), each from
        softmax(logits / temperature) and fed back in; the ids in ``banned`` (e.g. ``<unk>``) are
        never drawn. Returns (n,) int64."""
        start = _check_ids(np.asarray(start)[None], self.V, "start")
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        rng = np.random.default_rng(0) if rng is None else rng
        banned = np.asarray(check_ids(np.asarray(banned).reshape(-1), self.V, "banned", "NumpyLM.sample"), np.int64)
        if banned.size and np.unique(banned).size == self.V:
            raise ValueError("NumpyLM.sample: banned holds every id of the vocabulary: nothing is left to draw")
        logits = self.forward(start)[0, -1]
        out = np.empty(n, np.int64)
        for k in range(n):
            z = logits.astype(np.float64) / temperature
            z[banned] = -np.inf
            p = np.exp(log_softmax(z))
            out[k] = rng.choice(self.V, p=p / p.sum())
            logits = self.forward(out[k:k + 1][None], self.last_state)[0, -1]
        return out

    # ------------------------------------------------------------ the shipped PyTorch models
    @classmethod
    def from_torch(cls, module, dtype=np.float32) -> "NumpyLM":
        """The NumPy model with the weights of a PyTorch language model: embedding, one
        ``nn.RNN`` (tanh) or ``nn.LSTM`` layer, and a linear output layer (the course's
        ``helpers.lib.rnn_lm.RecurrentLM`` and ``helpers.lib.transformer.LSTMLM``). PyTorch stores
        weights as (out, in) and keeps two biases whose sum is all that matters."""
        rnn = getattr(module, "rnn", None) or getattr(module, "lstm", None)
        out = getattr(module, "out", None) or getattr(module, "head", None)
        embed = getattr(module, "embed", None)
        kind = {"RNN": "rnn", "LSTM": "lstm"}.get(type(rnn).__name__)
        if kind is None or out is None or embed is None:
            raise TypeError(f"expected embed -> nn.RNN or nn.LSTM -> linear, got {type(module).__name__} "
                            f"with a {type(rnn).__name__} layer")
        if getattr(rnn, "num_layers", 1) != 1 or rnn.bidirectional or getattr(rnn, "nonlinearity", "tanh") != "tanh":
            raise ValueError("from_torch copies one unidirectional layer (tanh for an RNN)")
        arr = lambda t: t.detach().cpu().double().numpy()  # noqa: E731
        model = cls(embed.num_embeddings, embed.embedding_dim, rnn.hidden_size, kind, dtype=dtype)
        weights = (arr(embed.weight), arr(rnn.weight_ih_l0).T, arr(rnn.weight_hh_l0).T,
                   arr(rnn.bias_ih_l0) + arr(rnn.bias_hh_l0), arr(out.weight).T, arr(out.bias))
        for p, w in zip(model.params, weights, strict=True):
            p[...] = w
        return model


def _check_ids(ids, V: int, what: str = "ids", shape: tuple | None = None) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise TypeError(f"NumpyLM: {what} must be a 2-D integer array (batch, time), got {ids.dtype} {ids.shape}")
    if shape is not None and ids.shape != tuple(shape):
        raise ValueError(f"NumpyLM: {what} must have shape {tuple(shape)}, got {ids.shape}")
    if ids.size == 0:
        raise ValueError(f"NumpyLM: {what} is empty")
    return check_ids(ids, V, what, "NumpyLM")      # IdOutOfRangeError: a ValueError and an IndexError


def stream_nll(model: NumpyLM, ids: np.ndarray, batch_size: int = 16, seq_len: int = 64) -> float:
    """A NumPy model's mean NLL over a whole id stream, the state carried. Taught in lesson 02, section 5.

    Mean next-token NLL (nats) of ``model`` over ``ids``, read as ``batch_size`` parallel rows in
    windows of ``seq_len``, the state carried from window to window — the way
    ``make models`` scores the shipped PyTorch models."""
    total, n, state = 0.0, 0, None
    for x, y in bptt_batches(np.asarray(ids), batch_size, seq_len):
        total += model.loss(x, y, state) * y.size
        state, n = model.last_state, n + y.size
    if n == 0:
        raise ValueError(f"stream_nll: {len(ids)} ids give no window of {seq_len} in {batch_size} rows")
    return total / n
