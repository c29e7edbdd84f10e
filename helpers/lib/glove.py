"""GloVe (Pennington, Socher & Manning 2014): word vectors from a weighted least-squares fit
to the logarithm of the co-occurrence counts.

For every word pair (i, j) that co-occurs (X_ij > 0) the model wants

    w_i . w~_j + b_i + b~_j  ≈  log X_ij

and the objective weights each pair by f(X_ij):

    J = Σ_{X_ij > 0} f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2,
    f(x) = (x / x_max)^α  if x < x_max  else 1          (the paper: x_max = 100, α = 0.75)

so rare pairs (noisy counts) count less and very frequent pairs do not dominate. Word
vectors ``W`` and context vectors ``W~`` are separate, as are their biases; the paper's
final vectors are ``W + W~``.

- :func:`glove_weight` is f(x); :func:`glove_cooccurrence` builds X with
  :func:`helpers.lib.counting.cooccurrence_matrix` (harmonic 1/d weighting, as in GloVe).
- :class:`GloVeNumpy` is the loss as a NumPy layer of the course protocol (hand-written
  backward); :func:`train_numpy` fits it with AdaGrad on the batch's summed gradients.
- :func:`train_torch` fits the same objective with PyTorch autograd and ``torch.optim.Adagrad``
  (``device`` argument).
- :func:`train_pairwise` is the reference code's per-pair AdaGrad, batched: the course's
  shipped GloVe (``make models NAME=wv_glove``, :mod:`helpers.course.word_vector_models`) is
  trained with it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

from helpers.infra.artifacts import (
    TreeCodec,
    array_to_strings,
    prefixed,
    strings_to_array,
    unprefixed,
)
from helpers.infra.progress import progress_bar
from helpers.infra.seeding import choose_device
from helpers.lib.checks import check_ids, check_whole, describe_offending
from helpers.lib.counting import cooccurrence_matrix
from helpers.lib.layers import Layer
from helpers.lib.text import Vocab

__all__ = ["glove_weight", "glove_cooccurrence", "cooccurrence_entries", "GloVeNumpy", "GloVeVectors",
           "train_numpy", "train_torch", "GloVeTorch", "pairwise_step_torch", "train_pairwise"]


# ---------------------------------------------------------------- weighting and data
def glove_weight(x, x_max: float = 100.0, alpha: float = 0.75) -> np.ndarray:
    """GloVe's weighting function f(x) = (x / x_max)^alpha for x < x_max, else 1. Taught in lesson 08, section 2.

    x: scalar or array of co-occurrence counts (>= 0). Returns float64 of the same shape;
    f(0) = 0, f is increasing and capped at 1. Raises ValueError for negative, nan or
    infinite counts and for x_max / alpha that are not positive numbers.
    """
    if not (x_max > 0 and np.isfinite(x_max)):
        raise ValueError(f"x_max must be a positive number, got {x_max}")
    if not (alpha > 0 and np.isfinite(alpha)):
        raise ValueError(f"alpha must be a positive number, got {alpha}")
    x = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        raise ValueError("glove_weight: co-occurrence counts must be finite and non-negative, got "
                         + describe_offending(x, bad, "counts"))
    return np.where(x < x_max, (np.minimum(x, x_max) / x_max) ** alpha, 1.0)


def glove_cooccurrence(sentences_ids, vocab_size: int, window: int = 10) -> sp.csr_matrix:
    """The GloVe co-occurrence matrix (harmonic counts within a window). Taught in lesson 08, section 2.

    The GloVe co-occurrence matrix: counts within ±``window`` words of the same sentence,
    a pair at distance d counting 1/d (``weighting="harmonic"``), symmetric.

    A thin call of :func:`helpers.lib.counting.cooccurrence_matrix`; returns a (V, V) float64
    CSR matrix. The GloVe paper uses window 10 on each side.
    """
    return cooccurrence_matrix(sentences_ids, vocab_size, window=window, weighting="harmonic")


def cooccurrence_entries(counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zero entries of a co-occurrence matrix as three arrays. Taught in lesson 08, section 2.

    counts: (V, V) sparse or dense, non-negative. Returns (rows (P,) int64, cols (P,) int64,
    x (P,) float64) for every X_ij > 0. Raises ValueError for an empty matrix or a negative count.
    """
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
        raise ValueError(f"the co-occurrence matrix must be square (V, V), got shape {counts.shape}")
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        raise ValueError("cooccurrence_entries: co-occurrence counts must be finite and non-negative, got "
                         + describe_offending(x, bad, "stored counts"))
    keep = x > 0
    if not keep.any():
        raise ValueError("the co-occurrence matrix is empty: no pair of words co-occurs")
    return rows[keep], cols[keep], x[keep]


# ---------------------------------------------------------------- NumPy layer
class GloVeNumpy(Layer):
    """The GloVe loss of a batch of co-occurring pairs, as a NumPy layer. Taught in lesson 08, section 2.

    params = [W (V, D), W~ (V, D), b (V,), b~ (V,)], initialised uniformly in
    [-0.5/D, 0.5/D] (biases too), as the reference C code does.

    forward(rows (P,) int, cols (P,) int, x (P,) float counts) -> J, the scalar
        Σ_p f(x_p) (w_rows[p] . w~_cols[p] + b_rows[p] + b~_cols[p] - log x_p)^2
    backward(dout=1.0) fills ``grads`` (dense, same shapes as ``params``; repeated ids
        accumulate) and returns None (the inputs are integers and counts, not learnable).

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
            raise ValueError(f"rows, cols and x must be 1-D of one length, got shapes {rows.shape}, "
                             f"{cols.shape}, {x.shape}")
        rows = check_ids(rows, self.V, "rows", "GloVeNumpy.forward", noun="word ids")
        cols = check_ids(cols, self.V, "cols", "GloVeNumpy.forward", noun="word ids")
        bad = ~(np.isfinite(x) & (x > 0))
        if bad.any():
            raise ValueError("every count x must be positive and finite (log x is the target; pass only "
                             "X_ij > 0), got " + describe_offending(x, bad, "counts"))
        return rows, cols, x

    def pair_terms(self, rows, cols, x):
        """(f (P,), e (P,)): the weights and the residuals e = w.w~ + b + b~ - log x."""
        W, Wt, b, bt = self.params
        f = glove_weight(x, self.x_max, self.alpha).astype(W.dtype)
        e = np.einsum("pd,pd->p", W[rows], Wt[cols]) + b[rows] + bt[cols] - np.log(x).astype(W.dtype)
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
    """A trained GloVe model: vectors, biases, vocabulary, timings. Taught in lesson 08, section 2.

    A trained GloVe model: W, W~ (V, D) float32, biases b, b~ (V,), the vocabulary (if
    known), wall-clock seconds of training, the loss J/P (mean over pairs) of each epoch and
    the hyperparameters."""

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
        """'W+W~' (the paper's choice, default) or 'W' (word vectors alone). (V, D) float32."""
        if which in ("W+W~", "W+C", "sum"):
            return self.W + self.W_tilde
        if which == "W":
            return self.W
        raise ValueError(f"which must be 'W+W~' or 'W', got {which!r}")

    def to_arrays(self) -> tuple[dict, dict]:
        """(arrays, meta) for :mod:`helpers.infra.artifacts` (the cache stores it without pickle);
        the vocabulary may be a Vocab, a list of words or None."""
        fields = ("W", "W_tilde", "b", "b_tilde", "seconds", "epoch_loss", "config", "epoch_metrics")
        arrays, meta = TreeCodec.to_arrays({k: getattr(self, k) for k in fields})
        if isinstance(self.vocab, Vocab):
            vocab_arrays, meta["vocab"] = self.vocab.to_arrays()
            arrays.update(prefixed(vocab_arrays, "vocab/"))
        elif self.vocab is not None:
            arrays["vocab_list"], meta["vocab"] = strings_to_array(self.vocab), "list"
        return arrays, meta

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "GloVeVectors":
        """The vectors stored by :meth:`to_arrays`."""
        vocab = meta.get("vocab")
        if vocab == "list":
            vocab = array_to_strings(arrays["vocab_list"])
        elif vocab is not None:
            vocab = Vocab.from_arrays(unprefixed(arrays, "vocab/"), vocab)
        return cls(vocab=vocab, **TreeCodec.from_arrays(arrays, meta))


def _check_training_args(counts, dim, epochs, lr, vocab, where: str):
    check_whole(dim, "dim", where, minimum=1)
    check_whole(epochs, "epochs", where, minimum=1)
    if not (lr > 0 and np.isfinite(lr)):
        raise ValueError(f"the learning rate must be positive, got {lr}")
    entries = cooccurrence_entries(counts)
    if vocab is not None:
        n = len(vocab)
        if n != counts.shape[0]:
            raise ValueError(f"{where}: vocab has {n} words but counts is {counts.shape[0]} x {counts.shape[1]}; "
                             "row i of the co-occurrence matrix is word i of the vocabulary, so they must have "
                             "the same size (build both from the same Vocab)")
    return entries


# ---------------------------------------------------------------- NumPy training (AdaGrad)
def train_numpy(counts, dim: int = 50, epochs: int = 10, lr: float = 0.5, x_max: float = 100.0,
                alpha: float = 0.75, batch_size: int = 16384, seed: int = 0, vocab=None,
                progress: bool = True) -> GloVeVectors:
    """Fit :class:`GloVeNumpy` (float32) to ``counts`` (V, V) with AdaGrad, as the paper does. Taught in lesson 08, section 2.

    Each epoch visits every non-zero X_ij once in a seeded random order, in mini-batches of
    ``batch_size`` pairs. AdaGrad keeps the sum of squared gradients G per parameter (started
    at 1, as the reference code does) and steps ``-lr * g / sqrt(G)``; only the rows used by the
    batch are touched. The gradient of a batch is the sum of its pairs' gradients (the C code
    updates one pair at a time with lr 0.05; a batched row takes one step for all its pairs, so
    the default lr is 0.5 — on the 3,000 most frequent words of the course corpus, 5 epochs at
    50 dims, WordSim-353 ρ was 0.34 with lr 0.5 and batches of 16,384, 0.06 with lr 0.05 and
    batches of 4,096; about 13 CPU-seconds for 1.9M pairs). Returns a :class:`GloVeVectors`;
    epoch_loss is J / P.
    """
    rows, cols, x = _check_training_args(counts, dim, epochs, lr, vocab, "glove.train_numpy")
    V = counts.shape[0]
    rng = np.random.default_rng(seed)
    layer = GloVeNumpy(V, dim, rng, x_max, alpha, dtype=np.float32)
    W, Wt, b, bt = layer.params
    G = [np.ones_like(p) for p in layer.params]               # AdaGrad accumulators
    P = len(x)
    bar = progress_bar(total=epochs * P, desc="GloVe NumPy", unit="pair", unit_scale=True, disable=not progress)
    epoch_loss, t0 = [], time.perf_counter()

    def adagrad(param, acc, ids, grad):
        # sum the gradients of repeated ids, then one AdaGrad step on those rows only
        uniq, inv = np.unique(ids, return_inverse=True)
        g = np.zeros((len(uniq),) + param.shape[1:], param.dtype)
        np.add.at(g, inv, grad)
        acc[uniq] += g * g
        param[uniq] -= lr * g / np.sqrt(acc[uniq])

    for _ in range(epochs):
        order = rng.permutation(P)
        total = 0.0
        for s in range(0, P, batch_size):
            sl = order[s:s + batch_size]
            r, c = rows[sl], cols[sl]
            total += layer.forward(r, c, x[sl])
            dw, dwt, g = layer.pair_gradients()
            adagrad(W, G[0], r, dw)
            adagrad(Wt, G[1], c, dwt)
            adagrad(b, G[2], r, g)
            adagrad(bt, G[3], c, g)
            bar.update(len(sl))
        epoch_loss.append(total / P)
        bar.set_postfix(loss=f"{epoch_loss[-1]:.4f}")
    bar.close()
    cfg = dict(impl="numpy", dim=dim, epochs=epochs, lr=lr, x_max=x_max, alpha=alpha, batch_size=batch_size, seed=seed)
    return GloVeVectors(W.copy(), Wt.copy(), b.copy(), bt.copy(), vocab, time.perf_counter() - t0, epoch_loss, cfg)


# ---------------------------------------------------------------- PyTorch
class GloVeTorch(torch.nn.Module):
    """GloVe in PyTorch (autograd), the reference for the NumPy layer. Taught in lesson 08, section 2.

    GloVe in PyTorch: embeddings W, W~ (V, D) and biases b, b~ (V, 1) as ``nn.Embedding``
    (dense gradients by default: faster than sparse ones with torch's Adagrad on a CPU). ``forward(rows (P,), cols (P,), log_x (P,), f (P,)) -> J`` (scalar,
    the sum over the batch, as :class:`GloVeNumpy`)."""

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
            raise ValueError(f"load_numpy expects the four arrays [W, W~, b, b~], got {len(params)}")
        with torch.no_grad():
            for emb, p in zip((self.W, self.W_tilde, self.b, self.b_tilde), params, strict=True):
                emb.weight.copy_(torch.as_tensor(np.asarray(p).reshape(emb.weight.shape)))
        return self

    def forward(self, rows, cols, log_x, f):
        V = self.W.num_embeddings
        rows = check_ids(rows, V, "rows", "GloVeTorch.forward", noun="word ids")
        cols = check_ids(cols, V, "cols", "GloVeTorch.forward", noun="word ids")
        e = (self.W(rows) * self.W_tilde(cols)).sum(1) + self.b(rows)[:, 0] + self.b_tilde(cols)[:, 0] - log_x
        return (f * e * e).sum()


def train_torch(counts, dim: int = 100, epochs: int = 10, lr: float = 0.5, x_max: float = 100.0,
                alpha: float = 0.75, batch_size: int = 65536, seed: int = 0, vocab=None,
                device: str | None = None, progress: bool = True, threads: int | None = None,
                evaluate=None) -> GloVeVectors:
    """Fit GloVe to ``counts`` (V, V) with PyTorch autograd and ``torch.optim.Adagrad``. Taught in lesson 08, section 2.

    Same objective and initialisation as :class:`GloVeNumpy`. The gradient of a batch is the
    *sum* of its pairs' gradients and AdaGrad's accumulators start at 1, as in the reference
    code. That code steps after every pair with lr 0.05; here a row takes one step per batch
    of 65,536 pairs however often it occurs in it, so the default lr is 10x larger (0.5: on the
    course corpus WordSim-353 ρ after 5 epochs was 0.22 with lr 0.5 vs 0.17 with lr 0.2 and
    batches of 8,192; lr 1.0 diverged at first). Every epoch visits all non-zero X_ij in a
    seeded random order.

    ``device``: None/'cpu' (default), 'cuda' or 'auto'. ``threads``: torch's CPU threads for
    the run (restored after); default 1 on the CPU — the ops are small and memory-bound, and on
    a busy 2-core machine 2 threads were 4x slower when we measured. ``evaluate(vectors)``
    (vectors = W + W~, (V, D) float32) -> dict, if given, runs after every epoch outside the
    timed training; its results go to ``epoch_metrics``. Returns a :class:`GloVeVectors`
    (float32 NumPy arrays), epoch_loss = J / P per epoch.
    """
    rows, cols, x = _check_training_args(counts, dim, epochs, lr, vocab, "glove.train_torch")
    V = counts.shape[0]
    dev = choose_device(device)
    rng = np.random.default_rng(seed)
    init = GloVeNumpy(V, dim, rng, x_max, alpha, dtype=np.float32).params
    model = GloVeTorch(V, dim).load_numpy(init).to(dev)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr, initial_accumulator_value=1.0, eps=1e-10)
    r_t = torch.from_numpy(rows).to(dev)
    c_t = torch.from_numpy(cols).to(dev)
    logx_t = torch.from_numpy(np.log(x).astype(np.float32)).to(dev)
    f_t = torch.from_numpy(glove_weight(x, x_max, alpha).astype(np.float32)).to(dev)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed)
    P = len(x)
    old_threads = torch.get_num_threads()
    if threads is None and dev.type == "cpu":
        threads = 1
    if threads is not None:
        torch.set_num_threads(threads)
    bar = progress_bar(total=epochs * P, desc="GloVe PyTorch", unit="pair", unit_scale=True, disable=not progress)
    epoch_loss, metrics, t0, t_eval = [], [], time.perf_counter(), 0.0
    try:
        for _ in range(epochs):
            order = torch.randperm(P, generator=gen).to(dev)
            total = 0.0
            for s in range(0, P, batch_size):
                idx = order[s:s + batch_size]
                J = model(r_t[idx], c_t[idx], logx_t[idx], f_t[idx])
                opt.zero_grad(set_to_none=True)
                J.backward()
                opt.step()
                total += float(J.detach())
                bar.update(len(idx))
            epoch_loss.append(total / P)
            bar.set_postfix(loss=f"{epoch_loss[-1]:.4f}")
            if evaluate is not None:
                te = time.perf_counter()
                with torch.no_grad():
                    metrics.append(dict(evaluate((model.W.weight + model.W_tilde.weight).cpu().numpy())))
                t_eval += time.perf_counter() - te
    finally:
        torch.set_num_threads(old_threads)
        bar.close()
    secs = time.perf_counter() - t0 - t_eval
    def get(emb):
        return emb.weight.detach().cpu().numpy().copy()
    cfg = dict(impl="torch", dim=dim, epochs=epochs, lr=lr, x_max=x_max, alpha=alpha, batch_size=batch_size,
               seed=seed, device=str(dev))
    return GloVeVectors(get(model.W), get(model.W_tilde), get(model.b)[:, 0], get(model.b_tilde)[:, 0], vocab,
                        secs, epoch_loss, cfg, metrics)


# ---------------------------------------------------------------- AdaGrad pair by pair (the reference)
def pairwise_step_torch(params, G, r, c, log_x, f, lr: float) -> float:
    """One batch of :func:`train_pairwise` in place, glove.c's AdaGrad. Taught in lesson 08, section 4.

    Every pair (r[p], c[p]) takes glove.c's AdaGrad step from the parameters and sums at the batch's
    start; a row's steps (and squared steps) add.

    params = (W, W~, b, b~) and G (their AdaGrad sums) are float32 tensors; r, c (m,) int64 ids;
    log_x, f (m,) float32 log counts and weights. Returns the batch's Σ f e² (a float)."""
    W, Wt, b, bt = params
    wr, wc = W[r], Wt[c]
    e = (wr * wc).sum(1) + b[r] + bt[c] - log_x
    fdiff = lr * f * e                                               # (m,): glove.c's lr·f·e
    for param, acc, ids, step in ((W, G[0], r, fdiff[:, None] * wc), (Wt, G[1], c, fdiff[:, None] * wr),
                                  (b, G[2], r, fdiff), (bt, G[3], c, fdiff)):
        scaled = step / torch.sqrt(acc[ids])                         # each pair: its own AdaGrad step
        param.index_add_(0, ids, -scaled)
        acc.index_add_(0, ids, step * step)
    return float((f * e * e).sum())


def train_pairwise(counts, dim: int = 100, epochs: int = 10, lr: float = 0.05, x_max: float = 100.0,
                   alpha: float = 0.75, batch_size: int = 4096, seed: int = 0, vocab=None, progress: bool = True,
                   epoch_end=None, checkpoint=None, checkpoint_every: int = 0) -> GloVeVectors:
    """GloVe with the reference code's per-pair AdaGrad, batched. Taught in lesson 08, section 3.

    The reference C code (glove.c) visits the pairs one by one: with fdiff = lr f(x) e it steps
    w_i -= fdiff w~_j / sqrt(G_wi), then G_wi += (fdiff w~_j)^2 (elementwise; the same for w~_j,
    b_i, b~_j with their own accumulators, started at 1). Here each pair of a batch takes
    exactly that step, computed from the parameters and accumulators at the start of the batch;
    the steps (and the squared steps, into G) of a row's pairs are added. With
    ``batch_size=1`` this *is* the reference algorithm (a test checks it against a loop); larger
    batches only delay when a row sees its own updates. The initialisation
    (:class:`GloVeNumpy`'s, from ``np.random.default_rng(seed)``) and each epoch's order of the
    pairs (``torch.randperm`` from ``torch.Generator().manual_seed(seed)``) are seeded, so a NumPy
    loop that draws the same way visits the pairs in the same order (lesson 08's live trainer
    does). (:func:`train_torch` and
    :func:`train_numpy` sum a row's gradients over the batch *before* AdaGrad divides by
    sqrt(G): with thousands of pairs of a frequent word in a batch, its first steps have length
    ≈ lr in every coordinate whatever the gradient, which is why they need lr 0.5 and jump.)

    ``epoch_end(epoch, vectors, loss) -> bool`` (vectors = W + W~ (V, D) float32, loss = J / P of
    the epoch), if given, runs after each epoch; returning True stops training.
    ``checkpoint(pairs_seen, vectors) -> bool``, if given, runs each time another
    ``checkpoint_every`` pairs have been visited (at the end of that batch); returning True stops
    training (lesson 08's live training watches a fraction of an epoch this way). Returns a
    :class:`GloVeVectors` (epoch_loss = J / P per finished epoch, J = Σ f e² as in :class:`GloVeNumpy`)."""
    rows, cols, x = _check_training_args(counts, dim, epochs, lr, vocab, "glove.train_pairwise")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if checkpoint is not None and checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be a positive number of pairs, got {checkpoint_every}")
    V = counts.shape[0]
    rng = np.random.default_rng(seed)
    W, Wt, b, bt = (torch.from_numpy(p) for p in GloVeNumpy(V, dim, rng, x_max, alpha, dtype=np.float32).params)
    G = [torch.ones_like(p) for p in (W, Wt, b, bt)]
    r_all, c_all = torch.from_numpy(rows), torch.from_numpy(cols)
    logx = torch.from_numpy(np.log(x).astype(np.float32))
    f_all = torch.from_numpy(glove_weight(x, x_max, alpha).astype(np.float32))
    gen = torch.Generator().manual_seed(seed)
    P = len(x)
    bar = progress_bar(total=epochs * P, desc="GloVe pairwise", unit="pair", unit_scale=True, disable=not progress)
    epoch_loss, t0, seen, stop = [], time.perf_counter(), 0, False
    with torch.no_grad():
        for epoch in range(1, epochs + 1):
            order = torch.randperm(P, generator=gen)
            total = 0.0
            for s in range(0, P, batch_size):
                idx = order[s:s + batch_size]
                total += pairwise_step_torch((W, Wt, b, bt), G, r_all[idx], c_all[idx], logx[idx], f_all[idx], lr)
                bar.update(len(idx))
                seen += len(idx)
                if checkpoint is not None and seen // checkpoint_every > (seen - len(idx)) // checkpoint_every:
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
    cfg = dict(impl="pairwise", dim=dim, epochs=epochs, lr=lr, x_max=x_max, alpha=alpha, batch_size=batch_size,
               seed=seed)
    return GloVeVectors(W.numpy().copy(), Wt.numpy().copy(), b.numpy().copy(), bt.numpy().copy(), vocab,
                        time.perf_counter() - t0, epoch_loss, cfg)
