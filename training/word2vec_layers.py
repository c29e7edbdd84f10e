"""Skip-gram and CBOW with negative sampling as NumPy layers of the course protocol (``params``,
``grads``, ``forward``, ``backward``): the model of the shipped ``wv_numpy_skipgram``, trained by
:func:`training.word2vec_trainers.train_numpy`. Lesson 07's live skip-gram is the same model
written as two functions (:mod:`helpers.lib.sgns`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_integers, check_mask
from helpers.lib.layers import Embedding, Layer, SigmoidCrossEntropy
from helpers.lib.negative_sampling import EmbeddingDot, NoiseSampler


def _row_gradient(ids: np.ndarray, coef: np.ndarray, h: np.ndarray, vocab_size: int):
    """The gradient of the rows an (N, K) block of ids used, grad[r] = Σ coef[n, j] h[n] over the
    (n, j) with ids[n, j] == r, as a sparse product A @ h (A: distinct ids x N, column n holding
    coef[n, j] in the row of ids[n, j]; a word twice in a column is summed).
    Returns (rows, grad)."""
    n, k = ids.shape
    used = np.zeros(vocab_size, dtype=bool)
    used[ids.ravel()] = True
    rows = np.flatnonzero(used)
    slot_of = np.empty(vocab_size, dtype=np.intp)
    slot_of[rows] = np.arange(len(rows))
    A = sp.csc_matrix(
        (coef.ravel(), slot_of[ids.ravel()], np.arange(0, n * k + 1, k)), shape=(len(rows), n)
    )
    return rows, A @ h


class RowsEmbeddingDot(EmbeddingDot):
    """:class:`helpers.lib.negative_sampling.EmbeddingDot` whose backward, with ``scatter='rows'``,
    stores only the gradient of the rows used, ``embed.row_grad = (rows, grad)``."""

    def backward(self, dout):
        if self.embed.scatter != "rows":
            return super().backward(dout)
        self.check_dout(dout=dout)
        n = len(self.h)
        self.embed.row_grad = _row_gradient(
            self.embed.ids.reshape(n, -1),
            np.reshape(dout, (n, -1)),
            self.h,
            self.params[0].shape[0],
        )
        if self.squeeze:
            return dout[:, None] * self.rows
        return np.einsum("nk,nkd->nd", dout, self.rows)


class NegativeSamplingLoss(Layer):
    """The scores of the true word and k noise words against h, sigmoid and binary cross-entropy,
    summed over the 1 + k terms and averaged over N (negatives given as (N, k') are used as
    given)."""

    def __init__(self, vocab_size, dim, sampler: NoiseSampler, k, rng, dtype, scatter):
        super().__init__()
        if k < 1:
            raise ValueError(f"k (negatives per positive) must be at least 1, got {k}")
        self.sampler, self.k = sampler, k
        self.dot = RowsEmbeddingDot(vocab_size, dim, rng, dtype=dtype, scatter=scatter)
        self.dot.params[0][...] = 0  # word2vec starts the output vectors at zero
        self.loss = SigmoidCrossEntropy()

    def forward(self, h, targets, negatives=None):
        n = len(targets)
        if negatives is None:
            negatives = self.sampler.sample((n, self.k))
        negatives = check_integers(
            negatives, "negatives", f"{type(self).__name__}.forward", "integer word ids"
        )
        targets = check_integers(
            targets, "targets", f"{type(self).__name__}.forward", "integer word ids"
        )
        if negatives.ndim != 2 or negatives.shape[0] != n or negatives.shape[1] < 1:
            raise ValueError(
                f"negatives must be an (N, k') array with N={n} rows and k' >= 1 columns, "
                f"got shape {negatives.shape}"
            )
        self.terms = 1 + negatives.shape[1]
        ids = np.concatenate([np.asarray(targets)[:, None], negatives], axis=1)  # (N, 1+k')
        scores = self.dot.forward(h, ids)
        labels = np.zeros_like(scores)
        labels[:, 0] = 1
        # SigmoidCrossEntropy averages over N(1+k') terms: the sum over 1+k', mean over N
        return self.remember(self.loss.forward(scores, labels) * self.terms)

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        return self.dot.backward(self.loss.backward(dout * self.terms))


def _init_tables(model, vocab_size, dim, sampler, k, rng, dtype, scatter) -> None:
    """The input table (uniform in ±0.5/D) and the negative-sampling output table (params)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    model.embed = Embedding(vocab_size, dim, rng, dtype=dtype, scatter=scatter)
    model.embed.params[0][...] = (rng.random((vocab_size, dim)) - 0.5) / dim
    model.ns = NegativeSamplingLoss(vocab_size, dim, sampler, k, rng, dtype, scatter)
    model.params = [model.embed.params[0], model.ns.dot.params[0]]
    model.grads = [model.embed.grads[0], model.ns.dot.grads[0]]


class SkipGramNS(Layer):
    """Skip-gram with negative sampling. params = [W (V, D), C (V, D)]; forward(words (N,),
    contexts (N,), negatives (N, k') or None) -> the mean over pairs of
    −log σ(u_c·v_w) − Σ_j log σ(−u_j·v_w); backward(dout=1.0) fills ``grads``. W starts uniform
    in ±0.5/D, C at zero (as word2vec.c and gensim)."""

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        sampler: NoiseSampler,
        k: int = 5,
        rng: np.random.Generator | None = None,
        dtype=np.float64,
        scatter: str = "add.at",
    ):
        super().__init__()
        _init_tables(self, vocab_size, dim, sampler, k, rng, dtype, scatter)

    def forward(self, centers, contexts, negatives=None):
        centers, contexts = np.asarray(centers), np.asarray(contexts)
        if centers.ndim != 1 or centers.shape != contexts.shape:
            raise ValueError(
                f"centers and contexts must be 1-D of equal length, got {centers.shape} and "
                f"{contexts.shape}"
            )
        h = self.embed.forward(centers)
        return self.remember(self.ns.forward(h, contexts, negatives))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        self.embed.backward(self.ns.backward(dout))
        return None


class CBOWNS(Layer):
    """CBOW with negative sampling: the mean of the context vectors predicts the word.
    forward(contexts (N, C), centers (N,), mask (N, C) or None, negatives or None) -> mean loss.
    ``word2vec_update=True`` gives every context word the full error of the mean vector, as
    word2vec.c and gensim do (the true gradient times the number of context words)."""

    def __init__(
        self,
        vocab_size: int,
        dim: int,
        sampler: NoiseSampler,
        k: int = 5,
        rng: np.random.Generator | None = None,
        dtype=np.float64,
        scatter: str = "add.at",
        word2vec_update: bool = False,
    ):
        super().__init__()
        _init_tables(self, vocab_size, dim, sampler, k, rng, dtype, scatter)
        self.word2vec_update = word2vec_update

    def forward(self, contexts, centers, mask=None, negatives=None):
        contexts = np.asarray(contexts)
        if contexts.ndim != 2 or contexts.shape[0] != len(centers):
            raise ValueError(
                f"contexts must be (N, C) with N={len(centers)}, got shape {contexts.shape}"
            )
        if mask is None:
            mask = np.ones(contexts.shape)
        else:
            mask = check_mask(mask, "mask", "CBOWNS.forward", "a real context word").astype(
                np.float64
            )
        if mask.shape != contexts.shape:
            raise ValueError(f"mask shape {mask.shape} != contexts shape {contexts.shape}")
        count = mask.sum(axis=1, keepdims=True)
        if np.any(count == 0):
            raise ValueError(
                "every CBOW example needs at least one context word (a mask row is all zero)"
            )
        self.w = (mask / count)[:, :, None].astype(self.params[0].dtype)
        self.mask = mask[:, :, None].astype(self.params[0].dtype)
        h = np.sum(self.embed.forward(contexts) * self.w, axis=1)
        return self.remember(self.ns.forward(h, centers, negatives))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        dh = self.ns.backward(dout)
        self.embed.backward(dh[:, None, :] * (self.mask if self.word2vec_update else self.w))
        return None
