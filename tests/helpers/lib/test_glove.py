"""Tests of helpers.lib.glove (lesson 08): the weighting, the co-occurrence entries, the NumPy
layer's gradients (finite differences in float64, PyTorch autograd), glove.c's per-pair AdaGrad in
batches (a batch of one is glove.c's loop), and errors."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import glove as G
from helpers.lib.counting import cooccurrence_matrix
from helpers.lib.glove import (
    GloVeNumpy,
    GloVeVectors,
    cooccurrence_entries,
    glove_cooccurrence,
    glove_weight,
    train_pairwise,
)
from helpers.lib.gradcheck import check_layer
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    dims,
    float_arrays,
    inject,
    non_finite,
    raises_naming,
)

T = torch.tensor
close = closeness(1e-9)


def ids_of(data, V, n):
    return np.array(
        data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n)), dtype=np.int64
    )


def _layer(V=6, D=3, seed=0):
    rng = np.random.default_rng(seed)
    layer = GloVeNumpy(V, D, rng, x_max=10.0)
    for p in layer.params:
        p[...] = rng.standard_normal(p.shape) * 0.5  # larger values than the init: a stricter check
    return layer


@pytest.mark.parametrize(
    "rows,cols,x",
    [
        ([2], [4], [3.0]),  # one pair
        (
            [0, 1, 1, 5, 0],
            [1, 0, 3, 5, 1],
            [1.0, 4.0, 20.0, 7.5, 0.5],
        ),  # repeated ids, x above x_max, diagonal
    ],
)
def test_gradients_finite_differences(rows, cols, x):
    layer = _layer()
    report = check_layer(layer, np.array(rows), np.array(cols), np.array(x))
    assert report.ok, report
    assert len(report.errors) == 4


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
    assert (X != cooccurrence_matrix(sents, 4, window=2, weighting="harmonic")).nnz == 0
    assert X[0, 2] == pytest.approx(0.5)                     # distance 2 counts 1/2
    assert X[1, 2] == pytest.approx(2.0)                     # adjacent in both sentences
    assert (X != X.T).nnz == 0


def test_entries_and_errors():
    X = sp.csr_matrix(np.array([[0, 2.0], [2.0, 1.0]]))
    r, c, x = cooccurrence_entries(X)
    assert sorted(zip(r.tolist(), c.tolist(), x.tolist(), strict=False)) == [
        (0, 1, 2.0),
        (1, 0, 2.0),
        (1, 1, 1.0),
    ]
    r2, c2, x2 = cooccurrence_entries(X.toarray())
    assert len(x2) == 3
    with pytest.raises(ValueError, match="empty"):
        cooccurrence_entries(sp.csr_matrix((3, 3)))
    with pytest.raises(ValueError, match="square"):
        cooccurrence_entries(np.ones((2, 3)))
    with pytest.raises(ValueError, match="learning rate"):
        train_pairwise(X, lr=0, progress=False)


def test_vectors_options():
    gv = GloVeVectors(
        np.ones((2, 3), np.float32), 2 * np.ones((2, 3), np.float32), np.zeros(2), np.zeros(2)
    )
    assert np.all(gv.vectors() == 3) and np.all(gv.vectors("W") == 1)
    with pytest.raises(ValueError, match="which"):
        gv.vectors("C")


def _glove_c_reference(counts, dim, epochs, lr, x_max, alpha, seed):
    """glove.c's training loop, pair by pair, in plain Python (float64), same init and order."""
    rows, cols, x = cooccurrence_entries(counts)
    rng = np.random.default_rng(seed)
    W, Wt, b, bt = (
        p.astype(np.float64)
        for p in GloVeNumpy(counts.shape[0], dim, rng, x_max, alpha, np.float32).params
    )
    gW, gWt, gb, gbt = np.ones_like(W), np.ones_like(Wt), np.ones_like(b), np.ones_like(bt)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for p in torch.randperm(len(x), generator=gen).tolist():
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
    rng = np.random.default_rng(0)
    dense = rng.poisson(3.0, (12, 12)) * (rng.random((12, 12)) < 0.6)
    counts = sp.csr_matrix(dense.astype(np.float64))
    W, Wt = _glove_c_reference(counts, dim=4, epochs=3, lr=0.05, x_max=5.0, alpha=0.75, seed=1)
    g = train_pairwise(
        counts,
        dim=4,
        epochs=3,
        lr=0.05,
        x_max=5.0,
        alpha=0.75,
        batch_size=1,
        seed=1,
        progress=False,
    )
    np.testing.assert_allclose(g.W, W, atol=1e-5)
    np.testing.assert_allclose(g.W_tilde, Wt, atol=1e-5)
    # batches only delay a row's updates: close to the reference, and the loss falls
    big = train_pairwise(
        counts,
        dim=4,
        epochs=3,
        lr=0.05,
        x_max=5.0,
        alpha=0.75,
        batch_size=16,
        seed=1,
        progress=False,
    )
    assert big.epoch_loss[-1] < big.epoch_loss[0]
    stop = train_pairwise(
        counts, dim=4, epochs=5, batch_size=8, progress=False, epoch_end=lambda e, v, loss: e == 2
    )
    assert len(stop.epoch_loss) == 2


def test_train_pairwise_checkpoints_follow_the_full_run():
    """The live training's checkpoints: called every ``checkpoint_every`` pairs with W + W~, a
    True return stops training; what a checkpoint sees is the full run's state at that point."""
    rng = np.random.default_rng(2)
    counts = sp.csr_matrix(
        (rng.poisson(2.0, (10, 10)) * (rng.random((10, 10)) < 0.7)).astype(np.float64)
    )
    P = counts.nnz
    seen, snaps = [], []

    def checkpoint(pairs, vectors):
        seen.append(pairs)
        snaps.append(vectors.copy())
        return len(seen) == 2

    g = train_pairwise(
        counts,
        dim=3,
        epochs=4,
        batch_size=5,
        seed=3,
        progress=False,
        checkpoint=checkpoint,
        checkpoint_every=P,
    )
    assert (
        seen == [P, 2 * P] and len(g.epoch_loss) == 1
    )  # stopped at the end of the second epoch's batches
    one = train_pairwise(counts, dim=3, epochs=1, batch_size=5, seed=3, progress=False)
    np.testing.assert_allclose(snaps[0], one.W + one.W_tilde)
    with pytest.raises(ValueError, match="checkpoint_every"):
        train_pairwise(counts, dim=3, epochs=1, progress=False, checkpoint=checkpoint)


# ---------------------------------------------------------------- properties
@st.composite
def cooccurrences(draw, V):
    X = np.array(draw(st.lists(st.integers(0, 30), min_size=V * V, max_size=V * V)), float).reshape(
        V, V
    )
    X[0, V - 1] += 1
    return X


@budget()
@given(st.data())
def test_the_glove_weighting_and_entries_are_their_formulas(data):
    x = data.draw(float_arrays((5,), 0, 300))
    x_max, alpha = data.draw(st.sampled_from([1.0, 100.0])), data.draw(st.sampled_from([0.5, 0.75]))
    close(G.glove_weight(x, x_max, alpha), np.where(x < x_max, (x / x_max) ** alpha, 1.0))
    raises_naming(lambda: G.glove_weight(inject(x, data.draw(non_finite), 0)), "counts", ValueError)
    raises_naming(lambda: G.glove_weight(x, x_max=0), "x_max", ValueError)
    V = data.draw(dims(1, 4))
    X = data.draw(cooccurrences(V))
    for m in (X, sp.csr_matrix(X)):
        r, c, v = G.cooccurrence_entries(m)
        close(
            sorted(zip(r, c, v)),
            sorted((i, j, X[i, j]) for i, j in zip(*np.nonzero(X), strict=True)),
        )
    raises_naming(lambda: G.cooccurrence_entries(np.zeros((V, V + 1))), "square", ValueError)
    ids = [np.array([0, V - 1, 0])]
    close(G.glove_cooccurrence(ids, V, window=2).toarray(),
          cooccurrence_matrix(ids, V, 2, "harmonic").toarray())


@budget(2)
@given(st.data())
def test_the_glove_layer_is_the_torch_models_loss_and_gradient(data):
    V, D, P = data.draw(dims(1, 5)), data.draw(dims(1, 3)), data.draw(dims(1, 6))
    layer = G.GloVeNumpy(V, D, np.random.default_rng(0))
    rows, cols = ids_of(data, V, P), ids_of(data, V, P)
    x = data.draw(float_arrays((P,), 0.5, 200))
    model = G.GloVeTorch(V, D).double().load_numpy(layer.params)
    J = model(T(rows), T(cols), T(np.log(x)), T(G.glove_weight(x)))
    J.backward()
    close(layer.forward(rows, cols, x), J.item())
    layer.backward()
    for g, emb in zip(layer.grads, (model.W, model.W_tilde, model.b, model.b_tilde), strict=True):
        close(g, emb.weight.grad.reshape(g.shape))
    check_bad_ids(
        lambda r: layer.forward(r, cols, x), rows, V, "rows", data.draw(corrupted(rows, V))
    )
    check_bad_ids(lambda c: model(torch.as_tensor(c), T(rows), T(np.log(x)), T(x)), cols, V, "rows",
                  data.draw(corrupted(cols, V)))
    raises_naming(
        lambda: layer.forward(rows, cols, inject(x, data.draw(non_finite), 0)), "x", ValueError
    )
    raises_naming(lambda: layer.forward(rows, cols, -x), "x", ValueError)


@budget(0.3)
@given(st.data())
def test_train_pairwise_fits_a_tiny_matrix_and_checks_its_vocabulary(data):
    V = data.draw(dims(1, 4))
    X = data.draw(cooccurrences(V))
    gv = train_pairwise(sp.csr_matrix(X), dim=2, epochs=2, vocab=[f"w{i}" for i in range(V)],
                        progress=False)
    assert gv.vectors().shape == (V, 2) and len(gv.epoch_loss) == 2 and np.all(np.isfinite(gv.W))
    raises_naming(lambda: train_pairwise(X, dim=2, epochs=1, vocab=["x"] * (V + 1), progress=False),
                  "vocab", ValueError)
    raises_naming(lambda: train_pairwise(X, dim=0, progress=False), "dim", ValueError)


def brute_pairwise(params, G0, r, c, log_x, f, lr):
    """glove.c's per-pair step, every pair from the batch's start values, a row's steps added."""
    W, Wt, b, bt = (p.copy() for p in params)
    acc = [g.copy() for g in G0]
    start = [p.copy() for p in params]
    total = 0.0
    for p in range(len(r)):
        i, j = r[p], c[p]
        e = start[0][i] @ start[1][j] + start[2][i] + start[3][j] - log_x[p]
        total += f[p] * e * e
        fd = lr * f[p] * e
        for k, (param, ids, step) in enumerate(((W, i, fd * start[1][j]), (Wt, j, fd * start[0][i]),
                                                (b, i, fd), (bt, j, fd))):
            param[ids] -= step / np.sqrt(G0[k][ids])
            acc[k][ids] += step * step
    return total, (W, Wt, b, bt), acc


@budget(0.5)
@given(st.data())
def test_a_pairwise_batch_is_the_loop_over_its_pairs(data):
    V, D, m = data.draw(dims(1, 4)), data.draw(dims(1, 3)), data.draw(dims(1, 6))
    params = [
        data.draw(float_arrays((V, D), -0.5, 0.5)),
        data.draw(float_arrays((V, D), -0.5, 0.5)),
        data.draw(float_arrays((V,), -0.5, 0.5)),
        data.draw(float_arrays((V,), -0.5, 0.5)),
    ]
    acc = [1 + np.abs(data.draw(float_arrays(p.shape))) for p in params]
    r, c = ids_of(data, V, m), ids_of(data, V, m)
    r[0], c[0] = 0, V - 1
    log_x = data.draw(float_arrays((m,), 0, 4))
    f = data.draw(float_arrays((m,), 0, 1))
    lr = data.draw(st.sampled_from([0.05, 0.5]))
    ref_loss, ref_params, ref_acc = brute_pairwise(params, acc, r, c, log_x, f, lr)
    tp, tG = [T(p) for p in params], [T(a) for a in acc]
    loss = G.pairwise_step_torch(tp, tG, T(r), T(c), T(log_x), T(f), lr)
    close(loss, ref_loss)
    for ours, ref in zip(tp + tG, list(ref_params) + ref_acc, strict=True):
        close(ours, ref)


def test_load_numpy_wants_the_four_arrays():
    with pytest.raises(ValueError, match=r"load_numpy expects the four arrays \[W, W~, b, b~\], got 2"):
        G.GloVeTorch(4, 2).load_numpy([np.zeros((4, 2)), np.zeros((4, 2))])
