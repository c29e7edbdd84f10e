"""helpers.course.corpus: the shared corpus, its sentences, and the near-duplicate groups that keep
every copy of a story on one side of a split."""

import numpy as np

from helpers.course.corpus import (
    document_groups,
    document_sentences,
    modern_english_documents,
    modern_english_sentences,
)


def test_the_sentences_are_the_documents_sentences_in_order():
    docs = document_sentences()
    assert modern_english_sentences() == tuple(s for d in docs for s in d)
    assert all(len(s) >= 3 and all(t == t.lower() for t in s)
               for s in modern_english_sentences()[:2000])
    assert 1_200_000 < sum(map(len, modern_english_sentences())) < 1_400_000


def test_the_bbc_collection_s_repeats_are_grouped_and_no_test_article_repeats_training():
    from helpers.course.bbc_topics import bbc_topic_data
    from helpers.lib.text import tokenize
    groups = np.array(document_groups())
    assert len(groups) == len(modern_english_documents())
    sizes = np.bincount(groups)
    assert (sizes > 1).sum() == 170 and sizes[sizes > 1].sum() == 341
    data = bbc_topic_data(seed=0)
    pool_docs = [tokenize(data.docs[i]) for i in data.train]
    test_docs = [tokenize(data.docs[i]) for i in data.test]
    pool_grams = {tuple(d[i : i + 12]) for d in pool_docs for i in range(len(d) - 11)}
    worst = max(np.mean([tuple(d[i : i + 12]) in pool_grams for i in range(len(d) - 11)])
                for d in test_docs if len(d) > 11)
    assert worst < 0.5, worst          # (no group on both sides: test_bbc_topics.py)
