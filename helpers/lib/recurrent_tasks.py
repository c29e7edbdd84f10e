"""Small synthetic tasks for recurrent networks (lessons 02-03): exposure bias against a known
language, and a cue to remember over many distractors."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from helpers.infra.threads import single_thread_blas
from helpers.lib.checks import check_ids
from helpers.lib.layers import log_softmax
from helpers.lib.optim import Adam, clip_global_norm
from helpers.lib.recurrent import NumpyLM


class MarkovSource:
    """A known language: an order-2 Markov chain over ``V`` symbols, P(w | a, b) drawn from a
    Dirichlet(``alpha``) per context (lesson 02 §6). ``probs(a, b)`` (N, V); ``sample(n, length,
    rng)`` (n, length), the first two symbols uniform."""

    def __init__(self, V: int = 8, alpha: float = 0.3, seed: int = 0):
        if V < 2:
            raise ValueError(f"a source needs at least 2 symbols, got V={V}")
        self.V = V
        self.table = np.random.default_rng(seed).dirichlet(np.full(V, alpha), size=(V, V))

    def probs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self.table[check_ids(a, self.V, "a", "probs"), check_ids(b, self.V, "b", "probs")]

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
    """A small NumpyLM RNN trained briefly on ``length`` symbols of ``source`` (lesson 02 §6)."""
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
    """Exposure bias, measured so that a perfect model (``model=None``) shows none (lesson 02 §6):
    per step, the mean KL(P_true || P_model) over ``n`` prefixes written by the source
    (``data_kl``) or by the model (``own_kl``), and ``gap`` = own - data."""
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


def long_range_batch(n: int, distance: int, rng: np.random.Generator):
    """A toy agreement task (lesson 03 §6): a first token 0 or 1 (a singular or a plural subject),
    then ``distance`` distractors 2..9 -> ids (n, distance + 1) and the labels (n,), the first
    tokens, to be said after the last distractor."""
    if distance < 1:
        raise ValueError(f"distance must be at least 1, got {distance}")
    ids = rng.integers(2, 10, (n, distance + 1))
    ids[:, 0] = labels = rng.integers(0, 2, n)
    return ids, labels


@lru_cache(maxsize=128)
@single_thread_blas
def train_long_range(kind: str, distance: int, hidden: int = 32, steps: int = 300,
                     forget_bias: float = 2.0, identity_start: bool = False, seed: int = 0,
                     step=None, step_backward=None) -> float:
    """Accuracy on 500 new sequences of a NumpyLM trained 300 steps on :func:`long_range_batch`,
    its keeping gate starting at sigmoid(``forget_bias``) (lesson 03 §6). Memoised."""
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

