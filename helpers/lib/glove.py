"""GloVe (Pennington, Socher & Manning 2014) in NumPy, trained pair by pair as glove.c trains it
(lesson 08). Word w, context c:

    J = Σ_{X_wc > 0} f(X_wc) (v_w·u_c + b_w + b~_c − log X_wc)²,
    f(x) = (x / x_max)^α if x < x_max else 1          (the paper: x_max = 100, α = 0.75)

AdaGrad as glove.c: the step η·g is divided by √G (G starts at 1), then g² is added to G.
``unseen=k`` adds Swivel's (Shazeer et al. 2016) term for cells that never occur: k sampled cells,
each with the one-sided loss f0·[e > 0]·e², e = v_w·u_c + b_w + b~_c − (log(X_w X_c / X) − margin).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp
import torch

from helpers.lib.checks import describe_offending
from helpers.lib.sgns import one_hot_sums


def glove_weight(x, x_max: float = 100.0, alpha: float = 0.75) -> np.ndarray:
    """GloVe's weight f(x) of a co-occurrence count, element-wise (lesson 08 §2)."""
    if not (x_max > 0 and np.isfinite(x_max)):
        raise ValueError(f"glove_weight: x_max must be a positive number, got {x_max}")
    if not (alpha > 0 and np.isfinite(alpha)):
        raise ValueError(f"glove_weight: alpha must be a positive number, got {alpha}")
    x = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        raise ValueError("glove_weight: co-occurrence counts must be finite and non-negative, got "
                         + describe_offending(x, bad, "counts"))
    return np.where(x < x_max, (np.minimum(x, x_max) / x_max) ** alpha, 1.0)


def cooccurrence_entries(counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zero cells of a (V, V) co-occurrence matrix: (rows, cols, x) (lesson 08 §4)."""
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError("the co-occurrence matrix must be square (V, V), got shape "
                         f"{counts.shape}")
    c = sp.coo_matrix(counts)
    rows, cols, x = c.row.astype(np.int64), c.col.astype(np.int64), c.data.astype(np.float64)
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        raise ValueError("cooccurrence_entries: co-occurrence counts must be finite and "
                         "non-negative, got "
                         + describe_offending(x, bad, "stored counts"))
    keep = x > 0
    if not keep.any():
        raise ValueError("the co-occurrence matrix is empty: no pair of words co-occurs")
    return rows[keep], cols[keep], x[keep]


def glove_init(vocab_size: int, dim: int, rng: np.random.Generator) -> list[np.ndarray]:
    """[W, W~ (V, D), b, b~ (V,)] float32, uniform in ±0.5/D, as glove.c starts (lesson 08 §4)."""
    return [((rng.random(shape) - 0.5) / dim).astype(np.float32)
            for shape in ((vocab_size, dim), (vocab_size, dim), (vocab_size,), (vocab_size,))]


def glove_cell(v, u, b_w, b_c, x, x_max: float = 100.0, alpha: float = 0.75):
    """GloVe's loss and gradients for P co-occurring cells (lesson 08 §4): v, u (P, D), b_w, b_c,
    x (P,); with e = v·u + b_w + b_c − log x, (Σ f e², 2fe·u, 2fe·v, 2fe, 2fe)."""
    v, u = np.asarray(v), np.asarray(u)
    x = np.asarray(x, dtype=v.dtype)
    if x.size and not (x.min() > 0 and x.max() < np.inf):     # log X needs a finite count above 0
        raise ValueError("glove_cell: every count x must be finite and > 0 (GloVe fits log X_wc), "
                         "got values "
                         f"from {x.min()} to {x.max()}")
    f = np.where(x < x_max, (np.minimum(x, x_max) / x_max) ** alpha, 1.0).astype(v.dtype)
    e = np.sum(v * u, axis=-1) + b_w + b_c - np.log(x)
    g = 2 * f * e                                       # d(f e²)/de
    return float(np.sum(f * e * e)), g[..., None] * u, g[..., None] * v, g, g


def adagrad_glove_c(param, grad, G, lr: float):
    """One AdaGrad step in glove.c's order, element-wise (lesson 08 §4): (param − lr·grad/√G,
    G + (lr·grad)²), the step divided by the √G of before it."""
    step = lr * grad
    return param - step / np.sqrt(G), G + step * step




class PairwiseGloVe:
    """GloVe trained in NumPy as glove.c trains it, one batch of pairs per step (lesson 08 §4):
    ``cell`` and ``step`` the functions it trains with, ``params`` = [W, W~, b, b~], ``G`` their
    AdaGrad sums; ``unseen`` > 0 adds sampled unseen cells (lesson 08 §5)."""

    def __init__(self, counts, dim: int = 100, lr: float = 0.05, x_max: float = 100.0,
                 alpha: float = 0.75, batch_size: int = 1024, seed: int = 0,
                 cell: Callable = glove_cell, step: Callable = adagrad_glove_c,
                 unseen: int = 0, unseen_weight: float = 0.1, margin: float = 0.0):
        if dim < 1 or batch_size < 1 or not lr > 0:
            raise ValueError("PairwiseGloVe: dim and batch_size must be >= 1 and lr > 0, got "
                             f"{dim}, {batch_size}, {lr}")
        if unseen < 0 or not (unseen_weight > 0 and np.isfinite(margin)):
            raise ValueError("PairwiseGloVe: unseen must be >= 0, unseen_weight > 0 and margin "
                             f"finite, got {unseen}, {unseen_weight}, {margin}")
        self.rows, self.cols, x = cooccurrence_entries(counts)
        self.x = x.astype(np.float32)
        self.P = len(x)
        self.lr, self.x_max, self.alpha, self.batch_size = lr, x_max, alpha, batch_size
        self.cell, self.adagrad = cell, step
        self.params = glove_init(counts.shape[0], dim, np.random.default_rng(seed))
        self.G = [np.ones_like(p) for p in self.params]                 # AdaGrad's sums start at 1
        self._gen = torch.Generator().manual_seed(seed)                # the shipped trainer's order
        self.order, self.position, self.pairs_seen = self._permutation(), 0, 0
        self.unseen, self.unseen_weight, self.margin = unseen, unseen_weight, margin
        if unseen:
            V = counts.shape[0]
            x_w = np.bincount(self.rows, weights=x, minlength=V)        # X_w = Σ_c X_wc
            self.log_x_w = np.log(x_w, where=x_w > 0, out=np.zeros(V))
            self.log_total = float(np.log(x_w.sum()))
            self.unigram_cdf = np.cumsum(x_w ** 0.75 / np.sum(x_w ** 0.75))
            self.seen_keys = np.sort(self.rows.astype(np.int64) * V + self.cols)  # cell (w, c)
            self._rng = np.random.default_rng(seed)

    def _permutation(self) -> np.ndarray:
        return torch.randperm(self.P, generator=self._gen).numpy()

    @property
    def epochs(self) -> float:
        """Epochs trained so far."""
        return self.pairs_seen / self.P

    def vectors(self) -> np.ndarray:
        """W + W~ (V, D) float32, the paper's word vectors."""
        return self.params[0] + self.params[1]

    def step(self) -> float:
        """Train on the next batch of pairs (a new epoch reshuffles); return its loss per pair."""
        batch = self.next_batch()
        i, j = self.rows[batch], self.cols[batch]
        W, W_t, b, b_t = self.params
        loss, *grads = self.cell(W[i], W_t[j], b[i], b_t[j], self.x[batch], self.x_max,
                                 self.alpha)
        i0, j0 = self.unseen_cells()
        if len(i0):
            x0 = np.exp(self.unseen_floor(i0, j0)).astype(np.float32)
            # the same cell function, with the target log x0 = t0 and x_max = min x0 (so f = 1),
            # then weighted by f0·[e > 0]: db_w = 2e is positive where the prediction is above t0
            _, *more = self.cell(W[i0], W_t[j0], b[i0], b_t[j0], x0, float(x0.min()), self.alpha)
            on = (self.unseen_weight * (more[2] > 0)).astype(np.float32)
            i, j = np.concatenate([i, i0]), np.concatenate([j, j0])
            grads = [np.concatenate([g, m * (on[:, None] if m.ndim == 2 else on)])
                     for g, m in zip(grads, more, strict=True)]
        self.update(i, j, grads)
        return loss / len(batch)

    def unseen_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """``unseen`` cells (w, c), w and c each drawn by unigram^0.75, those that occur
        dropped: (rows, cols)."""
        if not self.unseen:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        V = len(self.unigram_cdf)
        draws = np.searchsorted(self.unigram_cdf, self._rng.random((2, self.unseen)))
        i, j = np.minimum(draws, V - 1)
        keys = i.astype(np.int64) * V + j
        at = np.minimum(np.searchsorted(self.seen_keys, keys), len(self.seen_keys) - 1)
        unseen = self.seen_keys[at] != keys
        return i[unseen], j[unseen]

    def unseen_floor(self, i, j) -> np.ndarray:
        """The floor t0 = log(X_w X_c / X) − margin of unseen cells (w = i, c = j)."""
        return self.log_x_w[i] + self.log_x_w[j] - self.log_total - self.margin

    def next_batch(self) -> np.ndarray:
        """The indices of the next batch of pairs (a new epoch reshuffles)."""
        if self.position >= self.P:
            self.order, self.position = self._permutation(), 0
        batch = self.order[self.position:self.position + self.batch_size]
        self.position += len(batch)
        self.pairs_seen += len(batch)
        return batch

    def update(self, i, j, grads) -> None:
        """One AdaGrad step per cell (w = i[p], c = j[p]) with its gradients (dv, du, db_w, db_c),
        all from the parameters and sums G as they are now; a word's steps add up."""
        W, W_t, b, b_t = self.params
        dw, dw_t, db, db_t = grads
        for ids, updates in ((i, ((W, self.G[0], dw), (b, self.G[2], db))),
                             (j, ((W_t, self.G[1], dw_t), (b_t, self.G[3], db_t)))):
            uniq, S = one_hot_sums(ids, len(W))
            for param, G, grad in updates:
                # fresh copies go in, so a step that updates its arguments in place is fine too
                # glove.c's gradient is that of ½ f e²
                new, new_G = self.adagrad(param[ids], grad / 2, G[ids], self.lr)
                param[uniq] += S @ (new - param[ids]).astype(param.dtype)    # a word's steps add up
                G[uniq] += S @ (new_G - G[ids]).astype(G.dtype)
