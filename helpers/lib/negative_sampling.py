"""Negative sampling (Mikolov et al. 2013) as NumPy layers of the course protocol.

Instead of a softmax over the whole vocabulary, each (centre, context) pair becomes a yes/no
question, asked once for the true context word and once for each of ``k`` noise words drawn
from ``P(w)^0.75``:

- :func:`unigram_noise` and :class:`NoiseSampler`: the noise distribution and its sampler;
  :func:`unigram_table`, word2vec.c's faster way to draw from it (used by the trainers);
- :class:`EmbeddingDot`: scores of hidden vectors against selected rows of the output matrix;
- :class:`SkipGramNS` and :class:`CBOWNS`: skip-gram and CBOW with the negative-sampling loss
  (``params``, ``grads``, ``forward``, ``backward``), gradient-checked in lesson 07;
- :func:`full_softmax_step`: one step of the full-softmax skip-gram, the cost it replaces;
- :func:`sgns_pair_gradients`: the loss of one word–context pair summed over a whole corpus, and
  its gradient, whose zero is the shifted PMI (lesson 06, section 9).

Their trainers (NumPy, PyTorch, gensim) are in :mod:`helpers.lib.word2vec`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from helpers.lib.checks import check_finite, check_ids, check_integers, check_mask
from helpers.lib.layers import Embedding, Layer, SigmoidCrossEntropy, SoftmaxCrossEntropy


def unigram_noise(counts: Sequence[float], power: float = 0.75) -> np.ndarray:
    """The negative-sampling noise distribution P(w)^power / sum_j P(w_j)^power. Taught in lesson 07, section 4.

    counts: (V,) non-negative word counts (or probabilities). Returns (V,) float64 summing
    to 1. ``power`` < 1 flattens the distribution: rare words are drawn a little more often.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"counts must be a non-empty 1-D array, got shape {c.shape}")
    bad = np.flatnonzero(~np.isfinite(c) | (c < 0))
    if bad.size:
        raise ValueError(f"unigram_noise: counts must be finite and non-negative, got {c[bad[0]]} at index "
                         f"{bad[0]} ({bad.size} of {c.size} counts)")
    if c.sum() <= 0:
        raise ValueError(f"unigram_noise: every one of the {c.size} counts is 0; the noise distribution "
                         "needs at least one word that occurs")
    if not 0 <= power <= 1:
        raise ValueError(f"power must lie in [0, 1], got {power}")
    p = (c / c.sum()) ** power
    p[c == 0] = 0.0          # a word never seen is never drawn (0**0 would give 1)
    return p / p.sum()


class NoiseSampler:
    """Draws negative word ids from ``unigram_noise(counts, power)``. Taught in lesson 07, section 4.

    ``sample(shape)`` -> int64 array of ``shape``; inverse-CDF sampling with the caller's
    ``np.random.Generator`` (pass ``rng`` or reset ``sampler.rng`` to repeat a draw).
    """

    def __init__(self, counts: Sequence[float], power: float = 0.75, rng: np.random.Generator | None = None):
        self.probs = unigram_noise(counts, power)
        self.cdf = np.cumsum(self.probs)
        self.cdf[-1] = 1.0
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def sample(self, shape, rng: np.random.Generator | None = None) -> np.ndarray:
        u = (rng or self.rng).random(shape)
        return np.searchsorted(self.cdf, u, side="right").astype(np.int64)


def unigram_table(counts: Sequence[float], power: float = 0.75, size: int = 1_000_000) -> np.ndarray:
    """word2vec.c's unigram table: a draw from ``unigram_noise`` is one random slot. Taught in lesson 07, section 4.

    Returns a (about ``size``,) int32 array in which word i fills round(size * p_i) slots
    (at least one when p_i > 0, none when p_i = 0), so ``table[rng.integers(len(table), size=shape)]``
    draws ids with probabilities p_i rounded to multiples of 1/size. One random integer and
    one memory read per draw, where :class:`NoiseSampler`'s inverse CDF (exact) needs a binary
    search over V entries: several times faster for the 10^4 draws of a training batch, which is
    why the trainers of :mod:`helpers.lib.word2vec` use it.
    """
    if size < 1:
        raise ValueError(f"size must be a positive number of slots, got {size}")
    p = unigram_noise(counts, power)
    slots = np.maximum(np.round(p * size), p > 0).astype(np.int64)   # every word that can be drawn gets a slot
    return np.repeat(np.arange(len(p), dtype=np.int32), slots)


def _row_gradient(ids: np.ndarray, coef: np.ndarray, h: np.ndarray, vocab_size: int):
    """The gradient of the rows an (N, K) block of ids used, grad[r] = sum of coef[n, j] * h[n]
    over the (n, j) with ids[n, j] == r, without building the (N, K, D) outer products.

    It is a sparse product A @ h with A of shape (U distinct ids, N): column n holds coef[n, j]
    in the row of ids[n, j]. Every column has exactly K entries, so the compressed-column
    format needs no sorting (column n's entries are stored at K n ... K n + K - 1), and a
    word that appears twice in a column has its two entries summed by the product.
    Returns (rows (U,) sorted distinct ids, grad (U, D))."""
    n, k = ids.shape
    used = np.zeros(vocab_size, dtype=bool)
    used[ids.ravel()] = True
    rows = np.flatnonzero(used)
    slot_of = np.empty(vocab_size, dtype=np.intp)
    slot_of[rows] = np.arange(len(rows))                  # position of each id among the rows
    A = sp.csc_matrix((coef.ravel(), slot_of[ids.ravel()], np.arange(0, n * k + 1, k)), shape=(len(rows), n))
    return rows, A @ h


class EmbeddingDot(Layer):
    """Score of hidden vectors against selected rows of an output matrix. Taught in lesson 07, section 3.

    W: (V, D). forward(h (N, D), ids (N,) or (N, K) int) -> scores (N,) or (N, K), where
    scores[n, j] = W[ids[n, j]] . h[n]. backward(dscores) fills ``grads`` (accumulating
    repeated ids through :class:`helpers.lib.layers.Embedding`) and returns dh (N, D).
    With ``scatter='rows'`` it fills ``embed.row_grad = (rows, grad)`` instead, the gradient
    of the rows used only, as the trainer's SGD step wants it.
    """

    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator, dtype=np.float64, scale: float = 0.01,
                 scatter: str = "add.at"):
        super().__init__()
        self.embed = Embedding(vocab_size, dim, rng, dtype=dtype, scale=scale, scatter=scatter)
        self.params, self.grads = self.embed.params, self.embed.grads

    def forward(self, h, ids):
        h = np.asarray(h)
        ids = np.asarray(ids)
        if h.ndim != 2 or h.shape[1] != self.params[0].shape[1]:
            raise ValueError(f"h must be (N, {self.params[0].shape[1]}), got shape {h.shape}")
        if ids.shape[0] != h.shape[0] or ids.ndim not in (1, 2):
            raise ValueError(f"ids must be (N,) or (N, K) with N={h.shape[0]}, got shape {ids.shape}")
        check_finite(h, "h", "EmbeddingDot.forward")
        rows = self.embed.forward(ids)                       # (N, D) or (N, K, D)
        self.h, self.rows, self.squeeze = h, rows, ids.ndim == 1
        if self.squeeze:
            return self.remember(np.sum(rows * h, axis=1))
        return self.remember(np.einsum("nkd,nd->nk", rows, h))

    def backward(self, dout):
        self.check_dout(dout=dout)
        if self.embed.scatter == "rows":
            # training with a large vocabulary: only the rows used, as (rows, grad) in
            # embed.row_grad, summed straight from dout and h (see _row_gradient)
            n = len(self.h)
            self.embed.row_grad = _row_gradient(self.embed.ids.reshape(n, -1), np.reshape(dout, (n, -1)), self.h,
                                                self.params[0].shape[0])
        elif self.squeeze:
            self.embed.backward(dout[:, None] * self.h)
        else:
            self.embed.backward(dout[:, :, None] * self.h[:, None, :])
        if self.squeeze:
            return dout[:, None] * self.rows
        return np.einsum("nk,nkd->nd", dout, self.rows)


class _NegativeSamplingLoss(Layer):
    """Shared by skip-gram and CBOW: scores of the true word and k noise words against
    h, sigmoid + binary cross-entropy, summed over the 1 + k terms, averaged over N.

    ``k`` is how many noise words to draw when the caller gives none. Negatives given as an
    (N, k') array are scored as they are, and the loss sums exactly those 1 + k' terms: the
    caller who passes them (to repeat a draw, to check a gradient, to compare k on the same
    tables) means that k', so it is used rather than rejected; scaling by the constructor's k
    instead would multiply loss and gradients by (1 + k) / (1 + k')."""

    def __init__(self, vocab_size, dim, sampler: NoiseSampler, k, rng, dtype, scatter):
        super().__init__()
        if k < 1:
            raise ValueError(f"k (negatives per positive) must be at least 1, got {k}")
        self.sampler, self.k = sampler, k
        self.dot = EmbeddingDot(vocab_size, dim, rng, dtype=dtype, scatter=scatter)
        self.dot.params[0][...] = 0           # word2vec starts the output vectors at zero
        self.loss = SigmoidCrossEntropy()

    def forward(self, h, targets, negatives=None):
        n = len(targets)
        if negatives is None:
            negatives = self.sampler.sample((n, self.k))
        negatives = check_integers(negatives, "negatives", f"{type(self).__name__}.forward", "integer word ids")
        targets = check_integers(targets, "targets", f"{type(self).__name__}.forward", "integer word ids")
        if negatives.ndim != 2 or negatives.shape[0] != n or negatives.shape[1] < 1:
            raise ValueError(f"negatives must be an (N, k') array with N={n} rows and k' >= 1 columns, "
                             f"got shape {negatives.shape}")
        self.terms = 1 + negatives.shape[1]                                   # 1 + k', the terms actually scored
        ids = np.concatenate([np.asarray(targets)[:, None], negatives], axis=1)   # (N, 1+k')
        scores = self.dot.forward(h, ids)
        labels = np.zeros_like(scores)
        labels[:, 0] = 1
        # SigmoidCrossEntropy averages over N(1+k') terms; we want the sum over 1+k', mean over N
        return self.remember(self.loss.forward(scores, labels) * self.terms)

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        return self.dot.backward(self.loss.backward(dout * self.terms))


def _init_tables(model, vocab_size, dim, sampler, k, rng, dtype, scatter) -> None:
    """Give a skip-gram/CBOW model its input table (uniform in +-0.5/D) and its
    negative-sampling output table, and expose both as params/grads."""
    rng = rng if rng is not None else np.random.default_rng(0)
    model.embed = Embedding(vocab_size, dim, rng, dtype=dtype, scatter=scatter)
    model.embed.params[0][...] = (rng.random((vocab_size, dim)) - 0.5) / dim
    model.ns = _NegativeSamplingLoss(vocab_size, dim, sampler, k, rng, dtype, scatter)
    model.params = [model.embed.params[0], model.ns.dot.params[0]]
    model.grads = [model.embed.grads[0], model.ns.dot.grads[0]]


class SkipGramNS(Layer):
    """Skip-gram with negative sampling, NumPy. Taught in lesson 07, section 5.

    params = [W_in (V, D), W_out (V, D)]. forward(centers (N,) int, contexts (N,) int,
    negatives (N, k') int or None) -> mean over pairs of
    -log s(u_o . v_c) - sum_j log s(-u_j . v_c), the sum over the negatives' columns. ``k``
    negatives per pair are drawn from ``sampler`` when none are given; given ones are used
    whatever their number k'. backward(dout=1.0) fills ``grads``; ids have no gradient (returns None).
    W_in starts uniform in +-0.5/D, W_out at zero (as in word2vec.c and gensim).
    ``scatter`` is passed to :class:`helpers.lib.layers.Embedding` ('sparse' is faster).
    """

    def __init__(self, vocab_size: int, dim: int, sampler: NoiseSampler, k: int = 5,
                 rng: np.random.Generator | None = None, dtype=np.float64, scatter: str = "add.at"):
        super().__init__()
        _init_tables(self, vocab_size, dim, sampler, k, rng, dtype, scatter)

    def forward(self, centers, contexts, negatives=None):
        centers, contexts = np.asarray(centers), np.asarray(contexts)
        if centers.ndim != 1 or centers.shape != contexts.shape:
            raise ValueError(f"centers and contexts must be 1-D of equal length, got {centers.shape} and {contexts.shape}")
        h = self.embed.forward(centers)                     # (N, D)
        return self.remember(self.ns.forward(h, contexts, negatives))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        self.embed.backward(self.ns.backward(dout))
        return None


class CBOWNS(Layer):
    """CBOW with negative sampling, NumPy: the mean of the context vectors predicts the centre. Taught in lesson 07, section 5.

    params = [W_in (V, D), W_out (V, D)]. forward(contexts (N, C) int, centers (N,) int,
    mask (N, C) bool or 0/1 integers or None, negatives (N, k') or None) -> mean loss over examples (``k``
    negatives drawn when none are given; given ones are used whatever their number k').
    ``mask`` marks real context words (rows may have fewer than C, e.g. at sentence ends);
    masked-out ids must still be valid (any id, e.g. 0). backward(dout=1.0) fills grads.

    ``word2vec_update=True`` makes backward follow word2vec.c and gensim instead of the exact
    gradient: every context word receives the *full* error of the mean vector h, i.e. the
    true gradient times the number of context words (used for training, never gradient-checked).
    """

    def __init__(self, vocab_size: int, dim: int, sampler: NoiseSampler, k: int = 5,
                 rng: np.random.Generator | None = None, dtype=np.float64, scatter: str = "add.at",
                 word2vec_update: bool = False):
        super().__init__()
        _init_tables(self, vocab_size, dim, sampler, k, rng, dtype, scatter)
        self.word2vec_update = word2vec_update

    def forward(self, contexts, centers, mask=None, negatives=None):
        contexts = np.asarray(contexts)
        if contexts.ndim != 2 or contexts.shape[0] != len(centers):
            raise ValueError(f"contexts must be (N, C) with N={len(centers)}, got shape {contexts.shape}")
        if mask is None:
            mask = np.ones(contexts.shape)
        else:
            mask = check_mask(mask, "mask", "CBOWNS.forward", "a real context word").astype(np.float64)
        if mask.shape != contexts.shape:
            raise ValueError(f"mask shape {mask.shape} != contexts shape {contexts.shape}")
        count = mask.sum(axis=1, keepdims=True)
        if np.any(count == 0):
            raise ValueError("every CBOW example needs at least one context word (a mask row is all zero)")
        self.w = (mask / count)[:, :, None].astype(self.params[0].dtype)   # (N, C, 1) averaging weights
        self.mask = mask[:, :, None].astype(self.params[0].dtype)
        h = np.sum(self.embed.forward(contexts) * self.w, axis=1)          # (N, D)
        return self.remember(self.ns.forward(h, centers, negatives))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        dh = self.ns.backward(dout)
        self.embed.backward(dh[:, None, :] * (self.mask if self.word2vec_update else self.w))
        return None


def full_softmax_step(W_in: np.ndarray, W_out: np.ndarray, centers: np.ndarray, contexts: np.ndarray) -> float:
    """One forward+backward of the full-softmax skip-gram (no update); returns the loss. Taught in lesson 07, section 6.
    Cost O(N V D): every word's output vector takes part. Used to time it against NS.
    W_in, W_out (V, D); centers, contexts (N,) int ids in [0, V)."""
    W_in, W_out = np.asarray(W_in), np.asarray(W_out)
    if W_in.ndim != 2 or W_in.shape != W_out.shape:
        raise ValueError(f"full_softmax_step: W_in and W_out must be (V, D) of one shape, got {W_in.shape} and {W_out.shape}")
    centers = check_ids(centers, W_in.shape[0], "centers", "full_softmax_step", noun="word ids")
    h = W_in[centers]
    logits = h @ W_out.T                               # (N, V): the bottleneck
    loss_layer = SoftmaxCrossEntropy()
    loss = loss_layer.forward(logits, contexts)
    d = loss_layer.backward()
    _ = d.T @ h, d @ W_out                              # dW_out, dh
    return loss


def sgns_pair_gradients(w: np.ndarray, c: np.ndarray, n_pos, n_neg) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of SGNS's loss of word–context pairs, summed over a corpus. Taught in lesson 06, section 9.

    Skip-gram's negative-sampling loss as Levy & Goldberg (2014) write it, for pairs of vectors.
    Row b of ``w`` and ``c`` (B, D) is the vector of one word and that of one context word. Over the
    whole corpus the pair is seen ``n_pos[b]`` times (B,), and the context is drawn as a negative for
    the word ``n_neg[b]`` times in expectation (B,) (k · #(w) · P_0.75(c)). Those terms of the loss are

        L = Σ_b  −n_pos[b] · log σ(w_b·c_b)  −  n_neg[b] · log σ(−w_b·c_b).

    With x = w·c, dL/dx = n_neg · σ(x) − n_pos · σ(−x), which is zero at x = ln(n_pos / n_neg): the
    shifted PMI. Returns (dL/dw, dL/dc), each (B, D) float64.
    """
    w, c = np.asarray(w, dtype=np.float64), np.asarray(c, dtype=np.float64)
    n_pos, n_neg = np.asarray(n_pos, dtype=np.float64), np.asarray(n_neg, dtype=np.float64)
    if w.ndim != 2 or w.shape != c.shape:
        raise ValueError(f"sgns_pair_gradients: w and c must be (B, D) arrays of one shape, got {w.shape} and {c.shape}")
    if n_pos.shape != (w.shape[0],) or n_neg.shape != (w.shape[0],):
        raise ValueError(f"sgns_pair_gradients: n_pos and n_neg must be ({w.shape[0]},), one count per row; "
                         f"got {n_pos.shape} and {n_neg.shape}")
    for name, a in (("w", w), ("c", c), ("n_pos", n_pos), ("n_neg", n_neg)):
        check_finite(a, name, "sgns_pair_gradients")
    if np.any(n_pos < 0) or np.any(n_neg < 0):
        raise ValueError("sgns_pair_gradients: the counts n_pos and n_neg cannot be negative")
    x = np.einsum("bd,bd->b", w, c)                    # (B,) the dot products
    g = n_neg * expit(x) - n_pos * expit(-x)           # (B,) dL/dx
    return g[:, None] * c, g[:, None] * w
