"""helpers.course.word_lms: the split, the PyTorch model's errors, the stored Kneser-Ney baselines
are what the function gives, per-token losses average to the stream NLL in stream order, and the
gradient reaching far back in a trained model."""
import math

import numpy as np
import pytest
import torch

from helpers.course.word_lms import (
    RecurrentLM,
    flow_at,
    lm_data,
    load_kn_baselines,
    token_nlls,
    trained_gradient_flow,
    unigram_perplexity,
)
from helpers.lib.ngram import kneser_ney_nlls
from training.word_lms import evaluate_nll


def test_the_stored_kneser_ney_baselines_are_what_the_function_gives():
    kn, data = load_kn_baselines(), lm_data(3000)
    assert kn.orders == [2, 3, 4, 5] and kn.skipped == 4 and "vocabulary 3,002 types" in data.describe()
    best = kn.best_order()
    assert best == min(kn.orders, key=lambda n: kn.ppl["valid"][n]) and list(kn.nll["test"]) == [best]
    assert len(kn.nll["test"][best]) == len(data.test) - kn.skipped
    fresh = kneser_ney_nlls(data.train, data.test[:20_000], best, len(data.vocab))[kn.skipped - (best - 1):]
    np.testing.assert_allclose(kn.nll["test"][best][:len(fresh)], fresh, rtol=5e-4, atol=1e-4)
    assert abs(np.exp(kn.nll["test"][best].mean()) - kn.ppl["test"][best]) < 0.05   # the float16 copy
    counts = np.bincount(data.train, minlength=len(data.vocab)) + 1.0
    expected = math.exp(-np.log(counts / counts.sum())[data.valid].mean())
    assert unigram_perplexity(data.train, data.valid, len(data.vocab)) == pytest.approx(expected)


def test_token_nlls_average_to_the_stream_nll_in_stream_order():
    model = RecurrentLM(20, "gru", 8, 16, seed=0)
    ids = np.random.default_rng(0).integers(0, 20, 16 * 40 + 1)
    nll, positions = token_nlls(model, ids)
    assert nll.shape == positions.shape == (16 * 40,)
    assert np.isclose(nll.mean(), evaluate_nll(model, ids), rtol=1e-6)
    with torch.no_grad():
        logits, _ = model(torch.as_tensor(ids[None, :40]))     # row 0 of the batch reads ids[0:40]
    assert np.isclose(nll[5], -torch.log_softmax(logits[0, 5].double(), -1)[ids[6]].item(), rtol=1e-6)
    assert positions[5] == 6
    with pytest.raises(ValueError, match="kind must be one of"):
        RecurrentLM(10, "transformer")
    with pytest.raises(ValueError, match=r"token ids of shape \(batch, time\)"):
        model(torch.zeros(5, dtype=torch.long))


def test_trained_gradient_flow_and_its_geometric_means():
    model = RecurrentLM(30, "rnn", 8, 16, seed=0)
    ids = np.random.default_rng(0).integers(0, 30, 500)
    g = trained_gradient_flow(model, ids, T=20, windows=4, warm_up=10)
    assert g.shape == (4, 20) and np.all(g > 0) and np.all(g[:, 0] == 1)
    assert np.isclose(flow_at(g, 5).estimate, 10 ** np.log10(g[:, 5]).mean())
    assert np.isclose(flow_at(g, 5, against=g / 10).estimate, 10.0)
    np.testing.assert_array_equal(g, trained_gradient_flow(model, ids, T=20, windows=4, warm_up=10))
    with pytest.raises(ValueError, match="too few"):
        trained_gradient_flow(model, ids[:25], T=20, windows=4, warm_up=10)
    with pytest.raises(ValueError, match="same windows"):
        flow_at(g, 5, against=g[:2])
