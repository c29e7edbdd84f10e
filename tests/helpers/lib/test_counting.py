"""helpers.lib.counting: the vectorised counts against a loop over the tokens, PMI and its
variants against their formulas (no nan, no warning), collocations, and bad inputs named."""
import warnings
from collections import defaultdict

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import counting as C
from tests.props import budget, raises_naming


def loop_counts(sentences, V, window, weighting="uniform", cross=False, symmetric=True):
    """The definition, one token at a time."""
    if cross:
        sentences = [np.concatenate(sentences)]
    table = defaultdict(float)
    for s in sentences:
        for i in range(len(s)):
            for d in range(1, window + 1):
                if i + d < len(s) and s[i] >= 0 and s[i + d] >= 0:
                    weight = 1.0 if weighting == "uniform" else 1.0 / d
                    table[s[i], s[i + d]] += weight
                    if symmetric:
                        table[s[i + d], s[i]] += weight
    m = np.zeros((V, V))
    for (w, c), x in table.items():
        m[w, c] = x
    return m


def test_tiny_counts_by_hand():
    two = [np.array([0, 1, 2]), np.array([0, 1])]
    assert C.cooccurrence_matrix(two, 3, window=1).toarray().tolist() == [[0, 2, 0], [2, 0, 1],
                                                                          [0, 1, 0]]
    assert C.cooccurrence_matrix(two, 3, window=1, cross_sentences=True)[2, 0] == 1  # c next to a
    harmonic = C.cooccurrence_matrix([np.array([0, 1, 2])], 3, window=2, weighting="harmonic")
    assert harmonic[0, 2] == 0.5 and harmonic[0, 1] == 1.0
    bigrams = C.cooccurrence_matrix(np.array([0, 1, 2]), 3, window=1, symmetric=False)
    assert bigrams.toarray().tolist() == [[0, 1, 0], [0, 0, 1], [0, 0, 0]]
    hole = [np.array([0, -1, 1])]
    assert C.cooccurrence_matrix(hole, 2, window=1).sum() == 0
    assert C.cooccurrence_matrix(hole, 2, 2)[0, 1] == 1


@budget(1)
@given(st.data())
def test_the_counts_per_offset_are_the_loop_s(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    n = data.draw(st.integers(1, 8))
    sentences = [rng.integers(-1, 9, size=rng.integers(0, 9)) for _ in range(n)]
    if not sum(map(len, sentences)):
        raises_naming(lambda: C.cooccurrence_matrix(sentences, 9), "corpus")
        return
    window, weighting = data.draw(st.integers(1, 4)), data.draw(st.sampled_from(C.WEIGHTINGS))
    cross, symmetric = data.draw(st.booleans()), data.draw(st.booleans())
    got = C.cooccurrence_matrix(sentences, 9, window, weighting=weighting, cross_sentences=cross,
                                symmetric=symmetric)
    assert sp.isspmatrix_csr(got) and got.dtype == np.float64
    expected = loop_counts(sentences, 9, window, weighting, cross, symmetric)
    np.testing.assert_allclose(got.toarray(), expected)


def test_bad_corpora_and_choices_are_named():
    raises_naming(lambda: C.cooccurrence_matrix([], 5), "corpus")
    raises_naming(lambda: C.cooccurrence_matrix([np.array([0, 1])], 0), "vocab_size")
    raises_naming(lambda: C.cooccurrence_matrix([np.array([0, 7])], 5), "vocabulary")
    raises_naming(lambda: C.cooccurrence_matrix([np.array([0.5, 1.0])], 5), "integers", TypeError)
    raises_naming(lambda: C.cooccurrence_matrix([np.array([[0, 1]])], 5), "1-D")
    raises_naming(lambda: C.cooccurrence_matrix([np.array([0, 1])], 5, window=0), "window")
    raises_naming(lambda: C.cooccurrence_matrix([np.array([0, 1])], 5, weighting="gaussian"),
                  "weighting")


def test_pmi_ppmi_and_npmi_are_their_formulas_dense_and_sparse_without_a_warning():
    rng = np.random.default_rng(0)
    c = rng.poisson(0.7, size=(9, 11)).astype(float)
    c[4] = 0  # a word with no co-occurrence at all
    p = c / c.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.log2(p / np.outer(p.sum(1), p.sum(0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dense, sparse, positive = C.pmi(c), C.pmi(sp.csr_matrix(c)), C.ppmi(c, alpha=1.0)
        nd, ns = C.npmi(c), C.npmi(sp.csr_matrix(c))
    seen = c > 0
    np.testing.assert_allclose(dense[seen], ref[seen], atol=1e-12)
    assert np.all(np.isneginf(dense[~seen])) and sparse.nnz == seen.sum()
    np.testing.assert_allclose(sparse.toarray()[seen], ref[seen], atol=1e-12)
    np.testing.assert_allclose(positive.toarray(), np.maximum(np.where(seen, ref, 0), 0),
                               atol=1e-12)
    assert np.all(positive.data > 0)
    np.testing.assert_allclose(nd[seen], ref[seen] / -np.log2(p[seen]), atol=1e-12)
    assert np.all(nd[~seen] == -1) and np.allclose(ns.toarray()[seen], nd[seen])
    assert C.npmi(np.array([[5.0, 0], [0, 0]]))[0, 0] == pytest.approx(1.0)  # only ever together
    np.testing.assert_allclose(C.npmi(np.outer([1.0, 2], [3.0, 1])), 0, atol=1e-12)  # independent


def test_context_smoothing_pmi_k_base_and_outside_marginals():
    c = np.array([[10.0, 1.0], [30.0, 2.0]])
    p = c / c.sum()
    p_c = c.sum(0) ** 0.75 / (c.sum(0) ** 0.75).sum()
    np.testing.assert_allclose(C.pmi(c, alpha=0.75), np.log2(p / np.outer(p.sum(1), p_c)))
    np.testing.assert_allclose(C.pmi(c, k=2), np.log2(p**2 / np.outer(p.sum(1), p.sum(0))))
    assert np.all(C.pmi(c, alpha=0.75)[:, 1] < C.pmi(c)[:, 1])  # smoothing lowers a rare context
    np.testing.assert_allclose(C.pmi(c, base=np.e), C.pmi(c) * np.log(2))
    table = C.pmi([[3.0]], row_sums=[627], col_sums=[780], total=15871304)
    assert table[0, 0] == pytest.approx(np.log2(3 * 15871304 / (627 * 780)))
    raises_naming(lambda: C.pmi(np.array([[1.0, -2.0]])), "counts")
    raises_naming(lambda: C.pmi(np.array([[2.0, np.nan]])), "counts")
    raises_naming(lambda: C.pmi(c, row_sums=[3.0, np.nan]), "row_sums")
    raises_naming(lambda: C.ppmi(c, alpha=0.0), "alpha")
    raises_naming(lambda: C.pmi(c, total=np.nan), "total")
    for base in (1, 0.0, -2.0, np.inf):
        raises_naming(lambda base=base: C.pmi(c, base=base), "base")
    np.testing.assert_allclose(C.pmi(c, base=10.0), C.pmi(c) * np.log10(2))


def test_top_pmi_pairs_find_the_fixed_phrase_once_and_honour_the_minimum_count():
    sentences = [np.array(s) for s in [[0, 1, 2, 3], [0, 1, 2, 4], [2, 3, 2, 4], [0, 1, 2, 3]]]
    itos = ["new", "york", "the", "cat", "dog"]
    bigrams = C.cooccurrence_matrix(sentences, 5, window=1, symmetric=False)
    top = C.top_pmi_pairs(bigrams, itos, n=2, min_count=2)
    assert top[0][:2] == ("new", "york") and top[0][3] == 3 and all(cnt >= 2 for *_, cnt in top)
    assert C.top_pmi_pairs(bigrams, itos, min_count=100) == []
    pairs = C.top_pmi_pairs(C.cooccurrence_matrix(sentences, 5, window=1), itos, n=20,
                            measure="npmi")
    assert len({frozenset(p[:2]) for p in pairs}) == len(pairs)  # a symmetric matrix: once each
    raises_naming(lambda: C.top_pmi_pairs(bigrams, itos[:4]), "itos")
    raises_naming(lambda: C.top_pmi_pairs(bigrams, itos, measure="llr"), "measure")
