"""Tests of helpers.lib.counting: co-occurrence counts, PMI family, the notes' worked example."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from helpers.lib.counting import (
    cooccurrence_countvectorizer,
    cooccurrence_matrix,
    cooccurrence_python,
    npmi,
    pmi,
    pmi_table,
    ppmi,
    ppmi_python,
    top_pmi_pairs,
)
from helpers.lib.metrics import nearest_neighbours

# The notes' partial co-occurrence table (rows state/fun/heaven, columns the/country/hell)
ROWS, COLS = ["state", "fun", "heaven"], ["the", "country", "hell"]
COUNTS = [[1973, 10, 1], [54, 2, 0], [55, 1, 3]]
ROW_SUMS, COL_SUMS, N = [12786, 633, 627], [1047519, 3817, 780], 15871304


def random_corpus(rng, n_sent=40, vocab=12, max_len=9):
    return [rng.integers(0, vocab, size=rng.integers(0, max_len)) for _ in range(n_sent)]


def test_tiny_counts_by_hand():
    # "a b c" and "a b": window 1 within sentences -> a-b twice, b-c once
    c = cooccurrence_matrix([np.array([0, 1, 2]), np.array([0, 1])], 3, window=1).toarray()
    np.testing.assert_array_equal(c, [[0, 2, 0], [2, 0, 1], [0, 1, 0]])
    # crossing the boundary adds the pair (c, a)
    c = cooccurrence_matrix([np.array([0, 1, 2]), np.array([0, 1])], 3, window=1,
                            cross_sentences=True).toarray()
    np.testing.assert_array_equal(c, [[0, 2, 1], [2, 0, 1], [1, 1, 0]])
    # harmonic weighting: a..c at distance 2 counts 1/2
    c = cooccurrence_matrix([np.array([0, 1, 2])], 3, window=2, weighting="harmonic").toarray()
    assert c[0, 2] == 0.5 and c[0, 1] == 1.0
    # ordered bigrams
    c = cooccurrence_matrix(np.array([0, 1, 2]), 3, window=1, symmetric=False).toarray()
    np.testing.assert_array_equal(c, [[0, 1, 0], [0, 0, 1], [0, 0, 0]])


@pytest.mark.parametrize("window", [1, 2, 5])
@pytest.mark.parametrize("weighting", ["uniform", "harmonic"])
@pytest.mark.parametrize("cross", [False, True])
def test_vectorised_equals_python_loop(window, weighting, cross):
    rng = np.random.default_rng(window * 10 + cross)
    sents = random_corpus(rng)
    sents[3][:1] = -1  # a hole
    fast = cooccurrence_matrix(sents, 12, window, weighting, cross)
    slow = cooccurrence_python(sents, 12, window, weighting, cross)
    assert fast.shape == (12, 12) and fast.dtype == np.float64 and sp.isspmatrix_csr(fast)
    np.testing.assert_allclose(fast.toarray(), slow.toarray(), rtol=1e-12)
    np.testing.assert_allclose(fast.toarray(), fast.toarray().T)


@pytest.mark.parametrize("window", [1, 3])
def test_countvectorizer_route_and_python_ppmi_agree(window):
    rng = np.random.default_rng(7)
    sents = random_corpus(rng)
    sents[0][:2] = -1
    fast = cooccurrence_matrix(sents, 12, window)
    np.testing.assert_array_equal(cooccurrence_countvectorizer(sents, 12, window).toarray(), fast.toarray())
    coo = fast.tocoo()
    table = {(int(r), int(c)): float(x) for r, c, x in zip(coo.row, coo.col, coo.data, strict=True)}
    slow = ppmi_python(table)
    ours = ppmi(fast, alpha=1.0)
    assert len(slow) == ours.nnz
    for (r, c), x in slow.items():
        assert ours[r, c] == pytest.approx(x, rel=1e-12)


def test_total_count_formula():
    # one sentence of length n, window w, uniform: 2 * sum_{d<=w} (n-d) pairs
    n, w = 50, 4
    c = cooccurrence_matrix(np.arange(n) % 7, 7, window=w, cross_sentences=True)
    assert c.sum() == 2 * sum(n - d for d in range(1, w + 1))


def test_holes_are_not_counted():
    c = cooccurrence_matrix([np.array([0, -1, 1])], 2, window=1).toarray()
    assert c.sum() == 0
    c = cooccurrence_matrix([np.array([0, -1, 1])], 2, window=2).toarray()
    assert c[0, 1] == 1


def test_bad_input():
    with pytest.raises(ValueError, match="empty corpus"):
        cooccurrence_matrix([], 5)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        cooccurrence_matrix([np.array([0, 7])], 5)
    with pytest.raises(ValueError, match="window"):
        cooccurrence_matrix([np.array([0, 1])], 5, window=0)
    with pytest.raises(ValueError, match="weighting"):
        cooccurrence_matrix([np.array([0, 1])], 5, weighting="gaussian")
    with pytest.raises(TypeError, match="integers"):
        cooccurrence_matrix([np.array([0.5, 1.0])], 5)
    with pytest.raises(ValueError, match="non-negative"):
        pmi(np.array([[1.0, -2.0]]))


def test_notes_worked_example_heaven_hell():
    table = pmi_table(COUNTS, ROWS, COLS, ROW_SUMS, COL_SUMS, N)
    exact = np.log2(3 * 15871304 / (627 * 780))
    assert table["heaven", "hell"] == pytest.approx(exact, rel=1e-12)
    assert round(table["heaven", "hell"], 2) == 6.61
    assert table["fun", "hell"] == -np.inf
    # cells where the printed table agrees with the counts (to 2 decimals) ...
    for cell, printed in {("fun", "the"): 0.37, ("heaven", "the"): 0.41}.items():
        assert round(table[cell], 2) == printed
    # ... and the five where it does not: the counts give these values instead
    assert round(table["state", "the"], 2) == 1.23       # notes: 1.22 (1.2253, truncated)
    assert round(table["state", "country"], 2) == 1.70   # notes: 1.78
    assert round(table["state", "hell"], 2) == 0.67      # notes: 0.63
    assert round(table["fun", "country"], 2) == 3.72     # notes: 3.79
    assert round(table["heaven", "country"], 2) == 2.73  # notes: 2.80


def test_pmi_dense_sparse_agree_and_no_warnings():
    rng = np.random.default_rng(0)
    c = rng.poisson(0.7, size=(9, 11)).astype(float)
    c[4] = 0  # a word with no co-occurrences at all
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = pmi(c)
        s = pmi(sp.csr_matrix(c))
        nd = npmi(c)
        ns = npmi(sp.csr_matrix(c))
        pp = ppmi(c, alpha=1.0)
    assert not np.isnan(d).any()
    assert np.all(np.isneginf(d[c == 0])) and np.all(np.isfinite(d[c > 0]))
    np.testing.assert_allclose(s.toarray()[c > 0], d[c > 0])
    assert s.nnz == (c > 0).sum()
    np.testing.assert_allclose(pp.toarray(), np.maximum(d, 0))
    assert np.all(nd[c == 0] == -1) and nd.min() >= -1 and nd.max() <= 1
    np.testing.assert_allclose(ns.toarray()[c > 0], nd[c > 0])
    # brute-force definition
    p = c / c.sum()
    i, j = 2, 3
    if c[i, j] > 0:
        assert d[i, j] == pytest.approx(np.log2(p[i, j] / (p[i].sum() * p[:, j].sum())))


def test_npmi_extremes():
    # two words that only ever occur together: NPMI = 1; independence: 0
    assert npmi(np.array([[5.0, 0], [0, 0]]))[0, 0] == pytest.approx(1.0)
    ind = np.outer([1, 2], [3, 1]).astype(float)
    np.testing.assert_allclose(npmi(ind), 0, atol=1e-12)
    np.testing.assert_allclose(pmi(ind), 0, atol=1e-12)


def test_context_smoothing_and_pmik():
    c = np.array([[10.0, 1.0], [30.0, 2.0]])
    p = c / c.sum()
    pw, pc = p.sum(1), p.sum(0)
    pc_a = c.sum(0) ** 0.75 / (c.sum(0) ** 0.75).sum()
    np.testing.assert_allclose(pmi(c, alpha=0.75), np.log2(p / np.outer(pw, pc_a)))
    np.testing.assert_allclose(pmi(c, k=2), np.log2(p ** 2 / np.outer(pw, pc)))
    # smoothing raises the rare context's probability, so it lowers that context's PMI
    assert np.all(pmi(c, alpha=0.75)[:, 1] < pmi(c)[:, 1])
    np.testing.assert_allclose(pmi(c, base=np.e), pmi(c) * np.log(2))


def test_ppmi_min_count_and_defaults():
    c = sp.csr_matrix(np.array([[0, 1.0, 0, 0], [1.0, 0, 0, 0], [0, 0, 0, 3.0], [0, 0, 3.0, 0]]))
    full = ppmi(c, alpha=1.0)
    cut = ppmi(c, alpha=1.0, min_count=2)
    assert full[0, 1] == pytest.approx(3.0) and cut[0, 1] == 0  # the count-1 pair is dropped ...
    assert cut[2, 3] == pytest.approx(full[2, 3]) == pytest.approx(np.log2(8 / 3))  # ... not the rest
    assert np.all(ppmi(c).data > 0) and sp.isspmatrix_csr(ppmi(c))


def test_top_pmi_pairs():
    # "new york" is a fixed pair, "the" goes with everything
    sents = [np.array(s) for s in [[0, 1, 2, 3], [0, 1, 2, 4], [2, 3, 2, 4], [0, 1, 2, 3]]]
    itos = ["new", "york", "the", "cat", "dog"]
    b = cooccurrence_matrix(sents, 5, window=1, symmetric=False)
    top = top_pmi_pairs(b, itos, n=2, min_count=2)
    assert top[0][:2] == ("new", "york") and top[0][3] == 3
    assert all(cnt >= 2 for *_, cnt in top)
    assert top_pmi_pairs(b, itos, n=5, min_count=100) == []


# ----------------------------------------------------------------------------- explorers and exercises
def _explorer_corpus():
    from helpers.lib.text import Vocab
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(30)]
    sents = [[words[j] for j in rng.integers(0, 30, size=12)] for _ in range(200)]
    sents += [["new", "york", "is", "big"]] * 5 + [["old", "york", "is", "small"]] * 3
    vocab = Vocab.build([w for s in sents for w in s])
    ids = [vocab.encode(s) for s in sents]
    return vocab, ids


def test_render_collocations_and_widget():
    import matplotlib
    matplotlib.use("Agg")
    from helpers.infra.widgets import Explorer, dropdown, slider
    from helpers.lessons.lesson06 import render_collocations

    vocab, ids = _explorer_corpus()
    bigrams = cooccurrence_matrix(ids, len(vocab), window=1, symmetric=False)
    fig, summary = render_collocations(4, "PMI", bigrams=bigrams, itos=vocab.itos)
    top3 = [item.rsplit(" (", 1)[0] for item in summary.split(": ", 1)[1].split(", ")[:3]]
    assert set(top3) == {"new york", "york is", "is big"}  # seen 5, 8 and 5 times, all above chance
    assert fig.axes[0].get_title() == "Top bigrams by PMI, pairs seen >= 4 times"
    _, none = render_collocations(1000, "NPMI", bigrams=bigrams, itos=vocab.itos)
    assert "no bigram" in none
    with pytest.raises(ValueError, match="measure"):
        render_collocations(1, "LLR", bigrams=bigrams, itos=vocab.itos)
    ex = Explorer(lambda min_count, measure: render_collocations(min_count, measure, bigrams=bigrams,
                                                                 itos=vocab.itos),
                  {"min_count": slider(1, 1, 10, 1, "min"), "measure": dropdown(["PMI", "NPMI"], "PMI", "m")})
    before, renders = ex.summary, ex.renders
    ex.controls["min_count"].value = 6
    assert ex.renders == renders + 1 and ex.summary != before and "error" not in ex.summary
    assert ex.summary.startswith("min count 6: york is")  # 'new york' (5 times) is now filtered out


def test_render_contexts_and_widget():
    import matplotlib
    matplotlib.use("Agg")
    from helpers.infra.widgets import Explorer, dropdown, slider
    from helpers.lessons.lesson06 import render_contexts

    vocab, ids = _explorer_corpus()
    fig, summary = render_contexts(2, "uniform", False, "new", sentences_ids=ids, vocab=vocab)
    assert "neighbours of 'new'" in summary and "window ±2" in summary
    top = dict(nearest_neighbours(ppmi(cooccurrence_matrix(ids, len(vocab), 2)), vocab, "new", k=3))
    assert "old" in top and top["old"] > 0.9  # 'new' and 'old' share the contexts 'york is'
    assert "old (1.00)" in summary
    ex = Explorer(lambda window, weighting: render_contexts(window, weighting, False, "york",
                                                            sentences_ids=ids, vocab=vocab),
                  {"window": slider(1, 1, 5, 1, "w"), "weighting": dropdown(["uniform", "harmonic"], "uniform", "wt")})
    before, renders = ex.summary, ex.renders
    ex.controls["window"].value = 3
    assert ex.renders == renders + 1 and ex.summary != before and "window ±3" in ex.summary
    ex.controls["weighting"].value = "harmonic"
    assert "harmonic" in ex.summary
    with pytest.raises(KeyError, match="zebra"):
        render_contexts(2, "uniform", False, "zebra", sentences_ids=ids, vocab=vocab)


def test_lesson06_checkers_accept_right_and_reject_wrong(capsys):
    from helpers.exercises.lesson06 import check_heaven_hell, check_sparse_ppmi

    def good(c, alpha):
        return ppmi(c, alpha=alpha)

    def no_smoothing(c, alpha):
        return ppmi(c, alpha=1.0)

    def natural_log(c, alpha):
        return ppmi(c, alpha=alpha, base=np.e)

    def dense(c, alpha):
        return ppmi(c, alpha=alpha).toarray()

    # the library's ppmi is forbidden to a student (issue 30): the checks alone judge these variants
    assert not check_sparse_ppmi(good) and "course's own" in capsys.readouterr().out
    assert check_sparse_ppmi.run_checks(good)
    assert not check_sparse_ppmi.run_checks(no_smoothing)
    assert "power alpha" in capsys.readouterr().out
    assert not check_sparse_ppmi.run_checks(natural_log)
    assert not check_sparse_ppmi.run_checks(dense)
    assert "scipy.sparse" in capsys.readouterr().out
    assert check_heaven_hell(lambda nxy, nx, ny, n: np.log2(nxy * n / (nx * ny)))
    assert not check_heaven_hell(lambda nxy, nx, ny, n: np.log(nxy * n / (nx * ny)))
