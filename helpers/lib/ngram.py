"""Interpolated Kneser-Ney n-grams, the count-based baseline of the language-model lessons."""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import check_ids, check_whole


def _code_dtype(V: int, n: int):
    """int64 while V**n < 2**63, uint64 while V**n < 2**64 (84 characters: orders up to 10)."""
    if V ** n < 2 ** 63:
        return np.int64
    if V ** n < 2 ** 64:
        return np.uint64
    raise ValueError(f"vocab_size**order = {V}**{n} does not fit in int64 (or uint64) codes")


def _codes(ids: np.ndarray, k: int, V: int, dtype) -> np.ndarray:
    """The code of every window ids[i:i+k], shape (len(ids) - k + 1,)."""
    ids = ids.astype(dtype)                               # uint64 + int64 would give float64
    codes = np.zeros(len(ids) - k + 1, dtype=dtype)
    for j in range(k):
        codes = codes * dtype(V) + ids[j:len(ids) - k + 1 + j]
    return codes


def _lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """values[keys == q] for each query, 0 where the sorted ``keys`` lack it."""
    if len(keys) == 0:
        return np.zeros(len(queries), dtype=values.dtype)
    pos = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
    return np.where(keys[pos] == queries, values[pos], 0)


class KneserNeyLM:
    """Interpolated Kneser-Ney over integer ids in [0, vocab_size) (lesson 01 §8): P(w | h) =
    max(c(h w) − D, 0) / c(h ·) + D · N1+(h ·) / c(h ·) · P(w | h'), h' = h without its oldest
    word, c the continuation count N1+(· h w) below the top order; the uniform 1/|V| at the end."""

    def __init__(self, order: int, vocab_size: int, discount: float = 0.75):
        self.n = check_whole(order, "order", "KneserNeyLM", minimum=1)
        self.V = check_whole(vocab_size, "vocab_size", "KneserNeyLM", minimum=1)
        if not 0 < discount < 1:
            raise ValueError(f"discount must be in (0, 1), got {discount}")
        self.D, self.dtype = float(discount), _code_dtype(self.V, self.n)

    def _ids(self, ids, name: str, where: str) -> np.ndarray:
        ids = np.asarray(ids).ravel()
        ids = ids.astype(np.int64) if ids.size == 0 else ids    # an empty history: no ids
        ids = check_ids(ids, self.V, name, f"KneserNeyLM.{where}", noun="token ids")
        return ids.astype(np.int64)

    def _check_fitted(self, where: str) -> None:
        if not hasattr(self, "levels"):
            raise RuntimeError(f"KneserNeyLM.{where}: the model has not been fitted; call "
                               "fit(ids) first")

    def fit(self, ids) -> "KneserNeyLM":
        """Count the n-grams of every order in the stream ``ids``."""
        ids = self._ids(ids, "ids", "fit")
        if len(ids) < self.n:
            raise ValueError(f"need at least {self.n} tokens to fit an order-{self.n} model, got "
                             f"{len(ids)}")
        keys, counts = np.unique(_codes(ids, self.n, self.V, self.dtype), return_counts=True)
        self.levels = {self.n: (keys, counts.astype(np.float64))}
        for k in range(self.n - 1, 0, -1):            # continuation counts: drop the oldest word
            suffixes = self.levels[k + 1][0] % self.dtype(self.V ** k)
            keys, counts = np.unique(suffixes, return_counts=True)
            self.levels[k] = (keys, counts.astype(np.float64))
        return self

    def token_nll(self, ids, start: int | None = None) -> np.ndarray:
        """−log P(ids[i] | up to n−1 ids before it), i = start .. len − 1, in nats (lesson 01 §8);
        ``start`` below n − 1 scores the first targets with the shorter history they have."""
        self._check_fitted("token_nll")
        ids = self._ids(ids, "ids", "token_nll")
        if start is None:
            start = self.n - 1
        start = check_whole(start, "start", "KneserNeyLM.token_nll")
        if not 0 <= start < len(ids):
            raise ValueError(f"start must be in [0, {len(ids)}) for {len(ids)} tokens, got {start}")
        pos, V = np.arange(start, len(ids)), self.dtype(self.V)
        p = np.full(len(pos), 1.0 / self.V)
        for k in range(1, min(self.n, len(ids)) + 1):  # from the unigram up to the full history
            keys, counts = self.levels[k]
            contexts, first = np.unique(keys // V, return_index=True)
            total = np.add.reduceat(counts, first)
            types = np.diff(np.append(first, len(keys))).astype(np.float64)
            grams = _codes(ids, k, self.V, self.dtype)[np.maximum(pos - k + 1, 0)]  # ending at pos
            t = np.where(pos >= k - 1, _lookup(contexts, total, grams // V), 0)
            c, ty = _lookup(keys, counts, grams), _lookup(contexts, types, grams // V)
            seen = t > 0
            t = np.where(seen, t, 1.0)
            p = np.where(seen, np.maximum(c - self.D, 0) / t + self.D * ty / t * p, p)
        return -np.log(p)

    def prob(self, context, w: int) -> float:
        """P(w | context), the last n − 1 ids of ``context`` used."""
        context, w = self._ids(context, "context", "prob"), self._ids(w, "w", "prob")
        if w.size != 1:
            raise ValueError(f"KneserNeyLM.prob: w must be one token id, got {w.size}")
        history = context[max(len(context) - self.n + 1, 0):] if self.n > 1 else context[:0]
        return float(np.exp(-self.token_nll(np.append(history, w), start=len(history))[0]))

    def mean_nll(self, ids) -> float:
        """The mean of :meth:`token_nll` over ``ids`` (nats per token)."""
        return float(self.token_nll(ids).mean())

    def unseen_fraction(self, ids) -> float:
        """The share of the full-order n-grams of ``ids`` never seen in training."""
        self._check_fitted("unseen_fraction")
        codes = _codes(self._ids(ids, "ids", "unseen_fraction"), self.n, self.V, self.dtype)
        return float(np.mean(_lookup(*self.levels[self.n], codes) == 0)) if len(codes) else 0.0


def kneser_ney_nlls(train, eval_ids, order: int, vocab_size: int,
                    discount: float = 0.75) -> np.ndarray:
    """Per-token NLL of ``eval_ids[order-1:]``, Kneser-Ney counted on ``train`` (lesson 02 §4)."""
    return KneserNeyLM(order, vocab_size, discount).fit(train).token_nll(eval_ids)
