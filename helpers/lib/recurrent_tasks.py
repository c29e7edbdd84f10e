"""Small synthetic tasks that show what recurrent networks can and cannot learn (lessons 02–03).

* :func:`train_recall` — exploding gradients in training, with and without clipping (lesson 02);
* :class:`MarkovSource` and :func:`exposure_gap` — exposure bias measured against a language whose
  true next-symbol distribution is known, so that a perfect model shows none (lesson 02);
* :func:`train_long_range` — a cue to remember over ``distance`` distractors: where the simple
  RNN fails and the LSTM's forget gate decides (lesson 03).

Every trainer is seeded and deterministic: the same arguments give the same numbers.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from helpers.infra.threads import single_thread_blas
from helpers.lib.checks import check_ids, check_whole
from helpers.lib.gradient_flow import TIME_LAYERS, random_recurrent_layer
from helpers.lib.layers import Embedding, Linear, SoftmaxCrossEntropy, log_softmax
from helpers.lib.optim import SGD, Adam, clip_global_norm
from helpers.lib.recurrent_lm import NumpyLM


# ---------------------------------------------------------------- exploding gradients (lesson 02)
def recall_task(n: int, T: int, lag: int, rng: np.random.Generator, dim: int = 4):
    """A tiny memory task for training demos. Taught in lesson 02, section 6.

    Inputs (n, T, dim) ~ N(0, 1); target (n, T) = the first input feature ``lag`` steps earlier
    (0 for the first ``lag`` steps); 0 <= lag < T."""
    n, dim = check_whole(n, "n", "recall_task", minimum=1), check_whole(dim, "dim", "recall_task", minimum=1)
    T = check_whole(T, "T", "recall_task", minimum=1)
    lag = check_whole(lag, "lag", "recall_task", minimum=0, maximum=T - 1)   # else the target is all zeros
    x = rng.standard_normal((n, T, dim))
    y = np.zeros((n, T))
    y[:, lag:] = x[:, :T - lag, 0]
    return x, y


@single_thread_blas
def train_recall(scale: float, clip: float | None, steps: int = 80, lr: float = 0.05, T: int = 30,
                 lag: int = 3, hidden: int = 32, seed: int = 0,
                 clip_fn: Callable = clip_global_norm) -> dict[str, np.ndarray]:
    """Exploding gradients in training, with and without clipping. Taught in lesson 02, section 6.

    Plain SGD on :func:`recall_task` with a tanh RNN and a linear readout (mean squared error),
    starting from a recurrent matrix of the given ``scale``; with ``clip`` the gradients are clipped
    to that global norm by ``clip_fn(grads, max_norm) -> norm`` before each step. Returns per-step
    ``loss`` and ``grad_norm`` (before clipping); a diverged run holds nan from the step it blew
    up."""
    rng = np.random.default_rng(seed)
    rnn = random_recurrent_layer("rnn", scale, input_size=4, hidden=hidden, seed=seed)
    head = Linear(hidden, 1, rng)
    params, grads = rnn.params + head.params, rnn.grads + head.grads
    opt = SGD(lr)
    losses, norms = np.full(steps, np.nan), np.full(steps, np.nan)
    with np.errstate(all="ignore"):
        for s in range(steps):
            x, y = recall_task(32, T, lag, rng)
            hs = rnn.forward(x)
            pred = head.forward(hs.reshape(-1, hidden)).reshape(y.shape)
            losses[s] = float(np.mean((pred - y) ** 2))
            if not np.isfinite(losses[s]):
                break
            dpred = 2 * (pred - y) / y.size
            rnn.backward(head.backward(dpred.reshape(-1, 1)).reshape(hs.shape))
            norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
            if not np.isfinite(norm):
                break
            norms[s] = norm
            if clip:
                clip_fn(grads, clip)
            opt.step(params, grads)
    return {"loss": losses, "grad_norm": norms}


# ---------------------------------------------------------------- exposure bias (lesson 02)
class MarkovSource:
    """A known language: an order-2 Markov chain over ``V`` symbols. Taught in lesson 02, section 6.

    P(w | a, b) is drawn from a Dirichlet(``alpha``) per context (seeded). ``probs(a, b)`` (N, V);
    ``sample(n, length, rng)`` (n, length) int64 sequences (the first two symbols uniform)."""

    def __init__(self, V: int = 8, alpha: float = 0.3, seed: int = 0):
        if V < 2:
            raise ValueError(f"a source needs at least 2 symbols, got V={V}")
        rng = np.random.default_rng(seed)
        self.V, self.table = V, rng.dirichlet(np.full(V, alpha), size=(V, V))    # (V, V, V)

    def probs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.table[_symbols(a, self.V, "a"), _symbols(b, self.V, "b")]

    def sample(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        out = np.zeros((n, length), dtype=np.int64)
        out[:, :2] = rng.integers(0, self.V, (n, 2))
        for t in range(2, length):
            out[:, t] = _draw(self.probs(out[:, t - 2], out[:, t - 1]), rng)
        return out


def _draw(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One sample per row of the row-stochastic (N, V) matrix ``p``."""
    u = rng.random((len(p), 1))
    return np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), p.shape[1] - 1)


@single_thread_blas
def train_on_source(source: MarkovSource, steps: int = 150, seed: int = 0, hidden: int = 32,
                    length: int = 20_000, lr: float = 1e-2) -> NumpyLM:
    """The lesson's NumPy RNN trained on a known language, briefly. Taught in lesson 02, section 6.

    :class:`helpers.lib.recurrent_lm.NumpyLM` trained by teacher forcing on ``length`` symbols
    sampled from ``source``: random windows of 20, Adam, clipping at 1; deliberately short, so the
    model is imperfect."""
    rng = np.random.default_rng(seed)
    stream = source.sample(1, length, rng)[0]
    model = NumpyLM(source.V, 16, hidden, "rnn", rng, dtype=np.float64)
    opt = Adam(lr)
    for _ in range(steps):
        starts = rng.integers(0, len(stream) - 21, 32)
        rows = stream[starts[:, None] + np.arange(21)]
        model.train_loss(rows[:, :-1], rows[:, 1:])
        clip_global_norm(model.grads, 1.0)
        opt.step(model.params, model.grads)
    return model


def exposure_gap(source: MarkovSource, model: NumpyLM | None, n: int = 400, horizon: int = 30,
                 seed: int = 0) -> dict[str, np.ndarray]:
    """Exposure bias, measured so that a perfect model shows none. Taught in lesson 02, section 6.

    How far the model's next-symbol distribution is from the truth, on prefixes the *source* wrote
    ("data") and on prefixes the *model* wrote ("own"). At each step t = 1..horizon after a 2-symbol start from the source: ``data_kl`` and ``own_kl``
    (horizon,), the mean over ``n`` sequences of KL(P_true(. | prefix) || P_model(. | prefix)) in
    nats, and ``gap = own_kl - data_kl``. ``model=None`` is the perfect model (P_model = P_true):
    both KLs and the gap are exactly 0. A positive gap is exposure bias, isolated from how
    surprising the real continuation is."""
    out = {}
    for mode in ("data", "own"):
        rng = np.random.default_rng(seed)
        seqs = source.sample(n, 2, rng)
        logits = None if model is None else model.forward(seqs)[:, -1]
        kls = []
        for _ in range(horizon):
            p_true = source.probs(seqs[:, -2], seqs[:, -1])
            p_model = p_true if model is None else np.exp(log_softmax(logits.astype(np.float64)))
            kls.append(float(np.mean(np.sum(p_true * (np.log(p_true + 1e-300) - np.log(p_model + 1e-300)), axis=1))))
            nxt = _draw(p_true if mode == "data" else p_model, rng)
            seqs = np.concatenate([seqs, nxt[:, None]], axis=1)
            if model is not None:
                logits = model.forward(nxt[:, None], model.last_state)[:, -1]
        out[f"{mode}_kl"] = np.array(kls)
    out["gap"] = out["own_kl"] - out["data_kl"]
    return out


def _symbols(ids, V: int, name: str) -> np.ndarray:
    """``ids`` checked as symbols in [0, V) for :meth:`MarkovSource.probs` (-1 would silently read
    the last symbol's row)."""
    return check_ids(ids, V, name, "MarkovSource.probs")


# ---------------------------------------------------------------- a long-range dependency (lesson 03)
def long_range_batch(n: int, distance: int, rng: np.random.Generator, n_symbols: int = 10):
    """A toy agreement task. Taught in lesson 03, section 7.

    Token 0 or 1 (say: a singular or a plural subject) comes first, then ``distance`` distractor
    tokens drawn from 2..n_symbols-1; the label (n,) is the first token, to be predicted after the
    last distractor. Returns ids (n, distance + 1), labels (n,)."""
    if distance < 1:
        raise ValueError(f"distance must be at least 1, got {distance}")
    if n_symbols < 3:
        raise ValueError(f"n_symbols must be at least 3 (0 and 1 are labels, distractors are 2..), got {n_symbols}")
    ids = rng.integers(2, n_symbols, (n, distance + 1))
    labels = rng.integers(0, 2, n)
    ids[:, 0] = labels
    return ids, labels


RNN_INITS = ("default", "identity")


@lru_cache(maxsize=128)
@single_thread_blas
def train_long_range(kind: str, distance: int, hidden: int = 32, steps: int = 300, batch: int = 32,
                     lr: float = 3e-3, seed: int = 0, n_test: int = 500, n_symbols: int = 10,
                     forget_bias: float = 2.0, rnn_init: str = "default") -> float:
    """Train a recurrent classifier on the long-range task; its accuracy. Taught in lesson 03, section 7.

    Embedding -> Time{RNN,LSTM,GRU} -> Linear (on the last state), trained on
    :func:`long_range_batch` with Adam and clipping at 1; returns the accuracy on ``n_test`` new
    sequences. Each kind gets its own start that keeps the memory open: the LSTM's forget-gate biases start
    at ``forget_bias`` (f = sigmoid(2) = 0.88 for 2), and with ``rnn_init='identity'`` the RNN's
    recurrent matrix starts as the identity (Le, Jaitly & Hinton 2015), which copies the state
    forward. Memoised: the same arguments give the same number."""
    if kind not in TIME_LAYERS:
        raise ValueError(f"kind must be one of {sorted(TIME_LAYERS)}, got {kind!r}")
    if rnn_init not in RNN_INITS:
        raise ValueError(f"rnn_init must be one of {RNN_INITS}, got {rnn_init!r}")
    if min(hidden, steps, batch, n_test) < 1:
        raise ValueError(f"hidden, steps, batch and n_test must be positive, got {hidden}, {steps}, {batch}, {n_test}")
    rng = np.random.default_rng(seed)
    emb = Embedding(n_symbols, 8, rng, scale=1.0, dtype=np.float32)
    rnn = TIME_LAYERS[kind](8, hidden, rng, dtype=np.float32)
    if kind == "lstm":
        rnn.params[2][hidden:2 * hidden] = forget_bias
    if kind == "rnn" and rnn_init == "identity":
        rnn.params[1][...] = np.eye(hidden, dtype=np.float32)
    head = Linear(hidden, 2, rng, dtype=np.float32)
    loss_fn = SoftmaxCrossEntropy()
    params = emb.params + rnn.params + head.params
    grads = emb.grads + rnn.grads + head.grads
    opt = Adam(lr)

    def logits(ids):
        hs = rnn.forward(emb.forward(ids))
        return head.forward(hs[:, -1]), hs

    for _ in range(steps):
        ids, y = long_range_batch(batch, distance, rng, n_symbols)
        out, hs = logits(ids)
        loss_fn.forward(out, y)
        dhs = np.zeros_like(hs)
        dhs[:, -1] = head.backward(loss_fn.backward())
        emb.backward(rnn.backward(dhs))
        clip_global_norm(grads, 1.0)
        opt.step(params, grads)
    ids, y = long_range_batch(n_test, distance, np.random.default_rng(seed + 10_000), n_symbols)
    return float(np.mean(logits(ids)[0].argmax(1) == y))
