"""GloVe (Pennington, Socher & Manning 2014): word vectors from a weighted least-squares fit
to the logarithm of the co-occurrence counts (lesson 08).

For every pair (i, j) with X_ij > 0 the model wants w_i . w~_j + b_i + b~_j ≈ log X_ij:

    J = Σ_{X_ij > 0} f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2,
    f(x) = (x / x_max)^α  if x < x_max  else 1          (the paper: x_max = 100, α = 0.75)

Word vectors ``W`` and context vectors ``W~`` are separate, as are their biases; the paper's
final vectors are ``W + W~``. :class:`GloVeNumpy` is the loss as a NumPy layer, :class:`GloVeTorch`
the same in PyTorch, and :func:`train_pairwise` glove.c's per-pair AdaGrad in batches, the
trainer of the shipped GloVe.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

from helpers.infra.progress import progress_bar
from helpers.lib.checks import check_ids, check_whole, describe_offending
from helpers.lib.counting import cooccurrence_matrix
from helpers.lib.layers import Layer

__all__ = ["glove_weight", "glove_cooccurrence", "cooccurrence_entries", "GloVeNumpy",
           "GloVeVectors", "GloVeTorch", "pairwise_step_torch", "train_pairwise"]


# ---------------------------------------------------------------- weighting and data
def glove_weight(x, x_max: float = 100.0, alpha: float = 0.75) -> np.ndarray:
    """GloVe's weight f(x) of a co-occurrence count. Taught in lesson 08, section 2.

    f(x) = (x / x_max)^alpha for x < x_max, else 1: f(0) = 0, increasing, capped at 1.
    x: scalar or array of counts >= 0; returns float64 of the same shape."""
    if not (x_max > 0 and np.isfinite(x_max)):
        raise ValueError(f"x_max must be a positive number, got {x_max}")
    if not (alpha > 0 and np.isfinite(alpha)):
        raise ValueError(f"alpha must be a positive number, got {alpha}")
    x = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        raise ValueError("glove_weight: co-occurrence counts must be finite and non-negative, "
                         "got " + describe_offending(x, bad, "counts"))
    return np.where(x < x_max, (np.minimum(x, x_max) / x_max) ** alpha, 1.0)


def glove_cooccurrence(sentences_ids, vocab_size: int, window: int = 10) -> sp.csr_matrix:
    """GloVe's co-occurrence matrix, harmonic counts. Taught in lesson 08, section 2.

    Pairs within ±``window`` words of one sentence, a pair at distance d counting 1/d; symmetric
    (V, V) float64 CSR. The paper uses window 10."""
    return cooccurrence_matrix(sentences_ids, vocab_size, window=window, weighting="harmonic")


def cooccurrence_entries(counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zero entries of a co-occurrence matrix. Taught in lesson 08, section 2.

    counts: (V, V) sparse or dense, non-negative. Returns (rows (P,) int64, cols (P,) int64,
    x (P,) float64) for every X_ij > 0."""
    if sp.issparse(counts):
        c = sp.coo_matrix(counts)
        rows, cols, x = c.row.astype(np.int64), c.col.astype(np.int64), c.data.astype(np.float64)
    else:
        a = np.asarray(counts, dtype=np.float64)
        if a.ndim != 2:
            raise ValueError(f"counts must be a 2-D matrix, got shape {a.shape}")
        rows, cols = np.nonzero(a)
        x = a[rows, cols]
    if counts.shape[0] != counts.shape[1]:
        raise ValueError(f"the co-occurrence matrix must be square (V, V), got shape "
                         f"{counts.shape}")
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        raise ValueError("cooccurrence_entries: co-occurrence counts must be finite and "
                         "non-negative, got " + describe_offending(x, bad, "stored counts"))
    keep = x > 0
    if not keep.any():
        raise ValueError("the co-occurrence matrix is empty: no pair of words co-occurs")
    return rows[keep], cols[keep], x[keep]


# ---------------------------------------------------------------- NumPy layer
class GloVeNumpy(Layer):
    """GloVe's loss of a batch of pairs, as a NumPy layer. Taught in lesson 08, section 2.

    params = [W (V, D), W~ (V, D), b (V,), b~ (V,)], uniform in [-0.5/D, 0.5/D], as glove.c.

    forward(rows (P,) int, cols (P,) int, x (P,) float counts) -> J, the scalar
        Σ_p f(x_p) (w_rows[p] . w~_cols[p] + b_rows[p] + b~_cols[p] - log x_p)^2
    backward(dout=1.0) fills ``grads`` (dense; repeated ids accumulate) and returns None.

    With e_p = w_i.w~_j + b_i + b~_j - log x_p:  dJ/dw_i = Σ 2 f e w~_j,
    dJ/dw~_j = Σ 2 f e w_i, dJ/db_i = Σ 2 f e, dJ/db~_j = Σ 2 f e.
    """


    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator, x_max: float = 100.0,
                 alpha: float = 0.75, dtype=np.float64):
        super().__init__()
        if vocab_size < 1 or dim < 1:
            raise ValueError(f"vocab_size and dim must be >= 1, got {vocab_size} and {dim}")
        self.V, self.D, self.x_max, self.alpha = vocab_size, dim, x_max, alpha
        def u(*shape):
            return ((rng.random(shape) - 0.5) / dim).astype(dtype)
        self.params = [u(vocab_size, dim), u(vocab_size, dim), u(vocab_size), u(vocab_size)]
        self.grads = [np.zeros_like(p) for p in self.params]
        self.cache = None

    def _check(self, rows, cols, x):
        rows, cols = np.asarray(rows), np.asarray(cols)
        x = np.asarray(x, dtype=np.float64)
        if rows.ndim != 1 or rows.shape != cols.shape or rows.shape != x.shape:
            raise ValueError(f"rows, cols and x must be 1-D of one length, got shapes "
                             f"{rows.shape}, {cols.shape}, {x.shape}")
        rows = check_ids(rows, self.V, "rows", "GloVeNumpy.forward", noun="word ids")
        cols = check_ids(cols, self.V, "cols", "GloVeNumpy.forward", noun="word ids")
        bad = ~(np.isfinite(x) & (x > 0))
        if bad.any():
            raise ValueError("every count x must be positive and finite (log x is the target; "
                             "pass only X_ij > 0), got " + describe_offending(x, bad, "counts"))
        return rows, cols, x

    def pair_terms(self, rows, cols, x):
        """(f (P,), e (P,)): the weights and the residuals e = w.w~ + b + b~ - log x."""
        W, Wt, b, bt = self.params
        f = glove_weight(x, self.x_max, self.alpha).astype(W.dtype)
        e = (np.einsum("pd,pd->p", W[rows], Wt[cols]) + b[rows] + bt[cols]
             - np.log(x).astype(W.dtype))
        return f, e

    def forward(self, rows, cols, x):
        rows, cols, x = self._check(rows, cols, x)
        f, e = self.pair_terms(rows, cols, x)
        self.cache = (rows, cols, f, e)
        return self.remember(float(np.sum(f * e * e)))

    def pair_gradients(self, dout: float = 1.0):
        """Per-pair gradients of the last forward: (dw (P, D), dwt (P, D), db (P,)) where
        dw = dJ/dw_rows[p], dwt = dJ/dw~_cols[p], db = dJ/db_rows[p] = dJ/db~_cols[p]."""
        rows, cols, f, e = self.cache
        W, Wt, _, _ = self.params
        g = 2.0 * dout * f * e                                  # dJ/de_p
        return g[:, None] * Wt[cols], g[:, None] * W[rows], g

    def backward(self, dout: float = 1.0):
        self.check_dout(dout=dout)
        rows, cols, _, _ = self.cache
        dw, dwt, g = self.pair_gradients(dout)
        for grad in self.grads:
            grad[...] = 0
        np.add.at(self.grads[0], rows, dw)                      # repeated ids accumulate
        np.add.at(self.grads[1], cols, dwt)
        np.add.at(self.grads[2], rows, g)
        np.add.at(self.grads[3], cols, g)
        return None


# ---------------------------------------------------------------- results
@dataclass
class GloVeVectors:
    """A trained GloVe model. Taught in lesson 08, section 2.

    W, W~ (V, D) float32, biases b, b~ (V,), the vocabulary (or None), seconds of training, the
    loss J / P of each epoch, the hyperparameters, and any metrics recorded per epoch."""

    W: np.ndarray
    W_tilde: np.ndarray
    b: np.ndarray
    b_tilde: np.ndarray
    vocab: object = None
    seconds: float = 0.0
    epoch_loss: list = field(default_factory=list)
    config: dict = field(default_factory=dict)
    epoch_metrics: list = field(default_factory=list)

    def vectors(self, which: str = "W+W~") -> np.ndarray:
        """'W+W~' (the paper's choice) or 'W' (word vectors alone): (V, D) float32."""
        if which in ("W+W~", "W+C", "sum"):
            return self.W + self.W_tilde
        if which == "W":
            return self.W
        raise ValueError(f"which must be 'W+W~' or 'W', got {which!r}")


# ---------------------------------------------------------------- PyTorch
class GloVeTorch(torch.nn.Module):
    """GloVe in PyTorch, autograd's check of the NumPy layer. Taught in lesson 08, section 2.

    W, W~ (V, D) and b, b~ (V, 1) as ``nn.Embedding``; ``forward(rows (P,), cols (P,), log_x (P,),
    f (P,)) -> J``, the sum over the batch as :class:`GloVeNumpy`."""

    def __init__(self, vocab_size: int, dim: int, sparse: bool = False):
        super().__init__()
        self.W = torch.nn.Embedding(vocab_size, dim, sparse=sparse)
        self.W_tilde = torch.nn.Embedding(vocab_size, dim, sparse=sparse)
        self.b = torch.nn.Embedding(vocab_size, 1, sparse=sparse)
        self.b_tilde = torch.nn.Embedding(vocab_size, 1, sparse=sparse)

    def load_numpy(self, params):
        """Copy [W, W~, b, b~] from a :class:`GloVeNumpy` (for equivalence checks)."""
        params = list(params)
        if len(params) != 4:
            raise ValueError(f"load_numpy expects the four arrays [W, W~, b, b~], got "
                             f"{len(params)}")
        with torch.no_grad():
            for emb, p in zip((self.W, self.W_tilde, self.b, self.b_tilde), params, strict=True):
                emb.weight.copy_(torch.as_tensor(np.asarray(p).reshape(emb.weight.shape)))
        return self

    def forward(self, rows, cols, log_x, f):
        V = self.W.num_embeddings
        rows = check_ids(rows, V, "rows", "GloVeTorch.forward", noun="word ids")
        cols = check_ids(cols, V, "cols", "GloVeTorch.forward", noun="word ids")
        e = ((self.W(rows) * self.W_tilde(cols)).sum(1) + self.b(rows)[:, 0]
             + self.b_tilde(cols)[:, 0] - log_x)
        return (f * e * e).sum()


# ---------------------------------------------------------------- glove.c's AdaGrad, pair by pair
def pairwise_step_torch(params, G, r, c, log_x, f, lr: float) -> float:
    """One batch of glove.c's AdaGrad, in place. Taught in lesson 08, section 4.

    Every pair (r[p], c[p]) takes glove.c's step from the parameters and sums at the batch's
    start; a row's steps (and squared steps) add. params = (W, W~, b, b~) and G (their AdaGrad
    sums): float32 tensors; r, c (m,) int64; log_x, f (m,) float32. Returns the batch's Σ f e²."""
    W, Wt, b, bt = params
    wr, wc = W[r], Wt[c]
    e = (wr * wc).sum(1) + b[r] + bt[c] - log_x
    fdiff = lr * f * e                                               # (m,): glove.c's lr·f·e
    for param, acc, ids, step in ((W, G[0], r, fdiff[:, None] * wc),
                                  (Wt, G[1], c, fdiff[:, None] * wr),
                                  (b, G[2], r, fdiff), (bt, G[3], c, fdiff)):
        scaled = step / torch.sqrt(acc[ids])                    # each pair: its own AdaGrad step
        param.index_add_(0, ids, -scaled)
        acc.index_add_(0, ids, step * step)
    return float((f * e * e).sum())


def train_pairwise(counts, dim: int = 100, epochs: int = 10, lr: float = 0.05,
                   x_max: float = 100.0, alpha: float = 0.75, batch_size: int = 4096, seed: int = 0,
                   vocab=None, progress: bool = True, epoch_end=None, checkpoint=None,
                   checkpoint_every: int = 0) -> GloVeVectors:
    """GloVe with glove.c's per-pair AdaGrad, in batches. Taught in lesson 08, section 3.

    glove.c visits the pairs one by one: with fdiff = lr f(x) e it steps
    w_i -= fdiff w~_j / sqrt(G_wi), then G_wi += (fdiff w~_j)^2 (elementwise; the same for w~_j,
    b_i, b~_j, every accumulator started at 1). Here each pair of a batch takes exactly that step
    from the parameters and sums at the batch's start, and a row's steps add: with
    ``batch_size=1`` this is glove.c. The initialisation (:class:`GloVeNumpy`'s, from
    ``np.random.default_rng(seed)``) and each epoch's order (``torch.randperm`` from
    ``torch.Generator().manual_seed(seed)``) are seeded, so lesson 08's NumPy loop visits the
    pairs in the same order.

    ``epoch_end(epoch, W + W~, J / P) -> bool`` runs after each epoch, ``checkpoint(pairs_seen,
    W + W~) -> bool`` every ``checkpoint_every`` pairs; True stops training. Returns a
    :class:`GloVeVectors` (epoch_loss: J / P of each finished epoch)."""
    check_whole(dim, "dim", "train_pairwise", minimum=1)
    check_whole(epochs, "epochs", "train_pairwise", minimum=1)
    check_whole(batch_size, "batch_size", "train_pairwise", minimum=1)
    if not (lr > 0 and np.isfinite(lr)):
        raise ValueError(f"the learning rate must be positive, got {lr}")
    rows, cols, x = cooccurrence_entries(counts)
    if vocab is not None and len(vocab) != counts.shape[0]:
        raise ValueError(f"train_pairwise: vocab has {len(vocab)} words but counts is "
                         f"{counts.shape[0]} x {counts.shape[1]}; row i of the co-occurrence "
                         "matrix is word i of the vocabulary (build both from the same Vocab)")
    if checkpoint is not None and checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be a positive number of pairs, got "
                         f"{checkpoint_every}")
    V = counts.shape[0]
    rng = np.random.default_rng(seed)
    init = GloVeNumpy(V, dim, rng, x_max, alpha, dtype=np.float32).params
    W, Wt, b, bt = (torch.from_numpy(p) for p in init)
    G = [torch.ones_like(p) for p in (W, Wt, b, bt)]
    r_all, c_all = torch.from_numpy(rows), torch.from_numpy(cols)
    logx = torch.from_numpy(np.log(x).astype(np.float32))
    f_all = torch.from_numpy(glove_weight(x, x_max, alpha).astype(np.float32))
    gen = torch.Generator().manual_seed(seed)
    P = len(x)
    bar = progress_bar(total=epochs * P, desc="GloVe pairwise", unit="pair", unit_scale=True,
                       disable=not progress)
    epoch_loss, t0, seen, stop = [], time.perf_counter(), 0, False
    with torch.no_grad():
        for epoch in range(1, epochs + 1):
            order = torch.randperm(P, generator=gen)
            total = 0.0
            for s in range(0, P, batch_size):
                idx = order[s:s + batch_size]
                total += pairwise_step_torch((W, Wt, b, bt), G, r_all[idx], c_all[idx],
                                             logx[idx], f_all[idx], lr)
                bar.update(len(idx))
                seen += len(idx)
                every = checkpoint_every
                if checkpoint is not None and seen // every > (seen - len(idx)) // every:
                    stop = bool(checkpoint(seen, (W + Wt).numpy()))
                    if stop:
                        break
            if stop:
                break
            epoch_loss.append(total / P)
            bar.set_postfix(loss=f"{epoch_loss[-1]:.4f}")
            if epoch_end is not None and epoch_end(epoch, (W + Wt).numpy(), epoch_loss[-1]):
                break
    bar.close()
    cfg = dict(impl="pairwise", dim=dim, epochs=epochs, lr=lr, x_max=x_max, alpha=alpha,
               batch_size=batch_size, seed=seed)
    return GloVeVectors(W.numpy().copy(), Wt.numpy().copy(), b.numpy().copy(), bt.numpy().copy(),
                        vocab, time.perf_counter() - t0, epoch_loss, cfg)
