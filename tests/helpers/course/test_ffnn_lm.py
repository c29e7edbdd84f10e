"""helpers.course.ffnn_lm: lesson 01's Wikipedia streams and windows, and the shipped model's
weights laid out for x W."""
import numpy as np

from helpers.course.ffnn_lm import ffnn_lm_data, lm_streams
from helpers.course.models import load_model


def test_the_streams_the_windows_and_the_shipped_weights():
    vocab, train, valid, test = lm_streams(2000)
    assert len(vocab) == 2001 and vocab.itos[0] == "<unk>"
    assert abs(len(valid) - len(test)) <= 1 and len(train) > 17 * len(valid)
    data = ffnn_lm_data(2000, 4)
    assert np.array_equal(data.X_train[5], train[5:9]) and data.y_train[5] == train[9]
    assert len(data.y_valid) == len(valid) - 4
    shipped = load_model("ffnn_lm")
    w, s = shipped.weights, shipped.settings
    assert w["E"].shape == (2001, s["emb_dim"]) and w["W1"].shape == (4 * s["emb_dim"], s["hidden"])
    assert w["W2"].shape == (s["hidden"], 2001) and w["b2"].shape == (2001,)
    assert shipped.vocab.itos == vocab.itos and set(shipped.kn_baseline) == {"2", "3", "4", "5"}
