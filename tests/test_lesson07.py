"""Lesson 07's measurements (helpers.lessons.lesson07): the pair statistics agree with the
trainers' pair generator, the subsampling formulas, the corpus share, the timing and the live
training's determinism, the shipped scores' reproduction."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.lessons.lesson07 import (
    corpus_share,
    keep_probability_paper,
    live_training,
    pair_statistics,
    shipped_scores,
    time_output_layers,
)
from helpers.lib.word2vec import keep_probabilities, prepare_corpus, skipgram_pairs


def _toy_corpus(n_sentences=300, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)]
    p = 1.0 / np.arange(1, 41)
    p /= p.sum()
    sentences = [list(rng.choice(words, size=rng.integers(2, 15), p=p)) for _ in range(n_sentences)]
    return prepare_corpus(sentences, min_count=1)


@pytest.mark.parametrize("dynamic", [True, False])
@pytest.mark.parametrize("sample", [0.0, 1e-2])
def test_pair_statistics_count_what_the_pair_generator_builds(dynamic, sample):
    corpus = _toy_corpus()
    stats = pair_statistics(corpus, sample, dynamic=dynamic, window=3, seeds=(4, 5), top=3)
    top = np.argsort(-corpus.vocab.counts)[:3]
    for i, seed in enumerate((4, 5)):
        rng = np.random.default_rng(seed)
        kept = rng.random(len(corpus.ids)) < keep_probabilities(corpus.vocab.counts, sample)[corpus.ids]
        c, o = skipgram_pairs(corpus.ids[kept], corpus.sentence[kept], 3, rng, dynamic=dynamic)
        assert stats["tokens"][i] == kept.sum()
        assert stats["pairs"][i] == len(c)
        assert stats["top_share"][i] == pytest.approx(np.isin(o, top).mean())
    assert sum(stats["by_distance"]) == pytest.approx(1.0)


def test_fixed_window_pairs_every_neighbour_and_the_dynamic_one_fewer():
    corpus = _toy_corpus()
    fixed = pair_statistics(corpus, 0.0, dynamic=False, window=2, seeds=(0,))
    dynamic = pair_statistics(corpus, 0.0, dynamic=True, window=2, seeds=(0,))
    sent = corpus.sentence
    expected = 2 * sum(int((sent[d:] == sent[:-d]).sum()) for d in (1, 2))
    assert fixed["pairs"] == [expected]
    assert dynamic["pairs"][0] < expected
    # CBOW examples: tokens with a neighbour in their sentence
    alone = np.bincount(sent) == 1
    assert fixed["cbow_examples"] == [len(sent) - int(alone.sum())]


def test_keep_probabilities_paper_and_code():
    counts = np.array([1000.0, 100.0, 10.0, 1.0])
    f = counts / counts.sum()
    t = 1e-2
    paper = keep_probability_paper(counts, t)
    np.testing.assert_allclose(paper, np.minimum(1, np.sqrt(t / f)))
    code = keep_probabilities(counts, t)
    np.testing.assert_allclose(code, np.minimum(1, (np.sqrt(f / t) + 1) * t / f))
    assert np.all(code >= paper)


def test_corpus_share_keeps_the_vocabulary_and_cuts_at_a_sentence_boundary():
    corpus = _toy_corpus()
    part = corpus_share(corpus, 0.3)
    assert part.vocab is corpus.vocab
    n = len(part.ids)
    assert 0 < n < len(corpus.ids) and corpus.sentence[n] != corpus.sentence[n - 1]
    assert corpus_share(corpus, 1.0) is corpus
    with pytest.raises(ValueError, match="share"):
        corpus_share(corpus, 0.0)


def test_timing_rows_have_every_layer():
    rows = time_output_layers([50, 200], dim=8, batch=16, repeats=1)
    assert [r["vocab_size"] for r in rows] == [50, 200]
    for r in rows:
        assert all(r[k] > 0 for k in ("softmax", "ns_rows", "ns_dense", "hs")) and r["hs_mean_depth"] >= 1


def test_live_training_is_deterministic():
    corpus = _toy_corpus(600)
    a = live_training(corpus, 0.5, 2, dim=8)
    b = live_training(corpus, 0.5, 2, dim=8)
    assert a["epoch"] == [1, 2]
    assert a["train_loss"] == b["train_loss"] and np.array_equal(a["W"], b["W"])


def test_shipped_scores_reproduce_the_recorded_wordsim():
    from helpers.course.word_vectors import load_word_vectors  # noqa: PLC0415 (loads a shipped model)
    row = shipped_scores({"gensim CBOW": load_word_vectors("gensim-cbow")})["gensim CBOW"]
    assert row["wordsim_now"] == pytest.approx(row["wordsim"].estimate, abs=5e-4)
    assert row["queen_rank"] >= 1 and row["best_epoch"] <= row["epochs_run"]


def test_paired_difference_is_zero_for_the_same_vectors_and_matches_spearman():
    from scipy.stats import spearmanr  # noqa: PLC0415

    from helpers.lessons.lesson07 import paired_difference, similarity_items  # noqa: PLC0415

    corpus = _toy_corpus()
    rng = np.random.default_rng(0)
    words = corpus.vocab.itos
    pairs = [(words[i], words[j], float(rng.random())) for i, j in rng.integers(0, len(words), (60, 2)) if i != j]
    pairs.append(("unknown-word", words[0], 1.0))              # skipped, as similarity_correlation does
    A, B = rng.standard_normal((len(words), 5)), rng.standard_normal((len(words), 5))
    same = paired_difference(A, A, corpus.vocab, pairs, n_boot=200)
    assert same.estimate == 0 and same.low == 0 and same.high == 0
    d = paired_difference(A, B, corpus.vocab, pairs, n_boot=200)
    a, gold = similarity_items(A, corpus.vocab, pairs)
    b, _ = similarity_items(B, corpus.vocab, pairs)
    assert len(gold) == len(pairs) - 1
    assert d.estimate == pytest.approx(spearmanr(a, gold).statistic - spearmanr(b, gold).statistic)
    assert d.low <= d.estimate <= d.high


def test_paired_differences_equal_one_paired_difference_per_pair():
    from helpers.lessons.lesson07 import paired_difference, paired_differences  # noqa: PLC0415

    corpus = _toy_corpus()
    rng = np.random.default_rng(1)
    words = corpus.vocab.itos
    pairs = [(words[i], words[j], float(rng.integers(0, 5))) for i, j in rng.integers(0, len(words), (50, 2)) if i != j]
    vectors = {name: rng.standard_normal((len(words), 6)) for name in "ABC"}
    table = paired_differences(vectors, corpus.vocab, pairs, n_boot=300, seed=3)
    assert list(table) == [("A", "B"), ("A", "C"), ("B", "C")]
    for (a, b), d in table.items():
        assert d == paired_difference(vectors[a], vectors[b], corpus.vocab, pairs, n_boot=300, seed=3)
    with pytest.raises(ValueError, match="two sets"):
        paired_differences({"A": vectors["A"]}, corpus.vocab, pairs)


def test_call_difference_names_ties_wins_and_intervals_on_the_edge():
    from helpers.lessons.lesson07 import EDGE, call_difference  # noqa: PLC0415
    from helpers.lib.metrics import Interval  # noqa: PLC0415

    def iv(low, high):
        return Interval((low + high) / 2, low, high, 0.95, 100, 1000)

    assert call_difference(iv(0.02, 0.2)) == "differ" and call_difference(iv(-0.2, -0.02)) == "differ"
    assert call_difference(iv(-0.05, 0.08)) == "tie"
    # an end within EDGE of 0, on either side of it: another bootstrap draw could flip the call
    for low in (-EDGE / 2, 0.0, EDGE / 2):
        assert call_difference(iv(low, 0.18)) == "borderline"
        assert call_difference(iv(-0.18, -low)) == "borderline"
    assert call_difference(iv(0.003, 0.18), edge=0.0) == "differ"
    with pytest.raises(ValueError, match="edge"):
        call_difference(iv(0.0, 0.1), edge=-1)


def test_the_live_training_on_the_whole_corpus_retraces_the_shipped_first_epoch():
    # the notebook's claim: same code, settings, seed and data as `make models NAME=wv_torch_skipgram`
    from helpers.course.corpus import course_corpus  # noqa: PLC0415 (loads the corpus)
    from helpers.course.models import replays_exactly_here  # noqa: PLC0415
    from helpers.course.word_vectors import load_word_vectors  # noqa: PLC0415

    shipped = load_word_vectors("torch-skipgram").metadata["curve"]
    live = live_training(course_corpus(), 1.0, 1)
    if replays_exactly_here("wv_torch_skipgram"):          # the training's library versions and processor
        assert live["train_loss"][0] == shipped["train_loss"][0]
    else:                                                   # elsewhere: the same run, to rounding
        assert live["train_loss"][0] == pytest.approx(shipped["train_loss"][0], rel=1e-6)
    assert live["valid_wordsim"][0] == pytest.approx(shipped["valid_wordsim"][0], abs=1e-12)
