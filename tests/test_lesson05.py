"""Tests of helpers.lessons.lesson05: per-query retrieval measures, bootstrap intervals, the
neighbour benchmarks' cosines and the retrieval explorer (lesson 05, sections 4-6)."""
import matplotlib
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import spearmanr

from helpers.lessons.lesson05 import (
    bootstrap_mean,
    bootstrap_spearman,
    known_item_scores,
    lsa_document_vectors,
    pair_cosines,
    render_retrieval,
    target_ranks,
    topic_precision,
    verdict,
)
from helpers.lib.lsa import DocumentIndex, tfidf_matrix, truncated_svd
from helpers.lib.text import Vocab

matplotlib.use("Agg")


def test_target_ranks_break_ties_like_search():
    scores = np.array([[0.1, 0.9, 0.5, 0.9],
                       [0.3, 0.3, 0.3, 0.3],
                       [0.8, 0.2, 0.1, 0.0]])
    assert target_ranks(scores, np.array([3, 2, 0])).tolist() == [2, 3, 1]
    hit1, rr = known_item_scores(np.array([1, 2, 11, 10]), cutoff=10)
    assert hit1.tolist() == [1, 0, 0, 0] and rr.tolist() == [1.0, 0.5, 0.0, 0.1]
    with pytest.raises(ValueError, match="expected scores"):
        target_ranks(scores, np.array([0, 1]))


def test_target_ranks_agree_with_document_index_search():
    docs = [t.split() for t in ["the cat sat", "the dog sat", "shares fell", "the market rose as shares rose",
                                "a cat and a dog", "investors sold shares"]]
    vocab = Vocab.build([w for d in docs for w in d], specials=())
    idx = DocumentIndex.build(docs, vocab, k=None)
    queries = [["cat"], ["shares"], ["dog", "sat"], ["market"]]
    ranks = target_ranks(idx.scores(queries), np.array([4, 3, 1, 3]))
    for query, target, rank in zip(queries, [4, 3, 1, 3], ranks):
        ranked = [d for d, _ in idx.search(query, n=len(docs))]
        assert ranked.index(target) + 1 == rank


def test_topic_precision_dense_and_sparse():
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    topics = np.array(["a", "a", "b", "a"])
    got = topic_precision(vectors, topics, n=1)
    assert got.tolist() == [1.0, 1.0, 0.0, 0.0]            # doc 3's nearest is doc 2 (topic b)
    assert topic_precision(sp.csr_matrix(vectors), topics, n=1).tolist() == got.tolist()
    assert topic_precision(vectors, topics, queries=np.array([2]), n=2).tolist() == [0.0]


def test_a_copy_of_the_target_is_a_right_answer_with_groups():
    scores = np.array([[0.1, 0.9, 0.5, 0.9, 0.95],
                       [0.3, 0.3, 0.3, 0.3, 0.0]])
    groups = np.array([0, 1, 2, 1, 4])                      # documents 1 and 3 are copies
    assert target_ranks(scores, np.array([3, 2])).tolist() == [3, 3]
    # query 0: the copy (document 1, same score) comes before the target; only document 4 is ahead
    # query 1: its target has no copy: the same rank as without groups
    assert target_ranks(scores, np.array([3, 2]), groups).tolist() == [2, 3]
    assert target_ranks(scores, np.array([1, 2]), groups).tolist() == [2, 3]
    with pytest.raises(ValueError, match="one group per document"):
        target_ranks(scores, np.array([3, 2]), groups[:4])


def test_topic_precision_leaves_the_query_s_copies_out():
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    topics = np.array(["a", "a", "b", "b"])
    assert topic_precision(vectors, topics, n=1).tolist() == [1.0, 1.0, 0.0, 1.0]
    groups = np.array([0, 0, 2, 3])                         # documents 0 and 1 are copies
    assert topic_precision(vectors, topics, n=1, groups=groups).tolist() == [0.0, 0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="one group per document"):
        topic_precision(vectors, topics, groups=groups[:3])


def test_bootstrap_mean_covers_the_mean_and_shrinks_with_more_items():
    rng = np.random.default_rng(0)
    small, large = rng.normal(1.0, 1.0, 50), rng.normal(1.0, 1.0, 5000)
    m, lo, hi = bootstrap_mean(small, n_boot=1000)
    assert lo < m < hi and m == pytest.approx(small.mean())
    _, lo2, hi2 = bootstrap_mean(large, n_boot=1000)
    assert hi2 - lo2 < (hi - lo) / 5 and lo2 < 1.0 < hi2
    assert bootstrap_mean(small, seed=3) == bootstrap_mean(small, seed=3)
    with pytest.raises(ValueError, match="at least 2"):
        bootstrap_mean(np.array([1.0]))
    assert verdict(0.01, 0.02, "LSA", "TF-IDF") == "LSA better"
    assert verdict(-0.02, -0.01, "LSA", "TF-IDF") == "TF-IDF better"
    assert verdict(-0.01, 0.02, "LSA", "TF-IDF").startswith("tie")


def test_pair_cosines_dense_sparse_and_bootstrap_spearman():
    vocab = Vocab.build(list("abcd"), specials=())
    vectors = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0], [3.0, 0.5]])
    pairs = [("a", "b", 5.0), ("a", "c", 1.0), ("b", "c", 4.0), ("a", "zzz", 9.0), ("a", "d", 8.0)]
    cos, gold, skipped = pair_cosines(vectors, vocab, pairs)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.testing.assert_allclose(cos, [unit[0] @ unit[1], unit[0] @ unit[2], unit[1] @ unit[2], unit[0] @ unit[3]])
    assert gold.tolist() == [5.0, 1.0, 4.0, 8.0] and skipped == 1
    cos_sparse, _, _ = pair_cosines(sp.csr_matrix(vectors), vocab, pairs)
    np.testing.assert_allclose(cos_sparse, cos)
    with pytest.raises(ValueError, match="only 0 of 1 pairs"):
        pair_cosines(vectors, vocab, [("x", "y", 1.0)])
    rng = np.random.default_rng(1)
    x = rng.normal(size=300)
    y = x + rng.normal(size=300)
    rho, lo, hi = bootstrap_spearman(x, y, n_boot=200)
    assert rho == pytest.approx(spearmanr(x, y).statistic) and lo < rho < hi
    # each resample's rho is scipy's Spearman rho of that resample (ties ranked the same way)
    xt, yt = np.round(x, 1), np.round(y, 1)
    idx = np.random.default_rng(0).integers(0, 300, size=(3, 300))
    scipy_rhos = [spearmanr(xt[i], yt[i]).statistic for i in idx]
    _, lo3, hi3 = bootstrap_spearman(xt, yt, n_boot=3, level=1.0)
    assert lo3 == pytest.approx(min(scipy_rhos)) and hi3 == pytest.approx(max(scipy_rhos))
    with pytest.raises(ValueError, match="same length"):
        bootstrap_spearman(x, y[:-1])


def test_lsa_document_vectors_and_render_retrieval():
    docs = [t.split() for t in ["the cat sat", "the dog sat", "shares fell", "the market rose as shares rose",
                                "a cat and a dog", "investors sold shares"]]
    vocab = Vocab.build([w for d in docs for w in d], specials=())
    x, _ = tfidf_matrix(docs, vocab, tf_scheme="sublinear")
    _, _, vt = truncated_svd(x, 4, solver="dense")
    index = DocumentIndex.build(docs, vocab, k=3)
    _, _, vt3 = truncated_svd(x, 3, seed=0)
    np.testing.assert_allclose(lsa_document_vectors(x, vt3, 3), index.doc_vectors, atol=1e-12)
    vecs = lsa_document_vectors(x, vt, 2)
    assert vecs.shape == (6, 2) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    with pytest.raises(ValueError, match="k must be in"):
        lsa_document_vectors(x, vt, 5)
    topics = np.array(["pets", "pets", "money", "money", "pets", "money"])
    fig, summary = render_retrieval(2, ks=[1, 2], valid_curve=[0.5, 0.6], test_curve=[0.4, 0.7], tfidf_valid=0.55,
                                    doc_vectors_at=lambda k: lsa_document_vectors(x, vt, k), query_doc=0,
                                    titles=[" ".join(d) for d in docs], topics=topics)
    assert summary.startswith("k = 2: topic precision@10 0.600 (validation), 0.700 (test)")
    _, without_test = render_retrieval(2, ks=[1, 2], valid_curve=[0.5, 0.6], tfidf_valid=0.55,
                                       doc_vectors_at=lambda k: lsa_document_vectors(x, vt, k), query_doc=0,
                                       titles=[" ".join(d) for d in docs], topics=topics)
    assert without_test.startswith("k = 2: topic precision@10 0.600 (validation); ") and "test" not in without_test
    assert "'the cat sat'" in summary and len(fig.axes) == 1
    with pytest.raises(ValueError, match="one of the measured values"):
        render_retrieval(3, ks=[1, 2], valid_curve=[0.5, 0.6], test_curve=[0.4, 0.7], tfidf_valid=0.5,
                         doc_vectors_at=None, query_doc=0, titles=[], topics=topics)
