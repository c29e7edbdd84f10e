"""helpers.lib.lsa: counts and TF-IDF against scikit-learn, the truncated SVD against NumPy,
LSA word vectors, and bad inputs named."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from helpers.lib import lsa as L
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.text import Vocab
from tests.props import budget, raises_naming

WORDS = ["a", "b", "c", "d", "e"]
DOCS = [d.split() for d in ["the cat sat on the mat", "the dog sat on the log",
                            "cats and dogs are pets", "the stock market fell as shares dropped",
                            "shares in the market rose", "a dog chased the cat",
                            "investors sold shares"]]


def vocab(words=WORDS):
    return Vocab.build(list(words), specials=("<pad>", "<unk>"))


@budget(2)
@given(docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=2,
                     max_size=6), sublinear=st.booleans())
def test_counts_and_smoothed_tfidf_are_scikit_learns(docs, sublinear):
    v = vocab()
    tf = L.document_term_matrix(docs + [["zz"]], v)  # an unknown word is skipped
    sk = CountVectorizer(analyzer=lambda d: d, vocabulary=v.stoi).fit_transform(docs + [["zz"]])
    assert np.array_equal(tf.toarray(), sk.toarray())
    ours, idf = L.tfidf(tf[:-1], tf_scheme="sublinear" if sublinear else "raw")
    ref = TfidfVectorizer(analyzer=lambda d: d, vocabulary=v.stoi, sublinear_tf=sublinear)
    np.testing.assert_allclose(ours.toarray(), ref.fit_transform(docs).toarray(), atol=1e-12)
    seen = np.asarray(tf[:-1].sum(axis=0)).ravel() > 0
    np.testing.assert_allclose(idf[seen], ref.idf_[seen], rtol=1e-12)
    assert L.group_sentences(docs, 2)[0] == docs[0] + docs[1]


def test_tf_schemes_plain_idf_and_bad_arguments():
    tf = sp.csr_matrix(np.array([[0, 1, 3], [2, 0, 1]], float))
    raw, idf = L.tfidf(tf, smooth=False, norm=None, base=2)
    np.testing.assert_allclose(idf, [1.0, 1.0, 0.0])  # log2(2/1), log2(2/1), log2(2/2)
    np.testing.assert_allclose(raw.toarray(), tf.toarray() * [1, 1, 0])
    for scheme, f in (("log1p", np.log1p), ("sublinear", lambda x: 1 + np.log(x))):
        w, _ = L.tfidf(tf, tf_scheme=scheme, smooth=False, norm=None)
        expected = np.where(tf.toarray() > 0, f(np.maximum(tf.toarray(), 1)), 0)
        np.testing.assert_allclose(w.toarray(), expected * np.log([2, 2, 1]))
    raises_naming(lambda: L.tfidf(tf, tf_scheme="bm25"), "tf_scheme")
    raises_naming(lambda: L.tfidf(tf, norm="l1"), "norm")
    raises_naming(lambda: L.tfidf(tf, base=1), "base")
    raises_naming(lambda: L.tfidf(tf, n_documents=1, df=[1, 1, 2]), "document frequencies")
    raises_naming(lambda: L.document_term_matrix([], vocab()), "empty corpus")
    raises_naming(lambda: L.document_term_matrix(["the cat sat"], vocab()), "tokenize", TypeError)
    raises_naming(lambda: L.group_sentences(DOCS, 0), "per_doc")


def test_truncated_svd_is_numpys_seeded_sign_fixed_and_exact_on_low_rank():
    rng = np.random.default_rng(1)
    a = sp.random(120, 80, density=0.1, random_state=rng, format="csr")
    u, s, vt = L.truncated_svd(a, 10, n_iter=30)
    np.testing.assert_allclose(s, np.linalg.svd(a.toarray(), compute_uv=False)[:10], rtol=1e-6)
    assert np.all(u[np.abs(u).argmax(axis=0), np.arange(10)] > 0)
    assert all(np.array_equal(x, y) for x, y in zip((u, s, vt), L.truncated_svd(a, 10, n_iter=30)))
    low = rng.normal(size=(40, 5)) @ rng.normal(size=(5, 30))
    u5, s5, v5 = L.truncated_svd(low, 5)
    np.testing.assert_allclose(u5 * s5 @ v5, low, atol=1e-9)
    u0, s0, _ = L.truncated_svd(sp.csr_matrix((4, 3)), 2)  # all zeros: no solver to trip
    assert not s0.any() and np.allclose(u0.T @ u0, np.eye(2))
    raises_naming(lambda: L.truncated_svd(a, 81), "k")
    raises_naming(lambda: L.truncated_svd(a, 2.0), "k", TypeError)
    raises_naming(lambda: L.truncated_svd(np.array([[1.0, np.nan], [0, 1]]), 1), "nan")
    infinite = sp.csr_matrix(np.array([[1.0, np.inf], [0, 1]]))
    raises_naming(lambda: L.truncated_svd(infinite, 1), "inf")


def test_energy_kept_is_eckart_young():
    A = np.random.default_rng(0).poisson(1.0, size=(8, 6)).astype(float)
    U, S, Vt = np.linalg.svd(A, full_matrices=False)
    energy, err = L.energy_kept(S, float((A * A).sum()))
    for k in (1, 2, 4):
        A_k = U[:, :k] * S[:k] @ Vt[:k]
        assert err[k - 1] == pytest.approx(np.linalg.norm(A - A_k) / np.linalg.norm(A))
    assert energy[-1] == pytest.approx(1.0)
    raises_naming(lambda: L.energy_kept(S, 0.0), "frobenius_sq")
    raises_naming(lambda: L.energy_kept([1.0, np.nan], 2.0), "singular_values")


def test_svd_vectors_weightings_zero_rows_and_the_rank_guard():
    m = sp.random(40, 30, density=0.3, random_state=3, format="csr")
    u, s, _ = L.truncated_svd(m, 5)
    for weighting, p in (("US", 1.0), ("sqrtS", 0.5), ("U", 0.0)):
        np.testing.assert_allclose(L.svd_vectors(m, 5, weighting), u * s**p)
    two = np.outer([1.0, 2, 0, 3], [1.0, 0, 2]) + np.outer([0, 1, 0, 1], [3.0, 1, 0])
    rank2 = sp.vstack([sp.csr_matrix(two), sp.csr_matrix((1, 3))])
    assert np.all(L.svd_vectors(rank2, 2, "U")[4] == 0)  # a word never seen stays zero
    raises_naming(lambda: L.svd_vectors(rank2, 3, "U"), "rank")  # a third direction: arbitrary
    assert np.allclose(L.svd_vectors(rank2, 3, "US")[:, 2], 0, atol=1e-12)  # US scales it to zero
    raises_naming(lambda: L.svd_vectors(m, 3, "S"), "weighting")
    raises_naming(lambda: L.svd_vectors(sp.csr_matrix((4, 3)), 2), "all zeros")


def test_lsa_word_vectors_put_finance_words_together():
    v = Vocab.build([t for d in DOCS for t in d], specials=("<pad>", "<unk>"))
    w = L.lsa_word_vectors(DOCS, v, k=3, sentences_per_doc=1)
    assert w.shape == (len(v), 3) and np.all(w[v.index("<pad>")] == 0)
    sims = dict(nearest_neighbours(w, v, "shares", k=len(v)))
    assert sims["market"] > sims["cat"]
