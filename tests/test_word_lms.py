"""Lesson 02's word-level language-model pieces: the vectorised Kneser-Ney against the dictionary
version, the stored Kneser-Ney baselines, per-token losses of the recurrent LMs, the block
bootstrap, and the exposure-bias measurement (a perfect model must show no gap).
The shipped RNN/GRU/LSTM files themselves are checked by tests/test_models.py."""
import numpy as np
import pytest
import torch

from helpers.course.recurrent_lms import lm_data
from helpers.course.trained_word_lms import block_bootstrap_diff, trained_gradient_flow
from helpers.course.word_lms import load_kn_baselines, token_nlls
from helpers.lib.ngram import KneserNeyLM, kneser_ney_nlls
from helpers.lib.recurrent_lm import NumpyLM
from helpers.lib.recurrent_tasks import MarkovSource, exposure_gap
from helpers.lib.rnn_lm import RecurrentLM, evaluate_nll


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_vectorised_kneser_ney_equals_the_dictionary_version(order):
    rng = np.random.default_rng(order)
    train = np.minimum(rng.integers(0, 11, 4000), rng.integers(0, 11, 4000))   # skewed, with repeats
    ev = rng.integers(0, 11, 700)
    kn = KneserNeyLM(order, 11).fit(train)
    want = [-np.log(kn.prob(tuple(ev[i - order + 1:i]), ev[i])) for i in range(order - 1, len(ev))]
    got = kneser_ney_nlls(train, ev, order, 11)
    assert got.shape == (len(ev) - order + 1,)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isclose(got.mean(), kn.mean_nll(ev), rtol=1e-12)


def test_vectorised_kneser_ney_rejects_bad_input():
    with pytest.raises(ValueError, match="order"):
        kneser_ney_nlls(np.arange(10), np.arange(10), 0, 10)
    with pytest.raises(ValueError, match="discount"):
        kneser_ney_nlls(np.arange(10), np.arange(10), 2, 10, discount=1.0)
    with pytest.raises(ValueError):
        kneser_ney_nlls(np.arange(10), np.array([3, 12, 1]), 2, 10)        # id out of the vocabulary
    with pytest.raises(ValueError, match="int64"):
        kneser_ney_nlls(np.arange(10), np.arange(10), 7, 10**4)


def test_the_stored_kneser_ney_baselines_are_what_the_function_gives():
    kn, data = load_kn_baselines(), lm_data(3000)
    assert kn.orders == [2, 3, 4, 5] and kn.skipped == 4
    best = kn.best_order()
    assert best == min(kn.orders, key=lambda n: kn.ppl["valid"][n]) and list(kn.nll["test"]) == [best]
    assert len(kn.nll["test"][best]) == len(data.test) - kn.skipped
    # recompute the stored order on the first 20,000 test tokens (same code, same tokens)
    fresh = kneser_ney_nlls(data.train, data.test[:20_000], best, len(data.vocab))[kn.skipped - (best - 1):]
    np.testing.assert_allclose(kn.nll["test"][best][:len(fresh)], fresh, rtol=5e-4, atol=1e-4)   # float16 (absolute near 0)
    stored_ppl = float(np.exp(kn.nll["test"][best].mean()))
    assert abs(stored_ppl - kn.ppl["test"][best]) < 0.05          # the float16 copy gives the recorded perplexity


def test_token_nlls_average_to_evaluate_nll():
    model = RecurrentLM(20, "gru", 8, 16, seed=0)
    ids = np.random.default_rng(0).integers(0, 20, 16 * 40 + 1)
    nll, positions = token_nlls(model, ids)
    assert nll.shape == positions.shape == (16 * 40,)
    assert np.isclose(nll.mean(), evaluate_nll(model, ids), rtol=1e-6)
    # the token scored at position p is ids[p]: check one by hand
    with torch.no_grad():
        logits, _ = model(torch.as_tensor(ids[None, :40]))     # row 0 of the batch reads ids[0:40]
    lp = torch.log_softmax(logits[0, 5].double(), -1)[ids[6]].item()
    assert np.isclose(nll[5], -lp, rtol=1e-6) and positions[5] == 6


def test_block_bootstrap():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 5000), rng.normal(0.5, 1.0, 5000)
    d, lo, hi = block_bootstrap_diff(a, b, block=100)
    assert lo < d < hi and lo < 0.5 < hi
    assert block_bootstrap_diff(a, a, block=100) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same tokens"):
        block_bootstrap_diff(a, b[:-1])
    with pytest.raises(ValueError, match="two blocks"):
        block_bootstrap_diff(a[:150], b[:150], block=100)


def test_exposure_gap_is_zero_for_the_perfect_model_and_positive_error_otherwise():
    source = MarkovSource(V=5, seed=1)
    perfect = exposure_gap(source, None, n=50, horizon=6)
    assert np.all(perfect["gap"] == 0) and np.all(perfect["own_kl"] == 0)
    untrained = exposure_gap(source, NumpyLM(5, 4, 8, "rnn"), n=50, horizon=6)
    assert np.all(untrained["data_kl"] > 0) and untrained["gap"].shape == (6,)


def test_markov_source_samples_follow_its_table():
    source = MarkovSource(V=3, alpha=1.0, seed=0)
    seqs = source.sample(4000, 3, np.random.default_rng(0))
    a, b = seqs[:, 0] == 0, seqs[:, 1] == 1
    freq = np.bincount(seqs[a & b, 2], minlength=3) / (a & b).sum()
    np.testing.assert_allclose(freq, source.table[0, 1], atol=0.08)


def test_trained_gradient_flow_shape():
    model = RecurrentLM(30, "rnn", 8, 16, seed=0)
    ids = np.random.default_rng(0).integers(0, 30, 500)
    g = trained_gradient_flow(model, ids, T=20, windows=4, warm_up=10)
    assert g.shape == (4, 20) and np.all(g > 0) and np.all(g[:, 0] == 1)
    with pytest.raises(ValueError, match="too few"):
        trained_gradient_flow(model, ids[:25], T=20, windows=4, warm_up=10)
