"""helpers.lib.glove (lesson 08): the weighting and cells, a batch's loss and gradients against
PyTorch and finite differences, glove.c's AdaGrad step, and the seeded NumPy trainer."""
import numpy as np
import scipy.sparse as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import glove as G
from helpers.lib.gradcheck import numerical_gradient
from tests.props import budget, closeness, dims, float_arrays, inject, non_finite, raises_naming
from training.glove_torch import pairwise_step_torch, train_pairwise

close = closeness(1e-9)
T = torch.tensor


@st.composite
def cooccurrences(draw, V):
    cells = draw(st.lists(st.integers(0, 30), min_size=V * V, max_size=V * V))
    X = np.array(cells, float).reshape(V, V)
    X[0, V - 1] += 1
    return X


@budget()
@given(st.data())
def test_the_weighting_and_the_cells_are_their_formulas(data):
    x = data.draw(float_arrays((5,), 0, 300))
    x_max, alpha = data.draw(st.sampled_from([1.0, 100.0])), data.draw(st.sampled_from([0.5, 0.75]))
    close(G.glove_weight(x, x_max, alpha), np.where(x < x_max, (x / x_max) ** alpha, 1.0))
    raises_naming(lambda: G.glove_weight(inject(x, data.draw(non_finite), 0)), "counts", ValueError)
    raises_naming(lambda: G.glove_weight(x, x_max=0), "x_max", ValueError)
    V = data.draw(dims(1, 4))
    X = data.draw(cooccurrences(V))
    for m in (X, sp.csr_matrix(X)):
        r, c, v = G.cooccurrence_entries(m)
        close(sorted(zip(r, c, v)),
              sorted((i, j, X[i, j]) for i, j in zip(*np.nonzero(X), strict=True)))
    raises_naming(lambda: G.cooccurrence_entries(np.zeros((V, V + 1))), "square", ValueError)
    raises_naming(lambda: G.cooccurrence_entries(np.zeros((V, V))), "empty", ValueError)


@budget()
@given(st.data())
def test_a_batch_of_cells_is_autograds_and_finite_differences(data):
    P, D = data.draw(dims(1, 5)), data.draw(dims(1, 3))
    v, u = data.draw(float_arrays((P, D), -1, 1)), data.draw(float_arrays((P, D), -1, 1))
    b_w, b_c = data.draw(float_arrays((P,), -1, 1)), data.draw(float_arrays((P,), -1, 1))
    x = data.draw(float_arrays((P,), 0.1, 50))
    t = [T(a, requires_grad=True) for a in (v, u, b_w, b_c)]
    e = (t[0] * t[1]).sum(1) + t[2] + t[3] - torch.log(T(x))
    J = (T(G.glove_weight(x, 10.0)) * e * e).sum()
    J.backward()
    loss, *grads = G.glove_cell(v, u, b_w, b_c, x, 10.0)
    close(loss, J.item())
    for g, ref in zip(grads, t, strict=True):
        close(g, ref.grad)
    vn = v.copy()
    close(grads[0], numerical_gradient(lambda: G.glove_cell(vn, u, b_w, b_c, x, 10.0)[0], vn), 1e-5)
    raises_naming(lambda: G.glove_cell(v, u, b_w, b_c, inject(x, data.draw(non_finite), 0)), "x",
                  ValueError)


def test_adagrad_divides_by_the_sum_before_the_step():
    p, g, acc = np.array([1.0, -1.0]), np.array([0.5, 2.0]), np.array([1.0, 4.0])
    new, new_acc = G.adagrad_glove_c(p, g, acc, 0.1)
    close(new, [1 - 0.05, -1 - 0.2 / 2])
    close(new_acc, [1 + 0.05 ** 2, 4 + 0.2 ** 2])


@budget(0.3)
@given(V=dims(2, 5), dim=dims(1, 3), batch=dims(1, 4), seed=st.integers(0, 3))
def test_the_numpy_trainer_takes_the_shipped_trainers_steps(V, dim, batch, seed):
    rng = np.random.default_rng(seed)
    counts = sp.csr_matrix(rng.integers(0, 4, (V, V)) * (1 + rng.random((V, V))) + np.eye(V))
    model = G.PairwiseGloVe(counts, dim=dim, lr=0.05, x_max=3.0, batch_size=batch, seed=seed)
    twin = G.PairwiseGloVe(counts, dim=dim, lr=0.05, x_max=3.0, batch_size=batch, seed=seed)
    first = model.order[:batch]
    r, c, x = model.rows[first], model.cols[first], model.x[first]
    tp, tG = [T(p.copy()) for p in model.params], [T(g.copy()) for g in model.G]
    f = T(G.glove_weight(x, 3.0).astype(np.float32))
    ref = pairwise_step_torch(tp, tG, T(r), T(c), T(np.log(x)), f, 0.05)
    loss = model.step()
    close(loss * len(first), ref, 1e-5)
    for ours, theirs in zip(model.params + model.G, tp + tG, strict=True):
        close(ours, theirs, 1e-5)
    steps = -(-model.P // batch)
    losses = [loss] + [model.step() for _ in range(20 * steps - 1)]
    assert [twin.step() for _ in range(len(losses))] == losses         # seeded: the same run
    assert np.mean(losses[-steps:]) < np.mean(losses[:steps])                      # it learns
    raises_naming(lambda: G.PairwiseGloVe(counts, dim=0), "dim", ValueError)
    raises_naming(lambda: G.PairwiseGloVe(counts, lr=0.0), "lr", ValueError)


def test_the_numpy_trainer_is_the_shipped_trainer_and_uses_the_functions_it_is_given():
    rng = np.random.default_rng(2)
    dense = rng.poisson(2.0, (10, 10)) * (rng.random((10, 10)) < 0.7)
    counts = sp.csr_matrix(dense.astype(np.float64))
    calls = {"cell": 0, "step": 0}

    def cell(*a):
        calls["cell"] += 1
        return G.glove_cell(*a)

    def in_place_step(param, grad, acc, lr):   # a correct step that updates its arguments in place
        calls["step"] += 1
        step = lr * grad
        param -= step / np.sqrt(acc)
        acc += step * step
        return param, acc

    model = G.PairwiseGloVe(counts, dim=3, lr=0.1, x_max=5.0, batch_size=4, seed=3, cell=cell,
                            step=in_place_step)
    for _ in range(-(-model.P // 4)):
        model.step()
    ref = train_pairwise(counts, dim=3, epochs=1, lr=0.1, x_max=5.0, batch_size=4, seed=3,
                         progress=False)
    np.testing.assert_allclose(model.vectors(), ref.W + ref.W_tilde, rtol=1e-5, atol=1e-6)
    assert calls["cell"] == -(-model.P // 4) and calls["step"] == 4 * calls["cell"]
    assert model.epochs == 1.0


def test_unseen_cells_are_unseen_and_pushed_down_only_above_their_floor():
    rng = np.random.default_rng(4)
    dense = rng.poisson(2.0, (12, 12)) * (rng.random((12, 12)) < 0.4) + np.eye(12)
    counts = sp.csr_matrix(dense.astype(np.float64))
    X_w = dense.sum(axis=1)
    model = G.PairwiseGloVe(counts, dim=3, lr=0.1, x_max=5.0, batch_size=1, seed=1, unseen=200,
                            unseen_weight=0.5, margin=0.3)
    i, j = model.unseen_cells()
    assert len(i) > 50 and (dense[i, j] == 0).all()
    close(model.unseen_floor(i, j), np.log(X_w[i] * X_w[j] / X_w.sum()) - 0.3, 1e-9)
    r, c = model.rows[model.order[0]], model.cols[model.order[0]]
    w, k = next((a, b) for a, b in zip(i, j, strict=True) if a != r and b != c)
    for margin in (-50.0, 50.0):          # every prediction below the floor, then every one above
        m = G.PairwiseGloVe(counts, dim=3, lr=0.1, x_max=5.0, batch_size=1, seed=1, unseen=1,
                            unseen_weight=0.5, margin=margin)
        m.unseen_cells = lambda w=w, k=k: (np.array([w]), np.array([k]))
        (W, U, b, bt), t0 = [p.copy() for p in m.params], m.unseen_floor([w], [k])[0]
        e = W[w] @ U[k] + b[w] + bt[k] - t0
        m.step()
        pushed = 0.1 * 0.5 * e if e > 0 else 0.0      # lr · f0 · e: glove.c's half gradient, G = 1
        close(m.params[0][w], W[w] - pushed * U[k], 1e-6)
        close(m.params[3][k], bt[k] - pushed, 1e-6)
        assert (e > 0) == (margin > 0)
    raises_naming(lambda: G.PairwiseGloVe(counts, unseen=-1), "unseen", ValueError)
