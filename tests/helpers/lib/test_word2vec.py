"""Tests of helpers.lib.word2vec (lesson 07): the corpus, subsampling, and skip-gram pairs that
stay inside sentences and windows."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import word2vec as W2V
from helpers.lib.word2vec import keep_probabilities, prepare_corpus, skipgram_pairs
from tests.props import budget, dims, raises_naming


def test_skipgram_pairs_window_and_sentences():
    ids = np.array([10, 11, 12, 13, 20, 21])
    sent = np.array([0, 0, 0, 0, 1, 1])

    class Fixed:                                      # b = window for every centre
        def integers(self, lo, hi, size):
            return np.full(size, hi - 1)
    c, o = skipgram_pairs(ids, sent, 2, Fixed())
    pairs = set(zip(c.tolist(), o.tolist(), strict=True))
    assert (10, 12) in pairs and (12, 10) in pairs and (10, 13) not in pairs
    assert (13, 20) not in pairs and (20, 13) not in pairs  # never across a sentence
    assert len(c) == 2 * (3 + 2) + 2  # offsets 1 and 2 in sentence 0, offset 1 in sentence 1
    # dynamic window: on average b = (w+1)/2 so pairs ~ 2 * mean(b) per centre (long sentence)
    rng = np.random.default_rng(0)
    c, _ = skipgram_pairs(np.arange(10000), np.zeros(10000, int), 5, rng)
    assert len(c) / 10000 == pytest.approx(6.0, rel=0.03)


def test_keep_probabilities():
    p = keep_probabilities(np.array([1000, 10, 1]), sample=1e-2)
    t = 1e-2 * 1011
    assert p[0] == pytest.approx((np.sqrt(1000 / t) + 1) * t / 1000)
    assert p[2] == 1.0


def test_prepare_corpus_counts():
    c = prepare_corpus([("a", "b", "a"), ("a", "c")], min_count=2)
    assert c.vocab.itos == ["a"] and c.n_raw_tokens == 5 and c.sentence.tolist() == [0, 0, 1]
    c = prepare_corpus([("a", "b", "a"), ("b",), ("c", "a")], min_count=1)
    sents = (("a", "b", "a"), ("b",), ("c", "a"))
    assert [s.tolist() for s in c.sentence_ids()] == [[c.vocab.index(w) for w in s] for s in sents]


SENTS = st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=0, max_size=6),
                 min_size=1, max_size=5)


@budget()
@given(st.data())
def test_pairs_stay_inside_sentences_and_windows(data):
    sents = data.draw(SENTS)
    if not any(sents):
        raises_naming(lambda: W2V.prepare_corpus(sents, min_count=1), "corpus", ValueError)
        return
    corpus = W2V.prepare_corpus(sents, min_count=1)
    assert corpus.n_raw_tokens == sum(map(len, sents)) and len(corpus.ids) == len(corpus.sentence)
    window = data.draw(dims(1, 3))
    c, o = W2V.skipgram_pairs(corpus.ids, corpus.sentence, window, np.random.default_rng(0),
                              dynamic=False)
    ref = [(s[i], s[j]) for s in (corpus.vocab.encode(x) for x in sents) for i in range(len(s))
           for j in range(len(s)) if 0 < abs(i - j) <= window]
    expected = sorted((int(a), int(b)) for a, b in ref)
    assert sorted(zip(c.tolist(), o.tolist(), strict=True)) == expected
    p = W2V.keep_probabilities(corpus.vocab.counts, 1e-3)
    assert np.all((0 < p) & (p <= 1))
    assert np.all(W2V.keep_probabilities(corpus.vocab.counts, 0) == 1)
    rng = np.random.default_rng(0)
    raises_naming(lambda: W2V.skipgram_pairs(corpus.ids, corpus.sentence, 0, rng), "window",
                  ValueError)
    raises_naming(lambda: W2V.skipgram_pairs(corpus.ids.astype(float), corpus.sentence, 1, rng),
                  "ids", TypeError)
    raises_naming(lambda: W2V.skipgram_pairs(corpus.ids, corpus.sentence.astype(float), 1, rng),
                  "sentence", TypeError)
