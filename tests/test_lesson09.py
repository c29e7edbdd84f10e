"""Lesson 09's measurements: WEAT, neighbour overlap, antonyms, the comparison records, and the one rule that
decides every comparison (each method against the best on the same items, by a paired difference)."""
import math

import numpy as np
import pytest

from helpers.lessons.lesson09 import (
    antonym_table,
    comparison_records,
    differences_to_best,
    extrinsic_interval,
    format_extrinsic,
    format_intrinsic,
    gensim_restricted_accuracy,
    hits_difference,
    neighbour_overlap,
    semantic_mask,
    similarity_difference,
    verdict,
)
from helpers.lib.metrics import (
    Interval,
    analogy_accuracy,
    analogy_hits,
    paired_similarity_difference,
    weat,
)
from helpers.lib.text import Vocab


def _space():
    # X words point towards A, Y words towards B (2-D), plus noise words
    words = ["x1", "x2", "x3", "y1", "y2", "y3", "a1", "a2", "b1", "b2"]
    E = np.array([[1, 0.1], [1, 0.2], [1, 0.3], [0.1, 1], [0.2, 1], [0.3, 1], [1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]])
    return E, words


def test_weat_effect_size_and_exact_p_value():
    E, words = _space()
    r = weat(E, words, ["x1", "x2", "x3"], ["y1", "y2", "y3"], ["a1", "a2"], ["b1", "b2"])
    assert r.exact and r.n_partitions == math.comb(6, 3) == 20
    assert r.effect_size > 1.5
    assert r.p_value == pytest.approx(1 / 20)        # only the observed split scores this high
    swapped = weat(E, words, ["y1", "y2", "y3"], ["x1", "x2", "x3"], ["a1", "a2"], ["b1", "b2"])
    assert swapped.effect_size == pytest.approx(-r.effect_size) and swapped.p_value == pytest.approx(1.0)


def test_weat_sampled_matches_exact_and_reports_missing():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    E = rng.normal(size=(30, 5))
    X, Y, A, B = words[:6], words[6:12], words[12:16], words[16:20]
    exact = weat(E, words, X, Y, A, B)
    sampled = weat(E, words, X, Y, A, B, max_exact=10, n_perm=20_000, seed=1)
    assert not sampled.exact and sampled.n_partitions == 20_001
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.02)
    r = weat(E, words, X + ["nope"], Y, A, B)
    assert r.missing == ["nope"] and r.effect_size == pytest.approx(exact.effect_size)
    with pytest.raises(ValueError, match="set A has 1 word"):
        weat(E, words, X, Y, ["w12", "zz"], B)


def _vocab(n=200, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    counts = np.sort(rng.integers(5, 5000, size=n))[::-1]
    return Vocab(words, counts, ()), rng.normal(size=(n, 8)) * np.log(counts)[:, None]


def test_neighbour_overlap_is_total_for_unit_vectors():
    vocab, W = _vocab()
    unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    rows = neighbour_overlap(unit, vocab, bands=((5, 1000), (1000, None)), k=5, per_band=20)
    assert all(r["overlap"] == pytest.approx(1.0) for r in rows)     # same length: the same neighbours
    rows = neighbour_overlap(W, vocab, bands=((5, 1000), (1000, None)), k=5, per_band=20)
    assert all(0 <= r["overlap"] < 1 for r in rows) and rows[0]["n_words"] == 20


def test_antonym_table_finds_pairs_in_either_order():
    vocab = Vocab(["hot", "cold", "warm", "tea"], [10, 10, 10, 10], ())
    W = np.array([[1.0, 0.1], [0.9, 0.2], [0.5, 0.5], [0.0, 1.0]])
    pairs = [("cold", "hot", 1.0), ("hot", "warm", 8.0), ("tea", "warm", 3.0), ("ice", "fire", 1.0)]
    rows = antonym_table(W, vocab, {"toy": pairs}, antonyms=[("hot", "cold")])
    assert len(rows) == 1 and rows[0]["pair"] == ("cold", "hot")
    assert rows[0]["human_pct"] == 0 and rows[0]["cosine_pct"] == pytest.approx(100 * 2 / 3)


def test_comparison_records():
    rec = lambda ws, acc: {"report_intervals": {"wordsim": ws}, "bbc_topic_accuracy": {"logreg": acc}}   # noqa: E731
    methods = {"a": (None, None, 10.0), "b": (None, None, 20.0)}
    shipped = {"a": rec([0.5, 0.4, 0.6], [0.9, 0.91, 0.92]), "b": rec([0.3, 0.25, 0.35], [0.95, 0.95, 0.96])}
    counts = {"c": {**rec([0.45, 0.35, 0.55], [0.8, 0.8, 0.8]), "build_seconds": 1.5}}
    recs = comparison_records(methods, shipped, counts)
    assert list(recs) == ["a", "b", "c"] and recs["c"]["seconds"] == 1.5 and recs["a"]["kind"] == "shipped"
    assert extrinsic_interval(recs["a"], "logreg") == pytest.approx((0.91, 0.9, 0.92))
    with pytest.raises(KeyError, match="no records shipped"):
        comparison_records({"z": (None, None, 1.0)}, shipped, counts)


def test_each_method_is_compared_with_the_best_on_the_same_items():
    rng = np.random.default_rng(0)
    base = rng.random(400) < 0.5
    hits = {"good": base | (rng.random(400) < 0.3), "same": base.copy(), "bad": base & (rng.random(400) < 0.5)}
    hits["same"][:3] = ~hits["same"][:3]
    best, diffs = differences_to_best({k: h.mean() for k, h in hits.items()}, hits_difference(hits))
    assert best == "good" and set(diffs) == {"same", "bad"}
    assert verdict(diffs["bad"]) == "behind" and diffs["bad"].estimate == pytest.approx(hits["bad"].mean() - hits["good"].mean())
    # a small difference on shared items is resolved by pairing, where two separate ranges would overlap
    close = {"x": base | (rng.random(400) < 0.04), "y": base}
    best, d = differences_to_best({k: h.mean() for k, h in close.items()}, hits_difference(close))
    assert best == "x" and verdict(d["y"]) == "behind"
    assert verdict(Interval(-0.01, -0.03, 0.01)) == "too close to call" and verdict(Interval(0.02, 0.01, 0.03)) == "ahead"
    with pytest.raises(ValueError, match="no methods"):
        differences_to_best({}, hits_difference({}))


def test_similarity_difference_is_the_library_s_paired_bootstrap_vectorised():
    vocab, W = _vocab(60)
    rng = np.random.default_rng(3)
    pairs = [(f"w{i}", f"w{j}", float(rng.uniform(0, 10))) for i, j in rng.integers(0, 60, (80, 2)) if i != j]
    pairs.append(("w1", "nope", 5.0))
    V = {"a": W, "b": W + rng.normal(scale=3.0, size=W.shape)}
    mine = similarity_difference(V, vocab, pairs, n_boot=1000, seed=0)("b", "a")
    library = paired_similarity_difference(V["b"], V["a"], vocab, pairs, n_boot=1000, seed=0)
    assert (mine.estimate, mine.low, mine.high) == pytest.approx((library.estimate, library.low, library.high), abs=1e-12)
    assert mine.n_items == library.n_items == len(pairs) - 1


def _analogy_space(n=300, seed=1):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    E = rng.normal(size=(n, 12))
    qs = {"capital-common-countries": [], "gram1-adjective-to-adverb": []}
    for k in range(80):                   # planted offsets: d = c + (b - a) + noise
        a, b, c, d = rng.choice(n, 4, replace=False)
        E[d] = E[c] + E[b] - E[a] + rng.normal(scale=0.8, size=12)
        qs["capital-common-countries" if k % 2 else "gram1-adjective-to-adverb"].append(tuple(words[i] for i in (a, b, c, d)))
    return E.astype(np.float32), words, qs


def test_the_restricted_analogy_test_is_gensim_s_restrict_vocab():
    E, words, qs = _analogy_space()
    for top in (120, 300):
        theirs = gensim_restricted_accuracy(E, words, qs, restrict_vocab=top)
        ours = analogy_accuracy(E[:top], words[:top], qs).per_category
        assert theirs == {c: (ours[c][0], ours[c][1]) for c in qs}
    assert sum(n for _, n in gensim_restricted_accuracy(E, words, qs, 120).values()) < sum(len(q) for q in qs.values())


def test_semantic_mask_follows_the_scoring_order():
    E, words, qs = _analogy_space()
    mask = semantic_mask(qs, words[:150])
    hits = analogy_hits(E[:150], words[:150], qs)
    assert mask.shape == hits.shape and 0 < mask.sum() < len(mask)
    known = [q for cat, q_list in qs.items() for q in q_list if all(w in set(words[:150]) for w in q)]
    assert list(mask) == [q in qs["capital-common-countries"] for q in known]


def test_the_tables_fit_an_html_export():
    iv = {"wordsim": [0.585, 0.463, 0.685], "simlex": [0.218, 0.119, 0.309], "analogy": [0.233, 0.218, 0.247]}
    recs = {"PyTorch skip-gram": {"report_intervals": iv}, "LSA": {"report_intervals": iv}}
    text = format_intrinsic(recs, {k: Interval(0.265, 0.240, 0.294) for k in recs}, 5000)
    assert max(map(len, text.splitlines())) <= 100 and "26.5 [24.0, 29.4]" in text
    text = format_extrinsic({k: {"logreg": [0.97, 0.98, 0.96], "knn": [0.9, 0.91, 0.92]} for k in recs},
                            {k: 653.0 for k in recs}, {k: 100 for k in recs})
    assert max(map(len, text.splitlines())) <= 100 and "97.0 (96.0–98.0)" in text


# ---------------------------------------------------------------- the scaling grid's figures
def test_the_scaling_explorer_and_the_grid_and_control_figure():
    from helpers.course.models import load_model
    from helpers.lessons.lesson09 import plot_grid_and_control, scaling_render

    sg = load_model("wv_scaling_grid")
    for across in ("corpus size", "dimension"):
        fig, summary = scaling_render(sg.grid, "wordsim353", across)
        assert len(fig.axes[0].lines) >= 2 and "WordSim-353" in summary
        assert "mean of 3 trainings" in summary
    fig, summary = scaling_render(sg.grid, "wordsim353", "dimension")
    assert len(fig.axes[0].containers) == len(sg.grid.tokens)           # error bars
    _, summary = scaling_render(sg.grid, "analogy")
    assert "%" in summary
    with pytest.raises(ValueError, match="unknown metric"):
        scaling_render(sg.grid, "accuracy")
    with pytest.raises(ValueError, match="across must be"):
        scaling_render(sg.grid, "analogy", "epochs")
    fig = plot_grid_and_control(sg.grid, sg.control, sg.control_epochs, "analogy")
    assert len(fig.axes) == 2 and "equal updates: 40/20/10/5 epochs" in fig.axes[1].get_title()
