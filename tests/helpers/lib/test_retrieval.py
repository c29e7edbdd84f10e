"""helpers.lib.retrieval: BM25 against its formula and gensim, ranks against a brute-force sort,
precision, recall and average precision against counting and scikit-learn, bad inputs named."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from gensim.corpora import Dictionary
from gensim.models import LuceneBM25Model
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score

from helpers.lib import retrieval as RV
from helpers.lib.lsa import document_term_matrix
from helpers.lib.text import Vocab
from tests.props import budget, raises_naming


def test_bm25_is_its_formula_and_gensim_s_up_to_the_constant_factor():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    docs = [list(rng.choice(words, size=rng.integers(3, 30))) for _ in range(25)]
    vocab = Vocab.build([w for d in docs for w in d], specials=())
    counts = document_term_matrix(docs, vocab)
    weights, idf = RV.bm25_weights(counts, k1=1.5, b=0.6)
    tf, lengths = counts.toarray(), counts.toarray().sum(axis=1)
    df = (tf > 0).sum(axis=0)
    assert idf == pytest.approx([math.log(1 + (25 - f + 0.5) / (f + 0.5)) for f in df])
    d, t = np.argwhere(tf > 1)[0]
    norm = 0.4 + 0.6 * lengths[d] / lengths.mean()
    assert weights[d, t] == pytest.approx(idf[t] * tf[d, t] * 2.5 / (tf[d, t] + 1.5 * norm))
    assert np.all(weights.toarray() <= 2.5 * idf + 1e-12)  # the term frequency saturates
    dictionary = Dictionary(docs)
    model = LuceneBM25Model(dictionary=dictionary, k1=1.5, b=0.6)
    for r, doc in enumerate(docs):
        for term, weight in model[dictionary.doc2bow(doc)]:
            ours = weights[r, vocab.index(dictionary[term])] / 2.5
            assert ours == pytest.approx(weight, rel=1e-12)
    raises_naming(lambda: RV.bm25_weights(counts, k1=-1.0), "k1")
    raises_naming(lambda: RV.bm25_weights(counts, b=1.5), "b")
    raises_naming(lambda: RV.bm25_weights(sp.csr_matrix((3, 4))), "empty")
    raises_naming(lambda: RV.bm25_weights(-counts), "counts")


def tied_scores(data, shape):
    """Scores from a few values (ties are common), some -inf (left out of the ranking)."""
    n = int(np.prod(shape))
    values = st.sampled_from([-np.inf, -1.0, 0.0, 0.5, 2.0])
    return np.array(data.draw(st.lists(values, min_size=n, max_size=n))).reshape(shape)


def brute_order(row):
    return sorted(range(len(row)), key=lambda d: (-row[d], d))


@budget(0.5)
@given(st.data())
def test_target_ranks_are_a_brute_force_sort_with_copies_as_right_answers(data):
    Q, D = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 5))
    scores = tied_scores(data, (Q, D))
    targets = np.array([data.draw(st.integers(0, D - 1)) for _ in range(Q)])
    ranks = RV.target_ranks(scores, targets)
    assert list(ranks) == [brute_order(scores[q]).index(targets[q]) + 1 for q in range(Q)]
    groups = np.array([data.draw(st.integers(0, 2)) for _ in range(D)])
    for q, rank in enumerate(RV.target_ranks(scores, targets, groups)):
        order = brute_order(scores[q])
        first = next(d for d in order if groups[d] == groups[targets[q]])
        assert rank == sum(groups[d] != groups[targets[q]] for d in order[: order.index(first)]) + 1
    bad = targets.copy()
    bad[0] = data.draw(st.sampled_from([-1, D]))  # -1 was the last document, D rank 1
    raises_naming(lambda: RV.target_ranks(scores, bad), "targets")
    raises_naming(lambda: RV.target_ranks(scores, targets, groups[:-1]), "group")
    raises_naming(lambda: RV.target_ranks(np.full((Q, D), np.nan), targets), "scores")


@budget(0.75)
@given(st.data())
def test_precision_recall_and_average_precision_are_what_counting_gives(data):
    Q, D = data.draw(st.integers(1, 3)), data.draw(st.integers(2, 6))
    scores = tied_scores(data, (Q, D))
    scores[:, 0] = np.maximum(scores[:, 0], 0.0)
    flags = data.draw(st.lists(st.booleans(), min_size=Q * D, max_size=Q * D))
    relevant = np.array(flags).reshape(Q, D)
    relevant &= np.isfinite(scores)
    relevant[:, 0] = True
    k = data.draw(st.integers(1, D))
    precision, recall = RV.precision_recall_at(scores, relevant, k)
    ranked = [[relevant[q, d] for d in brute_order(scores[q])] for q in range(Q)]
    assert list(precision) == pytest.approx([sum(r[:k]) / k for r in ranked])
    assert list(recall) == pytest.approx([sum(r[:k]) / sum(r) for r in ranked])
    ap = [np.mean([np.mean(r[: i + 1]) for i in range(D) if r[i]]) for r in ranked]
    assert list(RV.average_precision(scores, relevant)) == pytest.approx(ap)
    raises_naming(lambda: RV.precision_recall_at(scores, relevant, D + 1), "k")
    raises_naming(lambda: RV.average_precision(scores, relevant & False), "relevant document")
    left_out = np.where(relevant, -np.inf, scores)
    raises_naming(lambda: RV.average_precision(left_out, relevant), "relevant document")


def test_average_precision_is_scikit_learn_s_for_untied_scores():
    rng = np.random.default_rng(1)
    scores, relevant = rng.normal(size=(20, 60)), rng.random((20, 60)) < 0.3
    relevant[:, 0] = True
    np.testing.assert_allclose(RV.average_precision(scores, relevant),
                               [average_precision_score(relevant[i], scores[i])
                                for i in range(20)], rtol=1e-12)
