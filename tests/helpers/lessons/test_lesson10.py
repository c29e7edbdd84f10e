"""helpers.lessons.lesson10: the role probe, word-sense rounds, spreads and paired differences,
the blank-filling scores, the fine-tuning section and the sense explorer."""
from collections import Counter

import numpy as np
import pytest

from helpers.course.models import load_model
from helpers.exercises.lesson10 import course_classify
from helpers.infra.seeding import make_rng
from helpers.lessons.lesson10 import (
    accuracy_interval,
    blank_batch,
    blank_examples,
    encoder_blank,
    encoder_scores,
    masking_ablation,
    paired_accuracy_difference,
    paired_difference,
    role_probe,
    role_sentences,
    sense_rounds,
    spread,
    unigram_sentence_scores,
)
from helpers.lib.bpe import BPETokenizer
from helpers.lib.contextual import nearest_sense_accuracy
from helpers.lib.encoder_numpy import NumpyEncoder
from helpers.lib.mlm import IGNORE, MaskedBatch


class _Tok:
    """A tokeniser that keeps every word whole except the ones listed in ``split``."""

    def __init__(self, split=()):
        self.split = set(split)

    def tokenize_word(self, w):
        return (w[:1], w[1:]) if w in self.split else (w,)


class _Vectors(dict):
    vector_size = 3


def _vectors(words):
    rng = np.random.default_rng(0)
    return _Vectors({w: rng.standard_normal(3) for w in words})


def _all_words():
    from helpers.lessons.lesson10 import ROLE_ADJECTIVES, ROLE_NOUNS, ROLE_VERBS
    return ROLE_NOUNS + ROLE_VERBS + ROLE_ADJECTIVES + ["the", "that"]


def test_the_twins_share_words_and_position_with_opposite_roles_and_bad_words_are_named():
    S, P, A, G = role_sentences(_Tok(), _vectors(_all_words()), n_pairs=12)
    assert len(S) == 48 and set(A.tolist()) == {0, 1}
    for k in range(0, len(S), 2):                 # (agent, patient) twins
        assert sorted(S[k]) == sorted(S[k + 1]) and P[k] == P[k + 1]
        assert S[k][P[k]] == S[k + 1][P[k]]
        assert (A[k], A[k + 1]) == (1, 0) and G[k] == G[k + 1]
    with pytest.raises(ValueError, match="helped"):         # a word the tokeniser splits
        role_sentences(_Tok(split=["helped"]), _vectors(_all_words()))
    with pytest.raises(ValueError, match="that"):           # a word without a vector
        role_sentences(_Tok(), _vectors([w for w in _all_words() if w != "that"]))


def test_the_word_s_own_vector_and_its_context_mean_are_at_chance():
    kv = _vectors(_all_words())
    S, P, A, G = role_sentences(_Tok(), kv, n_pairs=40)

    def classify(query, support, senses):
        senses = np.asarray(senses)
        return max(("agent", "patient"), key=lambda s: float(query @ support[senses == s].mean(0)))

    own = np.array([kv[s[p]] for s, p in zip(S, P)])
    context = np.array([np.mean([kv[w] for i, w in enumerate(s) if i != p], 0)
                        for s, p in zip(S, P)])
    right = role_probe({"own": own, "context": context}, A, G, classify, splits=2)
    assert right["own"].mean() == 0.5 and right["context"].mean() == 0.5
    assert right["own"].size == 2 * 2 * 2 * (40 // 4)   # splits x twins x directions x held-out


# ---------------------------------------------------------------- word senses, spreads, differences
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
    seen = []                                    # the student's rule: called query by query

    def by_rule(q, S, s):
        seen.append(len(S))
        return course_classify(q, S, s)
    np.testing.assert_array_equal(sense_rounds(X, senses, 3, 50, seed, by_rule), ours)
    assert seen == [6] * (50 * 18)
    always_a = sense_rounds(X, senses, 3, 50, seed, lambda q, S, s: "a")
    assert np.all(always_a == 0.5)


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


# ---------------------------------------------------------------- blank filling: the scores
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


def test_encoder_scores_and_the_paired_difference():
    V, MASK = 10, 4
    ids = np.array([[2, 5, 6, 7, 3], [2, 8, 9, 3, 0]])
    labels = np.full(ids.shape, IGNORE)
    labels[0, [1, 3]], labels[1, 2] = ids[0, [1, 3]], ids[1, 2]
    batch = MaskedBatch(np.where(labels != IGNORE, MASK, ids), labels, ids != 0)
    encoder = NumpyEncoder(V, 8, 1, 2, 16, 8, pad_id=0)
    out = encoder_scores(encoder, [batch])
    assert out["nll"] == pytest.approx(
        encoder.masked_lm_loss(batch.inputs, batch.labels, batch.attention_mask))
    np.testing.assert_array_equal(out["count"], [2, 1])
    second = MaskedBatch(batch.inputs[1:], batch.labels[1:], batch.attention_mask[1:])
    assert encoder_blank(encoder, second).sum() == pytest.approx(1.0)
    right = np.array([3, 1, 0, 2])
    count = np.array([4, 2, 1, 3])
    assert paired_accuracy_difference(right, right, count) == (0.0, 0.0, 0.0)
    d, lo, hi = paired_accuracy_difference(right, right - np.array([1, 0, 0, 0]), count, n_boot=500)
    assert d == pytest.approx(0.1) and 0 <= lo <= d <= hi
    with pytest.raises(ValueError, match="alike"):
        paired_accuracy_difference(right, right[:2], count)


def test_blank_examples_hide_one_single_piece_word():
    tok = load_model("mlm_bert").tok
    words = ("the", "bank", "raised", "its", "interest", "rates", "again", "today", "in", "london")
    ex = blank_examples(tok, [words] * 3, n=2, seed=0)
    assert len(ex) == 2 and all(len(tok.tokenize_word(w[p])) == 1 and p > 0 for w, p in ex)
    b = blank_batch(tok, *ex[0])
    (col,) = np.flatnonzero(b.labels[0] != IGNORE)
    assert b.inputs[0, col] == tok.mask_id
    assert tok.itos[b.labels[0, col]] == "▁" + ex[0][0][ex[0][1]]


def test_the_masking_ablation_masks_with_the_given_rule_and_scores_both_rules():
    tok = load_model("mlm_bert").tok
    train = [np.array([2, 10, 11, 12, 13, 3]), np.array([2, 14, 15, 16, 3])] * 40
    batch = MaskedBatch(np.array([[2, 4, 11, 12, 3]]),
                        np.array([[IGNORE, 10, IGNORE, IGNORE, IGNORE]]), np.ones((1, 5), bool))
    seen = []

    def replace(ids, chosen, u, random_ids, mask_id):
        seen.append(float(u[chosen].max()) if chosen.any() else 0.0)
        return np.where(chosen, mask_id, ids)

    E0 = np.random.default_rng(0).normal(0, 0.1, (len(tok), 64)).astype(np.float32)
    out = masking_ablation(tok, train, E0, replace, [batch], steps=4)
    assert list(out) == ["[MASK] only", "80/10/10"]
    assert all(0 <= a <= 1 and 0 <= b <= 1 for a, b in out.values())
    assert len(seen) == 8 and max(seen[:4]) == 0 and max(seen[4:]) > 0     # u = 0: [MASK] only


# ---------------------------------------------------------------- the fine-tuning section
@pytest.fixture(scope="module")
def finetune():
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


def test_the_static_row_is_the_recorded_choice_on_the_same_subsets(finetune):
    """On cut articles, the static method with the recorded C gives the shipped row."""
    from helpers.course import bert_finetune as bf
    _, results = finetune
    s = results.settings
    data = bf.bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    W, stoi = bf.static_vectors_of(load_model(s["static"]))
    X, y, i = bf.static_features(W, stoi, data.docs), data.labels, results.sizes.index(1500)
    for j, seed in enumerate(s["seeds"]):
        idx = data.pool[bf.training_subset(y[data.pool], 1500, seed)]
        pred = bf.logreg_test_predictions(X[idx], y[idx], X[data.test], results.static_C[i, j])
        right = pred == y[data.test]
        assert right.mean() == results.test_acc["static"][i, j]
        np.testing.assert_array_equal(right, results.test_right["static"][i, j].astype(bool))


# ---------------------------------------------------------------- static vectors and the explorer
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
