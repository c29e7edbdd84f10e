"""Recurrent networks in NumPy: the tanh RNN, the LSTM and the GRU, and their language model
(lessons 02-03); gates in PyTorch's order (LSTM i, f, g, o; GRU r, z, n)."""
from __future__ import annotations

import numpy as np

from helpers.lib.batching import bptt_batches
from helpers.lib.checks import check_finite, check_ids
from helpers.lib.layers import log_softmax

GATES = {"rnn": 1, "lstm": 4, "gru": 3}


def _sigmoid(z):
    """Lesson 01's sigmoid as (1 + tanh(z/2)) / 2: exact, no overflow, one ufunc."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


# ---------------------------------------------------------------- the tanh RNN (lesson 02)
def rnn_forward(xs, h0, Wx, Wh, b):
    """The tanh RNN over a sequence (lesson 02 §3): xs (B, T, D), h0 (B, H) -> hs (B, T+1, H),
    hs[:, 0] = h0 and hs[:, t+1] = tanh(xs[:, t] Wx + hs[:, t] Wh + b)."""
    B, T, _ = xs.shape
    ax = xs @ Wx + b                      # the inputs' share of every step at once: it needs no h
    hs = np.empty((B, T + 1, Wh.shape[0]), dtype=ax.dtype)
    hs[:, 0] = h0
    for t in range(T):
        hs[:, t + 1] = np.tanh(ax[:, t] + hs[:, t] @ Wh)
    return hs


def rnn_bptt(dhs, xs, hs, Wx, Wh):
    """Backpropagation through time for :func:`rnn_forward` (lesson 02 §3): dhs (B, T, H) from
    the outputs -> (dxs, dh0, dWx, dWh, db), for a loss summed over the batch."""
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[0], dtype=Wh.dtype)
    dxs, dh_next = np.zeros_like(xs), np.zeros_like(hs[:, 0])
    for t in reversed(range(xs.shape[1])):
        da = (dhs[:, t] + dh_next) * (1 - hs[:, t + 1] ** 2)   # from y_t and from step t+1
        dWx += xs[:, t].T @ da                                  # shared weights: the steps add up
        dWh += hs[:, t].T @ da
        db += da.sum(axis=0)
        dxs[:, t] = da @ Wx.T
        dh_next = da @ Wh.T                                     # handed back to step t-1
    return dxs, dh_next, dWx, dWh, db


# ---------------------------------------------------------------- the LSTM (lesson 03)
def lstm_step(x, h_prev, c_prev, Wx, Wh, b):
    """One LSTM step (lesson 03 §2): x (B, D), h_prev, c_prev (B, H) -> (h, c, cache) with
    c = f * c_prev + i * g, h = o * tanh(c), cache = (x, h_prev, c_prev, i, f, g, o, c)."""
    H = h_prev.shape[1]
    a = x @ Wx + h_prev @ Wh + b
    i, f, o = _sigmoid(a[:, :H]), _sigmoid(a[:, H:2 * H]), _sigmoid(a[:, 3 * H:])
    g = np.tanh(a[:, 2 * H:3 * H])
    c = f * c_prev + i * g
    return o * np.tanh(c), c, (x, h_prev, c_prev, i, f, g, o, c)


def lstm_step_backward(dh, dc, cache, Wx, Wh):
    """The backward pass of :func:`lstm_step` (lesson 03 §2): dh, dc (B, H) arriving at h_t and
    C_t -> (dx, dh_prev, dc_prev, dWx, dWh, db)."""
    x, h_prev, c_prev, i, f, g, o, c = cache
    tc = np.tanh(c)
    dc = dc + dh * o * (1 - tc * tc)                 # h = o * tanh(c) depends on c too
    da = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                         dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
    return da @ Wx.T, da @ Wh.T, dc * f, x.T @ da, h_prev.T @ da, da.sum(axis=0)


def lstm_forward(xs, h0, c0, Wx, Wh, b, step=lstm_step):
    """The LSTM over a sequence, one ``step`` at a time (lesson 03 §2) -> (hs, cs, caches): hs and
    cs (B, T+1, H) starting with h0 and c0, and the steps' caches."""
    B, T, _ = xs.shape
    hs = np.empty((B, T + 1, h0.shape[1]), dtype=Wh.dtype)
    cs = np.empty_like(hs)
    hs[:, 0], cs[:, 0], caches = h0, c0, []
    for t in range(T):
        hs[:, t + 1], cs[:, t + 1], cache = step(xs[:, t], hs[:, t], cs[:, t], Wx, Wh, b)
        caches.append(cache)
    return hs, cs, caches


def lstm_bptt(dhs, caches, Wx, Wh, step_backward=lstm_step_backward):
    """Backpropagation through time for :func:`lstm_forward` (lesson 03 §2) ->
    (dxs (B, T, D), dh0, dc0, dWx, dWh, db)."""
    B, T, H = dhs.shape
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(Wh.shape[1], dtype=Wh.dtype)
    dxs = np.zeros((B, T, Wx.shape[0]), dtype=Wx.dtype)
    dh, dc = np.zeros((B, H), Wh.dtype), np.zeros((B, H), Wh.dtype)
    for t in reversed(range(T)):
        dxs[:, t], dh, dc, dWx_t, dWh_t, db_t = step_backward(dhs[:, t] + dh, dc, caches[t], Wx, Wh)
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return dxs, dh, dc, dWx, dWh, db


# ---------------------------------------------------------------- the GRU (lesson 03)
def gru_step(x, h_prev, Wx, Wh, b, b_hn):
    """One GRU step in PyTorch's form (lesson 03 §5): r, z = sigmoids of x Wx + h Wh + b,
    n = tanh(x Wx_n + b_n + r * (h Wh_n + b_hn)), h' = (1 - z) * n + z * h -> (h', cache),
    cache = (x, h_prev, r, z, n, h Wh_n + b_hn)."""
    H = h_prev.shape[1]
    ax, ah = x @ Wx + b, h_prev @ Wh
    r = _sigmoid(ax[:, :H] + ah[:, :H])
    z = _sigmoid(ax[:, H:2 * H] + ah[:, H:2 * H])
    hn = ah[:, 2 * H:] + b_hn
    n = np.tanh(ax[:, 2 * H:] + r * hn)
    return (1 - z) * n + z * h_prev, (x, h_prev, r, z, n, hn)


def gru_step_backward(dh, cache, Wx, Wh):
    """The backward pass of :func:`gru_step` (lesson 03 §5): dh (B, H) arriving at h_t ->
    (dx, dh_prev, dWx, dWh, db, db_hn)."""
    x, h_prev, r, z, n, hn = cache
    dan = dh * (1 - z) * (1 - n * n)
    dar = dan * hn * r * (1 - r)
    daz = dh * (h_prev - n) * z * (1 - z)
    dax = np.concatenate([dar, daz, dan], axis=1)
    dah = np.concatenate([dar, daz, dan * r], axis=1)           # r multiplies h Wh_n + b_hn
    return (dax @ Wx.T, dh * z + dah @ Wh.T, x.T @ dax, h_prev.T @ dah, dax.sum(axis=0),
            (dan * r).sum(axis=0))


def gru_forward(xs, h0, Wx, Wh, b, b_hn, step=gru_step):
    """The GRU over a sequence, one ``step`` at a time (lesson 03 §5) -> (hs (B, T+1, H), the
    steps' caches)."""
    B, T, _ = xs.shape
    hs = np.empty((B, T + 1, h0.shape[1]), dtype=Wh.dtype)
    hs[:, 0], caches = h0, []
    for t in range(T):
        hs[:, t + 1], cache = step(xs[:, t], hs[:, t], Wx, Wh, b, b_hn)
        caches.append(cache)
    return hs, caches


def gru_bptt(dhs, caches, Wx, Wh, step_backward=gru_step_backward):
    """Backpropagation through time for :func:`gru_forward` (lesson 03 §5) ->
    (dxs (B, T, D), dh0, dWx, dWh, db, db_hn)."""
    B, T, H = dhs.shape
    grads = [np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(3 * H, Wh.dtype), np.zeros(H, Wh.dtype)]
    dxs, dh = np.zeros((B, T, Wx.shape[0]), dtype=Wx.dtype), np.zeros((B, H), Wh.dtype)
    for t in reversed(range(T)):
        dxs[:, t], dh, *step_grads = step_backward(dhs[:, t] + dh, caches[t], Wx, Wh)
        for g, s in zip(grads, step_grads, strict=True):
            g += s
    return (dxs, dh, *grads)


# ---------------------------------------------------------------- the language model
class NumpyLM:
    """Embedding -> tanh RNN, LSTM or GRU -> linear -> softmax, in NumPy (lesson 02 §4): ``params``
    = [E (V, D), Wx, Wh, b, (b_hn: GRU), Wy (H, V), by (V,)], initialised as PyTorch does."""


    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, kind: str = "rnn",
                 rng: np.random.Generator | None = None, dtype=np.float32,
                 forget_bias: float | None = None):
        if kind not in GATES:
            raise ValueError(f"kind must be one of {sorted(GATES)}, got {kind!r}")
        if min(vocab_size, emb_dim, hidden) < 1:
            raise ValueError(f"vocab_size, emb_dim and hidden must be positive, got {vocab_size}, "
                             f"{emb_dim}, {hidden}")
        rng = np.random.default_rng(0) if rng is None else rng
        G, k = GATES[kind], 1 / np.sqrt(hidden)
        self.kind, self.V, self.D, self.H = kind, vocab_size, emb_dim, hidden
        shapes = [(emb_dim, G * hidden), (hidden, G * hidden), (G * hidden,)]
        shapes += [(hidden,)] * (kind == "gru") + [(hidden, vocab_size), (vocab_size,)]
        self.params = [rng.standard_normal((vocab_size, emb_dim)).astype(dtype)]
        self.params += [rng.uniform(-k, k, s).astype(dtype) for s in shapes]
        if kind != "rnn" and forget_bias is not None:
            self.params[3][hidden:2 * hidden] = forget_bias
        self.grads = [np.zeros_like(p) for p in self.params]
        self.names = ["E", "Wx", "Wh", "b"] + ["b_hn"] * (kind == "gru") + ["Wy", "by"]
        self.bptt = rnn_bptt
        self.step, self.step_backward = {"rnn": (None, None), "gru": (gru_step, gru_step_backward),
                                         "lstm": (lstm_step, lstm_step_backward)}[kind]
        self.last_state = None

    def n_params(self) -> int:
        """The number of scalar parameters."""
        return sum(p.size for p in self.params)

    def forward(self, ids, state=None):
        """Logits (B, T, V) of the next token at every position of ``ids`` (B, T)."""
        Wy, by = self.params[-2:]
        return self.states(ids, state)[:, 1:] @ Wy + by

    def states(self, ids, state=None):
        """The states (B, T+1, H) over ``ids`` (B, T) from ``state`` (zeros when None); keeps
        what the backward pass needs, and the last state in ``last_state``."""
        ids = _check_ids(ids, self.V)
        for name, p in zip(self.names, self.params, strict=True):
            check_finite(p, name, "NumpyLM")
        E, Wx, Wh, b, *rest = self.params
        xs = E[ids]                                                   # (B, T, D)
        if state is None:
            h = np.zeros((len(ids), self.H), E.dtype)
            state = (h, h.copy()) if self.kind == "lstm" else h
        self._check_state(state, len(ids))
        caches = None
        if self.kind == "rnn":
            hs = rnn_forward(xs, state, Wx, Wh, b)
            self.last_state = hs[:, -1]
        elif self.kind == "lstm":
            hs, cs, caches = lstm_forward(xs, state[0], state[1], Wx, Wh, b, self.step)
            self.last_state = (hs[:, -1], cs[:, -1])
        else:
            hs, caches = gru_forward(xs, state, Wx, Wh, b, rest[0], self.step)
            self.last_state = hs[:, -1]
        self.cache = (ids, xs, hs, caches)
        return hs

    def _check_state(self, state, B: int) -> None:
        if self.kind == "lstm" and not (isinstance(state, tuple) and len(state) == 2):
            raise TypeError(f"NumpyLM: an LSTM's state is the pair (h, c), got "
                            f"{type(state).__name__}")
        for s in state if self.kind == "lstm" else (state,):
            if not isinstance(s, np.ndarray) or s.shape != (B, self.H):
                raise ValueError(f"NumpyLM: the state must be arrays of shape ({B}, {self.H}), got "
                                 f"{getattr(s, 'shape', type(s).__name__)}")
            check_finite(s, "state", "NumpyLM")

    def loss(self, ids, targets, state=None) -> float:
        """Mean NLL (nats per token) of ``targets`` (B, T), forward only; -1 is not scored."""
        return self.train_loss(ids, targets, state, backward=False)

    def train_loss(self, ids, targets, state=None, backward: bool = True) -> float:
        """The mean NLL of ``targets`` given ``ids`` (both (B, T); a target of -1 is not scored),
        and its gradient in ``grads``: the hand-written backward pass of every piece."""
        logits = self.forward(ids, state)
        targets = _check_ids(targets, self.V, "targets", shape=logits.shape[:2], ignore=-1)
        scored, idx = targets >= 0, np.maximum(targets, 0)[..., None]
        logp = log_softmax(logits.astype(np.float64, copy=False))
        loss = float(-np.take_along_axis(logp, idx, 2)[scored].mean())
        if not backward:
            return loss
        ids, xs, hs, caches = self.cache
        E, Wx, Wh, Wy = *self.params[:3], self.params[-2]
        B, T, V = logits.shape
        # softmax cross-entropy: dL/dlogits = (softmax - one-hot) / (number scored)
        dlogits = np.exp(logp)
        np.put_along_axis(dlogits, idx, np.take_along_axis(dlogits, idx, 2) - 1, 2)
        dlogits = (dlogits * (scored[..., None] / scored.sum())).astype(E.dtype)
        dWy = hs[:, 1:].reshape(B * T, -1).T @ dlogits.reshape(B * T, V)
        dhs = dlogits @ Wy.T                                              # (B, T, H)
        if self.kind == "rnn":
            dxs, _, *drec = self.bptt(dhs, xs, hs, Wx, Wh)
        elif self.kind == "lstm":
            dxs, _, _, *drec = lstm_bptt(dhs, caches, Wx, Wh, self.step_backward)
        else:
            dxs, _, *drec = gru_bptt(dhs, caches, Wx, Wh, self.step_backward)
        dE = np.zeros_like(E)                  # each row collects the positions that read it
        np.add.at(dE, ids.reshape(-1), dxs.reshape(B * T, -1))
        for g, d in zip(self.grads, (dE, *drec, dWy, dlogits.sum(axis=(0, 1))), strict=True):
            g[...] = d
        return loss

    def sample(self, start, n: int, temperature: float = 1.0, rng=None, banned=(),
               greedy: bool = False) -> np.ndarray:
        """``n`` ids written after the ids ``start``, each drawn from softmax(logits / temperature)
        (the most likely if ``greedy``) and fed back in; ``banned`` ids are never written."""
        start = _check_ids(np.asarray(start)[None], self.V, "start")
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        rng = np.random.default_rng(0) if rng is None else rng
        banned = check_ids(np.asarray(banned, np.int64).ravel(), self.V, "banned", "NumpyLM")
        if np.unique(banned).size == self.V:
            raise ValueError("NumpyLM.sample: banned holds every id of the vocabulary")
        logits, out = self.forward(start)[0, -1], np.empty(n, np.int64)
        for k in range(n):
            z = logits.astype(np.float64) / temperature
            z[banned] = -np.inf
            p = np.exp(log_softmax(z))
            out[k] = np.argmax(z) if greedy else rng.choice(self.V, p=p / p.sum())
            logits = self.forward(out[k:k + 1][None], self.last_state)[0, -1]
        return out

    @classmethod
    def from_torch(cls, module, dtype=np.float32) -> "NumpyLM":
        """The NumPy model with a PyTorch ``embed`` -> RNN/LSTM/GRU -> linear model's weights
        (PyTorch's two biases summed, the GRU's b_hn kept apart)."""
        rnn = getattr(module, "rnn", None) or getattr(module, "lstm", None)
        out = getattr(module, "out", None) or getattr(module, "head", None)
        embed = getattr(module, "embed", None)
        kind = {"RNN": "rnn", "LSTM": "lstm", "GRU": "gru"}.get(type(rnn).__name__)
        if kind is None or out is None or embed is None:
            raise TypeError(f"expected embed -> nn.RNN, nn.LSTM or nn.GRU -> linear, got "
                            f"{type(module).__name__} with a {type(rnn).__name__} layer")
        if rnn.num_layers > 1 or rnn.bidirectional or getattr(rnn, "nonlinearity", "") == "relu":
            raise ValueError("from_torch copies one unidirectional layer (tanh for an RNN)")
        arr = lambda t: t.detach().cpu().double().numpy()  # noqa: E731
        H, zeros = rnn.hidden_size, np.zeros(GATES[kind] * rnn.hidden_size)
        b_ih, b_hh = (arr(rnn.bias_ih_l0), arr(rnn.bias_hh_l0)) if rnn.bias else (zeros, zeros)
        biases = [b_ih + b_hh]                              # the GRU keeps b_hn, inside r *
        if kind == "gru":
            biases = [b_ih + np.r_[b_hh[:2 * H], zeros[:H]], b_hh[2 * H:]]
        model = cls(embed.num_embeddings, embed.embedding_dim, H, kind, dtype=dtype)
        weights = [arr(embed.weight), arr(rnn.weight_ih_l0).T, arr(rnn.weight_hh_l0).T, *biases,
                   arr(out.weight).T, arr(out.bias)]
        for p, w in zip(model.params, weights, strict=True):
            p[...] = w
        return model


def _check_ids(ids, V: int, what: str = "ids", shape: tuple | None = None, ignore=None):
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.dtype.kind not in "iu":
        raise TypeError(f"NumpyLM: {what} must be a 2-D integer array (batch, time), got "
                        f"{ids.dtype} {ids.shape}")
    if shape is not None and ids.shape != tuple(shape):
        raise ValueError(f"NumpyLM: {what} must have shape {tuple(shape)}, got {ids.shape}")
    if ids.size == 0 or (ignore is not None and not np.any(ids != ignore)):
        raise ValueError(f"NumpyLM: {what} is empty (nothing to read or score)")
    return check_ids(ids, V, what, "NumpyLM", ignore=ignore)


def stream_nlls(model: NumpyLM, ids: np.ndarray, batch_size: int = 16, seq_len: int = 64):
    """The NLL of each token of a stream read as ``batch_size`` rows in windows of ``seq_len``, the
    state carried (lesson 02 §5) -> (nll (n,), the positions in ``ids`` of the tokens scored)."""
    rows, state = [], None
    for x, y in bptt_batches(np.asarray(ids), batch_size, seq_len):
        logp = log_softmax(model.forward(x, state).astype(np.float64))
        rows.append(-np.take_along_axis(logp, y[..., None], axis=2)[..., 0])
        state = model.last_state
    nll = np.concatenate(rows, axis=1)                  # row b holds the b-th part of the stream
    return nll.reshape(-1), 1 + np.arange(nll.size)


# ---------------------------------------------------------------- the gradient through time
def gradient_through_time(model: NumpyLM, dh_last: np.ndarray) -> np.ndarray:
    """||dL/dh_t|| at every step of the model's last forward pass for a loss that reads only the
    last state, dL/dh_T = ``dh_last`` (B, H) -> (B, T), column k for step T - k (lesson 02 §6)."""
    _, xs, hs, caches = model.cache
    Wx, Wh = model.params[1:3]
    B, T = xs.shape[:2]
    norms, dh, dc = np.empty((B, T)), dh_last, np.zeros_like(dh_last)
    for k in range(T):
        t = T - 1 - k
        norms[:, k] = np.linalg.norm(dh, axis=1)
        if model.kind == "rnn":
            dh = (dh * (1 - hs[:, t + 1] ** 2)) @ Wh.T
        elif model.kind == "lstm":
            _, dh, dc, *_ = model.step_backward(dh, dc, caches[t], Wx, Wh)
        else:
            _, dh, *_ = model.step_backward(dh, caches[t], Wx, Wh)
    return norms


def random_recurrent_lm(kind: str, scale: float, hidden: int = 64, forget_bias: float = 0.0,
                        seed: int = 0) -> NumpyLM:
    """An untrained float64 NumpyLM, its recurrent blocks ``scale`` times random orthogonal
    matrices, input weights N(0, 1/D), biases 0 but the LSTM's ``forget_bias`` (lesson 02 §6)."""
    rng = np.random.default_rng(seed)
    model = NumpyLM(50, 16, hidden, kind, rng, dtype=np.float64)
    Wx, Wh, b = model.params[1:4]
    for g in range(GATES[kind]):
        Q = np.linalg.qr(rng.standard_normal((hidden, hidden)))[0]
        Wh[:, g * hidden:(g + 1) * hidden] = scale * Q
    Wx[...] = rng.standard_normal(Wx.shape) / np.sqrt(Wx.shape[0])
    b[...] = 0
    if kind == "lstm":
        b[hidden:2 * hidden] = forget_bias
    return model


def gradient_norms(model: NumpyLM, T: int = 60, batch: int = 8, seed: int = 0) -> np.ndarray:
    """The mean norm of the gradient reaching k = 0 .. T-1 steps back (T,), for L = <v, h_T> on
    random text, v random of norm about 1 (lesson 02 §6)."""
    rng = np.random.default_rng(seed + 1)
    model.forward(rng.integers(0, model.V, (batch, T)))
    dh_last = rng.standard_normal((batch, model.H)) / np.sqrt(model.H)
    return gradient_through_time(model, dh_last).mean(axis=0)
