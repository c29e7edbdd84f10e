"""A count-based baseline for masked-token prediction (lesson 10): a bigram model read in both
directions, P(w | l, _, r) ∝ P(w | l) · P(r | w), fills a blank from its neighbours."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from helpers.lib.mlm import IGNORE


class BlankBigram:
    """A bigram model that fills a masked position from its neighbours (lesson 10 §3.1):
    ``probabilities(inputs, rows, cols)`` -> (M, V) over the ordinary pieces at the masked
    positions; ``lam`` weighs the bigram counts against the unigram distribution."""

    def __init__(self, vocab_size: int, n_special: int, mask_id: int, lam: float = 0.8,
                 left_only: bool = False):
        if not 0 < lam <= 1:
            raise ValueError(f"lam must lie in (0, 1], got {lam}")
        if not 0 <= mask_id < vocab_size or not 0 < n_special < vocab_size:
            raise ValueError("need 0 <= mask_id < vocab_size and 0 < n_special < vocab_size, got "
                             f"mask_id={mask_id}, n_special={n_special}, vocab_size={vocab_size}")
        self.V, self.n_special, self.mask_id = int(vocab_size), int(n_special), int(mask_id)
        self.lam, self.left_only = float(lam), bool(left_only)
        self.counts = None

    def fit(self, seqs: Sequence[np.ndarray]) -> "BlankBigram":
        """Count unigrams and bigrams of ``seqs``; returns self."""
        seqs = [np.asarray(s) for s in seqs if len(s)]
        if not seqs:
            raise ValueError("BlankBigram.fit: no sequence to count")
        ids = np.concatenate(seqs)
        if ids.min() < 0 or ids.max() >= self.V:
            raise ValueError(f"BlankBigram.fit: ids must lie in [0, {self.V}), got "
                             f"[{ids.min()}, {ids.max()}]")
        left = np.concatenate([s[:-1] for s in seqs])
        right = np.concatenate([s[1:] for s in seqs])
        C = sp.csr_matrix((np.ones(len(left)), (left, right)), shape=(self.V, self.V))
        C.sum_duplicates()
        self.counts = C                                       # (V, V): c(l, w)
        self._by_column = C.tocsc()
        self._row_total = np.asarray(C.sum(1)).ravel()        # c(l) = Σ_w c(l, w)
        uni = np.bincount(ids, minlength=self.V).astype(np.float64) + 1
        self.smoothing = uni / uni.sum()                      # add-one over every id
        uni[:self.n_special] = 0
        self.unigram = uni / uni.sum()                        # add-one over the ordinary pieces
        return self

    def _follow(self, rows: np.ndarray) -> np.ndarray:
        """P(· | l) for each l of ``rows``: (len(rows), V)."""
        counts = self.counts[rows].toarray()
        return (self.lam * counts / np.maximum(self._row_total[rows], 1)[:, None]
                + (1 - self.lam) * self.smoothing)

    def _precede(self, cols: np.ndarray) -> np.ndarray:
        """P(r | w) for every w, for each r of ``cols``: (len(cols), V)."""
        counts = self._by_column[:, cols].toarray().T            # c(w, r), (len(cols), V)
        return (self.lam * counts / np.maximum(self._row_total, 1)[None, :]
                + (1 - self.lam) * self.smoothing[cols][:, None])

    def probabilities(self, inputs: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """(M, V) distribution over the pieces of the blanks at ``(rows, cols)`` of ``inputs``."""
        if self.counts is None:
            raise RuntimeError("BlankBigram: call fit(seqs) first")
        inputs = np.asarray(inputs)
        if np.any(cols < 1) or np.any(cols > inputs.shape[1] - 2):
            raise ValueError("a blank needs a left and a right neighbour (never [CLS] or [SEP] "
                             "itself)")
        left, right = inputs[rows, cols - 1], inputs[rows, cols + 1]
        p = np.where((left == self.mask_id)[:, None], self.unigram, self._follow(left))
        if not self.left_only:
            p *= np.where((right == self.mask_id)[:, None], 1.0, self._precede(right))
        p[:, :self.n_special] = 0
        return p / p.sum(1, keepdims=True)

    def score(self, batches: Sequence, chunk: int = 2048) -> dict:
        """Top-1 accuracy and mean NLL (nats) at the masked positions of ``batches`` (MaskedBatch),
        with per-sentence ``right`` and ``count`` (n,) for a bootstrap over the sentences that
        have a masked piece: {'accuracy', 'nll', 'n_masked', 'right', 'count'}."""
        right, count, nll, n = [], [], 0.0, 0
        for b in batches:
            rows, cols = np.nonzero(b.labels != IGNORE)
            hits = np.zeros(b.labels.shape[0], dtype=np.int64)
            for k in range(0, len(rows), chunk):
                r, c = rows[k:k + chunk], cols[k:k + chunk]
                p = self.probabilities(b.inputs, r, c)
                t = b.labels[r, c]
                np.add.at(hits, r, p.argmax(1) == t)
                nll -= float(np.log(p[np.arange(len(t)), t]).sum())
                n += len(t)
            per = (b.labels != IGNORE).sum(1)
            right.append(hits[per > 0])
            count.append(per[per > 0])
        if n == 0:
            raise ValueError("BlankBigram.score: the batches have no masked position")
        right, count = np.concatenate(right), np.concatenate(count)
        return {"accuracy": float(right.sum() / count.sum()), "nll": nll / n, "n_masked": n,
                "right": right.astype(np.int64), "count": count.astype(np.int64)}
