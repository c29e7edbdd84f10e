"""Tests of helpers.lib.metrics and helpers.lib.extrinsic, and of lesson 09's comparison table and
projection explorer, on small hand-made vector spaces (exact expected answers)."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from helpers.infra.widgets import Explorer, dropdown, slider
from helpers.lessons.lesson09 import (
    comparison_table,
    format_comparison,
    make_projection_render,
    project_2d,
    rank_changes,
)
from helpers.lib.extrinsic import extrinsic_classification
from helpers.lib.metrics import (
    AnalogyResult,
    analogy,
    analogy_accuracy,
    cosine,
    document_vectors,
    nearest_neighbours,
    similarity_correlation,
    word_similarity,
)
from helpers.lib.text import UnknownWordError, Vocab

WORDS = ["man", "woman", "king", "queen", "apple", "banana", "cherry"]
E = np.array([[1.0, 0.0, 0.1, 0.0], [1.0, 1.0, 0.1, 0.0], [0.1, 0.0, 1.0, 0.0], [0.1, 1.0, 1.0, 0.0],
              [0.05, 0.2, 0.0, 1.0], [0.0, 0.3, 0.1, 1.0], [0.1, 0.1, 0.05, 1.0]])
VOCAB = Vocab(WORDS, specials=())


def test_cosine_and_similarity():
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == 0.0
    assert cosine(np.array([1.0, 1.0]), np.array([3.0, 3.0])) == pytest.approx(1.0)
    assert cosine(np.zeros(2), np.ones(2)) == 0.0
    exp = E[0] @ E[1] / np.linalg.norm(E[0]) / np.linalg.norm(E[1])
    assert word_similarity(E, VOCAB, "man", "woman") == pytest.approx(exp)
    with pytest.raises(ValueError, match="same length"):
        cosine(np.ones(2), np.ones(3))


def test_unknown_words_are_named():
    with pytest.raises(UnknownWordError, match="'zebra'"):
        nearest_neighbours(E, VOCAB, "zebra")
    with pytest.raises(UnknownWordError, match="'zebra'"):
        analogy(E, VOCAB, "man", "zebra", "king")
    with pytest.raises(UnknownWordError, match="'qqq'"):
        word_similarity(E, WORDS, "qqq", "man")       # a plain word list works as a vocabulary
    with pytest.raises(ValueError, match="vocabulary size"):
        nearest_neighbours(E[:3], VOCAB, "man")


def test_nearest_neighbours_excludes_query_and_scale_invariant():
    nn = nearest_neighbours(E, VOCAB, "apple", k=2)
    assert [w for w, _ in nn] == ["cherry", "banana"]
    assert nn[0][1] > nn[1][1]
    E2 = E.copy()
    E2[WORDS.index("banana")] *= 100                  # cosine ignores length
    nn2 = nearest_neighbours(E2, VOCAB, "apple", k=2)
    assert [w for w, _ in nn2] == ["cherry", "banana"] and nn2[1][1] == pytest.approx(nn[1][1], rel=1e-5)
    vec_nn = nearest_neighbours(E, VOCAB, E[2] + E[3], k=2)
    assert {w for w, _ in vec_nn} == {"king", "queen"}


def test_analogy_add_and_mul_exclude_queries():
    assert analogy(E, VOCAB, "man", "woman", "king")[0][0] == "queen"
    assert analogy(E, VOCAB, "man", "woman", "king", method="mul")[0][0] == "queen"
    # make woman ~ man: b - a + c ~ c (king), which must be excluded
    E2 = E.copy()
    E2[1] = E2[0] + 1e-4
    top = [w for w, _ in analogy(E2, VOCAB, "man", "woman", "king", k=3)]
    assert not {"man", "woman", "king"} & set(top)
    with pytest.raises(ValueError, match="3CosAdd"):
        analogy(E, VOCAB, "man", "woman", "king", method="sum")


def test_three_cos_mul_formula():
    # 3CosMul of candidate d: (cos(d,b)+1)/2 * (cos(d,c)+1)/2 / ((cos(d,a)+1)/2 + 1e-3)
    res = dict(analogy(E, VOCAB, "man", "woman", "king", method="mul", k=4))
    n = E / np.linalg.norm(E, axis=1, keepdims=True)
    d, a, b, c = n[3], n[0], n[1], n[2]
    exp = ((d @ b + 1) / 2) * ((d @ c + 1) / 2) / ((d @ a + 1) / 2 + 1e-3)
    assert res["queen"] == pytest.approx(exp, rel=1e-5)


def test_analogy_accuracy_per_category_and_oov():
    qs = {"royal": [("man", "woman", "king", "queen"), ("man", "woman", "king", "apple"),
                    ("man", "zebra", "king", "queen")],
          "gram-fruit": [("apple", "banana", "apple", "cherry")],
          "empty": [("x", "y", "z", "w")]}
    r = analogy_accuracy(E, VOCAB, qs)
    assert r.per_category["royal"] == (1, 2, 1)
    assert r.per_category["empty"] == (0, 0, 1)
    assert r.category_accuracy("empty") is None
    assert r.answered == 3 and r.oov == 2
    assert r.accuracy == pytest.approx(r.correct / 3)
    assert r.subset_accuracy(syntactic=False) == pytest.approx(0.5)
    none = analogy_accuracy(E, VOCAB, {"c": [("x", "y", "z", "w")]})
    assert none.accuracy is None and "out of vocabulary" in str(none)
    assert isinstance(r, AnalogyResult)


def test_similarity_correlation_oov_and_all_oov():
    pairs = [("man", "woman", 8.0), ("king", "queen", 7.0), ("apple", "man", 1.0),
             ("apple", "banana", 9.0), ("zebra", "man", 3.0)]
    r = similarity_correlation(E, VOCAB, pairs, "toy")
    n = E / np.linalg.norm(E, axis=1, keepdims=True)
    s = [n[0] @ n[1], n[2] @ n[3], n[4] @ n[0], n[4] @ n[5]]
    assert r.rho == pytest.approx(spearmanr(s, [8, 7, 1, 9]).statistic)
    assert (r.n_pairs, r.n_oov, r.n_used) == (5, 1, 4) and r.oov_pairs == [("zebra", "man")]
    allo = similarity_correlation(E, VOCAB, [("x", "y", 1.0), ("z", "w", 2.0)], "none")
    assert allo.rho is None and "all 2 pairs are out of vocabulary" in str(allo)
    with pytest.raises(ValueError, match="empty"):
        similarity_correlation(E, VOCAB, [], "empty")


def _toy_task():
    rng = np.random.default_rng(0)
    docs = [list(rng.choice(["man", "woman", "king", "queen"], 6)) for _ in range(40)]
    docs += [list(rng.choice(["apple", "banana", "cherry"], 6)) for _ in range(40)]
    return docs, ["people"] * 40 + ["fruit"] * 40


def test_document_vectors_and_extrinsic():
    X, unk = document_vectors(E, VOCAB, [["man", "zebra"], ["zzz"]])
    assert unk == pytest.approx(2 / 3)
    assert np.allclose(X[0], E[0] / np.linalg.norm(E[0])) and np.all(X[1] == 0)
    docs, labels = _toy_task()
    for clf in ("logreg", "knn", "mlp"):
        res = extrinsic_classification(E, VOCAB, docs, labels, clf)
        assert res.accuracy == 1.0 and res.n_test == 24
    # random vectors cannot separate the topics as well
    rnd = np.random.default_rng(1).standard_normal(E.shape)
    rnd[:, :] = 1.0  # all words identical: chance level
    assert extrinsic_classification(rnd, VOCAB, docs, labels, "logreg").accuracy <= 0.6
    with pytest.raises(ValueError, match="unknown classifier"):
        extrinsic_classification(E, VOCAB, docs, labels, "svm")
    with pytest.raises(ValueError, match="labels"):
        extrinsic_classification(E, VOCAB, docs, labels[:-1])


def test_extrinsic_groups_leave_copies_of_training_documents_out_of_the_test():
    from sklearn.model_selection import train_test_split

    docs, labels = _toy_task()
    itr, ite = train_test_split(np.arange(len(labels)), test_size=0.3, random_state=0, stratify=labels)
    # documents 2k and 2k+1 form a group: every test document whose partner is in training is left out
    groups = [i // 2 for i in range(len(docs))]
    train_groups = {groups[i] for i in itr}
    expected = sum(groups[i] not in train_groups for i in ite)
    assert 0 < expected < len(ite)
    res = extrinsic_classification(E, VOCAB, docs, labels, "logreg", groups=groups)
    assert res.n_test == expected and res.n_train == len(itr)
    # every document its own group: the plain split
    alone = extrinsic_classification(E, VOCAB, docs, labels, "logreg", groups=list(range(len(docs))))
    assert alone.n_test == len(ite) == extrinsic_classification(E, VOCAB, docs, labels, "logreg").n_test
    with pytest.raises(ValueError, match="group ids"):
        extrinsic_classification(E, VOCAB, docs, labels, groups=groups[:-1])


def test_comparison_table_rows_and_ranks():
    docs, labels = _toy_task()
    qs = {"royal": [("man", "woman", "king", "queen")]}
    sims = {"ws353": [("man", "woman", 8.0), ("king", "queen", 7.0), ("apple", "man", 1.0)],
            "simlex": [("x", "y", 1.0)]}
    flat = np.ones_like(E)
    methods = {"good": (E, VOCAB, 1.5), "flat": (flat, VOCAB, 0.1)}
    rows = comparison_table(methods, task=(docs, labels), analogies=qs, similarity_sets=sims, progress=False)
    assert [r["method"] for r in rows] == ["good", "flat"]
    assert rows[0]["analogy_add"].accuracy == 1.0 and rows[0]["simlex"].rho is None
    text = format_comparison(rows)
    assert "all OOV" in text and "good" in text and "1.5" in text
    assert rank_changes(rows) == [("good", 1, 1), ("flat", 2, 2)]
    with pytest.raises(ValueError, match="training seconds"):
        comparison_table({"bad": (E, VOCAB)}, task=(docs, labels), analogies=qs, similarity_sets=sims)


def test_projection_and_explorer_callback():
    assert project_2d(E, "PCA").shape == (7, 2)
    assert project_2d(E, "t-SNE").shape == (7, 2)
    with pytest.raises(ValueError, match="PCA"):
        project_2d(E, "UMAP")
    groups = {"people": ["man", "woman", "king", "queen"], "fruit": ["apple", "banana"]}
    render = make_projection_render({"toy": (E, VOCAB)}, groups)
    fig, summary = render(0, "PCA", "toy")
    assert "6 words" in summary
    ex = Explorer(render, {"neighbours": slider(0, 0, 1, 1, "n"), "method": dropdown(["PCA", "t-SNE"], "PCA", "m"),
                           "embedding": dropdown(["toy"], "toy", "e")})
    n0, s0 = ex.renders, ex.summary
    ex.controls["neighbours"].value = 1
    assert ex.renders == n0 + 1 and ex.summary != s0 and "7 words" in ex.summary


def test_one_nearest_neighbours_for_dense_and_sparse_vectors():
    import scipy.sparse as sp

    from helpers.lib.metrics import normalize_rows
    dense = nearest_neighbours(E, VOCAB, "king", k=3)
    sparse = nearest_neighbours(sp.csr_matrix(E), VOCAB, "king", k=3)
    assert [w for w, _ in dense] == [w for w, _ in sparse] == ["queen", "man", "woman"]
    assert np.allclose([s for _, s in dense], [s for _, s in sparse])
    # a vector query gives the same answer as the word, minus the word itself being excluded
    by_vector = nearest_neighbours(E, VOCAB, E[VOCAB.index("king")], k=4)
    assert by_vector[0][0] == "king" and [w for w, _ in by_vector[1:]] == ["queen", "man", "woman"]
    # float32 stays float32 (the trained embeddings), everything else becomes float64; zero rows stay zero
    assert normalize_rows(E.astype(np.float32)).dtype == np.float32
    assert normalize_rows(np.eye(2, dtype=int)).dtype == np.float64
    assert np.all(normalize_rows(np.zeros((2, 3))) == 0)
    with pytest.raises(ValueError, match="the query vector is an all-zero vector"):
        nearest_neighbours(E, VOCAB, np.zeros(E.shape[1]))
    with pytest.raises(ValueError, match=r"must be \(V, D\) with V = 7"):
        nearest_neighbours(E[:3], VOCAB, "king")
