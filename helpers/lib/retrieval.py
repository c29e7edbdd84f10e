"""Ranking documents and measuring a ranking: BM25, and precision, recall and average precision.

Lesson 05, section 5. Documents are rows of a (|D|, |W|) count matrix (``helpers.lib.lsa.
document_term_matrix``), queries rows of a (Q, |W|) count matrix over the same vocabulary.
A ranking is given by a (Q, |D|) score matrix: higher scores first; a score of ``-inf`` marks a
document left out of a query's ranking (the query itself, its near-duplicate copies).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_ids
from helpers.lib.metrics import normalize_rows

__all__ = [
    "bm25_idf", "bm25_weights", "bm25_scores", "target_ranks", "known_item_scores", "topic_precision",
    "lsa_document_vectors", "ranked_relevance", "precision_recall_at", "average_precision",
    "interpolated_precision",
]


# ----------------------------------------------------------------------------- BM25
def bm25_idf(df, n_documents: int) -> np.ndarray:
    """BM25's inverse document frequency. Taught in lesson 05, section 5.

    BM25's inverse document frequency, (|W|,) float64: ``ln(1 + (|D| - df + 0.5) / (df + 0.5))``.
    Taught in lesson 05, section 5.

    The variant of Lucene (and so Elasticsearch and gensim's ``LuceneBM25Model``): always positive,
    close to 0 for a word found in every document, and largest for the rarest words."""
    df = np.asarray(df, dtype=np.float64)
    if n_documents < 1:
        raise ValueError(f"n_documents must be >= 1, got {n_documents}")
    if not np.all(np.isfinite(df)) or np.any(df < 0) or np.any(df > n_documents):
        raise ValueError(f"document frequencies must lie in [0, {n_documents}]")
    return np.log1p((n_documents - df + 0.5) / (df + 0.5))


def bm25_weights(counts: sp.spmatrix, k1: float = 1.2, b: float = 0.75):
    """The BM25 weight of every stored (document, word) count. Taught in lesson 05, section 5.

    ``counts``: (|D|, |W|) raw term counts. Returns ``(weights, idf)``: weights (|D|, |W|) csr
    float64, ``weights[d, t] = idf_t · tf (k1+1) / (tf + k1 (1 − b + b |d| / avgdl))``, and the
    idf (|W|,). The term frequency saturates (``k1`` sets how fast: a weight never exceeds
    ``(k1 + 1) idf_t``) and is normalised by the document's length ``|d|`` against the average
    ``avgdl`` (``b = 0``: not at all, ``b = 1``: fully). The defaults are Lucene's. A query's
    score for a document is the sum of the document's weights of the query's words
    (:func:`bm25_scores`)."""
    if not (np.isfinite(k1) and k1 >= 0):
        raise ValueError(f"k1 must be a finite number >= 0, got {k1!r}")
    if not (0.0 <= b <= 1.0):
        raise ValueError(f"b must lie in [0, 1], got {b!r}")
    tf = sp.csr_matrix(counts, dtype=np.float64)
    tf.eliminate_zeros()
    if tf.shape[0] == 0 or tf.nnz == 0:
        raise ValueError("bm25_weights: the count matrix is empty (no documents or no words)")
    if np.any(tf.data < 0) or not np.all(np.isfinite(tf.data)):
        raise ValueError("bm25_weights: counts must be finite and non-negative")
    lengths = np.asarray(tf.sum(axis=1)).ravel()
    avgdl = lengths.mean()
    idf = bm25_idf(np.bincount(tf.indices, minlength=tf.shape[1]), tf.shape[0])
    rows = np.repeat(np.arange(tf.shape[0]), np.diff(tf.indptr))
    w = tf.copy()
    saturation = tf.data * (k1 + 1) / (tf.data + k1 * (1 - b + b * lengths[rows] / avgdl))
    w.data = idf[tf.indices] * saturation
    return w, idf


def bm25_scores(query_counts: sp.spmatrix, weights: sp.spmatrix) -> np.ndarray:
    """BM25 score of every query for every document, (Q, |D|) float64. Taught in lesson 05, section 5.

    ``query_counts``: (Q, |W|) counts of the query words (a word given twice counts twice, as in
    Lucene); ``weights``: (|D|, |W|) from :func:`bm25_weights`."""
    q = sp.csr_matrix(query_counts, dtype=np.float64)
    if q.shape[1] != weights.shape[1]:
        raise ValueError(f"queries have {q.shape[1]} word columns, the documents {weights.shape[1]}")
    return np.asarray((q @ sp.csr_matrix(weights).T).toarray(), dtype=np.float64)


# ----------------------------------------------------------------------------- known-item search
def target_ranks(scores: np.ndarray, targets: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """The rank of each query's target document. Taught in lesson 05, section 5.

    Rank (1 = first) of each query's target document: (Q,) int64. Used in lesson 05, section 5.

    ``scores`` (Q, |D|), ``targets`` (Q,) document ids. A document with a higher score comes first;
    among equal scores the lower document id does (an exact tie is rare but happens for duplicated
    documents). ``groups`` (|D|,): the near-duplicate group of every document
    (:func:`helpers.lib.near_duplicates.near_duplicate_groups`); with it, every copy of the target is
    a right answer too: the rank is that of the first document of the target's group, counting only
    documents outside it."""
    scores = np.asarray(scores, np.float64)
    targets = np.asarray(targets)
    if scores.ndim != 2 or targets.shape != (scores.shape[0],):
        raise ValueError(f"target_ranks: expected scores (Q, D) and targets (Q,), got {scores.shape} and {targets.shape}")
    # a target outside [0, D) would silently get rank 1 (no document is its own), -1 the last group
    targets = np.asarray(check_ids(targets, scores.shape[1], "targets", "target_ranks"), np.int64)
    if np.isnan(scores).any():
        raise ValueError("target_ranks: scores hold nan (a nan compares false with everything: no rank)")
    ids = np.arange(scores.shape[1])[None, :]
    if groups is None:
        same = ids == targets[:, None]
    else:
        groups = np.asarray(groups)
        if groups.shape != (scores.shape[1],):
            raise ValueError(f"target_ranks: expected one group per document ({scores.shape[1]},), got {groups.shape}")
        same = groups[None, :] == groups[targets][:, None]
    masked = np.where(same, -np.inf, scores)
    # the best-scored member of the target's group (the lowest id among equal scores)
    first = np.argmax(np.where(same, scores, -np.inf), axis=1)
    # a group scored -inf throughout: its lowest id (argmax above would pick document 0, in or
    # out of the group, and so give rank 1 to a target left out of the ranking)
    first = np.where(same[np.arange(len(targets)), first], first, np.argmax(same, axis=1))
    own = scores[np.arange(len(targets)), first][:, None]
    ahead = (masked > own) | ((masked == own) & (ids < first[:, None]))
    return ahead.sum(axis=1) + 1


def known_item_scores(ranks: np.ndarray, cutoff: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Hit@1 and reciprocal rank of known-item search. Taught in lesson 05, section 5.

    Per-query hit@1 and reciprocal rank within the top ``cutoff`` (0 beyond it): two (Q,) float arrays."""
    ranks = np.asarray(ranks)
    if ranks.size and not (np.issubdtype(ranks.dtype, np.number) and np.all(ranks >= 1)):
        raise ValueError("known_item_scores: ranks must be numbers >= 1 (1 = first)")
    if not cutoff >= 1:
        raise ValueError(f"known_item_scores: cutoff must be >= 1, got {cutoff!r}")
    return (ranks == 1).astype(np.float64), np.where(ranks <= cutoff, 1.0 / ranks, 0.0)


# ----------------------------------------------------------------------------- topical similarity
def topic_precision(doc_vectors, topics: np.ndarray, queries: np.ndarray | None = None, n: int = 10,
                    groups: np.ndarray | None = None) -> np.ndarray:
    """Topic precision@n of each document's nearest neighbours. Taught in lesson 05, section 5.

    Per-query topic precision@n: the share of a document's ``n`` nearest other documents (cosine)
    that have its topic. Used in lesson 05, sections 5 and 6.

    ``doc_vectors`` (|D|, d) unit rows (ndarray or sparse), ``topics`` (|D|,), ``queries`` the document
    ids used as queries (default: all). ``groups`` (|D|,): near-duplicate groups; a copy of the query
    shares its topic trivially, so with ``groups`` the query's own group is left out of its
    neighbours. Returns (Q,) float64."""
    topics = np.asarray(topics)
    queries = np.arange(doc_vectors.shape[0]) if queries is None else np.asarray(queries)
    if topics.shape != (doc_vectors.shape[0],):
        raise ValueError(f"topic_precision: expected one topic per document ({doc_vectors.shape[0]},), "
                         f"got {topics.shape}")
    if queries.size == 0:
        raise ValueError("topic_precision: no queries")
    # -1 would silently be the last document
    queries = check_ids(queries, doc_vectors.shape[0], "queries", "topic_precision")
    if groups is not None and np.shape(groups) != (doc_vectors.shape[0],):
        raise ValueError(f"topic_precision: expected one group per document ({doc_vectors.shape[0]},), "
                         f"got {np.shape(groups)}")
    if not 1 <= n < doc_vectors.shape[0]:
        raise ValueError(f"topic_precision: n must be in [1, {doc_vectors.shape[0] - 1}], got {n}")
    if hasattr(doc_vectors, "toarray"):
        sims = (doc_vectors[queries] @ doc_vectors.T).toarray()
    else:
        docs = np.asarray(doc_vectors, np.float32)  # float32 halves the time; the top 10 are far apart
        sims = docs[queries] @ docs.T
    sims[np.arange(len(queries)), queries] = -np.inf        # a document is not its own neighbour
    if groups is not None:
        groups = np.asarray(groups)
        if groups.shape != (doc_vectors.shape[0],):
            raise ValueError(f"topic_precision: expected one group per document ({doc_vectors.shape[0]},), got {groups.shape}")
        sims[groups[None, :] == groups[queries][:, None]] = -np.inf
    nearest = np.argpartition(-sims, n - 1, axis=1)[:, :n]
    return (topics[nearest] == topics[queries][:, None]).mean(axis=1)


def lsa_document_vectors(x, vt: np.ndarray, k: int) -> np.ndarray:
    """Unit-length LSA document vectors. Taught in lesson 05, section 5.

    Unit-length LSA document vectors from TF-IDF rows ``x`` (|D|, |W|) and the right singular
    vectors ``vt`` (K, |W|), K >= k: ``normalize_rows(x @ vt[:k].T)``, (|D|, k) float64 — the
    construction of ``DocumentIndex.build(..., k=k)``, for any k up to K from one SVD. Lesson 05."""
    if not 1 <= k <= vt.shape[0]:
        raise ValueError(f"k must be in [1, {vt.shape[0]}], got {k}")
    return normalize_rows(np.asarray(x @ vt[:k].T))


# ----------------------------------------------------------------------------- precision and recall
def ranked_relevance(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """The relevance of each query's documents in ranked order. Taught in lesson 05, section 5.

    The relevance of each query's documents in ranked order: (Q, |D|) bool. Lesson 05, section 5.

    ``scores`` (Q, |D|): higher first, ties broken by the lower document id; ``relevant`` (Q, |D|)
    bool. A document scored ``-inf`` is out of the ranking and must not be relevant."""
    scores, relevant = np.asarray(scores, np.float64), np.asarray(relevant, bool)
    if scores.ndim != 2 or scores.shape != relevant.shape:
        raise ValueError(f"scores and relevant must be (Q, D) arrays of one shape, got {scores.shape} "
                         f"and {relevant.shape}")
    if np.isnan(scores).any():
        raise ValueError("ranked_relevance: scores hold nan (no place in a ranking)")
    if np.any(relevant & np.isneginf(scores)):
        raise ValueError("a relevant document is left out of the ranking (scored -inf)")
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.take_along_axis(relevant, order, axis=1)


def _relevant_counts(ranked: np.ndarray) -> np.ndarray:
    n = ranked.sum(axis=1)
    if np.any(n == 0):
        raise ValueError(f"{int(np.sum(n == 0))} queries have no relevant document: recall is undefined")
    return n


def precision_recall_at(scores: np.ndarray, relevant: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-query precision@k and recall@k: two (Q,) float64 arrays. Taught in lesson 05, section 5.

    precision@k = (relevant documents among the first k) / k;
    recall@k = (relevant documents among the first k) / (all relevant documents)."""
    ranked = ranked_relevance(scores, relevant)
    if not 1 <= k <= ranked.shape[1]:
        raise ValueError(f"k must be in [1, {ranked.shape[1]}], got {k}")
    found = ranked[:, :k].sum(axis=1).astype(np.float64)
    return found / k, found / _relevant_counts(ranked)


def average_precision(scores: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Per-query average precision. Taught in lesson 05, section 5.

    Per-query average precision: the mean of precision@r over the ranks r of the relevant
    documents, (Q,) float64 (scikit-learn's ``average_precision_score`` for untied scores). Its mean
    over the queries is the mean average precision (MAP). Lesson 05, section 5."""
    ranked = ranked_relevance(scores, relevant)
    n = _relevant_counts(ranked)
    precision = np.cumsum(ranked, axis=1) / np.arange(1, ranked.shape[1] + 1)
    return (precision * ranked).sum(axis=1) / n


def interpolated_precision(scores: np.ndarray, relevant: np.ndarray, levels=None) -> np.ndarray:
    """Interpolated precision at each recall level. Taught in lesson 05, section 5.

    Interpolated precision at each recall level, per query: (Q, L) float64. Lesson 05, section 5.

    At recall level ρ it is the best precision reached at any rank whose recall is at least ρ
    (Manning, Raghavan and Schütze 2008, section 8.4); averaged over the queries it is the
    precision–recall curve of a ranking method. ``levels``: the recall levels (default 0, 0.1, …, 1)."""
    ranked = ranked_relevance(scores, relevant)
    n = _relevant_counts(ranked)
    hits = np.cumsum(ranked, axis=1)
    precision = hits / np.arange(1, ranked.shape[1] + 1)
    recall = hits / n[:, None]
    best_after = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]   # max precision at rank >= r
    levels = np.linspace(0.0, 1.0, 11) if levels is None else np.asarray(levels, np.float64)
    if not np.all((levels >= 0) & (levels <= 1)):       # above 1 would silently give precision@1
        raise ValueError(f"interpolated_precision: levels must be recall levels in [0, 1], got {levels}")
    out = np.empty((ranked.shape[0], levels.size))
    for j, level in enumerate(levels):
        first = np.argmax(recall >= level - 1e-12, axis=1)   # the first rank reaching the level
        out[:, j] = best_after[np.arange(ranked.shape[0]), first]
    return out
