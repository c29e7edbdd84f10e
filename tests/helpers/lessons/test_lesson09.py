"""The helpers of lesson 09 (helpers.lessons.lesson09): neighbour overlap, antonyms, the
semantic mask, the topic results and the projection explorer."""
import numpy as np
import pytest

from helpers.course.bbc_topics import bbc_groups, bbc_topic_task
from helpers.lessons import lesson09 as L
from helpers.lib.extrinsic import held_out_split, softmax_regression_loss_grad
from helpers.lib.metrics import analogy_hits
from helpers.lib.stats import bootstrap_mean
from helpers.lib.text import Vocab


def test_cosine_and_euclidean_neighbours_agree_only_for_equal_lengths():
    rng = np.random.default_rng(0)
    counts = np.sort(rng.integers(5, 5000, size=200))[::-1]
    vocab = Vocab([f"w{i}" for i in range(200)], counts, ())
    W = rng.normal(size=(200, 8)) * np.log(counts)[:, None]
    unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    bands = ((5, 1000), (1000, None))
    rows = L.neighbour_overlap(unit, vocab, bands, k=5)
    assert all(r["overlap"] == pytest.approx(1.0) for r in rows)
    rows = L.neighbour_overlap(W, vocab, bands, k=5, per_band=20)
    assert all(0 <= r["overlap"] < 1 for r in rows) and rows[0]["n_words"] == 20


def test_antonyms_are_found_in_either_order():
    vocab = Vocab(["hot", "cold", "warm", "tea"], [10, 10, 10, 10], ())
    W = np.array([[1.0, 0.1], [0.9, 0.2], [0.5, 0.5], [0.0, 1.0]])
    pairs = [("cold", "hot", 1.0), ("hot", "warm", 8.0), ("tea", "warm", 3.0), ("ice", "fire", 1.0)]
    rows = L.antonym_table(W, vocab, {"toy": pairs}, antonyms=[("hot", "cold")])
    assert len(rows) == 1 and rows[0]["pair"] == ("cold", "hot")
    assert rows[0]["human_pct"] == 0 and rows[0]["cosine_pct"] == pytest.approx(100 * 2 / 3)


def test_the_semantic_mask_follows_analogy_hits_order_and_the_best_is_compared():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(40)]
    qs = {"capital-world": [tuple(rng.choice(words[:30], 4)) for _ in range(10)],
          "gram8-plural": [tuple(rng.choice(words, 4)) for _ in range(10)]}
    mask = L.semantic_mask(qs, words[:30])
    assert mask.shape == analogy_hits(rng.normal(size=(30, 5)), words[:30], qs).shape
    assert mask.sum() == 10 and not mask[10:].any()
    base = rng.random(400) < 0.5
    hits = {"good": base | (rng.random(400) < 0.3), "same": base,
            "bad": base & (rng.random(400) < 0.5)}
    best, diffs = L.against_best({k: h.mean() for k, h in hits.items()},
                                 lambda m, b: bootstrap_mean(hits[m].astype(float) - hits[b]))
    assert best == "good" and set(diffs) == {"same", "bad"} and diffs["bad"].high < 0


def test_the_topic_results_of_each_split_and_article():
    """Random vectors: per-article shares average the splits testing each article."""
    docs, labels = bbc_topic_task()
    splits = [held_out_split(labels, s, bbc_groups()) for s in (0, 1)]
    words = sorted({w for d in docs for w in d})
    rng = np.random.default_rng(0)
    E = rng.normal(size=(len(words), 8))
    results = L.topic_results(E, words, softmax_regression_loss_grad, splits)
    tested = np.unique(np.concatenate([t for _, t in splits]))
    for accuracy, shares in results.values():
        assert len(accuracy) == 2 and shares.shape == (len(tested),)
        counted = sum(len(t) * a for (_, t), a in zip(splits, accuracy))
        seen = sum(np.isin(tested, t) for _, t in splits)
        assert np.isclose((shares * seen).sum(), counted)
        assert 0.25 < np.mean(accuracy) <= 1         # above chance (1 in 5): the words differ


def test_the_projection_explorer():
    E = np.array([[1.0, 0.0, 0.1, 0.0], [1.0, 1.0, 0.1, 0.0], [0.1, 0.0, 1.0, 0.0],
                  [0.1, 1.0, 1.0, 0.0], [0.05, 0.2, 0.0, 1.0], [0.0, 0.3, 0.1, 1.0],
                  [0.1, 0.1, 0.05, 1.0]])
    words = ["man", "woman", "king", "queen", "apple", "banana", "cherry"]
    render = L.make_projection_render({"toy": (E, words)},
                                      {"people": words[:4], "fruit": ["apple", "banana"]})
    assert "6 words" in render(0, "PCA", "toy")[1] and L.project_2d(E, "t-SNE").shape == (7, 2)
    assert "7 words" in render(neighbours=1, method="PCA", embedding="toy")[1]
