"""GloVe trained in NumPy, pair by pair as its reference code does. Taught in lesson 08, section 4.

The reference code (glove.c) visits the co-occurring pairs (i, j) in a random order. For each it
computes the residual e = w_i·w~_j + b_i + b~_j − log X_ij and the gradients of the cell's loss
f(X_ij)·e², and moves each of the four parameters by one **AdaGrad step in glove.c's order**: the
step η·g is divided by the square root of the sum G of the squared steps taken before it (started
at 1), and then its own square is added to G. (glove.c's g is the gradient of ½·f·e², half of the
one here; only η·g enters the step, so that is the same as halving η.)

- :func:`glove_cell`: the loss Σ f e² of a batch of cells and every pair's gradients;
- :func:`adagrad_glove_c`: one AdaGrad step in glove.c's order, element-wise;
- :func:`add_rows`: ``target[ids] += values`` with repeated ids summed (what ``np.add.at`` does),
  as a product with a sparse one-hot matrix (:func:`one_hot_sums`), which is many times faster;
- :class:`PairwiseGloVe`: the training loop of lesson 08's live run. Each step takes a batch of
  pairs; every pair takes its own step from the parameters and sums at the batch's start, and the
  steps of a word that occurs in several pairs are added. That is what
  :func:`helpers.lib.glove.train_pairwise` does in PyTorch for the shipped model; with the same seed
  the two visit the pairs in the same order and agree to float32 rounding (a test checks it).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp
import torch

from helpers.lib.checks import check_ids
from helpers.lib.glove import cooccurrence_entries

__all__ = ["glove_cell", "adagrad_glove_c", "one_hot_sums", "add_rows", "PairwiseGloVe"]


def glove_cell(w, w_t, b, b_t, x, x_max: float = 100.0, alpha: float = 0.75):
    """GloVe's loss and gradients for a batch of co-occurring cells (i, j). Taught in lesson 08, section 4.

    w, w_t: (P, D) the vectors w_i and w~_j of each pair (or (D,) for one pair); b, b_t, x: (P,)
    (or scalars) the biases and the counts X_ij > 0. With f = f(x) and
    e = w·w~ + b + b~ − log x, returns (loss, dw, dw_t, db, db_t): loss = Σ f e² (a float), and
    the gradients of each pair's f e² with respect to its own w, w~ (shapes of w), b, b~ (shapes
    of b): dw = 2 f e w~, dw_t = 2 f e w, db = db_t = 2 f e. Computed in the dtype of ``w``.
    """
    w, w_t = np.asarray(w), np.asarray(w_t)
    x = np.asarray(x, dtype=w.dtype)
    if x.size and not x.min() > 0:                             # log X_ij needs a count above 0 (nan fails too)
        raise ValueError(f"glove_cell: every count x must be > 0 (GloVe fits log X_ij), got minimum {x.min()}")
    f = np.where(x < x_max, (np.minimum(x, x_max) / x_max) ** alpha, 1.0).astype(w.dtype)
    e = np.sum(w * w_t, axis=-1) + b + b_t - np.log(x)
    g = 2 * f * e                                              # d(f e²)/de, one per pair
    return float(np.sum(f * e * e)), g[..., None] * w_t, g[..., None] * w, g, g


def adagrad_glove_c(param, grad, G, lr: float):
    """One AdaGrad step in glove.c's order, element-wise. Taught in lesson 08, section 4.

    param, grad, G: arrays of one shape (G: the sum of the squared steps so far, started at 1).
    The step lr·grad is divided by √G *before* its own square is added. Returns
    (new_param, new_G) = (param − lr·grad / √G, G + (lr·grad)²).
    """
    step = lr * grad
    return param - step / np.sqrt(G), G + step * step


def one_hot_sums(ids: np.ndarray, n_rows: int, dtype=np.float32) -> tuple[np.ndarray, sp.csr_matrix]:
    """What ``target[ids] += values`` needs, built once for several targets. Taught in lesson 08, section 4.

    ids: (P,) ints in [0, n_rows). Returns (uniq, S): uniq (U,) the distinct ids, sorted, and S the
    sparse (U, P) one-hot matrix with S[u, p] = 1 where ids[p] == uniq[u], so that
    ``target[uniq] += S @ values`` adds every row of ``values`` (P, ...) to its id's row, a repeated
    id's rows summed.
    """
    ids = check_ids(np.asarray(ids).reshape(-1), n_rows, "ids", "add_rows")   # -1 would wrap around
    uniq, inv = np.unique(ids, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    indptr = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(np.bincount(inv, minlength=len(uniq)), out=indptr[1:])
    return uniq, sp.csr_matrix((np.ones(len(ids), dtype), order, indptr), shape=(len(uniq), len(ids)))


def add_rows(target: np.ndarray, ids: np.ndarray, values: np.ndarray) -> None:
    """``target[ids] += values`` in place, a repeated id's values summed. Taught in lesson 08, section 4.

    What ``np.add.at`` does.

    target: (V,) or (V, D); ids: (P,) ints in [0, V); values: (P,) or (P, D). The sum per id is
    the product of a sparse (U, P) one-hot matrix (U = the distinct ids, :func:`one_hot_sums`) with ``values``.
    """
    uniq, S = one_hot_sums(ids, len(target), target.dtype)
    target[uniq] += S @ values


class PairwiseGloVe:
    """GloVe trained in NumPy as glove.c trains it, a batch of pairs per step. Taught in lesson 08, section 4.

    counts: (V, V) sparse co-occurrence matrix; dim, lr, x_max, alpha, batch_size, seed: as the
    shipped model's settings. ``cell`` (:func:`glove_cell`'s signature) and ``step``
    (:func:`adagrad_glove_c`'s) are the functions the training uses — lesson 08 passes the
    student's. The initialisation (uniform in ±0.5/D, biases too, float32, from
    ``np.random.default_rng(seed)``) and each epoch's order of the pairs (``torch.randperm`` from a
    generator seeded with ``seed``: only the order is drawn with PyTorch) are exactly those of
    :func:`helpers.lib.glove.train_pairwise`.

    ``params`` = [W (V, D), W~ (V, D), b (V,), b~ (V,)], ``G`` their AdaGrad sums;
    :meth:`step` trains one batch and returns its loss per pair (Σ f e² / batch);
    :meth:`vectors` is W + W~ (the paper's choice); ``pairs_seen`` and ``epochs`` count progress.
    """

    def __init__(self, counts, dim: int = 100, lr: float = 0.05, x_max: float = 100.0, alpha: float = 0.75,
                 batch_size: int = 1024, seed: int = 0, cell: Callable = glove_cell,
                 step: Callable = adagrad_glove_c):
        if dim < 1 or batch_size < 1 or not lr > 0:
            raise ValueError(f"dim and batch_size must be >= 1 and lr > 0, got {dim}, {batch_size}, {lr}")
        self.rows, self.cols, x = cooccurrence_entries(counts)
        self.x = x.astype(np.float32)
        V, self.P = counts.shape[0], len(x)
        self.lr, self.x_max, self.alpha, self.batch_size = lr, x_max, alpha, batch_size
        self.cell, self.adagrad = cell, step
        self.rng = np.random.default_rng(seed)

        def uniform(*shape):
            return ((self.rng.random(shape) - 0.5) / dim).astype(np.float32)
        self.params = [uniform(V, dim), uniform(V, dim), uniform(V), uniform(V)]
        self.G = [np.ones_like(p) for p in self.params]                  # AdaGrad's sums start at 1
        self._gen = torch.Generator().manual_seed(seed)                 # the shipped trainer's pair order
        self.order, self.position, self.pairs_seen = self._permutation(), 0, 0

    def _permutation(self) -> np.ndarray:
        return torch.randperm(self.P, generator=self._gen).numpy()

    @property
    def epochs(self) -> float:
        """Epochs trained so far (pairs seen / pairs)."""
        return self.pairs_seen / self.P

    def vectors(self) -> np.ndarray:
        """W + W~ (V, D) float32."""
        return self.params[0] + self.params[1]

    def step(self) -> float:
        """Train on the next batch of pairs (a new epoch reshuffles); return the batch's loss per pair."""
        if self.position >= self.P:                                      # a new epoch, a new order
            self.order, self.position = self._permutation(), 0
        batch = self.order[self.position:self.position + self.batch_size]
        self.position += len(batch)
        self.pairs_seen += len(batch)
        i, j = self.rows[batch], self.cols[batch]
        W, W_t, b, b_t = self.params
        loss, dw, dw_t, db, db_t = self.cell(W[i], W_t[j], b[i], b_t[j], self.x[batch], self.x_max, self.alpha)
        for ids, updates in ((i, ((W, self.G[0], dw), (b, self.G[2], db))),
                             (j, ((W_t, self.G[1], dw_t), (b_t, self.G[3], db_t)))):
            uniq, S = one_hot_sums(ids, len(W))                              # add_rows's one-hot, built once per side
            for param, G, grad in updates:
                old, old_G = param[ids], G[ids]
                new, new_G = self.adagrad(old, grad / 2, old_G, self.lr)    # glove.c's gradient: that of ½ f e²
                param[uniq] += S @ (new - old).astype(param.dtype)       # each pair's step; a word's steps add up
                G[uniq] += S @ (new_G - old_G).astype(G.dtype)
        return loss / len(batch)
