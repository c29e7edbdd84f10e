"""Lesson 08's measurements (helpers.lessons.lesson08, helpers.lib.fasttext's misspelling test)."""
import numpy as np
import pytest
import scipy.sparse as sp

from helpers.course.models import load_model
from helpers.exercises.lesson08 import check_char_ngrams, check_glove_weight
from helpers.lessons.lesson08 import coverage_correlations, oov_neighbours, ratio_table
from helpers.lib.fasttext import FastTextVectors, char_ngrams, misspell, misspelling_test
from helpers.lib.glove import glove_weight


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


# ----------------------------------------------------------------------------- the NumPy trainer of the live run
def _small_counts(seed=0, V=12):
    rng = np.random.default_rng(seed)
    dense = rng.poisson(3.0, (V, V)) * (rng.random((V, V)) < 0.6)
    return sp.csr_matrix((dense + dense.T).astype(np.float64))


def test_add_rows_sums_repeated_ids_like_np_add_at():
    from helpers.lib.glove_numpy import add_rows
    rng = np.random.default_rng(0)
    ids = np.array([3, 1, 3, 0, 3, 1])
    for values in (rng.normal(size=6).astype(np.float32), rng.normal(size=(6, 4)).astype(np.float32)):
        target = rng.normal(size=(5,) + values.shape[1:]).astype(np.float32)
        expected = target.copy()
        np.add.at(expected, ids, values)
        add_rows(target, ids, values)
        np.testing.assert_allclose(target, expected, rtol=1e-6)


def test_the_numpy_trainer_is_the_shipped_model_s_trainer():
    """PairwiseGloVe (lesson 08's live run) and train_pairwise (make models NAME=wv_glove) visit the
    pairs in the same order from the same seed and take the same steps: the same vectors, to rounding."""
    from helpers.lib.glove import train_pairwise
    from helpers.lib.glove_numpy import PairwiseGloVe
    counts = _small_counts()
    for batch in (1, 7):
        mine = PairwiseGloVe(counts, dim=4, lr=0.1, x_max=5.0, batch_size=batch, seed=2)
        steps_per_epoch = -(-mine.P // batch)
        losses = [mine.step() for _ in range(2 * steps_per_epoch)]
        ref = train_pairwise(counts, dim=4, epochs=2, lr=0.1, x_max=5.0, batch_size=batch, seed=2, progress=False)
        np.testing.assert_allclose(mine.vectors(), ref.W + ref.W_tilde, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(mine.params[2], ref.b, rtol=1e-4, atol=1e-6)
        assert mine.epochs == pytest.approx(2.0)
        assert np.mean(losses[steps_per_epoch:]) < np.mean(losses[:steps_per_epoch])      # it learns


def test_the_numpy_trainer_uses_the_functions_it_is_given():
    from helpers.lib.glove_numpy import PairwiseGloVe, adagrad_glove_c, glove_cell
    calls = {"cell": 0, "step": 0}

    def cell(*a):
        calls["cell"] += 1
        return glove_cell(*a)

    def step(*a):
        calls["step"] += 1
        return adagrad_glove_c(*a)
    m = PairwiseGloVe(_small_counts(), dim=3, batch_size=5, cell=cell, step=step)
    m.step()
    assert calls == {"cell": 1, "step": 4}                  # one cell per batch, one step per parameter
    with pytest.raises(ValueError, match="lr"):
        PairwiseGloVe(_small_counts(), lr=0.0)


# ----------------------------------------------------------------------------- the PMI link
def test_pmi_link_is_exact_for_a_model_that_fits_the_decomposition():
    """A model whose biases are log X_i, log X_j - log X and whose dot products are PMI exactly gets r = 1."""
    from helpers.lessons.lesson08 import pmi_link
    counts = _small_counts(1, V=10).toarray()
    np.fill_diagonal(counts, 0)
    counts = sp.csr_matrix(counts)
    rs = np.asarray(counts.sum(axis=1)).ravel()
    total = rs.sum()
    dense = counts.toarray()
    pmi = np.where(dense > 0, np.log(np.where(dense > 0, dense, 1) * total / np.outer(rs, rs)), 0.0)
    U, S, Vt = np.linalg.svd(pmi)                             # an exact factorisation W W~ᵀ = PMI
    W, Wt = U * S, Vt.T
    link = pmi_link([W, Wt, np.log(rs), np.log(rs) - np.log(total)], counts, min_count=1.0)
    assert link["bias_r"] == pytest.approx(1.0) and link["dot_r"] == pytest.approx(1.0)
    assert link["n_pairs"] == counts.nnz


# ----------------------------------------------------------------------------- checkers
def test_the_n_gram_length_checker_measures_for_itself_and_names_a_bad_context(capsys):
    """Before: `check_best_ngram_length(3, fasttext=ft, words=[])` raised a traceback and the checker
    could not measure without the student's context."""
    from helpers.exercises.lesson08 import (
        _example_fasttext,
        check_best_ngram_length,
        single_length_hits,
    )
    ft, words = _example_fasttext()
    hits = single_length_hits()
    assert set(hits) == {3, 4, 5, 6} and max(hits, key=hits.get) == 3
    assert check_best_ngram_length(3)                                  # no context: the example model
    r = check_best_ngram_length(3, fasttext=ft, words=[])
    assert r.status == "failed" and "non-empty list of words" in r.message
    r = check_best_ngram_length(3, fasttext="ft", words=words)
    assert r.status == "failed" and "FastTextVectors" in r.message
    assert not check_best_ngram_length(6, fasttext=ft, words=words)
    capsys.readouterr()


def test_the_adagrad_checker_tells_the_two_orders_apart(capsys):
    from helpers.exercises.lesson08 import check_adagrad_step
    torch_order = lambda p, g, G, lr: (p - lr * g / np.sqrt(G + g * g), G + g * g)      # noqa: E731
    r = check_adagrad_step(torch_order)
    assert r.status == "failed" and r.mistake == "torch_order"
    capsys.readouterr()


# ----------------------------------------------------------------------------- the records the lesson reads
def test_the_shipped_fasttext_s_buckets_and_schedule_verdicts():
    """What lesson 08's fastText note says of data/models/logs/wv_budget.json."""
    from helpers.course.study_records import load_budget
    budget = load_budget()
    runs = [r for r in budget["runs"] if r["model"] == "wv_gensim_fasttext"]
    verdicts = {}
    for r in runs:
        if r["vs_20"] is not None:
            d, lo, hi = r["vs_20"]
            verdicts[r["change"]["max_epochs"], r["change"].get("buckets", 20_000)] = \
                "tie" if lo <= 0 <= hi else ("better" if lo > 0 else "worse")
    assert verdicts[20, 5_000] == "worse" and verdicts[20, 100_000] == "tie"
    assert all(verdicts[e, 20_000] == "tie" for e in (30, 40, 60))
    assert all(r["best_epoch"] == r["change"]["max_epochs"] for r in runs)      # best at the last epoch
    shipped = load_model("wv_gensim_fasttext").metadata["settings"]
    assert shipped["max_epochs"] == budget["chosen"]["wv_gensim_fasttext"]


# ---------------------------------------------------------------- lesson 08's checkers and explorer
def test_weight_checker_accepts_reference_and_rejects_uncapped(capsys):
    # the course's own passes with the guard bypassed; uncapped, fixed x_max and alpha fail
    assert check_glove_weight.run_checks(lambda x, xm, a: glove_weight(x, xm, a))
    assert not check_glove_weight(lambda x, xm, a: (np.asarray(x) / xm) ** a)
    assert "capped at 1" in capsys.readouterr().out
    assert not check_glove_weight.run_checks(lambda x, xm, a: glove_weight(x))
    assert "do not hard-code" in capsys.readouterr().out
    assert not check_glove_weight(lambda x, xm, a: glove_weight(x, xm, a))    # refused as it is
    assert "write it yourself" in capsys.readouterr().out


def test_char_ngram_checker(capsys):
    # the course's own passes with the guard bypassed; no markers or dropped repeats fail
    assert check_char_ngrams.run_checks(lambda w, n: char_ngrams(w, n, n))
    assert not check_char_ngrams(lambda w, n: [w[i:i + n] for i in range(len(w) - n + 1)])
    assert "boundary markers" in capsys.readouterr().out
    assert not check_char_ngrams.run_checks(lambda w, n: list(dict.fromkeys(char_ngrams(w, n, n))))
    assert "banana" in capsys.readouterr().out
    assert not check_char_ngrams(lambda w, n: char_ngrams(w, n, n))           # refused as it is
    assert "write it yourself" in capsys.readouterr().out


def test_glove_weight_explorer_summary_and_slider():
    import matplotlib
    matplotlib.use("Agg")
    from helpers.infra.widgets import Explorer, log_slider, slider
    from helpers.lessons.lesson08 import render_glove_weight

    counts = np.array([0.5, 1.0, 1.0, 2.0, 5.0, 20.0, 150.0, 3000.0])
    fig, summary = render_glove_weight(100.0, 0.75, counts=counts)
    f = glove_weight(counts, 100.0, 0.75)
    rare = counts < 10
    assert f"f(1) = {glove_weight(1.0):.3f}" in summary
    assert f"{np.mean(counts >= 100):.1%} of the 8 pairs reach the cap" in summary
    share = f"{np.mean(rare):.0%} of the pairs and carry {f[rare].sum() / f.sum():.0%} of the total"
    assert share in summary
    assert len(fig.axes) == 2
    # a smaller x_max caps more pairs and gives the rare ones a larger share of the weight
    _, small = render_glove_weight(10.0, 0.75, counts=counts)
    f10 = glove_weight(counts, 10.0, 0.75)
    assert f"{np.mean(counts >= 10):.1%} of the 8 pairs reach the cap" in small
    assert f10[rare].sum() / f10.sum() > f[rare].sum() / f.sum()

    ex = Explorer(lambda x_max, alpha: render_glove_weight(x_max, alpha, counts=counts),
                  {"x_max": log_slider(100, 0, 3, "x_max"),
                   "alpha": slider(0.75, 0.05, 1.0, 0.05, "α")})
    first, png = ex.summary, ex.png
    ex.controls["x_max"].value = 10
    assert ex.renders == 2 and ex.summary != first and ex.png != png and "x_max = 10" in ex.summary


def test_glove_weight_explorer_rejects_bad_counts():
    from helpers.lessons.lesson08 import render_glove_weight
    with pytest.raises(ValueError, match="positive entries of a co-occurrence matrix.*entries <= 0"):
        render_glove_weight(counts=np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="non-empty 1-D array; got shape \\(0,\\)"):
        render_glove_weight(counts=np.array([]))


def test_oov_neighbours_give_unseen_words_fasttext_neighbours_only():
    rng = np.random.default_rng(0)
    itos = ["said", "year", "people", "government"]
    E = rng.standard_normal((4, 4)).astype(np.float32)
    ft = FastTextVectors(itos, E, E, rng.standard_normal((50, 4)).astype(np.float32), 3, 6, 0.0)
    W = rng.standard_normal((3, 4))
    rows = oov_neighbours(["said", "goverment"], ft, W, ["said", "year", "people"], k=2)
    assert rows[0]["in_vocab"] and len(rows[0]["other"]) == 2
    assert rows[1]["other"] is None and not rows[1]["in_fasttext_vocab"]
    assert len(rows[1]["fasttext"]) == 2
