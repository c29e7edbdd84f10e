"""Tests of training.glove_torch (the benchmarks' GloVe): with one batch per epoch its steps are
AdaGrad's on the layer's summed gradient, and it learns two clusters."""
import numpy as np
import pytest
import scipy.sparse as sp

from helpers.lib.glove import GloVeNumpy, cooccurrence_entries
from training.glove_torch import train_torch


def _two_topic_counts():
    """Words 0-4 co-occur only with each other, words 5-9 likewise: two clusters."""
    rng = np.random.default_rng(0)
    X = np.zeros((10, 10))
    for block in (range(0, 5), range(5, 10)):
        for i in block:
            for j in block:
                if i != j:
                    X[i, j] = rng.uniform(5, 50)
    X = (X + X.T) / 2
    X[0, 5] = X[5, 0] = 0.5                                  # one weak cross pair
    return sp.csr_matrix(X)


def test_one_batch_per_epoch_is_adagrad_on_the_summed_gradient():
    X = _two_topic_counts()
    rows, cols, x = cooccurrence_entries(X)
    g = train_torch(X, dim=6, epochs=3, batch_size=len(x), lr=0.05, x_max=10, progress=False)
    layer = GloVeNumpy(10, 6, np.random.default_rng(0), x_max=10.0, dtype=np.float32)
    layer.params = [p.astype(np.float64) for p in layer.params]
    acc = [np.ones_like(p) for p in layer.params]
    losses = []
    for _ in range(3):                     # the order of a single batch does not change its sum
        losses.append(layer.forward(rows, cols, x) / len(x))
        layer.backward()
        for p, a, d in zip(layer.params, acc, layer.grads, strict=True):
            a += d * d
            p -= 0.05 * d / np.sqrt(a)
    np.testing.assert_allclose(g.W, layer.params[0], atol=2e-5)
    np.testing.assert_allclose(g.b_tilde, layer.params[3], atol=2e-5)
    np.testing.assert_allclose(g.epoch_loss, losses, rtol=1e-4)


def test_it_learns_two_clusters_and_checks_its_arguments():
    g = train_torch(_two_topic_counts(), dim=8, epochs=60, batch_size=16, lr=0.1, x_max=10,
                    progress=False, evaluate=lambda v: {"norm": float(np.linalg.norm(v))})
    assert g.epoch_loss[-1] < 0.2 * g.epoch_loss[0] and len(g.epoch_metrics) == 60
    E = g.vectors() / np.linalg.norm(g.vectors(), axis=1, keepdims=True)
    same = (np.arange(10)[:, None] < 5) == (np.arange(10)[None, :] < 5)
    off = ~np.eye(10, dtype=bool)
    assert (E @ E.T)[same & off].mean() - (E @ E.T)[~same].mean() > 0.5
    with pytest.raises(ValueError, match="lr > 0"):
        train_torch(_two_topic_counts(), lr=0, progress=False)
    with pytest.raises(ValueError, match="vocab has 3 words"):
        train_torch(_two_topic_counts(), vocab=["a", "b", "c"], progress=False)
