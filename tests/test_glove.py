"""Tests of helpers.lib.glove: the weighting function, the hand-written gradients (finite
differences in float64 and PyTorch autograd), AdaGrad training in NumPy and PyTorch, errors."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

from helpers.exercises.lesson08 import check_glove_weight
from helpers.lib.counting import cooccurrence_python
from helpers.lib.glove import (
    GloVeNumpy,
    GloVeTorch,
    GloVeVectors,
    cooccurrence_entries,
    glove_cooccurrence,
    glove_weight,
    train_numpy,
    train_torch,
)
from helpers.lib.gradcheck import assert_close_to_torch, check_layer


def test_weight_values_and_cap():
    x = np.array([0.0, 1.0, 10.0, 50.0, 99.0, 100.0, 1000.0])
    f = glove_weight(x)
    assert np.allclose(f[:5], (x[:5] / 100) ** 0.75)
    assert np.all(f[5:] == 1.0)
    assert np.all(np.diff(f) >= 0)                      # increasing, then flat
    assert glove_weight(5.0, x_max=10, alpha=1.0) == pytest.approx(0.5)
    assert glove_weight(np.ones((2, 3))).shape == (2, 3)


def test_weight_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        glove_weight([-1.0, 2.0])
    with pytest.raises(ValueError, match="x_max"):
        glove_weight(1.0, x_max=0)
    with pytest.raises(ValueError, match="alpha"):
        glove_weight(1.0, alpha=-0.5)


def test_weight_checker_accepts_reference_and_rejects_uncapped(capsys):
    assert check_glove_weight.run_checks(lambda x, xm, a: glove_weight(x, xm, a))  # the guard bypassed
    assert not check_glove_weight(lambda x, xm, a: (np.asarray(x) / xm) ** a)      # no cap at 1
    assert "capped at 1" in capsys.readouterr().out
    assert not check_glove_weight.run_checks(lambda x, xm, a: glove_weight(x))     # ignores x_max, alpha
    assert "do not hard-code" in capsys.readouterr().out
    assert not check_glove_weight(lambda x, xm, a: glove_weight(x, xm, a))         # the course's own: refused
    assert "write it yourself" in capsys.readouterr().out


def _layer(V=6, D=3, seed=0):
    rng = np.random.default_rng(seed)
    layer = GloVeNumpy(V, D, rng, x_max=10.0)
    for p in layer.params:
        p[...] = rng.standard_normal(p.shape) * 0.5          # larger values than the init: a stricter check
    return layer


@pytest.mark.parametrize("rows,cols,x", [
    ([2], [4], [3.0]),                                      # one pair
    ([0, 1, 1, 5, 0], [1, 0, 3, 5, 1], [1.0, 4.0, 20.0, 7.5, 0.5]),   # repeated ids, x above x_max, diagonal
])
def test_gradients_finite_differences(rows, cols, x):
    layer = _layer()
    report = check_layer(layer, np.array(rows), np.array(cols), np.array(x))
    assert report.ok, report
    assert len(report.errors) == 4


def test_loss_matches_definition():
    layer = _layer()
    W, Wt, b, bt = layer.params
    rows, cols, x = np.array([0, 3]), np.array([2, 2]), np.array([2.0, 40.0])
    expected = sum(glove_weight(x[p], 10.0) * (W[rows[p]] @ Wt[cols[p]] + b[rows[p]] + bt[cols[p]] - np.log(x[p])) ** 2
                   for p in range(2))
    assert layer.forward(rows, cols, x) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("P", [1, 7])
def test_matches_torch_autograd(P):
    rng = np.random.default_rng(P)
    layer = _layer(V=5, D=4, seed=P)
    rows, cols = rng.integers(0, 5, P), rng.integers(0, 5, P)
    x = rng.uniform(0.2, 30, P)
    J = layer.forward(rows, cols, x)
    layer.backward(1.0)
    model = GloVeTorch(5, 4).double().load_numpy(layer.params)
    Jt = model(torch.from_numpy(rows), torch.from_numpy(cols), torch.from_numpy(np.log(x)),
               torch.from_numpy(glove_weight(x, 10.0)))
    Jt.backward()
    assert_close_to_torch(np.array(J), Jt, "loss", rtol=1e-10)
    for g, emb, name in zip(layer.grads, (model.W, model.W_tilde, model.b, model.b_tilde), ("W", "W~", "b", "b~"), strict=False):
        assert_close_to_torch(g, emb.weight.grad.reshape(g.shape), f"dJ/d{name}", rtol=1e-9, atol=1e-12)


def test_layer_bad_input():
    layer = _layer()
    with pytest.raises(ValueError, match="positive"):
        layer.forward(np.array([0]), np.array([1]), np.array([0.0]))
    with pytest.raises(ValueError, match=r"cols must be word ids in \[0, 6\), got 6"):
        layer.forward(np.array([0]), np.array([6]), np.array([1.0]))
    with pytest.raises(ValueError, match="one length"):
        layer.forward(np.array([0, 1]), np.array([1]), np.array([1.0]))
    with pytest.raises(TypeError, match="integer"):
        layer.forward(np.array([0.0]), np.array([1]), np.array([1.0]))
    with pytest.raises(RuntimeError, match="before forward"):
        GloVeNumpy(3, 2, np.random.default_rng(0)).backward()


def test_cooccurrence_is_harmonic_and_symmetric():
    sents = [np.array([0, 1, 2, 3]), np.array([2, 1])]
    X = glove_cooccurrence(sents, 4, window=2)
    assert (X != cooccurrence_python(sents, 4, window=2, weighting="harmonic")).nnz == 0
    assert X[0, 2] == pytest.approx(0.5)                     # distance 2 counts 1/2
    assert X[1, 2] == pytest.approx(2.0)                     # adjacent in both sentences
    assert (X != X.T).nnz == 0


def test_entries_and_errors():
    X = sp.csr_matrix(np.array([[0, 2.0], [2.0, 1.0]]))
    r, c, x = cooccurrence_entries(X)
    assert sorted(zip(r.tolist(), c.tolist(), x.tolist(), strict=False)) == [(0, 1, 2.0), (1, 0, 2.0), (1, 1, 1.0)]
    r2, c2, x2 = cooccurrence_entries(X.toarray())
    assert len(x2) == 3
    with pytest.raises(ValueError, match="empty"):
        cooccurrence_entries(sp.csr_matrix((3, 3)))
    with pytest.raises(ValueError, match="square"):
        cooccurrence_entries(np.ones((2, 3)))
    with pytest.raises(ValueError, match="dim"):
        train_numpy(X, dim=0, progress=False)
    with pytest.raises(ValueError, match="learning rate"):
        train_torch(X, lr=0, progress=False)


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


def _cluster_margin(vectors):
    E = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    S = E @ E.T
    g = np.arange(10) < 5
    same = g[:, None] == g[None, :]
    off = ~np.eye(10, dtype=bool)
    return S[same & off].mean() - S[~same].mean()


def test_numpy_training_decreases_loss_and_separates_clusters():
    X = _two_topic_counts()
    gv = train_numpy(X, dim=8, epochs=60, batch_size=16, lr=0.1, x_max=10, progress=False)
    assert gv.epoch_loss[-1] < 0.2 * gv.epoch_loss[0]
    assert _cluster_margin(gv.vectors()) > 0.5
    again = train_numpy(X, dim=8, epochs=60, batch_size=16, lr=0.1, x_max=10, progress=False)
    assert np.array_equal(gv.W, again.W)                     # same seed, same numbers


def test_torch_training_matches_numpy_adagrad():
    # one batch per epoch: the summed gradient does not depend on the order, so NumPy's AdaGrad
    # and torch.optim.Adagrad must take the same steps from the same initialisation
    X = _two_topic_counts()
    P = X.nnz
    a = train_numpy(X, dim=6, epochs=3, batch_size=P, lr=0.05, x_max=10, progress=False)
    b = train_torch(X, dim=6, epochs=3, batch_size=P, lr=0.05, x_max=10, progress=False)
    assert np.allclose(a.W, b.W, atol=2e-5)
    assert np.allclose(a.b_tilde, b.b_tilde, atol=2e-5)
    assert np.allclose(a.epoch_loss, b.epoch_loss, rtol=1e-4)
    c = train_torch(X, dim=8, epochs=60, batch_size=16, lr=0.1, x_max=10, progress=False)
    assert c.epoch_loss[-1] < 0.2 * c.epoch_loss[0]
    assert _cluster_margin(c.vectors()) > 0.5
    assert c.config["device"] == "cpu"


def test_vectors_options():
    gv = GloVeVectors(np.ones((2, 3), np.float32), 2 * np.ones((2, 3), np.float32), np.zeros(2), np.zeros(2))
    assert np.all(gv.vectors() == 3) and np.all(gv.vectors("W") == 1)
    with pytest.raises(ValueError, match="which"):
        gv.vectors("C")


# ---------------------------------------------------------------- lesson 08's explorer of the weighting
def test_glove_weight_explorer_summary_and_slider():
    import matplotlib
    matplotlib.use("Agg")
    from helpers.infra.widgets import Explorer, log_slider, slider
    from helpers.lessons.lesson08 import render_glove_weight

    counts = np.array([0.5, 1.0, 1.0, 2.0, 5.0, 20.0, 150.0, 3000.0])
    fig, summary = render_glove_weight(100.0, 0.75, counts=counts)
    f = glove_weight(counts, 100.0, 0.75)
    rare = counts < 10
    assert f"f(1) = {glove_weight(1.0):.3f}" in summary
    assert f"{np.mean(counts >= 100):.1%} of the 8 pairs reach the cap" in summary
    assert f"{np.mean(rare):.0%} of the pairs and carry {f[rare].sum() / f.sum():.0%} of the total weight" in summary
    assert len(fig.axes) == 2
    # a smaller x_max caps more pairs and gives the rare ones a larger share of the weight
    _, small = render_glove_weight(10.0, 0.75, counts=counts)
    f10 = glove_weight(counts, 10.0, 0.75)
    assert f"{np.mean(counts >= 10):.1%} of the 8 pairs reach the cap" in small
    assert f10[rare].sum() / f10.sum() > f[rare].sum() / f.sum()

    ex = Explorer(lambda x_max, alpha: render_glove_weight(x_max, alpha, counts=counts),
                  {"x_max": log_slider(100, 0, 3, "x_max"), "alpha": slider(0.75, 0.05, 1.0, 0.05, "α")})
    first, png = ex.summary, ex.png
    ex.controls["x_max"].value = 10
    assert ex.renders == 2 and ex.summary != first and ex.png != png and "x_max = 10" in ex.summary


def test_glove_weight_explorer_rejects_bad_counts():
    from helpers.lessons.lesson08 import render_glove_weight
    with pytest.raises(ValueError, match="positive entries of a co-occurrence matrix.*with entries <= 0"):
        render_glove_weight(counts=np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="non-empty 1-D array; got shape \\(0,\\)"):
        render_glove_weight(counts=np.array([]))


def _glove_c_reference(counts, dim, epochs, lr, x_max, alpha, seed):
    """glove.c's training loop, pair by pair, in plain Python (float64), same init and order."""
    import torch as _torch

    from helpers.lib.glove import GloVeNumpy, cooccurrence_entries, glove_weight
    rows, cols, x = cooccurrence_entries(counts)
    rng = np.random.default_rng(seed)
    W, Wt, b, bt = (p.astype(np.float64) for p in GloVeNumpy(counts.shape[0], dim, rng, x_max, alpha, np.float32).params)
    gW, gWt, gb, gbt = np.ones_like(W), np.ones_like(Wt), np.ones_like(b), np.ones_like(bt)
    gen = _torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for p in _torch.randperm(len(x), generator=gen).tolist():
            i, j = rows[p], cols[p]
            diff = W[i] @ Wt[j] + b[i] + bt[j] - np.log(x[p])
            fdiff = lr * glove_weight(x[p], x_max, alpha) * diff
            t1, t2 = fdiff * Wt[j], fdiff * W[i]
            W[i] -= t1 / np.sqrt(gW[i])
            Wt[j] -= t2 / np.sqrt(gWt[j])
            gW[i] += t1 * t1
            gWt[j] += t2 * t2
            b[i] -= fdiff / np.sqrt(gb[i])
            bt[j] -= fdiff / np.sqrt(gbt[j])
            gb[i] += fdiff * fdiff
            gbt[j] += fdiff * fdiff
    return W, Wt


def test_train_pairwise_with_batch_1_is_the_reference_code():
    from helpers.lib.glove import train_pairwise
    rng = np.random.default_rng(0)
    dense = rng.poisson(3.0, (12, 12)) * (rng.random((12, 12)) < 0.6)
    counts = sp.csr_matrix(dense.astype(np.float64))
    W, Wt = _glove_c_reference(counts, dim=4, epochs=3, lr=0.05, x_max=5.0, alpha=0.75, seed=1)
    g = train_pairwise(counts, dim=4, epochs=3, lr=0.05, x_max=5.0, alpha=0.75, batch_size=1, seed=1, progress=False)
    np.testing.assert_allclose(g.W, W, atol=1e-5)
    np.testing.assert_allclose(g.W_tilde, Wt, atol=1e-5)
    # batches only delay a row's updates: close to the reference, and the loss falls
    big = train_pairwise(counts, dim=4, epochs=3, lr=0.05, x_max=5.0, alpha=0.75, batch_size=16, seed=1, progress=False)
    assert big.epoch_loss[-1] < big.epoch_loss[0]
    stop = train_pairwise(counts, dim=4, epochs=5, batch_size=8, progress=False, epoch_end=lambda e, v, loss: e == 2)
    assert len(stop.epoch_loss) == 2


def test_train_pairwise_checkpoints_follow_the_full_run():
    """The live training's checkpoints: called every ``checkpoint_every`` pairs with W + W~, a
    True return stops training; what a checkpoint sees is the full run's state at that point."""
    from helpers.lib.glove import train_pairwise
    rng = np.random.default_rng(2)
    counts = sp.csr_matrix((rng.poisson(2.0, (10, 10)) * (rng.random((10, 10)) < 0.7)).astype(np.float64))
    P = counts.nnz
    seen, snaps = [], []

    def checkpoint(pairs, vectors):
        seen.append(pairs)
        snaps.append(vectors.copy())
        return len(seen) == 2

    g = train_pairwise(counts, dim=3, epochs=4, batch_size=5, seed=3, progress=False, checkpoint=checkpoint,
                       checkpoint_every=P)
    assert seen == [P, 2 * P] and len(g.epoch_loss) == 1          # stopped at the end of the second epoch's batches
    one = train_pairwise(counts, dim=3, epochs=1, batch_size=5, seed=3, progress=False)
    np.testing.assert_allclose(snaps[0], one.W + one.W_tilde)
    with pytest.raises(ValueError, match="checkpoint_every"):
        train_pairwise(counts, dim=3, epochs=1, progress=False, checkpoint=checkpoint)
