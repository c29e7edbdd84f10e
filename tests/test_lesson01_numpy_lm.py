"""Lesson 01's NumPy feed-forward LM (helpers.lib.feedforward_lm): the same model as the PyTorch
FeedForwardLM with the same weights (scores, loss and every gradient), its backward pass against
finite differences (with dropout, its mask fixed), the shipped model's validation loss reproduced,
and the sampler."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers.lib.feedforward_lm import NumpyFeedForwardLM, mean_nll_numpy, sample_text
from helpers.lib.gradcheck import numerical_gradient, relative_error
from helpers.lib.language_models import FeedForwardLM
from helpers.lib.layers import SoftmaxCrossEntropy

V, N_CTX, D, H = 17, 3, 4, 5


def _pair(dtype=np.float64):
    torch.manual_seed(0)
    theirs = FeedForwardLM(V, N_CTX, D, H).double()
    ours = NumpyFeedForwardLM(V, N_CTX, D, H, np.random.default_rng(0), dtype=dtype).load_torch(theirs)
    return ours, theirs


def _batch(seed=1, n=6):
    rng = np.random.default_rng(seed)
    return rng.integers(0, V, (n, N_CTX)), rng.integers(0, V, n)


def test_the_numpy_model_is_the_torch_model_scores_loss_and_gradients():
    ours, theirs = _pair()
    X, y = _batch()
    X[0, :] = 3                                            # a repeated id: its embedding gradient must add up
    loss_fn = SoftmaxCrossEntropy()
    loss = loss_fn.forward(ours.forward(X), y)
    ours.backward(loss_fn.backward())
    torch_loss = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(X)), torch.from_numpy(y))
    torch_loss.backward()
    assert loss == pytest.approx(torch_loss.item(), rel=1e-12)
    grads = dict(zip(["E", "W1", "b1", "W2", "b2"], ours.grads, strict=True))
    expected = {"E": theirs.embed.weight.grad, "W1": theirs.hidden.weight.grad.T, "b1": theirs.hidden.bias.grad,
                "W2": theirs.out.weight.grad.T, "b2": theirs.out.bias.grad}
    for name, g in grads.items():
        np.testing.assert_allclose(g, expected[name].numpy(), rtol=1e-10, atol=1e-13, err_msg=name)


def test_the_backward_pass_matches_finite_differences_with_dropout():
    model = NumpyFeedForwardLM(V, N_CTX, D, H, np.random.default_rng(2), dropout=0.3, dtype=np.float64)
    X, y = _batch(3)
    loss_fn = SoftmaxCrossEntropy()

    def loss():
        model.drop_in.rng, model.drop_hidden.rng = np.random.default_rng(7), np.random.default_rng(8)
        return loss_fn.forward(model.forward(X), y)

    loss()
    model.backward(loss_fn.backward())
    analytic = [g.copy() for g in model.grads]
    for p, g in zip(model.params, analytic, strict=True):
        assert relative_error(g, numerical_gradient(loss, p)) < 1e-6


def test_load_torch_refuses_a_model_of_another_shape_and_ids_of_another_width():
    ours = NumpyFeedForwardLM(V, N_CTX, D, H, np.random.default_rng(0))
    with pytest.raises(ValueError, match="does not fit"):
        ours.load_torch(FeedForwardLM(V + 1, N_CTX, D, H))
    with pytest.raises(ValueError, match=r"shape \(B, 3\)"):
        ours.forward(np.zeros((2, 2), dtype=np.int64))


def test_the_shipped_model_s_validation_loss_in_numpy():
    from helpers.course.ffnn_lm import ffnn_lm_data
    from helpers.course.models import load_model
    from training.ffnn_lm import mean_nll
    shipped = load_model("ffnn_lm")
    s = shipped.settings
    data = ffnn_lm_data(s["vocab_size"], s["context"])
    ours = NumpyFeedForwardLM(len(shipped.vocab), s["context"], s["emb_dim"], s["hidden"], np.random.default_rng(0),
                              dropout=s["dropout"]).load_torch(shipped.model)
    X, y = data.X_valid[:3000], data.y_valid[:3000]
    assert mean_nll_numpy(ours, X, y) == pytest.approx(mean_nll(shipped.model, X, y), rel=1e-5)
    assert ours.training                                       # mean_nll_numpy restores the mode


def test_sample_text_is_seeded_and_respects_banned_ids():
    ours, _ = _pair(np.float32)
    a = sample_text(ours, [1, 2, 3], 40, np.random.default_rng(5), temperature=1.5, banned=[0, 4])
    b = sample_text(ours, [1, 2, 3], 40, np.random.default_rng(5), temperature=1.5, banned=[0, 4])
    assert a == b and len(a) == 40 and not {0, 4} & set(a) and all(0 <= i < V for i in a)
    cold = sample_text(ours, [1, 2, 3], 5, np.random.default_rng(0), temperature=1e-3)
    logits = ours.eval().forward(np.array([[1, 2, 3]]))[0]
    assert cold[0] == int(np.argmax(logits))                   # a temperature near 0 is the argmax
    with pytest.raises(ValueError, match="temperature"):
        sample_text(ours, [1, 2, 3], 5, np.random.default_rng(0), temperature=0)
    with pytest.raises(ValueError, match="at least 3 ids"):
        sample_text(ours, [1], 5, np.random.default_rng(0))
