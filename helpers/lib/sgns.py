"""Skip-gram with negative sampling as two plain functions: the gradients of a batch of pairs and
one SGD step on the two tables. Lesson 07 trains its live model with these (or with the student's
own versions of them, once they pass their checkers).

- :func:`ns_loss_and_gradients`: the loss of B (centre, context) pairs with k noise words each, and
  its gradients with respect to the vectors used — the rule dL/ds = σ(s) − t for every score;
- :func:`scatter_rows`: the rows a batch used and the sum of their gradients (repeated ids add up,
  as in the embedding layer's backward pass), computed as a sparse product;
- :func:`sgd_step`: gather the vectors, compute the gradients, scatter them and move the rows used
  by −lr times their summed gradients.

The layer versions of the same model (``params``/``grads``, the course protocol) are
:class:`helpers.lib.negative_sampling.SkipGramNS` and ``CBOWNS``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_ids


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # 1 / (1 + e^-x) without overflow: e^-|x| never exceeds 1
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def ns_loss_and_gradients(v: np.ndarray, u_o: np.ndarray, U_neg: np.ndarray):
    """Negative-sampling loss of B pairs and its gradients. Taught in lesson 07, section 5.

    v : (B, d) centre vectors (rows of W); u_o : (B, d) the true context words' output vectors
    (rows of C); U_neg : (B, k, d) the k noise words' output vectors. Pair b's loss is

        L_b = −log σ(u_o[b]·v[b]) − Σ_j log σ(−U_neg[b, j]·v[b]),

    computed stably as softplus(−s_o) + Σ_j softplus(s_j). With dL/ds = σ(s) − t (t = 1 for the
    true word, 0 for a noise word): dv = (σ(s_o) − 1) u_o + Σ_j σ(s_j) U_neg[:, j],
    du_o = (σ(s_o) − 1) v, dU_neg[:, j] = σ(s_j) v. Returns (loss (B,), dv (B, d), du_o (B, d),
    dU_neg (B, k, d)) in the dtype of ``v``; each row is the gradient of that pair's own loss.
    """
    v, u_o, U_neg = np.asarray(v), np.asarray(u_o), np.asarray(U_neg)
    if v.ndim != 2 or u_o.shape != v.shape or U_neg.ndim != 3 or U_neg.shape[::2] != v.shape:
        raise ValueError(f"ns_loss_and_gradients: v and u_o must be (B, d) and U_neg (B, k, d), got {v.shape}, "
                         f"{u_o.shape} and {U_neg.shape}")
    s_o = np.einsum("bd,bd->b", u_o, v)                       # (B,)   the true pair's score
    s_neg = np.einsum("bkd,bd->bk", U_neg, v)                 # (B, k) the noise words' scores
    loss = np.logaddexp(0, -s_o) + np.logaddexp(0, s_neg).sum(axis=1)
    g_o, g_neg = _sigmoid(s_o) - 1, _sigmoid(s_neg)           # dL/ds = σ(s) − t
    dv = g_o[:, None] * u_o + np.einsum("bk,bkd->bd", g_neg, U_neg)
    return loss, dv, g_o[:, None] * v, g_neg[:, :, None] * v[:, None, :]


def scatter_rows(ids: np.ndarray, grads: np.ndarray, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows a batch used and their summed gradients. Taught in lesson 07, section 5.

    ids : (n,) int row ids, repeats allowed; grads : (n, d) one gradient per id. Returns
    (rows (U,) the distinct ids, sorted; summed (U, d)): summed[r] = Σ of grads[i] over ids[i] ==
    rows[r] — what ``np.add.at(dW, ids, grads)`` puts into those rows of a zero (V, d) array,
    computed as the product of a sparse (U, n) one-hot matrix with ``grads``, which is many times
    faster than ``np.add.at`` for rows of 100 numbers (the lesson times both)."""
    # a bool array would index as a mask, a float one fail inside NumPy: refused by name
    ids = check_ids(np.asarray(ids).reshape(-1), vocab_size, "ids", "scatter_rows")
    grads = np.asarray(grads)
    if grads.ndim != 2 or len(grads) != len(ids):
        raise ValueError(f"scatter_rows: grads must be (n, d) with n = {len(ids)} ids, got {grads.shape}")
    used = np.zeros(vocab_size, dtype=bool)
    used[ids] = True
    rows = np.flatnonzero(used)
    slot = np.empty(vocab_size, dtype=np.intp)
    slot[rows] = np.arange(len(rows))
    n = len(ids)
    # column i of the one-hot matrix has its single 1 in the row of ids[i]: compressed-column
    # format with one entry per column needs no sorting
    onehot = sp.csc_matrix((np.ones(n, grads.dtype), slot[ids], np.arange(n + 1)), shape=(len(rows), n))
    return rows, np.asarray(onehot @ grads)


def sgd_step(W: np.ndarray, C: np.ndarray, centers: np.ndarray, contexts: np.ndarray, negatives: np.ndarray,
             lr: float, gradients: Callable = ns_loss_and_gradients) -> tuple[float, np.ndarray, np.ndarray]:
    """One SGD step of skip-gram with negative sampling on a batch of pairs. Taught in lesson 07, section 5.

    W, C : (V, d) input and output tables, updated in place; centers, contexts : (B,) int;
    negatives : (B, k) int; ``gradients(v, u_o, U_neg)`` as :func:`ns_loss_and_gradients`. Every
    row used moves by −lr times the SUM of its gradients over the batch (repeated ids add up, as
    word2vec's one-pair-at-a-time SGD would move it with learning rate lr per pair). All gradients
    are computed from the values before the step. Returns (the batch's mean loss per pair, W, C)."""
    centers = check_ids(np.asarray(centers), len(W), "centers", "sgd_step")       # ids in [0, V), by name
    contexts = check_ids(np.asarray(contexts), len(C), "contexts", "sgd_step")
    negatives = check_ids(np.asarray(negatives), len(C), "negatives", "sgd_step")
    B, k = negatives.shape
    loss, dv, du_o, dU_neg = gradients(W[centers], C[contexts], C[negatives])
    rows_w, g_w = scatter_rows(centers, dv, len(W))
    rows_c, g_c = scatter_rows(np.concatenate([contexts, negatives.reshape(-1)]),
                               np.concatenate([du_o, dU_neg.reshape(B * k, -1)]), len(C))
    W[rows_w] -= lr * g_w                # rows_w are distinct: each row is written once
    C[rows_c] -= lr * g_c
    return float(np.mean(loss)), W, C
