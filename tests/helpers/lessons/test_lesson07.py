"""helpers.lessons.lesson07: the timings, the pair statistics, the live skip-gram, the dimension
explorer and the challenge's scoreboard."""
import numpy as np
import pytest

from helpers.course.corpus import course_corpus
from helpers.lessons import lesson07 as L
from helpers.lib import sgns
from helpers.lib.negative_sampling import unigram_noise
from helpers.lib.word2vec import keep_probabilities, prepare_corpus, skipgram_pairs


def test_every_output_layer_is_timed():
    rows = L.time_output_layers([50, 200], dim=8, batch=16, repeats=1)
    assert [r["vocab_size"] for r in rows] == [50, 200]
    assert all(r[k] > 0 for r in rows for k in L.TIMING_NAMES)
    assert 1 <= rows[0]["hs_mean_depth"] <= 50


@pytest.mark.parametrize("dynamic", [True, False])
@pytest.mark.parametrize("sample", [0.0, 1e-2])
def test_pair_statistics_count_what_the_pair_generator_builds(dynamic, sample):
    corpus = prepare_corpus([["a", "b", "c", "a", "d"] * 3, ["b", "a", "c"] * 2, ["d"]],
                            min_count=1)
    keep = keep_probabilities(corpus.vocab.counts, sample)
    stats = L.pair_statistics(corpus, sample, dynamic=dynamic, window=3, seeds=(0, 1), top=1)
    for k, seed in enumerate((0, 1)):
        rng = np.random.default_rng(seed)
        kept = rng.random(len(corpus.ids)) < keep[corpus.ids]
        c, o = skipgram_pairs(corpus.ids[kept], corpus.sentence[kept], 3, rng, dynamic=dynamic)
        assert stats["tokens"][k] == kept.sum() and stats["pairs"][k] == len(c)
        assert stats["top_share"][k] == pytest.approx(np.mean(o == np.argmax(corpus.vocab.counts)))
    assert sum(stats["by_distance"]) == pytest.approx(1.0)
    paper = L.keep_probability_paper(np.array([1000, 10, 1]), 1e-2)
    assert paper[2] == 1.0 and np.all(paper <= keep_probabilities(np.array([1000, 10, 1]), 1e-2))


def test_the_live_skip_gram_is_seeded_uses_its_functions_and_learns():
    corpus = course_corpus()
    calls = []

    def step(*args):
        calls.append(args[5])                          # the learning rate of each step
        return sgns.sgd_step(*args)

    runs = [L.LiveSkipGram(corpus, unigram_noise, sgns.ns_loss_and_gradients, step, dim=16,
                           batch=256) for _ in range(2)]
    for model in runs:
        model.plan(40)
        losses = [model.step() for _ in range(40)]
    assert np.array_equal(runs[0].W, runs[1].W) and losses[-1] < losses[0]
    assert len(calls) == 80 and calls[0] == pytest.approx(0.1)
    assert calls[39] == pytest.approx(0.1 / 40)
    assert runs[0].passes() == pytest.approx(40 * 256 / len(runs[0].pairs[0]))
    flat = L.LiveSkipGram(corpus, lambda counts, power: np.ones(len(counts)) / len(counts),
                          sgns.ns_loss_and_gradients, sgns.sgd_step, dim=4)
    assert np.ptp(np.bincount(flat.table, minlength=len(corpus.vocab))) <= 1    # the noise given


def test_the_dimension_explorer_trains_a_run_at_the_chosen_size():
    def make(dim):
        return L.LiveSkipGram(course_corpus(), unigram_noise, sgns.ns_loss_and_gradients,
                              sgns.sgd_step, dim=dim, batch=64)

    render = L.DimensionRuns(make, steps=3)
    _, summary = render.render(8)
    assert summary.startswith("d = 8: ρ") and set(render.results) == {8}


def test_the_challenge_scores_the_test_pairs_and_refuses_bad_vectors(capsys):
    corpus = course_corpus()
    rng = np.random.default_rng(0)
    W = rng.standard_normal((len(corpus.vocab), 8)).astype(np.float32)
    out = L.challenge_standing(W, corpus.vocab, 30.0, {"itself": W}, n_boot=200)
    assert out["within_budget"] and out["calls"]["itself"] == "tie"
    assert out["vs"]["itself"].estimate == 0
    assert "yours" in capsys.readouterr().out
    with pytest.raises(ValueError, match="W must be"):
        L.challenge_standing(W[:5], corpus.vocab, 1.0, {})
    with pytest.raises(ValueError, match="NaN"):
        L.challenge_standing(W * np.nan, corpus.vocab, 1.0, {})
