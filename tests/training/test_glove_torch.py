"""training.glove_torch: one pair per batch is glove.c's loop, the hooks stop it, arguments are
checked; the benchmarks' trainer is AdaGrad on the summed gradient and learns two clusters."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from helpers.lib.glove import cooccurrence_entries, glove_cell, glove_init, glove_weight
from training.glove_torch import train_pairwise, train_torch


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


def _glove_c(counts, dim, epochs, lr, x_max, seed):
    """glove.c's loop, pair by pair, in float64, from the same start and order."""
    rows, cols, x = cooccurrence_entries(counts)
    start = glove_init(counts.shape[0], dim, np.random.default_rng(seed))
    W, Wt, b, bt = (p.astype(np.float64) for p in start)
    acc = [np.ones_like(p) for p in (W, Wt, b, bt)]
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for p in torch.randperm(len(x), generator=gen).tolist():
            i, j = rows[p], cols[p]
            fdiff = lr * glove_weight(x[p], x_max) * (W[i] @ Wt[j] + b[i] + bt[j] - np.log(x[p]))
            for param, a, k, step in ((W, acc[0], i, fdiff * Wt[j]), (Wt, acc[1], j, fdiff * W[i]),
                                      (b, acc[2], i, fdiff), (bt, acc[3], j, fdiff)):
                param[k] = param[k] - step / np.sqrt(a[k])
                a[k] = a[k] + step * step
    return W, Wt


def test_one_pair_per_batch_is_glove_c_and_the_hooks_stop_it():
    rng = np.random.default_rng(0)
    dense = rng.poisson(3.0, (12, 12)) * (rng.random((12, 12)) < 0.6)
    counts = sp.csr_matrix(dense.astype(np.float64))
    W, Wt = _glove_c(counts, dim=4, epochs=3, lr=0.05, x_max=5.0, seed=1)
    g = train_pairwise(counts, dim=4, epochs=3, lr=0.05, x_max=5.0, batch_size=1, seed=1,
                       progress=False)
    np.testing.assert_allclose(g.W, W, atol=1e-5)
    np.testing.assert_allclose(g.W_tilde, Wt, atol=1e-5)
    stop = train_pairwise(counts, dim=4, epochs=5, batch_size=8, progress=False,
                          epoch_end=lambda e, v, loss: e == 2)
    assert len(stop.epoch_loss) == 2
    seen, snaps = [], []

    def checkpoint(pairs, vectors):
        seen.append(pairs)
        snaps.append(vectors.copy())
        return len(seen) == 2

    g = train_pairwise(counts, dim=3, epochs=4, batch_size=5, seed=3, progress=False,
                       checkpoint=checkpoint, checkpoint_every=counts.nnz)
    assert seen == [counts.nnz, 2 * counts.nnz] and len(g.epoch_loss) == 1
    one = train_pairwise(counts, dim=3, epochs=1, batch_size=5, seed=3, progress=False)
    np.testing.assert_allclose(snaps[0], one.W + one.W_tilde)
    with pytest.raises(ValueError, match="checkpoint_every"):
        train_pairwise(counts, dim=3, epochs=1, progress=False, checkpoint=checkpoint)
    with pytest.raises(ValueError, match="vocab has 2 words"):
        train_pairwise(counts, vocab=["a", "b"], progress=False)
    with pytest.raises(ValueError, match="learning rate"):
        train_pairwise(counts, lr=0, progress=False)


def test_one_batch_per_epoch_is_adagrad_on_the_summed_gradient():
    X = _two_topic_counts()
    rows, cols, x = cooccurrence_entries(X)
    g = train_torch(X, dim=6, epochs=3, batch_size=len(x), lr=0.05, x_max=10, progress=False)
    params = [p.astype(np.float64) for p in glove_init(10, 6, np.random.default_rng(0))]
    acc = [np.ones_like(p) for p in params]
    losses = []
    for _ in range(3):                     # the order of a single batch does not change its sum
        loss, dv, du, db, dc = glove_cell(params[0][rows], params[1][cols], params[2][rows],
                                          params[3][cols], x, 10.0)
        losses.append(loss / len(x))
        for p, a, ids, d in zip(params, acc, (rows, cols, rows, cols), (dv, du, db, dc),
                                strict=True):
            grad = np.zeros_like(p)
            np.add.at(grad, ids, d)
            a += grad * grad
            p -= 0.05 * grad / np.sqrt(a)
    np.testing.assert_allclose(g.W, params[0], atol=2e-5)
    np.testing.assert_allclose(g.b_tilde, params[3], atol=2e-5)
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
