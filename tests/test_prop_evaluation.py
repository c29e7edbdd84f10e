"""Properties of helpers.lib.metrics and extrinsic: scikit-learn's,
SciPy's and brute force's results on random small inputs, nan refused, and errors naming the
argument."""
import math

import numpy as np
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import spearmanr

from helpers.lib import extrinsic as EX
from helpers.lib import metrics as ME
from helpers.lib.text import UnknownWordError, Vocab
from tests.props import (
    budget,
    closeness,
    covers,
    float_arrays,
    inject,
    non_finite,
    raises_naming,
)

WORDS = ["a", "b", "c", "d", "e"]
DOCS = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=2, max_size=6)


close = closeness(1e-9)


def vocab():
    return Vocab(["<pad>", "<unk>"] + WORDS, specials=("<pad>", "<unk>"))


# ---------------------------------------------------------------- metrics
@st.composite
def embeddings(draw, V=5, D=3):
    E = draw(float_arrays((V, D)))
    E[np.all(E == 0, axis=1), 0] = 1.0
    return E


@covers("metrics.vocab_maps", "metrics.word_index", "metrics.normalize_rows", "metrics.cosine",
        "metrics.word_similarity", "metrics.nearest_neighbours")
@budget(2)
@given(st.data())
def test_cosines_and_neighbours_are_brute_forces(data):
    E = data.draw(embeddings())
    voc = data.draw(st.sampled_from([WORDS, {w: i for i, w in enumerate(WORDS)}, Vocab(WORDS, specials=())]))
    stoi, itos = ME.vocab_maps(voc)
    assert [itos[stoi[w]] for w in WORDS] == WORDS and ME.word_index(voc, "c") == 2
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    close(ME.normalize_rows(E), unit)
    close(ME.normalize_rows(sp.csr_matrix(E)).toarray(), unit)
    close(ME.cosine(E[0], E[1]), unit[0] @ unit[1])
    close(ME.word_similarity(E, voc, "a", "b"), unit[0] @ unit[1])
    k = data.draw(st.integers(0, 6))
    got = ME.nearest_neighbours(E, voc, "a", k=k)
    sims = unit[1:] @ unit[0]
    order = sorted(range(4), key=lambda j: (-sims[j], j))[:k]
    assert [w for w, _ in got] == [WORDS[j + 1] for j in order]
    close([s for _, s in got], sims[order])
    assert [w for w, _ in ME.nearest_neighbours(sp.csr_matrix(E), voc, "a", k=k)] == [w for w, _ in got]
    raises_naming(lambda: ME.nearest_neighbours(E, voc, "a", k=-1), "k", ValueError)
    raises_naming(lambda: ME.nearest_neighbours(E, voc, "zz"), "'zz'", UnknownWordError)
    raises_naming(lambda: ME.nearest_neighbours(inject(E, data.draw(non_finite), 3), voc, "a"), "vectors", ValueError)
    raises_naming(lambda: ME.cosine(E[0], E[1, :2]), "cosine", ValueError)


@covers("metrics.analogy", "metrics.analogy_rank", "metrics.analogy_accuracy", "metrics.AnalogyResult",
        "metrics.analogy_hits")
@budget(2)
@given(st.data())
def test_analogies_are_brute_forces(data):
    E = data.draw(embeddings())
    method = data.draw(st.sampled_from(["add", "mul"]))
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    a, b, c = 0, 1, 2
    if method == "add":
        scores = unit @ (unit[b] - unit[a] + unit[c])
    else:
        cos = lambda x: (unit @ unit[x] + 1) / 2                           # noqa: E731
        scores = cos(b) * cos(c) / (cos(a) + 1e-3)
    scores[[a, b, c]] = -np.inf
    best = int(np.argmax(scores))
    (word, score), = ME.analogy(E, WORDS, "a", "b", "c", method=method)
    assert word == WORDS[best] and np.isclose(score, scores[best])
    d = data.draw(st.sampled_from(WORDS[3:]))
    assert ME.analogy_rank(E, WORDS, "a", "b", "c", d, method) == 1 + int(np.sum(scores > scores[WORDS.index(d)]))
    qs = {"gram-x": [("a", "b", "c", d), ("a", "b", "c", "zz")], "capital": [("a", "b", "c", WORDS[best])]}
    res = ME.analogy_accuracy(E, WORDS, qs, method=method)
    assert res.oov == 1 and res.answered == 2 and res.correct == int(d == WORDS[best]) + 1
    close(ME.analogy_hits(E, WORDS, qs, method=method), [float(d == WORDS[best]), 1.0])
    raises_naming(lambda: ME.analogy(E, WORDS, "a", "b", "c", method="sub"), "method", ValueError)
    raises_naming(lambda: ME.analogy(E, WORDS, "a", "b", "c", k=-2), "k", ValueError)


@covers("metrics.similarity_correlation", "metrics.SimilarityResult", "metrics.similarity_interval",
        "metrics.paired_similarity_difference", "bootstrap.bootstrap_interval", "bootstrap.Interval",
        "metrics.document_vectors")
@budget(2)
@given(st.data())
def test_correlations_intervals_and_document_vectors(data):
    E = data.draw(embeddings())
    pairs = [(WORDS[i], WORDS[j], float(data.draw(st.integers(0, 10)))) for i in range(4) for j in range(i + 1, 5)]
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    sims = [unit[WORDS.index(a)] @ unit[WORDS.index(b)] for a, b, _ in pairs]
    res = ME.similarity_correlation(E, WORDS, pairs + [("a", "zz", 1.0)])
    gold = [s for _, _, s in pairs]
    if np.ptp(gold) > 0 and np.ptp(sims) > 0:
        close(res.rho, spearmanr(sims, gold).statistic)
        iv = ME.similarity_interval(E, WORDS, pairs, n_boot=30)
        assert iv.low <= iv.high and np.isclose(iv.estimate, res.rho)
        diff = ME.paired_similarity_difference(E, E, WORDS, pairs, n_boot=20)
        assert diff.estimate == 0
    assert res.n_oov == 1 and res.n_used == len(pairs)
    x = data.draw(float_arrays((8,)))
    iv = ME.bootstrap_interval(np.mean, x, n_boot=50, seed=1)
    assert iv.low <= iv.estimate + 1e-12 or iv.low <= iv.high
    assert iv.overlaps(iv) and np.isclose(iv.estimate, x.mean())
    raises_naming(lambda: ME.bootstrap_interval(np.mean, x, level=1.5), "level", ValueError)
    raises_naming(lambda: ME.bootstrap_interval(np.mean, x[:1]), "bootstrap", ValueError)
    docs = [["a", "b", "zz"], ["zz"]]
    X, unk = ME.document_vectors(E, WORDS, docs)
    close(X[0], unit[:2].mean(0), 1e-6)
    assert np.all(X[1] == 0) and np.isclose(unk, 2 / 4)
    raises_naming(lambda: ME.document_vectors(E, WORDS, ["a b"]), "documents", TypeError)


@covers("metrics.weat", "metrics.WeatResult")
@budget()
@given(st.data())
def test_weat_is_its_formula_and_its_exact_p_value_counts_partitions(data):
    E = data.draw(embeddings(V=8, D=3))
    words = [f"w{i}" for i in range(8)]
    X, Y, A_, B_ = words[:2], words[2:4], words[4:6], words[6:]
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    s = lambda w: (unit[words.index(w)] @ unit[4:6].T).mean() - (unit[words.index(w)] @ unit[6:].T).mean()  # noqa: E731
    sx, sy = [s(w) for w in X], [s(w) for w in Y]
    if np.std(sx + sy) < 1e-12:                   # every target word equally associated: d is 0/0
        raises_naming(lambda: ME.weat(E, words, X, Y, A_, B_), "WEAT", ValueError)
        return
    res = ME.weat(E, words, X, Y, A_, B_)
    close(res.statistic, sum(sx) - sum(sy))
    close(res.effect_size, (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1), 1e-7)
    assert res.exact and res.n_partitions == math.comb(4, 2) and 0 < res.p_value <= 1
    raises_naming(lambda: ME.weat(E, words, X[:1], Y, A_, B_), "X", ValueError)


# ---------------------------------------------------------------- downstream classification
@covers("extrinsic.make_classifier", "extrinsic.extrinsic_classification", "extrinsic.ClassificationResult")
@budget(0.5)
@given(st.data())
def test_extrinsic_classification_scores_held_out_documents(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 3)))
    E = np.vstack([np.eye(3)[[0, 0, 1, 1, 2]] + 0.01 * rng.standard_normal((5, 3))])
    docs = [[WORDS[i % 2]] * 3 for i in range(20)] + [[WORDS[2 + i % 2]] * 3 for i in range(20)]
    labels = [0] * 20 + [1] * 20
    name = data.draw(st.sampled_from(["logreg", "knn"]))
    res = EX.extrinsic_classification(E, WORDS, docs, labels, classifier=name)
    assert res.accuracy == 1.0 and res.n_train + res.n_test == 40 and res.unknown_token_share == 0
    raises_naming(lambda: EX.make_classifier("svm"), "classifier", ValueError)
    raises_naming(lambda: EX.extrinsic_classification(E, WORDS, docs, labels[:-1]), "labels", ValueError)
