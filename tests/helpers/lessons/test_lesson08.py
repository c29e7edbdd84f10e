"""Tests of helpers.lessons.lesson08: the ratio table, the PMI link (exact for a model built from
the decomposition), the weighting explorer, the count baselines and fastText's unseen words."""
import numpy as np
import pytest
import scipy.sparse as sp

from helpers.course.corpus import course_corpus
from helpers.lessons import lesson08 as L
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.text import Vocab


def test_the_ratio_table_divides_the_conditional_probabilities():
    vocab = Vocab(["a", "b", "k", "m"], [1, 1, 1, 1], ())
    X = sp.csr_matrix(np.array([[0, 2, 6, 2], [2, 0, 1, 7], [6, 1, 0, 0], [2, 7, 0, 0]], float))
    (k,) = L.ratio_table(X, vocab, "a", "b", ["k"])
    assert (k["P_a"], k["P_b"]) == pytest.approx((0.6, 0.1)) and k["ratio"] == pytest.approx(6.0)
    assert L.ratio_table(X, vocab, "k", "m", ["m"])[0]["ratio"] == np.inf
    with pytest.raises(KeyError, match="zebra"):
        L.ratio_table(X, vocab, "a", "zebra", ["k"])


def test_the_pmi_link_is_exact_for_a_model_built_from_the_decomposition():
    rng = np.random.default_rng(0)
    X = rng.integers(20, 60, (6, 6)).astype(float)
    X = sp.csr_matrix(X + X.T)
    rows = np.asarray(X.sum(axis=1)).ravel()
    pmi = np.log(X.toarray()) + np.log(rows.sum()) - np.log(rows)[:, None] - np.log(rows)[None, :]
    U, s, Vt = np.linalg.svd(pmi)
    # v·u = PMI, b = log X_w
    params = [U * s, Vt.T, np.log(rows), np.log(rows) - np.log(rows.sum())]
    link = L.pmi_link(params, X, min_count=1.0)
    assert link["bias_r"] == pytest.approx(1.0) and link["dot_r"] == pytest.approx(1.0)
    fig = L.plot_pmi_link(link, "exact")
    assert len(fig.axes) == 2


def test_the_weighting_explorer_splits_the_weight_and_refuses_bad_counts():
    counts = np.array([0.2, 0.5, 3.0, 40.0, 500.0, 2000.0])
    fig, summary = L.render_glove_weight(100.0, 0.75, counts=counts)
    assert "f(1) = 0.032" in summary and "2 of the 6" not in summary
    assert "33.3% of the 6 pairs reach" in summary
    for bad in (np.array([]), np.array([1.0, 0.0]), np.ones((2, 2))):
        with pytest.raises(ValueError, match="counts"):
            L.render_glove_weight(counts=bad)


def test_the_baselines_and_unseen_words():
    corpus = course_corpus()
    X = sp.csr_matrix(np.eye(len(corpus.vocab)))
    base = L.count_baselines(X, corpus.vocab)
    assert set(base) == {"raw co-occurrence rows", "PPMI rows (lesson 06)"}
    rng = np.random.default_rng(0)
    words = ["government", "election"]
    ft = FastTextVectors(words, rng.standard_normal((2, 8)), rng.standard_normal((2, 8)),
                         rng.standard_normal((500, 8)), 3, 6, 0.0)
    rows = L.oov_neighbours(["goverment", "election"], ft, rng.standard_normal((2, 8)),
                            Vocab(words, [5, 5], ()), k=1)
    assert [r["in_vocab"] for r in rows] == [False, True] and rows[0]["other"] is None
    assert len(rows[0]["fasttext"]) == 1 and rows[1]["other"][0][0] == "government"


def test_vectors_against_count_rows_is_a_paired_difference_on_both_benchmarks():
    corpus = course_corpus()
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(0.05, (len(corpus.vocab), 40)).astype(float))
    same = L.versus_count_rows(X.toarray(), X, corpus.vocab)        # the rows as dense vectors
    for key in ("wordsim", "simlex", "both"):
        d = same["raw rows"][key]
        assert d.estimate == pytest.approx(0, abs=1e-9) and d.low == pytest.approx(0, abs=1e-9)
    noise = L.versus_count_rows(rng.standard_normal((len(corpus.vocab), 8)), X, corpus.vocab)
    for d in noise.values():
        ws, sl, both = d["wordsim"], d["simlex"], d["both"]
        assert both.estimate == pytest.approx((ws.estimate + sl.estimate) / 2)
        assert both.n_items == ws.n_items + sl.n_items > 400
        assert both.low < both.estimate < both.high
        assert both.high - both.low < ws.high - ws.low          # more pairs, a narrower interval
