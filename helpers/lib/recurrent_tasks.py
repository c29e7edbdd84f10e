"""Small synthetic tasks that show what recurrent networks can and cannot learn (lessons 02-03).

* :func:`train_recall`: exploding gradients in training, with and without clipping (lesson 02);
* :class:`MarkovSource` and :func:`exposure_gap`: exposure bias measured against a language whose
  true next-symbol distribution is known, so that a perfect model shows none (lesson 02);
* :func:`train_long_range`: a cue to remember over ``distance`` distractors, where the simple RNN
  fails and the LSTM's forget gate decides (lesson 03).

Every trainer is seeded: the same arguments give the same numbers.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from helpers.infra.threads import single_thread_blas
from helpers.lib.checks import check_ids
from helpers.lib.layers import log_softmax
from helpers.lib.optim import SGD, Adam, clip_global_norm
from helpers.lib.recurrent import NumpyLM, rnn_bptt, rnn_forward


# ---------------------------------------------------------------- exploding gradients (lesson 02)
@single_thread_blas
def train_recall(scale: float, clip: float | None, steps: int = 150, lr: float = 0.2, T: int = 30,
                 lag: int = 3, hidden: int = 32, seed: int = 0, clip_fn=None,
                 bptt=rnn_bptt) -> dict[str, np.ndarray]:
    """Plain SGD on a memory task: a tanh RNN reads inputs N(0, 1) of size 4 and a linear readout
    predicts the first input of ``lag`` steps before (mean squared error), from a recurrent matrix
    of the given ``scale``; with ``clip``, ``clip_fn(grads, clip) -> (clipped, norm)`` clips before
    each step (lesson 02 §6; default: the course's clipping). Returns per-step ``loss`` and ``grad_norm`` (before clipping); nan once the
    run has blown up."""
    if not 0 <= lag < T:
        raise ValueError(f"lag must be in [0, T), got lag={lag}, T={T}")
    rng = np.random.default_rng(seed)
    Wh = scale * np.linalg.qr(rng.standard_normal((hidden, hidden)))[0]    # largest gain: scale
    params = [rng.standard_normal((4, hidden)) / 2, Wh, np.zeros(hidden),
              rng.standard_normal(hidden) / np.sqrt(hidden), np.zeros(1)]
    losses, norms, opt = np.full(steps, np.nan), np.full(steps, np.nan), SGD(lr)
    with np.errstate(all="ignore"):
        for s in range(steps):
            x = rng.standard_normal((32, T, 4))
            y = np.zeros((32, T))
            y[:, lag:] = x[:, :T - lag, 0]
            hs = rnn_forward(x, np.zeros((32, hidden)), *params[:3])
            err = hs[:, 1:] @ params[3] + params[4] - y
            losses[s] = float(np.mean(err ** 2))
            derr = 2 * err / err.size
            grads = list(bptt(derr[..., None] * params[3], x, hs, *params[:2])[2:])
            grads += [np.einsum("bt,bth->h", derr, hs[:, 1:]), np.array([derr.sum()])]
            norms[s] = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
            if not (np.isfinite(losses[s]) and np.isfinite(norms[s])):
                losses[s] = norms[s] = np.nan
                break
            if clip and clip_fn:
                grads = list(clip_fn(grads, clip)[0])
            elif clip:
                clip_global_norm(grads, clip)
            opt.step(params, grads)
    return {"loss": losses, "grad_norm": norms}


# ---------------------------------------------------------------- exposure bias (lesson 02)
class MarkovSource:
    """A known language: an order-2 Markov chain over ``V`` symbols, P(w | a, b) drawn from a
    Dirichlet(``alpha``) per context (lesson 02 §6). ``probs(a, b)`` (N, V); ``sample(n, length,
    rng)`` (n, length) int64, the first two symbols uniform."""

    def __init__(self, V: int = 8, alpha: float = 0.3, seed: int = 0):
        if V < 2:
            raise ValueError(f"a source needs at least 2 symbols, got V={V}")
        self.V = V
        self.table = np.random.default_rng(seed).dirichlet(np.full(V, alpha), size=(V, V))

    def probs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        where = "MarkovSource.probs"
        return self.table[check_ids(a, self.V, "a", where), check_ids(b, self.V, "b", where)]

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
    """A small :class:`helpers.lib.recurrent.NumpyLM` RNN trained briefly by teacher forcing on
    ``length`` symbols of ``source`` (windows of 20, Adam, clipping at 1), so it is imperfect
    (lesson 02 §6)."""
    rng = np.random.default_rng(seed)
    stream = source.sample(1, length, rng)[0]
    model, opt = NumpyLM(source.V, 16, hidden, "rnn", rng, dtype=np.float64), Adam(lr)
    for _ in range(steps):
        rows = stream[rng.integers(0, len(stream) - 21, 32)[:, None] + np.arange(21)]
        model.train_loss(rows[:, :-1], rows[:, 1:])
        clip_global_norm(model.grads, 1.0)
        opt.step(model.params, model.grads)
    return model


def exposure_gap(source: MarkovSource, model: NumpyLM | None, n: int = 400, horizon: int = 30,
                 seed: int = 0) -> dict[str, np.ndarray]:
    """Exposure bias, measured so that a perfect model shows none (lesson 02 §6).

    From the same 2-symbol starts, prefixes are extended by the source ("data") or by the model
    ("own"); at each step the mean over ``n`` prefixes of KL(P_true || P_model) in nats gives
    ``data_kl`` and ``own_kl`` (horizon,), and ``gap`` = own - data. ``model=None`` is the perfect
    model: every value is exactly 0."""
    out = {}
    for mode in ("data", "own"):
        rng = np.random.default_rng(seed)
        seqs = source.sample(n, 2, rng)
        logits = None if model is None else model.forward(seqs)[:, -1]
        kls = []
        for _ in range(horizon):
            p_true = source.probs(seqs[:, -2], seqs[:, -1])
            p_model = p_true if model is None else np.exp(log_softmax(logits.astype(np.float64)))
            kl = p_true * (np.log(p_true + 1e-300) - np.log(p_model + 1e-300))
            kls.append(float(np.mean(kl.sum(axis=1))))
            nxt = _draw(p_true if mode == "data" else p_model, rng)
            seqs = np.concatenate([seqs, nxt[:, None]], axis=1)
            if model is not None:
                logits = model.forward(nxt[:, None], model.last_state)[:, -1]
        out[f"{mode}_kl"] = np.array(kls)
    out["gap"] = out["own_kl"] - out["data_kl"]
    return out


# ---------------------------------------------------------------- a long-range dependency (lesson 03)
def long_range_batch(n: int, distance: int, rng: np.random.Generator, n_symbols: int = 10):
    """A toy agreement task (lesson 03 §6): token 0 or 1 first (a singular or a plural subject),
    then ``distance`` distractors from 2 .. n_symbols-1; the label, to be predicted after the last
    distractor, is the first token. Returns ids (n, distance + 1), labels (n,)."""
    if distance < 1 or n_symbols < 3:
        raise ValueError(f"need distance >= 1 and n_symbols >= 3 (0 and 1 are the labels), got "
                         f"{distance} and {n_symbols}")
    ids = rng.integers(2, n_symbols, (n, distance + 1))
    ids[:, 0] = labels = rng.integers(0, 2, n)
    return ids, labels


@lru_cache(maxsize=128)
@single_thread_blas
def train_long_range(kind: str, distance: int, hidden: int = 32, steps: int = 300,
                     forget_bias: float = 2.0, identity_start: bool = False, seed: int = 0,
                     step=None, step_backward=None) -> float:
    """The held-out accuracy (500 new sequences) of a :class:`~helpers.lib.recurrent.NumpyLM`
    of ``kind`` (embedding 8) trained to say the label of :func:`long_range_batch` after the last
    distractor: 300 steps of 32 sequences, Adam 3e-3, clipping at 1 (lesson 03 §6). The LSTM's
    forget gates start at sigmoid(``forget_bias``); ``identity_start`` starts the RNN's recurrent
    matrix at the identity (Le, Jaitly & Hinton 2015). ``step``, ``step_backward``: the gated
    cell's functions (yours). Memoised."""
    if kind not in ("rnn", "lstm", "gru") or (identity_start and kind != "rnn"):
        raise ValueError(f"kind must be 'rnn' (identity_start only for it), 'lstm' or 'gru', got "
                         f"{kind!r}")
    rng = np.random.default_rng(seed)
    model = NumpyLM(10, 8, hidden, kind, rng, forget_bias=forget_bias)
    model.params[-1][2:] = -30                  # the distractors are never the answer: two classes
    if identity_start:
        model.params[2][...] = np.eye(hidden)
    model.step, model.step_backward = step or model.step, step_backward or model.step_backward
    opt = Adam(3e-3)
    for _ in range(steps):
        ids, labels = long_range_batch(32, distance, rng)
        targets = np.full(ids.shape, -1)
        targets[:, -1] = labels                 # only the label after the last distractor is scored
        model.train_loss(ids, targets)
        clip_global_norm(model.grads, 1.0)
        opt.step(model.params, model.grads)
    ids, labels = long_range_batch(500, distance, np.random.default_rng(seed + 10_000))
    return float(np.mean(model.forward(ids)[:, -1, :2].argmax(axis=1) == labels))
