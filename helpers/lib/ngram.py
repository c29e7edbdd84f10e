"""A count-based n-gram language model with interpolated Kneser-Ney smoothing.

The baseline the neural language models are compared against: training is one pass of
counting; smoothing gives every vocabulary word a non-zero probability in every context.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np

from helpers.lib.checks import check_ids, check_whole
from helpers.lib.layers import check_class_ids


class KneserNeyLM:
    """Interpolated Kneser-Ney n-gram model over integer token ids. Taught in lesson 01, section 9.

    P(w | h) = max(c(h w) - D, 0) / c(h .) + D * N1+(h .) / c(h .) * P(w | h')

    where h' drops the oldest word of h. Lower orders use continuation counts
    (in how many distinct contexts a word follows) instead of raw counts, and the
    lowest order is interpolated with the uniform distribution over the vocabulary,
    so no probability is ever zero.

    Parameters: ``order`` n (3 = trigram), ``vocab_size`` |V|, discount ``D`` in (0, 1).
    """

    def __init__(self, order: int, vocab_size: int, discount: float = 0.75):
        order = check_whole(order, "order", "KneserNeyLM", minimum=1)
        vocab_size = check_whole(vocab_size, "vocab_size", "KneserNeyLM", minimum=1)
        if not 0 < discount < 1:
            raise ValueError(f"discount must be in (0, 1), got {discount}")
        self.n, self.V, self.D = order, vocab_size, discount

    def fit(self, ids: np.ndarray) -> "KneserNeyLM":
        """Count n-grams of all orders in the id stream ``ids`` (1-D int array, ids in [0, vocab_size))."""
        ids = check_ids(np.asarray(ids).ravel(), self.V, "ids", "KneserNeyLM.fit", noun="token ids")
        ids = [int(i) for i in ids]
        if len(ids) < self.n:
            raise ValueError(f"need at least {self.n} tokens to fit an order-{self.n} model, got {len(ids)}")
        n = self.n
        top = Counter(zip(*(ids[i:] for i in range(n)), strict=False))  # n-gram windows: ids[i:] is i shorter
        # counts[k]: n-gram (length k+1) -> count used at that order
        self.counts: list[Counter] = [Counter() for _ in range(n)]
        self.counts[n - 1] = top
        for k in range(n - 1, 0, -1):  # continuation counts for the lower orders
            cont = Counter()
            for gram in self.counts[k]:
                cont[gram[1:]] += 1
            self.counts[k - 1] = cont
        # per context: total count and number of distinct followers
        self.ctx_total: list[dict] = []
        self.ctx_types: list[dict] = []
        for k in range(n):
            tot, types = defaultdict(int), defaultdict(int)
            for gram, c in self.counts[k].items():
                tot[gram[:-1]] += c
                types[gram[:-1]] += 1
            self.ctx_total.append(dict(tot))
            self.ctx_types.append(dict(types))
        return self

    def prob(self, context: tuple[int, ...], w: int) -> float:
        """P(w | context) with the last n-1 ids of ``context`` used (ids in [0, vocab_size))."""
        self._check_fitted("prob")
        w = int(check_ids(np.asarray(w), self.V, "w", "KneserNeyLM.prob", noun="token ids"))
        context = check_ids(np.asarray(context, dtype=np.int64 if len(context) == 0 else None).ravel(), self.V,
                            "context", "KneserNeyLM.prob", noun="token ids")
        return self._prob(tuple(int(c) for c in context), w)

    def _check_fitted(self, method: str) -> None:
        if not hasattr(self, "counts"):
            raise RuntimeError(f"KneserNeyLM.{method}: the model has not been fitted; call fit(ids) first")

    def _prob(self, context: tuple[int, ...], w: int) -> float:
        """P(w | context) for ids already checked (a tuple of ints and an int)."""
        context = context[-(self.n - 1):] if self.n > 1 else ()
        p = 1.0 / self.V  # order 0: uniform
        for k in range(0, len(context) + 1):  # from unigram (k=0) up to the full context
            h = context[len(context) - k:]
            total = self.ctx_total[k].get(h, 0)
            if total == 0:
                continue  # unseen context: keep the lower-order estimate
            c = self.counts[k].get(h + (w,), 0)
            p = max(c - self.D, 0) / total + self.D * self.ctx_types[k][h] / total * p
        return p

    def mean_nll(self, ids: np.ndarray) -> float:
        """Mean negative log-likelihood (nats) of each token of ``ids`` given the
        previous n-1 tokens (the first n-1 tokens only serve as context)."""
        ids = check_class_ids(np.asarray(ids).ravel(), self.V, "KneserNeyLM.mean_nll", "ids")
        if len(ids) < self.n:
            raise ValueError(f"need at least {self.n} tokens to evaluate, got {len(ids)}")
        return float(self.token_nll(ids).mean())

    def token_nll(self, ids: np.ndarray, start: int | None = None) -> np.ndarray:
        """Negative log-likelihood (nats) of each token ``ids[start:]`` given the up to n-1 tokens
        before it, as a float64 array of length len(ids) - start. Taught in lesson 01, section 9.

        ``start`` defaults to n-1 (every scored token has a full context); a smaller ``start`` scores
        the same targets as a model with a shorter window (its first tokens use the shorter context
        they have), so two models can be compared token by token."""
        self._check_fitted("token_nll")
        ids = np.asarray(ids).ravel()
        start = self.n - 1 if start is None else check_whole(start, "start", "KneserNeyLM.token_nll")
        if not 0 <= start < len(ids):
            raise ValueError(f"start must be in [0, {len(ids)}) for {len(ids)} tokens, got {start}")
        ids = [int(i) for i in check_class_ids(ids, self.V, "KneserNeyLM.token_nll", "ids")]
        h = self.n - 1
        return np.array([-math.log(self._prob(tuple(ids[max(i - h, 0):i]), ids[i])) for i in range(start, len(ids))])

    def unseen_fraction(self, ids: np.ndarray) -> float:
        """Fraction of the full-order n-grams in ``ids`` never seen in training."""
        self._check_fitted("unseen_fraction")
        ids = [int(i) for i in check_ids(np.asarray(ids).ravel(), self.V, "ids", "KneserNeyLM.unseen_fraction",
                                         noun="token ids")]
        grams = list(zip(*(ids[i:] for i in range(self.n)), strict=False))  # n-gram windows
        return sum(g not in self.counts[self.n - 1] for g in grams) / max(len(grams), 1)


def _gram_codes(ids: np.ndarray, k: int, V: int) -> np.ndarray:
    """Each window ids[i:i+k] as one integer sum_j ids[i+j] * V**(k-1-j): (len(ids) - k + 1,) int64."""
    codes = np.zeros(len(ids) - k + 1, dtype=np.int64)
    for j in range(k):
        codes = codes * V + ids[j:len(ids) - k + 1 + j]
    return codes


def _lookup(keys: np.ndarray, values: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """values[keys == q] for each query (0 where the sorted ``keys`` lack it)."""
    if len(keys) == 0:
        return np.zeros(len(queries), dtype=values.dtype)
    pos = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
    return np.where(keys[pos] == queries, values[pos], 0)


def kneser_ney_nlls(train: np.ndarray, eval_ids: np.ndarray, order: int, vocab_size: int,
                    discount: float = 0.75) -> np.ndarray:
    """Per-token NLL of interpolated Kneser-Ney, vectorised. Taught in lesson 02, section 4.

    The same model as :class:`KneserNeyLM` (same counts, same recursion, same numbers to rounding:
    ``tests/test_ngram.py`` checks it), computed with sorted integer codes of the n-grams instead of
    Python dictionaries, so a 5-gram over a million tokens takes seconds, not minutes.
    Returns -log P(eval_ids[i] | the order-1 ids before it) for i = order-1 .. len-1:
    shape (len(eval_ids) - order + 1,), float64, nats.
    """
    V = check_whole(vocab_size, "vocab_size", "kneser_ney_nlls", minimum=1)
    n, D = check_whole(order, "order", "kneser_ney_nlls", minimum=1), float(discount)
    if not 0 < D < 1:
        raise ValueError(f"discount must be in (0, 1), got {discount}")
    if V ** n >= 2 ** 63:
        raise ValueError(f"vocab_size**order = {V}**{n} does not fit in int64 codes")
    # the dtype is checked before the conversion to int64, which would truncate float ids
    train = check_class_ids(np.asarray(train).ravel(), V, "kneser_ney_nlls", "train").astype(np.int64)
    ev = check_class_ids(np.asarray(eval_ids).ravel(), V, "kneser_ney_nlls", "eval_ids").astype(np.int64)
    if len(train) < n or len(ev) < n:
        raise ValueError(f"need at least {n} tokens in train and eval_ids, got {len(train)} and {len(ev)}")
    # counts[k]: sorted codes of the k-grams and their counts (raw at the top order, continuation below)
    keys, cnt = np.unique(_gram_codes(train, n, V), return_counts=True)
    levels = {n: (keys, cnt.astype(np.float64))}
    for k in range(n - 1, 0, -1):
        keys, cnt = np.unique(levels[k + 1][0] % V ** k, return_counts=True)   # drop the oldest word
        levels[k] = (keys, cnt.astype(np.float64))
    nll_positions = len(ev) - n + 1
    p = np.full(nll_positions, 1.0 / V)
    for k in range(1, n + 1):
        keys, cnt = levels[k]
        ctx, first = np.unique(keys // V, return_index=True)                   # contexts: keys sorted by them
        total = np.add.reduceat(cnt, first)
        types = np.diff(np.append(first, len(keys))).astype(np.float64)
        grams = _gram_codes(ev, k, V)[n - k:]                                   # the k-gram ending at each position
        t = _lookup(ctx, total, grams // V)
        c = _lookup(keys, cnt, grams)
        seen = t > 0
        t_safe = np.where(seen, t, 1.0)
        ty = _lookup(ctx, types, grams // V)
        p = np.where(seen, np.maximum(c - D, 0) / t_safe + D * ty / t_safe * p, p)
    return -np.log(p)
