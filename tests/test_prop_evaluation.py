"""Properties of helpers.lib.lsa: scikit-learn's, SciPy's and brute force's results on random
small inputs, nan refused, and errors naming the argument."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from helpers.lib import lsa as L
from helpers.lib.text import UnknownWordError, Vocab
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

WORDS = ["a", "b", "c", "d", "e"]
DOCS = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=2, max_size=6)


close = closeness(1e-9)


def vocab():
    return Vocab(["<pad>", "<unk>"] + WORDS, specials=("<pad>", "<unk>"))


# ---------------------------------------------------------------- LSA
@covers("lsa.document_term_matrix", "lsa.term_frequency", "lsa.inverse_document_frequency", "lsa.tfidf",
        "lsa.tfidf_matrix", "lsa.group_sentences")
@budget(2)
@given(docs=DOCS, scheme=st.sampled_from(["raw", "log1p", "sublinear", "binary"]), smooth=st.booleans())
def test_counts_and_tfidf_are_scikit_learns(docs, scheme, smooth):
    v = vocab()
    tf = L.document_term_matrix(docs, v)
    cv = CountVectorizer(analyzer=lambda d: d, vocabulary={w: i for i, w in enumerate(v.itos)})
    close(tf.toarray(), cv.fit_transform(docs).toarray())
    data = tf.toarray()
    ref = {"raw": data, "log1p": np.log1p(data), "sublinear": np.where(data > 0, 1 + np.log(np.maximum(data, 1)), 0),
           "binary": (data > 0).astype(float)}[scheme]
    close(L.term_frequency(tf, scheme).toarray(), ref)
    df = (data > 0).sum(0)
    with np.errstate(divide="ignore"):
        idf_ref = np.log((1 + len(docs)) / (1 + df)) + 1 if smooth else np.log(len(docs) / df)
    close(L.inverse_document_frequency(df, len(docs), smooth=smooth), idf_ref)
    if smooth:
        sk = TfidfTransformer(smooth_idf=True, sublinear_tf=scheme == "sublinear").fit_transform(data).toarray()
        if scheme in ("raw", "sublinear"):
            close(L.tfidf_matrix(docs, v, tf_scheme=scheme)[0].toarray(), sk)
    assert L.group_sentences(docs, 2) == [docs[i] + docs[i + 1] if i + 1 < len(docs) else docs[i]
                                          for i in range(0, len(docs), 2)]
    raises_naming(lambda: L.term_frequency(tf, "bm25"), "scheme", ValueError)
    raises_naming(lambda: L.inverse_document_frequency(df, len(docs), base=1), "base", ValueError)
    raises_naming(lambda: L.inverse_document_frequency(df + len(docs) + 1, len(docs)), "frequencies", ValueError)
    raises_naming(lambda: L.document_term_matrix(docs + [["zz"]], v, skip_unknown=False), "'zz'", UnknownWordError)
    raises_naming(lambda: L.tfidf(tf, norm="l1"), "norm", ValueError)


@covers("lsa.truncated_svd", "lsa.svd_vectors", "lsa.energy_kept", "lsa.lsa_word_vectors", "lsa.DocumentIndex")
@budget(2)
@given(st.data())
def test_truncated_svd_is_numpys_and_an_index_finds_each_document_first(data):
    m, n = data.draw(dims(2, 6)), data.draw(dims(2, 6))
    A = data.draw(float_arrays((m, n)))
    k = data.draw(st.integers(1, min(m, n)))
    s_ref = np.linalg.svd(A, compute_uv=False)
    for solver in ("dense", "arpack", "randomized"):
        u, s, vt = L.truncated_svd(A, k, solver=solver, n_iter=30)
        if solver != "randomized":
            close(s, s_ref[:k], 1e-7)
        assert np.all(np.diff(s) <= 1e-9) and np.all(u[np.abs(u).argmax(0), np.arange(k)] > 0)
    if np.any(A):
        energy, err = L.energy_kept(s_ref, float((A * A).sum()))
        close(energy[-1], 1.0, 1e-9)
        close(err, np.sqrt(np.clip(1 - energy, 0, None)))
        vec = L.svd_vectors(A, k, weighting="US", solver="dense")
        close(np.abs(vec), np.abs(np.linalg.svd(A)[0][:, :k] * s_ref[:k]), 1e-7)
    else:
        raises_naming(lambda: L.svd_vectors(A, k), "svd_vectors", ValueError)
    raises_naming(lambda: L.truncated_svd(A, min(m, n) + 1), "k", ValueError)
    raises_naming(lambda: L.truncated_svd(A, 1.0), "k", TypeError)
    raises_naming(lambda: L.truncated_svd(inject(A, data.draw(non_finite), 0), 1), "truncated_svd", ValueError)
    raises_naming(lambda: L.energy_kept(s_ref, 0.0), "frobenius_sq", ValueError)
    docs = data.draw(DOCS)
    docs = [d for i, d in enumerate(docs) if d not in docs[:i]]        # distinct documents
    if len(docs) >= 2:
        index = L.DocumentIndex.build(docs, vocab())
        for i, d in enumerate(docs):
            best = index.search(d, n=len(docs))
            assert best[0][1] == max(s for _, s in best) and any(j == i and np.isclose(s, best[0][1]) for j, s in best)
        close(index.scores(docs), index.scores(docs[::-1])[::-1])
        raises_naming(lambda: index.search(docs[0], n=0), "n", ValueError)
        raises_naming(lambda: index.query_vector([]), "query", ValueError)
        W = L.lsa_word_vectors(docs, vocab(), k=1, sentences_per_doc=1)
        assert W.shape == (len(vocab()), 1) and np.all(W[:2] == 0)       # the specials are never seen
