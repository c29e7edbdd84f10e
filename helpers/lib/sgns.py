"""Skip-gram with negative sampling as plain functions: loss, gradients, SGD step (lesson 07 §5)."""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_ids
from helpers.lib.layers import sigmoid


def ns_loss_and_gradients(v: np.ndarray, u_c: np.ndarray, U_neg: np.ndarray):
    """Negative-sampling loss of B pairs and its gradients (lesson 07 §5): v, u_c (B, d), U_neg
    (B, k, d); L_b = −log σ(u_c·v) − Σ_j log σ(−U_neg[b, j]·v); with g = σ(s) − t,
    dv = g_c u_c + Σ_j g_j U_neg[:, j], du_c = g_c v, dU_neg[:, j] = g_j v.
    Returns (loss (B,), dv, du_c, dU_neg)."""
    v, u_c, U_neg = np.asarray(v), np.asarray(u_c), np.asarray(U_neg)
    if v.ndim != 2 or u_c.shape != v.shape or U_neg.ndim != 3 or U_neg.shape[::2] != v.shape:
        raise ValueError(f"ns_loss_and_gradients: v and u_c must be (B, d) and U_neg (B, k, d), "
                         f"got {v.shape}, {u_c.shape} and {U_neg.shape}")
    s_c = np.einsum("bd,bd->b", u_c, v)                       # (B,)   the true pairs' scores
    s_neg = np.einsum("bkd,bd->bk", U_neg, v)                 # (B, k) the noise words' scores
    loss = np.logaddexp(0, -s_c) + np.logaddexp(0, s_neg).sum(axis=1)
    g_c, g_neg = sigmoid(s_c) - 1, sigmoid(s_neg)             # dL/ds = σ(s) − t
    dv = g_c[:, None] * u_c + np.einsum("bk,bkd->bd", g_neg, U_neg)
    if not (np.isfinite(loss).all() and np.isfinite(dv).all()):      # NaN or inf in the vectors
        inputs = (("v", v), ("u_c", u_c), ("U_neg", U_neg))
        bad = next(n for n, a in inputs if not np.isfinite(a).all())
        raise ValueError(f"ns_loss_and_gradients: {bad} holds NaN or infinite values (a learning "
                         "rate too large makes the vectors diverge)")
    return loss, dv, g_c[:, None] * v, g_neg[:, :, None] * v[:, None, :]


def scatter_rows(ids: np.ndarray, grads: np.ndarray,
                 vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows a batch used, (U,) sorted, and the sums of their gradients (U, d), from
    ids (n,) and grads (n, d): what ``np.add.at(dW, ids, grads)`` adds (lesson 07 §5)."""
    ids = check_ids(np.asarray(ids).reshape(-1), vocab_size, "ids", "scatter_rows")
    grads = np.asarray(grads)
    if grads.ndim != 2 or len(grads) != len(ids):
        raise ValueError(f"scatter_rows: grads must be (n, d) with n = {len(ids)} ids, "
                         f"got {grads.shape}")
    used = np.zeros(vocab_size, dtype=bool)
    used[ids] = True
    rows = np.flatnonzero(used)
    slot = np.empty(vocab_size, dtype=np.intp)
    slot[rows] = np.arange(len(rows))
    n = len(ids)
    # column i holds a single 1, in the row of ids[i]: compressed columns need no sorting
    onehot = sp.csc_matrix((np.ones(n, grads.dtype), slot[ids], np.arange(n + 1)),
                           shape=(len(rows), n))
    return rows, np.asarray(onehot @ grads)


def sgd_step(W: np.ndarray, C: np.ndarray, words: np.ndarray, contexts: np.ndarray,
             negatives: np.ndarray, lr: float,
             gradients: Callable = ns_loss_and_gradients) -> tuple[float, np.ndarray, np.ndarray]:
    """One SGD step of skip-gram with negative sampling (lesson 07 §5): W, C (V, d) updated in
    place from words, contexts (B,), negatives (B, k). Returns (mean loss per pair, W, C)."""
    words = check_ids(np.asarray(words), len(W), "words", "sgd_step")
    contexts = check_ids(np.asarray(contexts), len(C), "contexts", "sgd_step")
    negatives = check_ids(np.asarray(negatives), len(C), "negatives", "sgd_step")
    if (words.ndim != 1 or len(words) == 0 or contexts.shape != words.shape
            or negatives.ndim != 2 or len(negatives) != len(words)):
        raise ValueError(f"sgd_step: words and contexts must be (B,) with B >= 1 and negatives "
                         f"(B, k), got {words.shape}, {contexts.shape} and {negatives.shape}")
    if not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"sgd_step: the learning rate lr must be a positive number, got {lr}")
    B, k = negatives.shape
    loss, dv, du_c, dU_neg = gradients(W[words], C[contexts], C[negatives])
    rows_w, g_w = scatter_rows(words, dv, len(W))
    rows_c, g_c = scatter_rows(np.concatenate([contexts, negatives.reshape(-1)]),
                               np.concatenate([du_c, dU_neg.reshape(B * k, -1)]), len(C))
    W[rows_w] -= lr * g_w                  # distinct rows: each written once
    C[rows_c] -= lr * g_c
    return float(np.mean(loss)), W, C


def one_hot_sums(ids: np.ndarray, n_rows: int, dtype=np.float32
                 ) -> tuple[np.ndarray, sp.csr_matrix]:
    """(uniq, S): the distinct ids and the sparse (U, P) one-hot S[u, p] = [ids[p] == uniq[u]],
    so that ``target[uniq] += S @ values`` adds a repeated id's rows (lesson 08 §4)."""
    uniq, inv = np.unique(ids, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    indptr = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(np.bincount(inv, minlength=len(uniq)), out=indptr[1:])
    return uniq, sp.csr_matrix((np.ones(len(ids), dtype), order, indptr),
                               shape=(len(uniq), len(ids)))
