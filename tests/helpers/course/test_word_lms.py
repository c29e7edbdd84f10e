"""helpers.course.word_lms: the split (copies kept out of the test text), the model's errors,
the stored Kneser-Ney baselines, and the gradient reaching far back in a trained model."""
import numpy as np
import pytest
import torch

from helpers.course.word_lms import (
    RecurrentLM,
    flow_at,
    lm_data,
    load_kn_baselines,
    trained_gradient_flow,
)
from helpers.lib.ngram import kneser_ney_nlls


def test_the_stored_kneser_ney_baselines_are_what_the_function_gives():
    kn, data = load_kn_baselines(), lm_data(3000)
    assert kn.orders == [2, 3, 4, 5] and kn.skipped == 4 and len(data.vocab) == 3002
    best = kn.best_order()
    assert best == min(kn.orders, key=lambda n: kn.ppl["valid"][n])
    assert list(kn.nll["test"]) == [best]
    assert len(kn.nll["test"][best]) == len(data.test) - kn.skipped
    fresh = kneser_ney_nlls(data.train, data.test[:20_000], best, len(data.vocab))
    fresh = fresh[kn.skipped - (best - 1):]
    np.testing.assert_allclose(kn.nll["test"][best][:len(fresh)], fresh, rtol=5e-4, atol=1e-4)
    # the stored float16 copy
    assert abs(np.exp(kn.nll["test"][best].mean()) - kn.ppl["test"][best]) < 0.05


def test_the_pytorch_model_refuses_a_bad_kind_and_shape():
    model = RecurrentLM(20, "gru", 8, 16, seed=0)
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


def test_keeping_copies_together_keeps_the_test_text_out_of_training():
    """Lesson 02's note: with a plain split about one in seven of the test split's 20-word
    sequences occur in the training text; with the course's grouped split fewer than 1 in 100."""
    def seen_share(train, test, n=20):
        seen = {tuple(train[i:i + n]) for i in range(len(train) - n + 1)}
        return np.mean([tuple(test[i:i + n]) in seen for i in range(len(test) - n + 1)])

    shares = {}
    for together in (False, True):
        data = lm_data(keep_copies_together=together)
        shares[together] = seen_share(data.train.tolist(), data.test.tolist())
    assert 1 / 8 < shares[False] < 1 / 6 and shares[True] < 1 / 100, shares
