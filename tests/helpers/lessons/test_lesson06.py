"""helpers.lessons.lesson06: the two explorers, and the fit of skip-gram dot products to SGNS's
optimum (exact when w·c is the target)."""

import numpy as np
import pytest
import scipy.sparse as sp

from helpers.lessons.lesson06 import render_collocations, render_contexts, shifted_pmi_fit
from helpers.lib.counting import cooccurrence_matrix, pmi
from helpers.lib.text import Vocab


def corpus():
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(30)]
    sents = [[words[j] for j in rng.integers(0, 30, size=12)] for _ in range(200)]
    sents += [["new", "york", "is", "big"]] * 5 + [["old", "york", "is", "small"]] * 3
    vocab = Vocab.build([w for s in sents for w in s])
    return vocab, [vocab.encode(s) for s in sents]


def test_the_collocation_explorer_ranks_and_filters_by_count():
    vocab, ids = corpus()
    bigrams = cooccurrence_matrix(ids, len(vocab), window=1, symmetric=False)
    fig, summary = render_collocations(4, "PMI", bigrams=bigrams, itos=vocab.itos)
    top3 = [item.rsplit(" (", 1)[0] for item in summary.split(": ", 1)[1].split(", ")[:3]]
    assert set(top3) == {"new york", "york is", "is big"}
    assert fig.axes[0].get_title().endswith(">= 4 times")
    assert "no bigram" in render_collocations(1000, "NPMI", bigrams=bigrams, itos=vocab.itos)[1]
    with pytest.raises(ValueError, match="measure"):
        render_collocations(1, "LLR", bigrams=bigrams, itos=vocab.itos)
    summary = render_collocations(6, "PMI", bigrams=bigrams, itos=vocab.itos)[1]
    assert summary.startswith("min count 6: york is")  # new york, seen 5 times, filtered out


def test_the_context_explorer_finds_words_that_share_contexts():
    vocab, ids = corpus()
    fig, summary = render_contexts(2, "uniform", False, "new", sentences_ids=ids, vocab=vocab)
    assert "window ±2" in summary and "old (1.00)" in summary  # new and old share 'york is'
    assert "harmonic" in render_contexts(1, "harmonic", False, "york", sentences_ids=ids,
                                         vocab=vocab)[1]
    with pytest.raises(KeyError, match="zebra"):
        render_contexts(2, "uniform", False, "zebra", sentences_ids=ids, vocab=vocab)


def test_the_fit_is_exact_when_the_dot_products_are_the_target():
    rng = np.random.default_rng(0)
    pairs = sp.csr_matrix(rng.poisson(20.0, size=(12, 12)).astype(float) + 1)
    column = np.asarray(pairs.sum(axis=0)).ravel()
    smoothed = column**0.75 / (column**0.75).sum()
    target = pmi(pairs, base=np.e, alpha=0.75).toarray() - np.log(5)  # the smoothed optimum
    u, s, vt = np.linalg.svd(target)
    noise = {"smoothed": smoothed, "plain": column / column.sum()}
    fit = shifted_pmi_fit(u * s, vt.T, pairs, noise, 5, np.full(12, 1000), min_pair_count=1)
    assert fit["pairs"] == 144 and fit["fits"]["smoothed"]["gap"] == pytest.approx(0, abs=1e-9)
    assert fit["fits"]["smoothed"]["pearson"].low == pytest.approx(1.0)
    assert fit["fits"]["plain"]["pearson"].estimate < 1 - 1e-6
    with pytest.raises(ValueError, match="must agree"):
        shifted_pmi_fit(u * s, vt.T, pairs, {}, 5, np.ones(11))
    with pytest.raises(ValueError, match="thresholds"):
        shifted_pmi_fit(u * s, vt.T, pairs, {}, 5, np.ones(12))
