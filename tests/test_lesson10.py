"""Lesson 10's module and its shipped-model helpers: word-sense rounds, spreads and paired
differences, the curve's last-fifth gain, the per-sentence accuracy and its bootstrap, the
tokenizer's storage, and the trainer's split."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from helpers.course.mlm_model import split_of, tokenizer_from_arrays, tokenizer_to_arrays
from helpers.infra.seeding import make_rng
from helpers.lessons.lesson10 import (
    accuracy_interval,
    paired_difference,
    sense_rounds,
    spread,
    unigram_sentence_scores,
)
from helpers.lib.bpe import BPETokenizer
from helpers.lib.contextual import nearest_sense_accuracy
from helpers.lib.mlm import IGNORE, MaskedBatch


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sense_rounds_are_the_rounds_of_nearest_sense_accuracy(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 16))
    X[:12] += 0.4
    senses = ["a"] * 12 + ["b"] * 12
    ours = sense_rounds(X, senses, 3, 50, seed)
    theirs = nearest_sense_accuracy(X, senses, 3, make_rng(seed), 50)
    np.testing.assert_array_equal(ours, theirs["per_round"])
    assert ours.mean() == pytest.approx(theirs["accuracy"])


def test_identical_vectors_are_at_chance_and_separated_ones_perfect():
    senses = ["a"] * 6 + ["b"] * 6
    assert sense_rounds(np.ones((12, 4)), senses, 2, 20).mean() == 0.5
    apart = np.vstack([np.tile([1.0, 0.0], (6, 1)), np.tile([0.0, 1.0], (6, 1))])
    assert sense_rounds(apart, senses, 2, 20).mean() == 1.0
    with pytest.raises(ValueError, match="more than n_support"):
        sense_rounds(apart, senses, 6, 5)


def test_spread_and_paired_difference_call_ties():
    a = np.linspace(0.5, 0.9, 201)
    mean, lo, hi = spread(a)
    assert mean == pytest.approx(0.7) and lo == pytest.approx(0.51) and hi == pytest.approx(0.89)
    d, lo, hi = paired_difference(a, a - 0.05)
    assert d == pytest.approx(0.05) and lo == pytest.approx(0.05) and hi == pytest.approx(0.05)
    noise = np.random.default_rng(0).normal(0, 0.05, 201)
    d, lo, hi = paired_difference(a + noise, a)           # no real difference: the range contains 0
    assert lo < 0 < hi


def test_accuracy_interval_resamples_sentences():
    right, count = np.array([1, 2, 0, 3]), np.array([2, 4, 1, 3])
    iv = accuracy_interval(right, count, n_boot=200)
    assert iv.estimate == pytest.approx(6 / 10) and iv.low <= iv.estimate <= iv.high


def test_unigram_scores_count_only_masked_positions():
    labels = np.array([[IGNORE, 7, 7, IGNORE], [9, IGNORE, IGNORE, IGNORE], [IGNORE] * 4])
    b = MaskedBatch(np.zeros_like(labels), labels, np.ones_like(labels, dtype=bool))
    right, count = unigram_sentence_scores(7, [b])
    np.testing.assert_array_equal(right, [2, 0])     # the sentence without a masked piece: left out
    np.testing.assert_array_equal(count, [2, 1])


def test_tokenizer_round_trips_through_arrays():
    words = Counter("the river bank and the money bank the banks".split() * 3)
    tok = BPETokenizer.train(words, vocab_size=40)
    back = tokenizer_from_arrays(tokenizer_to_arrays(tok))
    assert back.itos == tok.itos and back.merges == tok.merges
    assert list(back.encode("the riverbank")) == list(tok.encode("the riverbank"))


def test_the_split_is_by_document_90_5_5():
    counts = Counter(split_of(k) for k in range(2000))
    assert counts == {"train": 1800, "valid": 100, "test": 100}


# ---------------------------------------------------------------- the fine-tuning section
@pytest.fixture(scope="module")
def finetune():
    from helpers.course.models import load_model
    return load_model("mlm_bert"), load_model("bert_finetune")


def test_the_table_the_figure_and_the_live_run(finetune):
    from helpers.lessons.lesson10 import (
        finetune_table,
        live_finetune,
        plot_finetune,
        render_live_finetune,
    )
    shipped, results = finetune
    table = finetune_table(results).splitlines()
    assert len(table) == 1 + len(results.sizes) and "1,500" in table[-1]
    ax = plot_finetune(results, {"n": 100, "test_acc": 0.5, "steps": 20})
    assert ax.get_xscale() == "log" and len(ax.get_legend().get_texts()) == 4
    a = live_finetune(shipped, results, steps=6, progress=False)
    b = live_finetune(shipped, results, steps=6, progress=False)
    assert a["losses"] == b["losses"] and a["test_acc"] == b["test_acc"] and len(a["losses"]) == 6
    _, summary = render_live_finetune(6, shipped=shipped, results=results)
    assert f"test accuracy {a['test_acc']:.1%}" in summary
    with pytest.raises(ValueError, match="steps must be between 1 and 1,000, got 0"):
        live_finetune(shipped, results, steps=0)


def test_whole_articles_use_the_recorded_choice_and_the_same_subsets(finetune):
    """The static method on whole articles, one value per seed, with the C recorded for the cell;
    the same code on cut articles gives the shipped row."""
    from helpers.course import bert_finetune as bf
    from helpers.course.models import load_model
    from helpers.lessons.lesson10 import static_whole_articles
    _, results = finetune
    s = results.settings
    whole = static_whole_articles(results, 1500)
    assert whole.shape == (len(s["seeds"]),) and np.all((whole > 0.2) & (whole <= 1))
    data = bf.bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    W, stoi = bf.static_vectors_of(load_model(s["static"]))
    X, y, i = bf.static_features(W, stoi, data.docs), data.labels, results.sizes.index(1500)
    for j, seed in enumerate(s["seeds"]):
        idx = data.pool[bf.training_subset(y[data.pool], 1500, seed)]
        pred = bf.logreg_test_predictions(X[idx], y[idx], X[data.test], results.static_C[i, j])
        right = pred == y[data.test]
        assert right.mean() == results.test_acc["static"][i, j]
        np.testing.assert_array_equal(right, results.test_right["static"][i, j].astype(bool))


# ---------------------------------------------------------------- the word-sense data and explorer
def test_the_word_sense_file_loads_is_balanced_and_checked(monkeypatch):
    from helpers.course.data import SHA256, load_wsd_sentences, parse_wsd_lines
    from helpers.infra.checksums import DataError
    ex = load_wsd_sentences()
    assert len(ex) == 144
    words = sorted({e.word for e in ex})
    assert words == ["bank", "court", "interest", "light", "plant", "star"]
    for w in words:
        senses = [e.sense for e in ex if e.word == w]
        assert len(set(senses)) == 2 and all(senses.count(s) == 12 for s in set(senses))
    assert all(e.tokens[e.position] == e.word for e in ex)
    head = "word\tsense\tsentence"
    with pytest.raises(DataError, match="line 2: the word 'bank' occurs 2 times"):
        parse_wsd_lines([head, "bank\triver\tThe bank by the bank."])
    with pytest.raises(DataError, match="line 2: expected 3 tab-separated fields"):
        parse_wsd_lines([head, "bank\tThe bank."])
    with pytest.raises(DataError, match="header"):
        parse_wsd_lines(["bank\triver\tThe bank."])
    monkeypatch.setitem(SHA256, "wsd_sentences.tsv", "0" * 64)
    with pytest.raises(DataError, match="corrupt or has been modified"):
        load_wsd_sentences()


def test_static_vectors_pca_and_the_sense_explorer():
    import torch

    from helpers.course.data import load_wsd_sentences, parse_wsd_lines
    from helpers.lessons.lesson10 import (
        example_vectors,
        pca_2d,
        render_sense_explorer,
        static_vectors,
    )
    from helpers.lib.bert import BertConfig, TinyBert
    ex = parse_wsd_lines(["word\tsense\tsentence", "bank\triver\tthe river bank",
                          "bank\tmoney\tthe bank vault"])
    kv = {"the": np.array([1.0, 0.0]), "river": np.array([0.0, 2.0]), "bank": np.array([5.0, 5.0])}
    assert np.array_equal(static_vectors(kv, ex), [[5, 5], [5, 5]])
    with pytest.raises(KeyError, match="'vault' of 'the bank vault' has no static vector"):
        static_vectors(kv, ex, context=True)
    missing = Counter()
    assert np.allclose(static_vectors(kv, ex, context=True, missing=missing),
                       [[0.5, 1.0], [1.0, 0.0]])
    assert missing == {"vault": 1}
    X = np.random.default_rng(0).normal(size=(20, 5)) * [5, 1, 0.1, 0.1, 0.1]
    P = pca_2d(X)
    assert P.shape == (20, 2) and np.var(P[:, 0]) > np.var(P[:, 1]) and np.allclose(P, pca_2d(X))
    ex = load_wsd_sentences()
    tok = BPETokenizer.train([w for e in ex for w in e.tokens], vocab_size=200)
    torch.manual_seed(0)
    cfg = BertConfig(len(tok), dim=16, n_layers=2, n_heads=2, ff_dim=32, max_len=32)
    model = TinyBert(cfg).eval()
    fig, summary = render_sense_explorer(model, tok, ex, sentence=0, word="bank", layer=1)
    assert max(map(len, summary.splitlines())) <= 96            # an HTML export never breaks a word
    assert "labelled: finance" in " ".join(summary.split()) and len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels[0] == "[CLS]" and labels[-1] == "[SEP]" and "bank" in labels
    _, other = render_sense_explorer(model, tok, ex, sentence=15, word="bank", layer=2)
    assert other != summary and "labelled: river" in " ".join(other.split())
    with pytest.raises(ValueError, match="no examples for the word 'vault'"):
        render_sense_explorer(model, tok, ex, word="vault")
    assert example_vectors(model, tok, ex[:3]).shape == (3, 16)
