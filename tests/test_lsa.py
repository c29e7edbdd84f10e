"""Tests of helpers.lib.lsa: TF-IDF (the notes' example, scikit-learn equivalence), SVD, search."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from helpers.lib.lsa import (
    DocumentIndex,
    document_term_matrix,
    energy_kept,
    inverse_document_frequency,
    lsa_word_vectors,
    svd_vectors,
    term_frequency,
    tfidf,
    tfidf_matrix,
    truncated_svd,
)
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.text import UnknownWordError, Vocab

DOCS = [
    "the cat sat on the mat".split(),
    "the dog sat on the log".split(),
    "cats and dogs are pets".split(),
    "the stock market fell as shares dropped".split(),
    "shares in the market rose".split(),
    "a dog chased the cat".split(),
    "investors sold shares".split(),
]


def vocab():
    return Vocab.build([t for d in DOCS for t in d], specials=("<pad>", "<unk>"))


def test_notes_worked_example_base2():
    # rows 425/426/427, columns the/country/hell; |D| = 500, df = 500/14/7, log base 2
    tf = sp.csr_matrix(np.array([[43, 5, 1], [24, 1, 0], [37, 0, 3]], float))
    w, idf = tfidf(tf, tf_scheme="raw", smooth=False, norm=None, base=2, n_documents=500,
                   df=[500, 14, 7])
    np.testing.assert_allclose(idf, [0.0, np.log2(500 / 14), np.log2(500 / 7)])
    assert np.round(idf[1:], 1).tolist() == [5.2, 6.2]  # the notes' rounded idf
    exact = w.toarray()
    np.testing.assert_allclose(exact[:, 0], 0)  # 'the' is in every document
    assert exact[0, 1] == pytest.approx(5 * np.log2(500 / 14))
    # the notes multiply by the rounded idf: 26.0, 6.2, 5.2, 18.6; exact values differ
    rounded = tf.toarray()[:, 1:] * np.array([5.2, 6.2])
    np.testing.assert_allclose(rounded, [[26.0, 6.2], [5.2, 0], [0, 18.6]])
    np.testing.assert_allclose(np.round(exact[:, 1:], 2), [[25.79, 6.16], [5.16, 0], [0, 18.48]])


@pytest.mark.parametrize("sublinear", [False, True])
def test_smoothed_tfidf_matches_sklearn(sublinear):
    v = vocab()
    ours, idf = tfidf_matrix(DOCS, v, tf_scheme="sublinear" if sublinear else "raw")
    ref = TfidfVectorizer(analyzer=lambda d: d, vocabulary=v.itos, sublinear_tf=sublinear)
    theirs = ref.fit_transform(DOCS)
    assert ours.shape == theirs.shape == (len(DOCS), len(v))
    np.testing.assert_allclose(ours.toarray(), theirs.toarray(), rtol=1e-12, atol=1e-15)
    seen = np.asarray(document_term_matrix(DOCS, v).sum(0)).ravel() > 0
    np.testing.assert_allclose(idf[seen], ref.idf_[seen], rtol=1e-12)


def test_tf_schemes_and_idf():
    tf = sp.csr_matrix(np.array([[0, 1, 3]], float))
    assert term_frequency(tf, "log1p").toarray().tolist() == [[0, np.log(2), np.log(4)]]
    assert term_frequency(tf, "sublinear").toarray().tolist() == [[0, 1, 1 + np.log(3)]]
    assert term_frequency(tf, "binary").toarray().tolist() == [[0, 1, 1]]
    np.testing.assert_allclose(inverse_document_frequency([1, 4], 4, smooth=True), [np.log(2.5) + 1, 1])
    assert inverse_document_frequency([0], 4)[0] == np.inf
    with pytest.raises(ValueError, match="tf scheme"):
        term_frequency(tf, "double")
    with pytest.raises(ValueError, match="document frequencies"):
        inverse_document_frequency([5], 4)


def test_document_term_matrix_counts_and_errors():
    v = vocab()
    m = document_term_matrix([["the", "cat", "the", "zebra"]], v)
    assert m[0, v.index("the")] == 2 and m[0, v.index("cat")] == 1 and m.sum() == 3
    with pytest.raises(UnknownWordError, match="zebra"):
        document_term_matrix([["the", "zebra"]], v, skip_unknown=False)
    with pytest.raises(ValueError, match="empty corpus"):
        document_term_matrix([], v)
    with pytest.raises(TypeError, match="document 0 is a str .* tokenize each text first"):
        document_term_matrix(["the cat sat"], v)


def test_svd_matches_dense_and_weightings():
    rng = np.random.default_rng(1)
    a = sp.random(120, 80, density=0.1, random_state=rng, format="csr")
    u, s, vt = truncated_svd(a, 10, solver="arpack")
    s_ref = np.linalg.svd(a.toarray(), compute_uv=False)
    np.testing.assert_allclose(s, s_ref[:10], rtol=1e-6)
    np.testing.assert_allclose(truncated_svd(a, 10, solver="dense")[1], s_ref[:10], rtol=1e-12)
    # the randomized solver is exact on a matrix of rank <= k
    low = sp.csr_matrix(rng.normal(size=(120, 5)) @ rng.normal(size=(5, 80)))
    u5, s5, v5 = truncated_svd(low, 5, solver="randomized")
    np.testing.assert_allclose(u5 * s5 @ v5, low.toarray(), atol=1e-9)
    # rank-10 reconstruction error matches Eckart-Young
    err = np.linalg.norm(a.toarray() - u @ np.diag(s) @ vt)
    assert err == pytest.approx(np.sqrt((s_ref[10:] ** 2).sum()), rel=1e-5)
    energy, rel_err = energy_kept(s_ref, (a.multiply(a)).sum())
    assert energy[-1] == pytest.approx(1.0) and rel_err[9] == pytest.approx(err / sp.linalg.norm(a), rel=1e-5)
    us, uu, sq = (svd_vectors(a, 10, w, solver="arpack") for w in ("US", "U", "sqrtS"))
    np.testing.assert_allclose(us, uu * s, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sq ** 2 * np.sign(sq), uu ** 2 * np.sign(uu) * s, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(svd_vectors(a, 10, seed=3), svd_vectors(a, 10, seed=3))  # deterministic
    with pytest.raises(ValueError, match="k must be"):
        svd_vectors(a, 0)
    with pytest.raises(ValueError, match="weighting"):
        svd_vectors(a, 3, "S")


def test_lsa_and_neighbours():
    v = vocab()
    w = lsa_word_vectors(DOCS, v, k=3, sentences_per_doc=1)
    assert w.shape == (len(v), 3)
    assert np.all(w[v.index("<pad>")] == 0)
    nn = nearest_neighbours(w, v, "shares", k=3)
    assert len(nn) == 3 and "shares" not in [x for x, _ in nn]
    assert nn[0][1] >= nn[1][1] >= nn[2][1] and nn[0][1] <= 1 + 1e-12
    # a finance word beats a pet word
    sims = dict(nearest_neighbours(w, v, "shares", k=len(v)))
    assert sims["market"] > sims["cat"]
    with pytest.raises(UnknownWordError, match="zebra"):
        nearest_neighbours(w, v, "zebra")
    with pytest.raises(ValueError, match="all-zero"):
        nearest_neighbours(w, v, "<unk>")


def test_document_retrieval():
    v = vocab()
    for k in (None, 3):
        idx = DocumentIndex.build(DOCS, v, k=k)
        hits = idx.search(["stock", "shares"], n=3)
        assert hits[0][0] in (3, 4, 6) and len(hits) == 3
        assert hits[0][1] >= hits[1][1] >= hits[2][1]
    with pytest.raises(ValueError, match="empty query"):
        idx.search([])
    with pytest.raises(ValueError, match="document 1 is empty"):
        DocumentIndex.build([DOCS[0], [], DOCS[1]], v)
    with pytest.raises(ValueError, match="document 0 has no word in the vocabulary"):
        DocumentIndex.build([["zebra"], DOCS[1]], v)
    with pytest.raises(UnknownWordError, match="no word of the query"):
        idx.search(["zebra", "quark"])


def test_render_lsa_and_widget():
    import matplotlib
    matplotlib.use("Agg")
    from helpers.infra.widgets import Explorer, dropdown, slider
    from helpers.lessons.lesson05 import render_lsa

    v = vocab()
    x, _ = tfidf_matrix(DOCS, v, norm=None)
    a = x.T.tocsr()
    u, s, _ = truncated_svd(a, 6, solver="dense")
    fro = float(a.multiply(a).sum())
    fig, summary = render_lsa(2, "shares", singular_values=s, frobenius_sq=fro, u=u, vocab=v)
    energy = (s[:2] ** 2).sum() / np.linalg.svd(a.toarray(), compute_uv=False).__pow__(2).sum()
    assert summary.startswith(f"k = 2: energy kept {100 * energy:.1f} %")
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="k must be"):
        render_lsa(7, "shares", singular_values=s, frobenius_sq=fro, u=u, vocab=v)
    ex = Explorer(lambda k, word: render_lsa(k, word, singular_values=s, frobenius_sq=fro, u=u, vocab=v),
                  {"k": slider(2, 1, 6, 1, "k"), "word": dropdown(["shares", "cat"], "shares", "word")})
    before, renders = ex.summary, ex.renders
    ex.controls["k"].value = 5
    assert ex.renders == renders + 1 and ex.summary != before and ex.summary.startswith("k = 5")
    ex.controls["word"].value = "cat"
    assert "neighbours of 'cat'" in ex.summary and ex.png


def test_lesson05_checkers_accept_right_and_reject_wrong(capsys):
    from helpers.exercises.lesson05 import check_energy, check_tfidf

    assert check_tfidf(lambda tf, df, n: tf * np.log2(n / df))
    assert not check_tfidf(lambda tf, df, n: tf * np.log(n / df))
    assert not check_tfidf(lambda tf, df, n: tf * np.log2((1 + n) / (1 + df)))

    def right(s, k):
        s2 = np.asarray(s) ** 2
        e = s2[:k].sum() / s2.sum()
        return e, np.sqrt(1 - e)

    def unsquared(s, k):
        e = np.sum(s[:k]) / np.sum(s)
        return e, np.sqrt(1 - e)

    assert check_energy(right)
    assert not check_energy(unsquared)
    assert "squared" in capsys.readouterr().out


def test_query_matrix_and_scores_match_one_query_at_a_time():
    v = vocab()
    queries = [["stock", "shares"], ["cat", "zebra", "cat"], ["dog"]]
    for k in (None, 3):
        idx = DocumentIndex.build(DOCS, v, k=k)
        scores = idx.scores(queries)
        assert scores.shape == (3, len(DOCS)) and scores.dtype == np.float64
        for row, query in zip(scores, queries):
            q = idx.query_vector(query)
            one = idx.doc_vectors @ (q.T if sp.issparse(q) else q.ravel())
            one = np.asarray(one.toarray() if sp.issparse(one) else one).ravel()
            np.testing.assert_allclose(row, one, atol=1e-12)
            np.testing.assert_allclose([c for _, c in idx.search(query, n=3)], np.sort(row)[::-1][:3], atol=1e-12)
    with pytest.raises(UnknownWordError, match="query 1 .* has no word in the vocabulary"):
        idx.scores([["dog"], ["zebra"]])
    with pytest.raises(ValueError, match="query 0 is empty"):
        idx.query_matrix([[]])
    with pytest.raises(ValueError, match="list of queries is empty"):
        idx.query_matrix([])
    with pytest.raises(TypeError, match="tokenize"):
        idx.query_matrix("stock shares")
