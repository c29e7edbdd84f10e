"""helpers.lib.metrics: neighbours and analogies against brute force, gensim's restricted analogy
test, Spearman with out-of-vocabulary pairs, document vectors, WEAT, and bad input."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import spearmanr

from helpers.lib import metrics as ME
from helpers.lib.text import UnknownWordError, Vocab
from tests.props import budget, closeness, float_arrays, inject, non_finite, raises_naming

WORDS = ["a", "b", "c", "d", "e"]
close = closeness(1e-9)


@st.composite
def embeddings(draw, V=5, D=3):
    E = draw(float_arrays((V, D)))
    E[np.all(E == 0, axis=1), 0] = 1.0
    return E


@budget(2)
@given(st.data())
def test_vocabularies_cosines_and_neighbours_are_brute_forces(data):
    E = data.draw(embeddings())
    voc = data.draw(st.sampled_from([WORDS, {w: i for i, w in enumerate(WORDS)},
                                     Vocab(WORDS, specials=())]))
    stoi, itos = ME.vocab_maps(voc)
    assert [itos[stoi[w]] for w in WORDS] == WORDS and ME.word_index(voc, "c") == 2
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    close(ME.normalize_rows(E), unit)
    close(ME.normalize_rows(sp.csr_matrix(E)).toarray(), unit)
    assert ME.normalize_rows(E.astype(np.float32)).dtype == np.float32
    assert np.all(ME.normalize_rows(np.zeros((2, 3))) == 0)
    k = data.draw(st.integers(0, 6))
    got = ME.nearest_neighbours(E, voc, "a", k=k)
    sims = unit[1:] @ unit[0]
    order = sorted(range(4), key=lambda j: (-sims[j], j))[:k]
    words = [w for w, _ in got]                      # tied cosines may come in either order
    assert len(set(words)) == len(words) == len(order) and "a" not in words
    close([s for _, s in got], sims[order])
    close([sims[WORDS.index(w) - 1] for w in words], [s for _, s in got])
    close([s for _, s in ME.nearest_neighbours(sp.csr_matrix(E), voc, "a", k=k)],
          [s for _, s in got])
    assert ME.nearest_neighbours(E, voc, E[0], k=1)[0][0] == "a"     # a vector keeps its word
    close(list(ME.pair_cosines(E, voc, [("a", "b", 1.0), ("a", "zz", 2.0)]).values()),
          [unit[0] @ unit[1]])
    raises_naming(lambda: ME.nearest_neighbours(E, voc, "a", k=-1), "k", ValueError)
    raises_naming(lambda: ME.nearest_neighbours(E, voc, "a", k=1.5), "k", TypeError)
    raises_naming(lambda: ME.nearest_neighbours(E, voc, "zz"), "'zz'", UnknownWordError)
    raises_naming(lambda: ME.nearest_neighbours(E, voc, np.zeros(3)), "query", ValueError)
    raises_naming(lambda: ME.nearest_neighbours(E, voc, np.array([np.nan, 0, 0])), "query")
    raises_naming(lambda: ME.nearest_neighbours(E[:3], voc, "a"), "vectors", ValueError)
    bad = inject(E, data.draw(non_finite), 3)
    raises_naming(lambda: ME.nearest_neighbours(bad, voc, "a"), "vectors", ValueError)
    raises_naming(lambda: ME.nearest_neighbours(sp.csr_matrix(bad), voc, "a"), "vectors")


@budget(2)
@given(st.data())
def test_analogies_are_brute_forces(data):
    E = data.draw(embeddings())
    method = data.draw(st.sampled_from(["add", "mul"]))
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    if method == "add":
        scores = unit @ (unit[1] - unit[0] + unit[2])
    else:
        shifted = [(unit @ unit[x] + 1) / 2 for x in range(3)]
        scores = shifted[1] * shifted[2] / (shifted[0] + 1e-3)
    scores[:3] = -np.inf
    close(ME.analogy_scores(E, [0], [1], [2], method)[0], scores)
    best = int(np.argmax(scores))
    (word, score), = ME.analogy(E, WORDS, "a", "b", "c", method=method)
    assert word == WORDS[best] and np.isclose(score, scores[best])
    d = data.draw(st.sampled_from(WORDS[3:]))
    assert ME.analogy_rank(E, WORDS, "a", "b", "c", d, method) == \
        1 + int(np.sum(scores > scores[WORDS.index(d)]))
    qs = {"gram-x": [("a", "b", "c", d), ("a", "b", "c", "zz")],
          "capital": [("a", "b", "c", WORDS[best])]}
    res = ME.analogy_accuracy(E, WORDS, qs, method=method)
    assert (res.oov, res.answered, res.correct) == (1, 2, int(d == WORDS[best]) + 1)
    assert res.subset_accuracy(syntactic=False) == 1.0
    expected = [float(d == WORDS[best]), 1.0]
    close(ME.analogy_hits(E, WORDS, qs, method=method, batch=1), expected)
    scorer = lambda V, a, b, c: ME.analogy_scores(V, a, b, c, method)       # noqa: E731
    close(ME.analogy_hits(E, WORDS, qs, method=scorer), expected)
    raises_naming(lambda: ME.analogy(E, WORDS, "a", "b", "c", method="sub"), "method", ValueError)
    raises_naming(lambda: ME.analogy(E, WORDS, "a", "b", "c", k=-2), "k", ValueError)
    raises_naming(lambda: ME.analogy(inject(E, np.nan, 4), WORDS, "a", "c", "d"), "'b'")


def test_the_restricted_analogy_test_is_gensim_s_restrict_vocab(tmp_path):
    """The lesson's frequency restriction (the first N rows) answers as gensim's
    evaluate_word_analogies(restrict_vocab=N) does, category by category."""
    from gensim.models import KeyedVectors
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(300)]
    E = rng.normal(size=(300, 12)).astype(np.float32)
    qs = {"capital-common-countries": [], "gram1-adjective-to-adverb": []}
    for k in range(80):                   # planted offsets: d = c + (b - a) + noise
        a, b, c, d = rng.choice(300, 4, replace=False)
        E[d] = E[c] + E[b] - E[a] + rng.normal(scale=0.8, size=12)
        qs[list(qs)[k % 2]].append(tuple(words[i] for i in (a, b, c, d)))
    kv = KeyedVectors(12)
    kv.add_vectors(words, E)
    path = tmp_path / "questions-words.txt"
    path.write_text("".join(f": {cat}\n" + "".join(" ".join(q) + "\n" for q in q_list)
                            for cat, q_list in qs.items()), encoding="utf-8")
    for top in (120, 300):
        _, sections = kv.evaluate_word_analogies(str(path), restrict_vocab=top,
                                                 case_insensitive=False)
        theirs = {s["section"]: (len(s["correct"]), len(s["correct"]) + len(s["incorrect"]))
                  for s in sections if s["section"] != "Total accuracy"}
        ours = ME.analogy_accuracy(E[:top], words[:top], qs).per_category
        assert theirs == {cat: ours[cat][:2] for cat in qs}


def test_similarity_counts_the_pairs_it_cannot_score():
    E = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.2]])
    words = ["a", "b", "c", "d"]
    pairs = [("a", "b", 9.0), ("a", "c", 5.0), ("b", "c", 7.0), ("a", "z", 3.0), ("c", "d", 1.0)]
    r = ME.similarity_correlation(E, words, pairs, "toy")
    cos = ME.pair_cosines(E, words, pairs)
    assert r.rho == pytest.approx(spearmanr(list(cos.values()), [9.0, 5.0, 7.0, 1.0]).statistic)
    assert (r.n_pairs, r.n_oov, r.n_used) == (5, 1, 4)
    assert ME.similarity_correlation(E, words, [("x", "y", 1.0)]).rho is None
    with pytest.raises(ValueError, match="empty"):
        ME.similarity_correlation(E, words, [])
    assert ME.similarity_interval(E, words, pairs, n_boot=200).estimate == pytest.approx(r.rho)
    other = E + np.array([[0.0, 0.5], [0.3, 0.0], [0.0, 0.0], [0.5, 0.5]])
    diff = ME.paired_similarity_difference(E, other, words, pairs, n_boot=200)
    rho_other = ME.similarity_correlation(other, words, pairs).rho
    assert diff.estimate == pytest.approx(r.rho - rho_other)
    with pytest.raises(ValueError, match="only 1 of 2 pairs"):
        ME.similarity_interval(E, words, [("a", "b", 1.0), ("a", "z", 2.0)])


def test_document_vectors_average_unit_vectors():
    E = np.array([[3.0, 4.0], [0.0, 2.0]])
    X, unknown = ME.document_vectors(E, ["a", "b"], [["a", "b", "zz"], ["zz"]])
    close(X[0], [0.3, 0.9], 1e-6)
    assert np.all(X[1] == 0) and unknown == pytest.approx(2 / 4)
    raises_naming(lambda: ME.document_vectors(E, ["a", "b"], ["a b"]), "documents", TypeError)


@budget()
@given(st.data())
def test_weat_is_its_formula(data):
    E = data.draw(embeddings(V=8, D=3))
    words = [f"w{i}" for i in range(8)]
    X, Y, A, B = words[:2], words[2:4], words[4:6], words[6:]
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    s = (unit[:4] @ unit[4:6].T).mean(axis=1) - (unit[:4] @ unit[6:].T).mean(axis=1)
    if np.std(s) < 1e-12:                   # every target word equally associated: d is 0/0
        raises_naming(lambda: ME.weat(E, words, X, Y, A, B), "WEAT", ValueError)
        return
    res = ME.weat(E, words, X, Y, A, B)
    close(res.statistic, s[:2].sum() - s[2:].sum())
    close(res.effect_size, (s[:2].mean() - s[2:].mean()) / np.std(s, ddof=1), 1e-7)
    assert res.exact and res.n_partitions == math.comb(4, 2) and 0 < res.p_value <= 1
    raises_naming(lambda: ME.weat(E, words, X[:1], Y, A, B), "X", ValueError)


def test_weat_p_values_exact_and_sampled():
    words = ["x1", "x2", "x3", "y1", "y2", "y3", "a1", "a2", "b1", "b2"]
    E = np.array([[1, 0.1], [1, 0.2], [1, 0.3], [0.1, 1], [0.2, 1], [0.3, 1], [1, 0], [0.9, 0.1],
                  [0, 1], [0.1, 0.9]])
    r = ME.weat(E, words, words[:3], words[3:6], words[6:8], words[8:] + ["nope"])
    assert r.exact and r.n_partitions == 20 and r.p_value == pytest.approx(1 / 20)
    assert r.missing == ["nope"]
    sampled = ME.weat(E, words, words[:3], words[3:6], words[6:8], words[8:], max_exact=10,
                      n_perm=20_000)
    assert not sampled.exact and sampled.n_partitions == 20_001
    assert sampled.p_value == pytest.approx(r.p_value, abs=0.01)
