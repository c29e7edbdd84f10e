"""helpers.lessons.lesson05: the LSA explorer's view and the cosines of rated word pairs."""

import numpy as np
import pytest
import scipy.sparse as sp

from helpers.lessons.lesson05 import pair_cosines, render_lsa
from helpers.lib.lsa import document_term_matrix, tfidf, truncated_svd
from helpers.lib.text import Vocab
from tests.helpers.lib.test_lsa import DOCS


def test_the_lsa_view_draws_energy_and_neighbours():
    v = Vocab.build([t for d in DOCS for t in d], specials=())
    a = tfidf(document_term_matrix(DOCS, v), norm=None)[0].T.tocsr()
    u, s, _ = truncated_svd(a, 6, n_iter=30)
    fro = float(a.multiply(a).sum())
    fig, summary = render_lsa(2, "shares", singular_values=s, frobenius_sq=fro, u=u, vocab=v)
    assert summary.startswith(f"k = 2: energy kept {100 * (s[:2] ** 2).sum() / fro:.1f} %")
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="k must be"):
        render_lsa(7, "shares", singular_values=s, frobenius_sq=fro, u=u, vocab=v)
    summary = render_lsa(5, "cat", singular_values=s, frobenius_sq=fro, u=u, vocab=v)[1]
    assert summary.startswith("k = 5") and "neighbours of 'cat'" in summary


def test_pair_cosines_dense_and_sparse_skip_unknown_words():
    vocab = Vocab.build(list("abcd"), specials=())
    vectors = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0], [3.0, 0.5]])
    pairs = [("a", "b", 5.0), ("a", "c", 1.0), ("b", "c", 4.0), ("a", "zzz", 9.0), ("a", "d", 8.0)]
    cos, gold, skipped = pair_cosines(vectors, vocab, pairs)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.testing.assert_allclose(cos, [unit[0] @ unit[1], unit[0] @ unit[2], unit[1] @ unit[2],
                                     unit[0] @ unit[3]])
    assert gold.tolist() == [5.0, 1.0, 4.0, 8.0] and skipped == 1
    np.testing.assert_allclose(pair_cosines(sp.csr_matrix(vectors), vocab, pairs)[0], cos)
    with pytest.raises(ValueError, match="only 0 of 1 pairs"):
        pair_cosines(vectors, vocab, [("x", "y", 1.0)])
