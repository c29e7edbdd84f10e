"""training.word2vec_tricks (subsampling and the dynamic window, lesson 07): its settings, its
gensim models and the shipped runs (replay and subset metric: tests/training/test_registry.py)."""
import numpy as np
import pytest

from helpers.course.corpus import course_corpus
from helpers.course.models import load_model
from helpers.lib.word2vec import keep_probabilities
from training.word2vec_tricks import SETTINGS, check_settings, gensim_model, retrain_first_epoch
from training.word_vector_models import WORD2VEC


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
    (dict(variants={"x": dict(sample=1e-4, dynamic_window="no")}),
     "dynamic_window must be True or False"),
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
    assert all(x.sg == 1 and x.hs == 0 and x.workers == 1 and x.seed == 3 and x.window == 5
               for x in m.values())
    with pytest.raises(ValueError, match="unknown variant 'big_window'"):
        gensim_model(SETTINGS, "big_window", seed=0)


def test_the_settings_do_what_they_claim_on_a_toy_corpus():
    """Subsampling trains fewer words; the fixed window trains more pairs (gensim's summed loss,
    one term per pair, grows by about the pair ratio 1 / 0.6 for L = 5)."""
    rng = np.random.default_rng(0)
    p = 1.0 / np.arange(1, 201)
    words = [f"w{i}" for i in range(200)]
    sents = [list(rng.choice(words, size=20, p=p / p.sum())) for _ in range(2000)]
    s = _settings(min_count=1, dim=10, variants={
        "shipped": dict(sample=1e-3, dynamic_window=True),
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


@pytest.fixture(scope="module")
def shipped():
    return load_model("wv_tricks")


def test_the_shipped_runs_subsample_and_widen_as_claimed(shipped):
    """Every kept token trained without subsampling, about the expected share with it; the fixed
    window trains more pairs on the same kept tokens (the summed loss has one term per pair; the
    pair ratio is 1 / 0.6 for L = 5)."""
    corpus = course_corpus()
    w = shipped.curves["words_trained"]
    assert np.all(w[:, shipped.index("no_subsampling")] == len(corpus.ids))
    expected = keep_probabilities(corpus.vocab.counts, 1e-4)[corpus.ids].sum()
    for name in ("shipped", "fixed_window"):
        assert np.allclose(w[:, shipped.index(name)] / expected, 1, atol=0.01), name
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
