"""Lesson 08's measurements (helpers.lessons.lesson08, helpers.lib.fasttext's misspelling test)."""
import numpy as np
import pytest
import scipy.sparse as sp

from helpers.lessons.lesson08 import coverage_correlations, ratio_table
from helpers.lib.fasttext import FastTextVectors, misspell, misspelling_test


def test_ratio_table_divides_the_conditional_probabilities():
    X = sp.csr_matrix(np.array([[0, 4, 1, 5], [2, 0, 3, 5], [1, 3, 0, 0], [5, 5, 0, 0]], dtype=float))
    vocab = ["a", "b", "k1", "k2"]
    rows = {r["k"]: r for r in ratio_table(X, vocab, "a", "b", ["k1", "k2"])}
    assert rows["k1"]["X_a"] == 1 and rows["k1"]["X_b"] == 3
    assert rows["k1"]["P_a"] == pytest.approx(1 / 10) and rows["k1"]["P_b"] == pytest.approx(3 / 10)
    assert rows["k1"]["ratio"] == pytest.approx(1 / 3) and rows["k2"]["ratio"] == pytest.approx(1.0)
    with pytest.raises(KeyError, match="zebra"):
        ratio_table(X, vocab, "a", "b", ["zebra"])


def test_misspell_keeps_the_ends_and_makes_one_slip():
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = misspell("government", rng)
        assert m[0] == "g" and m[-1] == "t" and abs(len(m) - 10) <= 1
    with pytest.raises(ValueError, match="at least 4"):
        misspell("cat", rng)


def _toy_fasttext():
    rng = np.random.default_rng(0)
    words = ["government", "election", "football", "economy", "minister"]
    ngrams = rng.normal(0, 1, (4000, 16)).astype(np.float32)
    base = FastTextVectors(words, np.zeros((5, 16), np.float32), np.zeros((5, 16), np.float32), ngrams, 3, 6, 0.0)
    W = np.stack([base.vector(w + "x") for w in words])          # each word near its own n-grams
    return FastTextVectors(words, W, W, ngrams, 3, 6, 0.0), words


def test_misspelling_test_finds_the_word_by_its_ngrams():
    ft, words = _toy_fasttext()
    r = misspelling_test(ft, words, k=1)
    assert [w for w, _ in r["pairs"]] == words and all(m not in ft for _, m in r["pairs"])
    # the vectorised neighbours are FastTextVectors.neighbours'
    assert all(nb[0] == ft.neighbours(m, 1)[0][0] for (_, m), nb in zip(r["pairs"], r["neighbours"], strict=True))
    assert r["hits"].mean() >= 0.8


def test_coverage_correlations_split_known_and_unseen_pairs():
    ft, words = _toy_fasttext()
    pairs = [("government", "minister", 8.0), ("election", "economy", 5.0), ("football", "government", 1.0),
             ("economy", "minister", 6.0), ("footballer", "election", 2.0), ("governments", "ministers", 7.5)]
    c = coverage_correlations(ft, pairs, n_boot=50)
    assert c["n_all"] == 6 and c["n_in_vocab"] == 4 and c["n_oov"] == 2 and c["oov_only"] is None   # too few
    assert c["all"].low <= c["all"].estimate <= c["all"].high
    more = pairs + [("footballers", "football", 9.0), ("governmental", "economy", 3.0)]
    c = coverage_correlations(ft, more, n_boot=50)
    assert c["n_oov"] == 4 and c["oov_only"].low <= c["oov_only"].estimate <= c["oov_only"].high


def test_paired_rho_difference_is_the_difference_of_the_two_rhos():
    from scipy.stats import spearmanr

    from helpers.lib.metrics import paired_similarity_difference as paired_rho_difference
    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(40)]
    W_a, W_b = rng.normal(size=(40, 5)), rng.normal(size=(40, 5))
    pairs = [(f"w{a}", f"w{b}", float(rng.random())) for a, b in rng.integers(0, 40, (60, 2)) if a != b]
    pairs.append(("w1", "unknown", 0.5))
    d = paired_rho_difference(W_a, W_b, vocab, pairs, n_boot=200)

    def rho(W):
        E = W / np.linalg.norm(W, axis=1, keepdims=True)
        idx = [(int(a[1:]), int(b[1:]), s) for a, b, s in pairs if b != "unknown"]
        return spearmanr([E[a] @ E[b] for a, b, _ in idx], [s for *_, s in idx]).statistic
    assert d.estimate == pytest.approx(rho(W_a) - rho(W_b)) and d.low <= d.estimate <= d.high
    same = paired_rho_difference(W_a, W_a, vocab, pairs, n_boot=50)
    assert same.estimate == 0 and same.low == 0 and same.high == 0
