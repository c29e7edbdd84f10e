"""Properties of helpers.lib.retrieval and lowrank: BM25 is its formula entry by entry, ranks are
those of a brute-force sort (higher score first, the lower id among ties), precision, recall and
average precision are what counting gives (and scikit-learn's average_precision_score for untied
scores), the rank-k fit approaches the truncated SVD, and bad arguments are refused by name."""
import math

import numpy as np
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score
from sklearn.preprocessing import normalize

from helpers.lib import lowrank as LR
from helpers.lib import retrieval as RV
from tests.props import (
    budget,
    closeness,
    covers,
    dims,
    float_arrays,
    inject,
    non_finite,
    raises_naming,
)

close = closeness(1e-12)


def int_matrix(data, shape, hi=3):
    n = int(np.prod(shape))
    return np.array(data.draw(st.lists(st.integers(0, hi), min_size=n, max_size=n)), np.int64).reshape(shape)


def tied_scores(data, shape):
    """Scores from a few values (ties are common), some -inf (left out of the ranking)."""
    n = int(np.prod(shape))
    return np.array(data.draw(st.lists(st.sampled_from([-np.inf, -1.0, 0.0, 0.5, 2.0]), min_size=n, max_size=n)),
                    np.float64).reshape(shape)


def brute_order(row):
    return sorted(range(len(row)), key=lambda d: (-row[d], d))


# ---------------------------------------------------------------- BM25
@covers("retrieval.bm25_idf", "retrieval.bm25_weights", "retrieval.bm25_scores")
@budget(0.5)
@given(st.data())
def test_bm25_is_its_formula_entry_by_entry(data):
    D, W, Q = data.draw(dims(1, 4)), data.draw(dims(1, 4)), data.draw(dims(1, 3))
    counts = int_matrix(data, (D, W))
    counts[data.draw(st.integers(0, D - 1)), data.draw(st.integers(0, W - 1))] += 1     # not empty
    k1, b = data.draw(st.sampled_from([0.0, 1.2, 2.0])), data.draw(st.sampled_from([0.0, 0.75, 1.0]))
    weights, idf = RV.bm25_weights(sp.csr_matrix(counts), k1, b)
    df = (counts > 0).sum(axis=0)
    close(idf, [math.log(1 + (D - f + 0.5) / (f + 0.5)) for f in df])
    close(RV.bm25_idf(df, D), idf)
    lengths, avg = counts.sum(axis=1), counts.sum() / D
    ref = np.zeros((D, W))
    for d in range(D):
        for t in range(W):
            tf = counts[d, t]
            if tf:
                ref[d, t] = idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[d] / avg))
    close(weights.toarray(), ref)
    assert np.all(weights.toarray() <= (k1 + 1) * idf[None, :] + 1e-12)
    queries = int_matrix(data, (Q, W))
    scores = RV.bm25_scores(sp.csr_matrix(queries), weights)
    close(scores, [[sum(queries[q, t] * ref[d, t] for t in range(W)) for d in range(D)] for q in range(Q)])
    raises_naming(lambda: RV.bm25_idf(df, 0), "n_documents", ValueError)
    raises_naming(lambda: RV.bm25_idf(inject(df, data.draw(non_finite), 0), D), "document frequencies", ValueError)
    raises_naming(lambda: RV.bm25_idf(df + D + 1, D), "document frequencies", ValueError)
    raises_naming(lambda: RV.bm25_weights(sp.csr_matrix(counts), k1=-1.0), "k1", ValueError)
    raises_naming(lambda: RV.bm25_weights(sp.csr_matrix(counts), b=1.5), "b", ValueError)
    raises_naming(lambda: RV.bm25_weights(sp.csr_matrix(counts * 0)), "count matrix", ValueError)
    raises_naming(lambda: RV.bm25_weights(sp.csr_matrix(-counts - 1)), "counts", ValueError)
    raises_naming(lambda: RV.bm25_scores(sp.csr_matrix(np.ones((1, W + 1))), weights), "word columns", ValueError)


# ---------------------------------------------------------------- known-item search
@covers("retrieval.target_ranks", "retrieval.known_item_scores")
@budget(0.5)
@given(st.data())
def test_target_ranks_are_a_brute_force_sort_and_known_item_scores_count_them(data):
    Q, D = data.draw(dims(1, 3)), data.draw(dims(1, 5))
    scores = tied_scores(data, (Q, D))
    targets = np.array([data.draw(st.integers(0, D - 1)) for _ in range(Q)], np.int64)
    targets[0] = data.draw(st.sampled_from([0, D - 1]))
    ranks = RV.target_ranks(scores, targets)
    assert ranks.dtype.kind == "i"
    assert list(ranks) == [brute_order(scores[q]).index(targets[q]) + 1 for q in range(Q)]
    groups = np.array([data.draw(st.integers(0, 2)) for _ in range(D)])
    ranked = RV.target_ranks(scores, targets, groups)
    for q in range(Q):
        order = [d for d in brute_order(scores[q])]
        first = next(d for d in order if groups[d] == groups[targets[q]])
        ahead = [d for d in order[:order.index(first)] if groups[d] != groups[targets[q]]]
        assert ranked[q] == len(ahead) + 1
    cutoff = data.draw(st.integers(1, 5))
    hit, rr = RV.known_item_scores(ranks, cutoff)
    close(hit, [float(r == 1) for r in ranks])
    close(rr, [1 / r if r <= cutoff else 0.0 for r in ranks])
    bad = targets.copy()
    bad[0] = data.draw(st.sampled_from([-1, D, D + 1000]))   # -1 was the last group, D rank 1: silently
    raises_naming(lambda: RV.target_ranks(scores, bad), "targets", ValueError)
    raises_naming(lambda: RV.target_ranks(scores, bad, groups), "targets", ValueError)
    raises_naming(lambda: RV.target_ranks(scores, targets.astype(np.float64)), "targets", TypeError)
    raises_naming(lambda: RV.target_ranks(scores, targets[:0] if Q else targets), "targets", ValueError)
    raises_naming(lambda: RV.target_ranks(inject(scores, np.nan, 0), targets), "scores", ValueError)
    raises_naming(lambda: RV.known_item_scores(np.array([0, 1])), "ranks", ValueError)   # 1/0 was inf
    raises_naming(lambda: RV.known_item_scores(ranks, 0), "cutoff", ValueError)


# ---------------------------------------------------------------- topical similarity and LSA vectors
@covers("retrieval.topic_precision", "retrieval.lsa_document_vectors")
@budget(0.5)
@given(st.data())
def test_topic_precision_counts_the_nearest_topics_of_lsa_vectors(data):
    D, W = data.draw(dims(2, 6)), data.draw(dims(2, 5))
    rng = np.random.default_rng(data.draw(st.integers(0, 5)))
    x = rng.standard_normal((D, W))
    vt = np.linalg.svd(x, full_matrices=False)[2]
    k = data.draw(st.integers(1, vt.shape[0]))
    vecs = RV.lsa_document_vectors(x, vt, k)
    close(vecs, normalize(x @ vt[:k].T), 1e-12)
    vecs = normalize(rng.standard_normal((D, 3)))          # continuous: no ties among the neighbours
    topics = np.array([data.draw(st.integers(0, 2)) for _ in range(D)])
    n = data.draw(st.integers(1, D - 1))
    queries = np.array(sorted({0, D - 1, data.draw(st.integers(0, D - 1))}))
    got = RV.topic_precision(vecs, topics, queries, n)
    sims = vecs @ vecs.T
    ref = []
    for q in queries:
        others = sorted((d for d in range(D) if d != q), key=lambda d: -sims[q, d])[:n]
        ref.append(np.mean([topics[d] == topics[q] for d in others]))
    close(got, ref)
    close(RV.topic_precision(sp.csr_matrix(vecs), topics, queries, n), ref)
    close(RV.topic_precision(vecs, topics, None, n)[queries], ref)
    raises_naming(lambda: RV.lsa_document_vectors(x, vt, 0), "k", ValueError)
    raises_naming(lambda: RV.lsa_document_vectors(x, vt, vt.shape[0] + 1), "k", ValueError)
    raises_naming(lambda: RV.topic_precision(vecs, topics, queries, D), "n", ValueError)
    raises_naming(lambda: RV.topic_precision(vecs, topics, np.array([-1])), "queries", ValueError)  # was the last
    raises_naming(lambda: RV.topic_precision(vecs, topics, np.array([D])), "queries", ValueError)
    raises_naming(lambda: RV.topic_precision(vecs, topics[:-1], queries), "topic", ValueError)
    raises_naming(lambda: RV.topic_precision(vecs, topics, queries[:0]), "queries", ValueError)


# ---------------------------------------------------------------- precision and recall
def relevance_for(data, scores):
    """Relevance (Q, D) bool with at least one relevant document per query, never one scored -inf."""
    rel = np.array(data.draw(st.lists(st.booleans(), min_size=scores.size, max_size=scores.size))).reshape(scores.shape)
    rel &= np.isfinite(scores)
    for q in range(len(scores)):
        if not rel[q].any():
            finite = np.flatnonzero(np.isfinite(scores[q]))
            if finite.size == 0:
                scores[q, 0] = 0.0
                finite = np.array([0])
            rel[q, finite[0]] = True
    return rel


@covers("retrieval.ranked_relevance", "retrieval.precision_recall_at", "retrieval.average_precision",
        "retrieval.interpolated_precision")
@budget(0.75)
@given(st.data())
def test_precision_recall_and_average_precision_are_what_counting_gives(data):
    Q, D = data.draw(dims(1, 3)), data.draw(dims(1, 6))
    scores = tied_scores(data, (Q, D))
    rel = relevance_for(data, scores)
    ranked = RV.ranked_relevance(scores, rel)
    assert ranked.dtype == bool
    assert all(list(ranked[q]) == [bool(rel[q, d]) for d in brute_order(scores[q])] for q in range(Q))
    k = data.draw(st.integers(1, D))
    p, r = RV.precision_recall_at(scores, rel, k)
    found = [sum(ranked[q, :k]) for q in range(Q)]
    close(p, [f / k for f in found])
    close(r, [f / rel[q].sum() for q, f in enumerate(found)])
    ap = RV.average_precision(scores, rel)
    close(ap, [np.mean([ranked[q, :i + 1].mean() for i in range(D) if ranked[q, i]]) for q in range(Q)])
    untied = scores + np.random.default_rng(0).permutation(D) * 1e-6      # the same order within ties broken
    finite = np.isfinite(untied).all(axis=1) & ~rel.all(axis=1)
    for q in np.flatnonzero(finite):
        if len(set(untied[q])) == D:                     # scikit-learn's AP is this one without ties
            close(RV.average_precision(untied[q:q + 1], rel[q:q + 1])[0],
                  average_precision_score(rel[q], untied[q]), 1e-12)
    levels = np.array(sorted({0.0, 1.0, data.draw(st.sampled_from([0.25, 0.5, 0.9]))}))
    interp = RV.interpolated_precision(scores, rel, levels)
    assert interp.shape == (Q, len(levels))
    for q in range(Q):
        hits = np.cumsum(ranked[q])
        prec, rec = hits / np.arange(1, D + 1), hits / rel[q].sum()
        close(interp[q], [max(prec[i] for i in range(D) if rec[i] >= lv - 1e-12) for lv in levels])
    assert np.all(np.diff(RV.interpolated_precision(scores, rel), axis=1) <= 1e-12)   # never rises with recall
    raises_naming(lambda: RV.ranked_relevance(scores, rel[:, :0] if D else rel), "relevant", ValueError)
    raises_naming(lambda: RV.ranked_relevance(inject(scores, np.nan, 0), rel), "scores", ValueError)
    left_out = scores.copy()
    left_out[rel] = -np.inf
    raises_naming(lambda: RV.ranked_relevance(left_out, rel), "relevant", ValueError)
    raises_naming(lambda: RV.precision_recall_at(scores, rel, 0), "k", ValueError)
    raises_naming(lambda: RV.precision_recall_at(scores, rel, D + 1), "k", ValueError)
    raises_naming(lambda: RV.average_precision(scores, rel & False), "relevant document", ValueError)
    raises_naming(lambda: RV.interpolated_precision(scores, rel, [1.5]), "levels", ValueError)  # was precision@1
    raises_naming(lambda: RV.interpolated_precision(scores, rel, [-0.1]), "levels", ValueError)


# ---------------------------------------------------------------- the rank-k factorisation
@covers("lowrank.lowrank_loss_grad")
@budget(0.5)
@given(st.data())
def test_the_lowrank_loss_and_gradient_are_the_formula_and_finite_differences(data):
    m, n, k = data.draw(dims(1, 4)), data.draw(dims(1, 4)), data.draw(dims(1, 3))
    X, U, V = data.draw(float_arrays((m, n))), data.draw(float_arrays((m, k))), data.draw(float_arrays((n, k)))
    loss, dU, dV = LR.lowrank_loss_grad(X, U, V)
    close(loss, 0.5 * sum((X[i, j] - U[i] @ V[j]) ** 2 for i in range(m) for j in range(n)), 1e-10)
    for P, G in ((U, dU), (V, dV)):
        num = np.zeros_like(P)
        for idx in np.ndindex(P.shape):
            old = P[idx]
            P[idx] = old + 1e-6
            up = LR.lowrank_loss_grad(X, U, V)[0]
            P[idx] = old - 1e-6
            down = LR.lowrank_loss_grad(X, U, V)[0]
            P[idx] = old
            num[idx] = (up - down) / 2e-6
        close(G, num, 1e-5)
    raises_naming(lambda: LR.lowrank_loss_grad(X, U[:, :0], V), "U", ValueError)
    raises_naming(lambda: LR.lowrank_loss_grad(X.ravel(), U, V), "X", ValueError)


@covers("lowrank.fit_lowrank")
@budget(0.2)
@given(m=dims(1, 5), n=dims(1, 5), seed=st.integers(0, 3), data=st.data())
def test_fit_lowrank_is_seeded_decreasing_and_reaches_the_truncated_svd(m, n, seed, data):
    k = data.draw(st.integers(1, min(m, n)))
    X = np.random.default_rng(seed).standard_normal((m, n))
    fit = LR.fit_lowrank(X, k, seed=seed, max_iter=200)
    again = LR.fit_lowrank(X, k, seed=seed, max_iter=200)
    assert np.array_equal(fit["U"], again["U"]) and fit["losses"] == again["losses"]
    assert fit["U"].shape == (m, k) and fit["V"].shape == (n, k) and np.isfinite(fit["loss"])
    assert fit["iterations"] == len(fit["losses"])
    assert all(b <= a + 1e-12 for a, b in zip(fit["losses"], fit["losses"][1:]))
    s = np.linalg.svd(X, compute_uv=False)
    best = 0.5 * float(np.sum(s[k:] ** 2))                 # Eckart-Young: the minimum of the loss
    assert fit["loss"] >= best - 1e-9 and fit["loss"] <= best + 1e-4 * (1 + best)
    raises_naming(lambda: LR.fit_lowrank(X, 0), "k", ValueError)
    raises_naming(lambda: LR.fit_lowrank(X, min(m, n) + 1), "k", ValueError)
    raises_naming(lambda: LR.fit_lowrank(inject(X, np.nan, seed), k), "X", ValueError)
