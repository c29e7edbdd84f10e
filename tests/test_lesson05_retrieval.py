"""Lesson 05's retrieval and factorisation code (helpers/lib/retrieval.py, helpers/lib/lowrank.py), its
worked example, and its checkers' defences (issues 30 and 31)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from gensim.corpora import Dictionary
from gensim.models import LuceneBM25Model
from sklearn.metrics import average_precision_score

from helpers.exercises import lesson05 as ex
from helpers.lib.lowrank import fit_lowrank, lowrank_loss_grad
from helpers.lib.lsa import document_term_matrix, tfidf
from helpers.lib.retrieval import (
    average_precision,
    bm25_idf,
    bm25_scores,
    bm25_weights,
    interpolated_precision,
    precision_recall_at,
    ranked_relevance,
)
from helpers.lib.text import Vocab

DOCS = [d.split() for d in ["the cat sat on the mat", "the dog sat", "a cat and a dog and a cat",
                            "shares fell as the market fell", "the market rose", "cat"]]


def test_bm25_weights_follow_the_formula_by_hand():
    vocab = Vocab.build([w for d in DOCS for w in d], specials=())
    counts = document_term_matrix(DOCS, vocab)
    w, idf = bm25_weights(counts, k1=1.2, b=0.75)
    lengths = np.array([len(d) for d in DOCS], float)
    avgdl = lengths.mean()
    cat = vocab.index("cat")
    df = sum("cat" in d for d in DOCS)
    assert idf[cat] == pytest.approx(np.log(1 + (6 - df + 0.5) / (df + 0.5)))
    tf = 2.0   # "cat" twice in document 2
    want = idf[cat] * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * lengths[2] / avgdl))
    assert w[2, cat] == pytest.approx(want)
    # saturation: the weight never exceeds (k1 + 1) idf, and b = 0 ignores the length
    assert np.all(w.data <= 2.2 * idf[w.indices] + 1e-12)
    w0, _ = bm25_weights(counts, k1=1.2, b=0.0)
    assert w0[5, cat] == pytest.approx(w0[0, cat])          # both documents hold "cat" once
    # a query's score is the sum of its words' weights, a repeated word counted twice
    q = document_term_matrix([["cat", "cat", "dog"]], vocab)
    s = bm25_scores(q, w)
    assert s[0, 2] == pytest.approx(2 * w[2, cat] + w[2, vocab.index("dog")])
    assert bm25_idf([0, 6], 6)[1] > 0                        # Lucene's idf never goes negative


def test_bm25_equals_gensim_lucene_bm25_up_to_the_constant_factor():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    docs = [list(rng.choice(words, size=rng.integers(3, 30))) for _ in range(25)]
    vocab = Vocab.build([w for d in docs for w in d], specials=())
    ours, _ = bm25_weights(document_term_matrix(docs, vocab), k1=1.5, b=0.6)
    dictionary = Dictionary(docs)
    model = LuceneBM25Model(dictionary=dictionary, k1=1.5, b=0.6)
    for r, d in enumerate(docs):
        for term, weight in model[dictionary.doc2bow(d)]:
            assert ours[r, vocab.index(dictionary[term])] / 2.5 == pytest.approx(weight, rel=1e-12)


def test_bm25_rejects_bad_input():
    with pytest.raises(ValueError, match="empty"):
        bm25_weights(sp.csr_matrix((3, 4)))
    with pytest.raises(ValueError, match="b must"):
        bm25_weights(sp.eye(3), b=1.5)
    with pytest.raises(ValueError, match="word columns"):
        bm25_scores(sp.eye(2, 4), sp.eye(3))


def test_precision_recall_and_average_precision_by_hand_and_against_scikit_learn():
    scores = np.array([[0.9, 0.8, 0.7, 0.6, 0.5], [0.1, 0.2, 0.3, 0.4, -np.inf]])
    relevant = np.array([[1, 0, 1, 0, 0], [0, 1, 0, 1, 0]], bool)
    assert ranked_relevance(scores, relevant).tolist() == [[1, 0, 1, 0, 0], [1, 0, 1, 0, 0]]
    p, r = precision_recall_at(scores, relevant, 2)
    assert p.tolist() == [0.5, 0.5] and r.tolist() == [0.5, 0.5]
    ap = average_precision(scores, relevant)
    assert ap == pytest.approx([(1 + 2 / 3) / 2] * 2)
    rng = np.random.default_rng(1)
    s, rel = rng.normal(size=(20, 60)), rng.random((20, 60)) < 0.3
    rel[:, 0] = True
    np.testing.assert_allclose(average_precision(s, rel), [average_precision_score(rel[i], s[i]) for i in range(20)],
                               rtol=1e-12)
    interp = interpolated_precision(scores, relevant, levels=[0.0, 0.5, 1.0])
    assert interp.tolist() == [[1.0, 1.0, 2 / 3], [1.0, 1.0, 2 / 3]]
    with pytest.raises(ValueError, match="left out"):
        ranked_relevance(np.array([[-np.inf, 1.0]]), np.array([[True, False]]))
    with pytest.raises(ValueError, match="no relevant"):
        average_precision(np.array([[1.0, 2.0]]), np.array([[False, False]]))


def test_the_rank_k_fit_reaches_the_truncated_svd():
    X = np.random.default_rng(2).normal(size=(30, 20))
    fit = fit_lowrank(X, 4, seed=1)
    s = np.linalg.svd(X, compute_uv=False)
    assert fit["loss"] == pytest.approx(0.5 * np.sum(s[4:] ** 2), rel=1e-6)
    assert fit["losses"] == sorted(fit["losses"], reverse=True) or fit["losses"][-1] <= fit["losses"][0]
    loss, dU, dV = lowrank_loss_grad(X, fit["U"], fit["V"])
    assert np.abs(dU).max() < 1e-3 and np.abs(dV).max() < 1e-3
    with pytest.raises(ValueError, match="expected X"):
        lowrank_loss_grad(X, fit["U"], fit["U"])


def test_the_worked_example_exact_and_the_source_table_s_rounding():
    """The lesson prints the exact values. The source it comes from prints 26.0, 6.2, 5.2 and 18.6:
    the counts times IDFs rounded to one decimal first (5.2 and 6.2), which is why 25.7921 became
    26.0 and 18.4753 became 18.6."""
    tf = sp.csr_matrix(np.array([[43, 5, 1], [24, 1, 0], [37, 0, 3]], float))
    w, idf = tfidf(tf, tf_scheme="raw", smooth=False, norm=None, base=2, n_documents=500, df=[500, 14, 7])
    assert idf.round(4).tolist() == [0.0, 5.1584, 6.1584]
    exact = {(0, 1): 25.7921, (0, 2): 6.1584, (1, 1): 5.1584, (2, 2): 18.4753}
    source_table = {(0, 1): 26.0, (0, 2): 6.2, (1, 1): 5.2, (2, 2): 18.6}
    for cell, value in exact.items():
        assert round(w[cell], 4) == value
        assert round(tf[cell] * round(idf[cell[1]], 1), 1) == source_table[cell]
    assert w[:, 0].nnz == 0 or np.all(w[:, 0].toarray() == 0)


def test_check_best_k_measures_for_itself_and_cannot_be_fed_a_curve(capsys):
    """The defect of issue 30: the checker took the curves it judged from the student. Now it
    measures: a curve passed in is no setting it knows, and the answer is checked against its own
    measurement of the data."""
    context = ex._example_collection()
    right = ex._best_k(**context)
    assert ex.check_best_k(right, **context)
    fooled = ex.check_best_k(10, ks=context["ks"], valid_curve=[0] * 9 + [1], test_curve=[0] * 10)
    assert fooled.status == "failed"
    wrong = 10 if right != 10 else 1
    assert ex.check_best_k(wrong, **context).status == "failed"
    assert ex.check_best_k(right, **{**context, "validation": np.array([], int)}).status == "failed"
    assert "could not measure" in capsys.readouterr().out


def test_every_lesson_05_checker_refuses_the_course_s_code():
    assert {f.__name__ for f in ex.check_tfidf.forbidden} >= {"tfidf", "tfidf_matrix", "inverse_document_frequency"}
    assert ex.check_lowrank_gradient.forbidden[0] is lowrank_loss_grad
    namespace = {"__name__": "__main__", "lowrank_loss_grad": lowrank_loss_grad}
    exec("def mine(X, U, V):\n    return lowrank_loss_grad(X, U, V)\n", namespace)
    assert ex.check_lowrank_gradient(namespace["mine"]).status == "failed"
