"""training/ffnn_lm.py: the PyTorch feed-forward LM checks its input, and the shipped weights, as
the lesson reads them, are the PyTorch model's (the same validation loss in NumPy)."""
import numpy as np
import pytest
import torch

from helpers.course.ffnn_lm import ffnn_lm_data
from helpers.course.models import load_model
from helpers.exercises.lesson01 import check_mlp_forward
from helpers.lessons.lesson01 import lm_token_nll
from training.ffnn_lm import FeedForwardLM, mean_nll, torch_model


def test_the_model_checks_its_windows_and_its_dropout():
    lm = FeedForwardLM(50, context=3, emb_dim=4, hidden=6)
    assert lm(torch.zeros(2, 3, dtype=torch.long)).shape == (2, 50)
    with pytest.raises(ValueError, match=r"shape \(B, 3\), got \(2, 2\)"):
        lm(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"ctx must be token ids in \[0, 50\)"):
        lm(torch.tensor([[0, 1, 50]]))
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        FeedForwardLM(5, dropout=1.0)
    with pytest.raises(ValueError, match="mean_nll: 0 contexts and 0 targets"):
        mean_nll(lm, np.zeros((0, 3), np.int64), np.zeros(0, np.int64))
    torch.manual_seed(0)
    m = FeedForwardLM(20, context=2, emb_dim=4, hidden=8, dropout=0.5)
    x = torch.tensor([[1, 2], [3, 4]])
    assert torch.equal(m.eval()(x), m(x)) and not torch.equal(m.train()(x), m(x))


def test_the_shipped_weights_in_numpy_give_the_pytorch_model_s_loss():
    shipped = load_model("ffnn_lm")
    s, w = shipped.settings, shipped.weights
    data = ffnn_lm_data(s["vocab_size"], s["context"])
    X, y = data.X_valid[:3000], data.y_valid[:3000]
    weights = [w[k] for k in ("E", "W1", "b1", "W2", "b2")]
    numpy_nll = lm_token_nll(check_mlp_forward.reference, weights, X, y)
    assert numpy_nll.mean() == pytest.approx(mean_nll(torch_model(shipped), X, y), rel=1e-5)
