"""Tests of helpers.lib.glove_numpy (lesson 08's pair-by-pair GloVe in NumPy): the cell's loss
and gradients are PyTorch autograd's, the AdaGrad step is glove.c's formula, add_rows is
np.add.at, and one step of PairwiseGloVe is the shipped trainer's step on the same batch (float32
rounding apart)."""
import numpy as np
import scipy.sparse as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import glove as G
from helpers.lib import glove_numpy as GN
from tests.props import (
    budget,
    closeness,
    dims,
    float_arrays,
    raises_naming,
)

T = torch.tensor


close = closeness(1e-9)


def ids_of(data, V, n):
    return np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n)), np.int64)


@budget(0.5)
@given(st.data())
def test_the_glove_cell_is_its_loss_under_autograd(data):
    P, D = data.draw(dims(1, 4)), data.draw(dims(1, 3))
    w, w_t = data.draw(float_arrays((P, D))), data.draw(float_arrays((P, D)))
    b, b_t = data.draw(float_arrays((P,))), data.draw(float_arrays((P,)))
    x_max, alpha = data.draw(st.sampled_from([(100.0, 0.75), (2.0, 0.5)]))
    x = np.array(
        data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 7.0, 150.0]), min_size=P, max_size=P))
    )
    loss, dw, dw_t, db, db_t = GN.glove_cell(w, w_t, b, b_t, x, x_max, alpha)
    tw, twt, tb, tbt = (T(a, requires_grad=True) for a in (w, w_t, b, b_t))
    f = T(G.glove_weight(x, x_max, alpha))
    ref = (f * ((tw * twt).sum(1) + tb + tbt - T(np.log(x))) ** 2).sum()
    close(loss, ref.item())
    for ours, r in zip(
        (dw, dw_t, db, db_t), torch.autograd.grad(ref, (tw, twt, tb, tbt)), strict=True
    ):
        close(ours, r)
    one = GN.glove_cell(
        w[0], w_t[0], b[0], b_t[0], x[0], x_max, alpha
    )  # one pair as (D,) and scalars
    close(one[0], GN.glove_cell(w[:1], w_t[:1], b[:1], b_t[:1], x[:1], x_max, alpha)[0])


@budget(0.5)
@given(st.data())
def test_the_adagrad_step_is_glove_cs_formula(data):
    shape = (data.draw(dims(1, 3)), data.draw(dims(1, 3)))
    p, g = data.draw(float_arrays(shape)), data.draw(float_arrays(shape))
    acc = 1 + np.abs(data.draw(float_arrays(shape)))
    lr = data.draw(st.sampled_from([0.05, 0.5]))
    new, new_G = GN.adagrad_glove_c(p, g, acc, lr)
    for idx in np.ndindex(shape):  # the step divided by sqrt(G) before its square is added
        assert np.isclose(
            new[idx], p[idx] - lr * g[idx] / np.sqrt(acc[idx]), rtol=1e-14, atol=1e-15
        )
        assert np.isclose(new_G[idx], acc[idx] + (lr * g[idx]) ** 2, rtol=1e-14)


@budget(0.5)
@given(st.data())
def test_add_rows_is_np_add_at(data):
    V, n = data.draw(dims(1, 5)), data.draw(dims(1, 8))
    shape = data.draw(st.sampled_from([(V,), (V, 2)]))
    target = data.draw(float_arrays(shape))
    ids = ids_of(data, V, n)
    ids[0] = data.draw(st.sampled_from([0, V - 1]))
    values = data.draw(float_arrays((n, *shape[1:])))
    ref = target.copy()
    np.add.at(ref, ids, values)
    GN.add_rows(target, ids, values)
    close(target, ref, 1e-12)


@budget(0.5)
@given(st.data())
def test_one_hot_sums_is_a_one_hot_matrix_over_the_distinct_ids(data):
    V, n = data.draw(dims(1, 6)), data.draw(dims(1, 8))
    ids = ids_of(data, V, n)
    uniq, S = GN.one_hot_sums(ids, V, np.float64)
    assert np.array_equal(uniq, np.unique(ids))                    # the distinct ids, sorted
    dense = S.toarray()
    assert S.shape == (len(uniq), n) and set(np.unique(dense)) <= {0.0, 1.0}
    assert np.array_equal(dense.sum(axis=0), np.ones(n))  # every pair in exactly one row ...
    assert np.array_equal(uniq[dense.argmax(axis=0)], ids)         # ... the row of its own id
    values = data.draw(float_arrays((n, 2)))
    ref = np.zeros((V, 2))
    np.add.at(ref, ids, values)
    close(ref[uniq], S @ values, 1e-12)


@budget(0.2)
@given(V=dims(2, 5), dim=dims(1, 3), batch=dims(1, 4), seed=st.integers(0, 3), data=st.data())
def test_pairwise_glove_is_pairwise_step_torch_seeded_and_learns(V, dim, batch, seed, data):
    rng = np.random.default_rng(seed)
    counts = sp.csr_matrix(rng.integers(0, 4, (V, V)) * (1 + rng.random((V, V))))
    if counts.nnz == 0:
        counts = sp.csr_matrix(np.eye(V))
    model = GN.PairwiseGloVe(counts, dim=dim, lr=0.05, x_max=3.0, batch_size=batch, seed=seed)
    twin = GN.PairwiseGloVe(counts, dim=dim, lr=0.05, x_max=3.0, batch_size=batch, seed=seed)
    first = model.order[:batch]
    r, c, x = model.rows[first], model.cols[first], model.x[first]
    tp = [T(p.copy()) for p in model.params]
    tG = [T(g.copy()) for g in model.G]
    ref = G.pairwise_step_torch(
        tp, tG, T(r), T(c), T(np.log(x)), T(G.glove_weight(x, 3.0).astype(np.float32)), 0.05
    )
    loss = model.step()
    close(loss * len(first), ref, 1e-5)
    for ours, theirs in zip(model.params + model.G, tp + tG, strict=True):
        close(ours, theirs, 1e-5)
    assert np.isclose(model.epochs, len(first) / model.P) and model.pairs_seen == len(first)
    close(model.vectors(), model.params[0] + model.params[1], 0)
    steps = -(-model.P // batch)
    losses = [loss] + [model.step() for _ in range(20 * steps - 1)]
    assert np.all(np.isfinite(losses))
    assert [twin.step() for _ in range(len(losses))] == losses  # seeded: the same run
    assert np.mean(losses[-steps:]) < np.mean(losses[:steps])                       # it learns
    raises_naming(lambda: GN.PairwiseGloVe(counts, dim=0), "dim", ValueError)
    raises_naming(lambda: GN.PairwiseGloVe(counts, batch_size=0), "batch_size", ValueError)
    raises_naming(lambda: GN.PairwiseGloVe(counts, lr=0.0), "lr", ValueError)
    raises_naming(lambda: GN.PairwiseGloVe(counts * 0), "empty", ValueError)
