"""Tests of helpers.course.word2vec_tricks (what subsampling and the dynamic window do to the
vectors, lesson 07) and of lesson 07's figure and table of it. The replay of the first two
epochs and the subset metric of the shipped file are in tests/test_models.py."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.course.word2vec_tricks import (
    METRICS,
    SETTINGS,
    TricksResult,
    check_settings,
    gensim_model,
    paired_setting_difference,
    retrain_first_epoch,
)
from helpers.lessons.lesson07 import plot_tricks, tricks_comparisons, tricks_table
from helpers.lib.word2vec import keep_probabilities


def _settings(**changes):
    s = {**SETTINGS, "variants": {k: dict(v) for k, v in SETTINGS["variants"].items()}}
    s.update(changes)
    return s


# ---------------------------------------------------------------- settings
@pytest.mark.parametrize("change, message", [
    (dict(epochs=0), "epochs must be a positive integer, got 0"),
    (dict(dim=2.5), "dim must be a positive integer, got 2.5"),
    (dict(seeds=[]), "seeds must list at least one seed"),
    (dict(model="cbow"), "model must be 'skipgram'"),
    (dict(variants={}), "variants must name at least one setting"),
    (dict(variants={"x": dict(sample=-1e-4, dynamic_window=True)}), "sample must be >= 0"),
    (dict(variants={"x": dict(sample="1e-4", dynamic_window=True)}), "sample must be >= 0"),
    (dict(variants={"x": dict(sample=1e-4, dynamic_window="no")}), "dynamic_window must be True or False"),
    (dict(variants={"x": dict(sample=1e-4)}), "must set exactly 'sample' and 'dynamic_window'"),
])
def test_bad_settings_are_refused_with_a_clear_message(change, message):
    with pytest.raises(ValueError, match=message):
        check_settings(_settings(**change))


def test_unknown_or_missing_keys_are_named():
    s = _settings(window_size=5)
    del s["window"]
    with pytest.raises(ValueError, match=r"unknown \['window_size'\], missing \['window'\]"):
        check_settings(s)


def test_the_variants_change_one_factor_each_from_the_shipped_setting():
    from helpers.course.word_vector_models import WORD2VEC
    v = SETTINGS["variants"]
    assert v["shipped"] == dict(sample=WORD2VEC["sample"], dynamic_window=True)
    assert v["no_subsampling"] == dict(v["shipped"], sample=0.0)
    assert v["fixed_window"] == dict(v["shipped"], dynamic_window=False)
    for key in ("dim", "window", "negative", "alpha", "min_alpha", "min_count"):
        assert SETTINGS[key] == WORD2VEC[key], key


def test_gensim_gets_the_settings():
    m = {name: gensim_model(SETTINGS, name, seed=3) for name in SETTINGS["variants"]}
    assert (m["shipped"].sample, m["shipped"].shrink_windows) == (1e-4, True)
    assert (m["no_subsampling"].sample, m["no_subsampling"].shrink_windows) == (0.0, True)
    assert (m["fixed_window"].sample, m["fixed_window"].shrink_windows) == (1e-4, False)
    assert all(x.sg == 1 and x.hs == 0 and x.workers == 1 and x.seed == 3 and x.window == 5 for x in m.values())
    with pytest.raises(ValueError, match="unknown variant 'big_window'"):
        gensim_model(SETTINGS, "big_window", seed=0)


def test_the_settings_do_what_they_claim_on_a_toy_corpus():
    """Subsampling trains fewer words; the fixed window trains more pairs (gensim's summed loss,
    one term per pair, grows by about the pair ratio 1 / 0.6 for L = 5)."""
    rng = np.random.default_rng(0)
    p = 1.0 / np.arange(1, 201)
    sents = [list(rng.choice([f"w{i}" for i in range(200)], size=20, p=p / p.sum())) for _ in range(2000)]
    s = _settings(min_count=1, dim=10, variants={"shipped": dict(sample=1e-3, dynamic_window=True),
                                                 "no_subsampling": dict(sample=0.0, dynamic_window=True),
                                                 "fixed_window": dict(sample=1e-3, dynamic_window=False)})
    out = {}
    for name in s["variants"]:
        m = gensim_model(s, name, seed=0)
        m.build_vocab(sents)
        trained, raw = m.train(sents, total_examples=len(sents), epochs=1, compute_loss=True)
        out[name] = (trained, m.get_latest_training_loss())
    assert out["no_subsampling"][0] == raw == 40_000
    assert out["shipped"][0] < 0.9 * raw and out["fixed_window"][0] < 0.9 * raw
    assert out["fixed_window"][1] > 1.3 * out["shipped"][1]


# ---------------------------------------------------------------- the paired comparison
def _result(S=3, n=60, seed=0) -> TricksResult:
    """Synthetic results: 'good' cosines follow the gold scores, 'noisy' ones barely, 'same' = 'good'."""
    rng = np.random.default_rng(seed)
    gold = rng.random(n)
    good = gold[None] + 0.3 * rng.standard_normal((S, n))
    noisy = gold[None] + 3.0 * rng.standard_normal((S, n))
    hits_good, hits_bad = (rng.random((S, 400)) < 0.6), (rng.random((S, 400)) < 0.2)
    items = {"wordsim": np.stack([good, noisy, good], axis=1), "simlex": np.stack([good, noisy, good], axis=1),
             "analogy": np.stack([hits_good, hits_bad, hits_good], axis=1).astype(np.uint8)}
    names = ["shipped", "noisy", "same"]
    return TricksResult(names, {x: x for x in names}, list(range(S)), {}, {}, items,
                        {"wordsim": gold, "simlex": gold}, {"settings": SETTINGS})


def test_paired_difference_separates_a_real_difference_and_calls_identical_runs_a_tie():
    r = _result()
    for metric in METRICS:
        d = paired_setting_difference(r, metric, "shipped", "noisy", n_boot=300)
        assert d.low > 0, (metric, str(d))
        same = paired_setting_difference(r, metric, "shipped", "same", n_boot=300)
        assert same.estimate == same.low == same.high == 0
    flipped = paired_setting_difference(r, "wordsim", "noisy", "shipped", n_boot=300)
    assert flipped.estimate == pytest.approx(-paired_setting_difference(r, "wordsim", "shipped", "noisy", n_boot=300).estimate)


def test_paired_difference_bad_inputs():
    r = _result()
    with pytest.raises(ValueError, match="unknown metric 'accuracy'"):
        paired_setting_difference(r, "accuracy", "shipped", "noisy")
    with pytest.raises(ValueError, match=r"unknown variant 'fixed'; the measurement has \['shipped', 'noisy', 'same'\]"):
        paired_setting_difference(r, "wordsim", "shipped", "fixed")
    with pytest.raises(ValueError, match="two different variants"):
        paired_setting_difference(r, "wordsim", "shipped", "shipped")
    with pytest.raises(ValueError, match="n_boot >= 1"):
        paired_setting_difference(r, "wordsim", "shipped", "noisy", n_boot=0)


# ---------------------------------------------------------------- the shipped measurement
@pytest.fixture(scope="module")
def shipped():
    from helpers.course.models import load_model
    return load_model("wv_tricks")


def test_shipped_shapes_and_the_settings_as_trained(shipped):
    from helpers.course.corpus import course_corpus
    s = shipped.metadata["settings"]
    S, V, E = len(s["seeds"]), len(s["variants"]), s["epochs"]
    assert shipped.variants == ["shipped", "no_subsampling", "fixed_window"] and (S, V, E) == (3, 3, 10)
    for key, c in shipped.curves.items():
        assert c.shape == (S, V, E) and np.all(np.isfinite(c)), key
    for key, f in shipped.final.items():
        assert f.shape == (S, V) and np.all(np.isfinite(f)), key
    assert np.all(shipped.curves["cpu_seconds"] > 0)
    # the final report-half ρ is the curve's last point, and the stored items give it back
    assert np.array_equal(shipped.final["report/wordsim"], shipped.curves["report/wordsim"][:, :, -1])
    assert np.allclose(shipped.items["analogy"].mean(axis=2), shipped.final["report/analogy"], atol=1e-12)
    # subsampling as claimed: every kept token trained without it, about the expected share with it
    corpus = course_corpus()
    w = shipped.curves["words_trained"]
    assert np.all(w[:, shipped.index("no_subsampling")] == len(corpus.ids))
    expected = keep_probabilities(corpus.vocab.counts, 1e-4)[corpus.ids].sum()
    for name in ("shipped", "fixed_window"):
        assert np.allclose(w[:, shipped.index(name)] / expected, 1, atol=0.01), name
    # the fixed window trains more pairs than the dynamic one on the same kept tokens (the summed loss has one
    # term per pair; the pair ratio is 1 / 0.6 for L = 5, lesson 07 counts it)
    loss = shipped.curves["loss_sum"]
    assert np.all(loss[:, shipped.index("fixed_window")] > 1.25 * loss[:, shipped.index("shipped")])


def test_the_fixed_window_runs_first_epoch_reproduces_from_scratch(shipped):
    """The stored fixed-window run is what its settings give (one worker: deterministic)."""
    j = shipped.index("fixed_window")
    live = retrain_first_epoch(shipped.metadata["settings"], "fixed_window", 0)
    assert live["words_trained"] == shipped.curves["words_trained"][0, j, 0]
    assert live["loss_sum"] == shipped.curves["loss_sum"][0, j, 0]
    for key in ("validation/wordsim", "report/wordsim", "report/simlex"):
        assert live[key] == pytest.approx(shipped.curves[key][0, j, 0], abs=1e-12), key


def test_lesson_table_figure_and_comparisons(shipped):
    table = tricks_table(shipped)
    assert list(table) == shipped.variants
    for row in table.values():
        for key in ("cpu", "wordsim", "simlex", "analogy", "valid_wordsim"):
            lo_mean_hi = row[key]
            assert lo_mean_hi[1] <= lo_mean_hi[0] <= lo_mean_hi[2], key
    assert table["no_subsampling"]["words_per_epoch"] > table["shipped"]["words_per_epoch"]
    fig = plot_tricks(shipped)
    assert len(fig.axes) == 3 and "CPU seconds" in fig.axes[0].get_xlabel()
    # one line and one end marker per run on the curves, one marker per run on the analogy panel
    assert len(fig.axes[0].lines) == 2 * 9 and len(fig.axes[2].lines) == 9
    comps = tricks_comparisons(shipped, n_boot=200)
    assert set(comps) == {(m, o) for m in METRICS for o in ("no_subsampling", "fixed_window")}
