"""Ranking documents and measuring a ranking (lesson 05 §5): BM25, precision, recall, AP."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_ids


def bm25_weights(counts: sp.spmatrix, k1: float = 1.2, b: float = 0.75):
    """The BM25 weight of every stored (document, word) count: ``(weights csr (|D|, |W|), idf)``
    (lesson 05 §5): weight = idf · tf (k1 + 1) / (tf + k1 (1 − b + b |d| / avgdl)), with Lucene's
    idf = ln(1 + (|D| − df + 0.5) / (df + 0.5)); a query scores ``query_counts @ weights.T``."""
    if not (np.isfinite(k1) and k1 >= 0):
        raise ValueError(f"bm25_weights: k1 must be a finite number >= 0, got {k1!r}")
    if not 0.0 <= b <= 1.0:
        raise ValueError(f"bm25_weights: b must lie in [0, 1], got {b!r}")
    tf = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    tf.eliminate_zeros()
    if tf.nnz == 0:
        raise ValueError("bm25_weights: the count matrix is empty (no documents or no words)")
    if np.any(tf.data < 0) or not np.all(np.isfinite(tf.data)):
        raise ValueError("bm25_weights: counts must be finite and non-negative")
    n = tf.shape[0]
    df = np.bincount(tf.indices, minlength=tf.shape[1])
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    lengths = np.asarray(tf.sum(axis=1)).ravel()
    rows = np.repeat(np.arange(n), np.diff(tf.indptr))
    norm = k1 * (1 - b + b * lengths[rows] / lengths.mean())
    tf.data = idf[tf.indices] * tf.data * (k1 + 1) / (tf.data + norm)
    return tf, idf


def target_ranks(scores: np.ndarray, targets: np.ndarray, groups=None) -> np.ndarray:
    """The rank (1 = first) of each query's target document, (Q,) int64 (lesson 05 §5); with
    ``groups``, among the documents outside the target's near-duplicate group."""
    scores, targets = np.asarray(scores, np.float64), np.asarray(targets)
    if scores.ndim != 2 or targets.shape != (scores.shape[0],):
        raise ValueError(f"target_ranks: expected scores (Q, D) and targets (Q,), got "
                         f"{scores.shape} and {targets.shape}")
    targets = np.asarray(check_ids(targets, scores.shape[1], "targets", "target_ranks"), np.int64)
    if np.isnan(scores).any():
        raise ValueError("target_ranks: scores hold nan, which has no place in a ranking")
    ids = np.arange(scores.shape[1])[None, :]
    if groups is None:
        same = ids == targets[:, None]
    else:
        groups = np.asarray(groups)
        if groups.shape != (scores.shape[1],):
            raise ValueError(f"target_ranks: expected one group per document ({scores.shape[1]},), "
                             f"got {groups.shape}")
        same = groups[None, :] == groups[targets][:, None]
    rows = np.arange(len(targets))
    first = np.argmax(np.where(same, scores, -np.inf), axis=1)          # the group's best document
    first = np.where(same[rows, first], first, np.argmax(same, axis=1))  # a group all at -inf
    own = scores[rows, first][:, None]
    others = np.where(same, -np.inf, scores)
    return ((others > own) | ((others == own) & (ids < first[:, None]))).sum(axis=1) + 1


def _ranked_relevance(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    scores, relevant = np.asarray(scores, np.float64), np.asarray(relevant, bool)
    if scores.ndim != 2 or scores.shape != relevant.shape:
        raise ValueError(f"scores and relevant must be (Q, D) arrays of one shape, got "
                         f"{scores.shape} and {relevant.shape}")
    if np.isnan(scores).any():
        raise ValueError("scores hold nan, which has no place in a ranking")
    if np.any(relevant & np.isneginf(scores)):
        raise ValueError("a relevant document is left out of the ranking (scored -inf)")
    if np.any(relevant.sum(axis=1) == 0):
        raise ValueError("a query has no relevant document: its recall is undefined")
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.take_along_axis(relevant, order, axis=1)


def precision_recall_at(scores: np.ndarray, relevant: np.ndarray, k: int) -> tuple:
    """Per query, precision@k (relevant documents in the top k, over k) and recall@k (over all
    relevant documents): two (Q,) arrays (lesson 05 §5). ``relevant`` is (Q, |D|) bool."""
    ranked = _ranked_relevance(scores, relevant)
    if not 1 <= k <= ranked.shape[1]:
        raise ValueError(f"precision_recall_at: k must be in [1, {ranked.shape[1]}], got {k}")
    found = ranked[:, :k].sum(axis=1).astype(np.float64)
    return found / k, found / ranked.sum(axis=1)


def average_precision(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per query, the mean of precision@r over the ranks r of the relevant documents, (Q,)
    (lesson 05 §5); scikit-learn's ``average_precision_score`` for untied scores."""
    ranked = _ranked_relevance(scores, relevant)
    precision = np.cumsum(ranked, axis=1) / np.arange(1, ranked.shape[1] + 1)
    return (precision * ranked).sum(axis=1) / ranked.sum(axis=1)
