"""helpers.course.word_lms: the stored Kneser-Ney baselines are what the function gives, and the
per-token losses of a recurrent LM average to its stream NLL, token by token in stream order."""
import numpy as np
import torch

from helpers.course.recurrent_lms import lm_data
from helpers.course.word_lms import load_kn_baselines, token_nlls
from helpers.lib.ngram import kneser_ney_nlls
from helpers.lib.rnn_lm import RecurrentLM
from training.word_lms import evaluate_nll


def test_the_stored_kneser_ney_baselines_are_what_the_function_gives():
    kn, data = load_kn_baselines(), lm_data(3000)
    assert kn.orders == [2, 3, 4, 5] and kn.skipped == 4
    best = kn.best_order()
    assert best == min(kn.orders, key=lambda n: kn.ppl["valid"][n])
    assert list(kn.nll["test"]) == [best]
    assert len(kn.nll["test"][best]) == len(data.test) - kn.skipped
    # the stored order recomputed on the first 20,000 test tokens (same code, same tokens)
    fresh = kneser_ney_nlls(data.train, data.test[:20_000], best, len(data.vocab))
    fresh = fresh[kn.skipped - (best - 1):]
    np.testing.assert_allclose(kn.nll["test"][best][:len(fresh)], fresh, rtol=5e-4, atol=1e-4)
    stored_ppl = float(np.exp(kn.nll["test"][best].mean()))      # the float16 copy: the same ppl
    assert abs(stored_ppl - kn.ppl["test"][best]) < 0.05


def test_token_nlls_average_to_the_stream_nll_in_stream_order():
    model = RecurrentLM(20, "gru", 8, 16, seed=0)
    ids = np.random.default_rng(0).integers(0, 20, 16 * 40 + 1)
    nll, positions = token_nlls(model, ids)
    assert nll.shape == positions.shape == (16 * 40,)
    assert np.isclose(nll.mean(), evaluate_nll(model, ids), rtol=1e-6)
    with torch.no_grad():
        logits, _ = model(torch.as_tensor(ids[None, :40]))     # row 0 of the batch reads ids[0:40]
    lp = torch.log_softmax(logits[0, 5].double(), -1)[ids[6]].item()
    assert np.isclose(nll[5], -lp, rtol=1e-6) and positions[5] == 6
