"""Properties of helpers.lib.sgns: the negative-sampling loss and gradients are PyTorch autograd's
(stable for large scores), the scattered rows are np.add.at's, one SGD step is the brute-force
update, and ids outside the table are refused by name."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import sgns as S
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    covers,
    dims,
    float_arrays,
    raises_naming,
)

T = torch.tensor


close = closeness(1e-9)


def ids_of(data, V, shape):
    n = int(np.prod(shape))
    return np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n)), np.int64).reshape(shape)


def autograd_ns(v, u_o, U_neg):
    tv, to, tn = (T(a, requires_grad=True) for a in (v, u_o, U_neg))
    # logsigmoid, not softplus: softplus is linear above its threshold 20 (a gradient of exactly 1)
    loss = -F.logsigmoid((tv * to).sum(1)) - F.logsigmoid(-torch.einsum("bkd,bd->bk", tn, tv)).sum(1)
    return (loss.detach().numpy(), *torch.autograd.grad(loss.sum(), (tv, to, tn)))


@covers("sgns.ns_loss_and_gradients")
@budget(0.5)
@given(st.data())
def test_the_ns_loss_and_its_gradients_are_autograds(data):
    B, k, d = data.draw(dims(1, 3)), data.draw(dims(0, 3)), data.draw(dims(1, 3))
    lim = data.draw(st.sampled_from([3.0, 30.0]))                 # 30: scores up to ±2700, no overflow
    v, u_o, U_neg = data.draw(float_arrays((B, d), -lim, lim)), data.draw(float_arrays((B, d), -lim, lim)), \
        data.draw(float_arrays((B, k, d), -lim, lim))
    ours = S.ns_loss_and_gradients(v, u_o, U_neg)
    ref = autograd_ns(v, u_o, U_neg)
    assert [a.shape for a in ours] == [(B,), (B, d), (B, d), (B, k, d)]
    assert all(np.all(np.isfinite(a)) for a in ours)
    for a, r in zip(ours, ref, strict=True):
        close(a, r, 1e-9)
    raises_naming(lambda: S.ns_loss_and_gradients(v, u_o[:, :0], U_neg), "u_o", ValueError)
    raises_naming(lambda: S.ns_loss_and_gradients(v, u_o, U_neg[:, :, :0]), "U_neg", ValueError)
    raises_naming(lambda: S.ns_loss_and_gradients(v[0], u_o, U_neg), "v", ValueError)


@covers("sgns.scatter_rows")
@budget(0.5)
@given(st.data())
def test_scatter_rows_is_np_add_at_on_the_rows_used(data):
    V, n, d = data.draw(dims(1, 6)), data.draw(dims(1, 8)), data.draw(dims(1, 3))
    ids = ids_of(data, V, (n,))
    ids[0] = data.draw(st.sampled_from([0, V - 1]))
    grads = data.draw(float_arrays((n, d)))
    rows, summed = S.scatter_rows(ids, grads, V)
    dense = np.zeros((V, d))
    np.add.at(dense, ids, grads)
    assert np.array_equal(rows, np.unique(ids))
    close(summed, dense[rows], 1e-12)
    check_bad_ids(lambda x: S.scatter_rows(x, grads, V), ids, V, "ids", data.draw(corrupted(ids, V)))
    raises_naming(lambda: S.scatter_rows(ids, grads[:-1], V), "grads", ValueError)
    raises_naming(lambda: S.scatter_rows(ids, grads.ravel(), V), "grads", ValueError)


@covers("sgns.sgd_step")
@budget(0.5)
@given(st.data())
def test_one_sgd_step_is_the_brute_force_update(data):
    V, d, B, k = data.draw(dims(1, 5)), data.draw(dims(1, 3)), data.draw(dims(1, 4)), data.draw(dims(1, 3))
    W, C = data.draw(float_arrays((V, d))), data.draw(float_arrays((V, d)))
    centers, contexts, negatives = ids_of(data, V, (B,)), ids_of(data, V, (B,)), ids_of(data, V, (B, k))
    centers[0], negatives[0, 0] = 0, V - 1
    lr = data.draw(st.sampled_from([0.01, 0.5]))
    loss_b, dv, du, dn = autograd_ns(W[centers], C[contexts], C[negatives])
    W2, C2 = W.copy(), C.copy()
    np.add.at(W2, centers, -lr * dv.numpy())
    np.add.at(C2, contexts, -lr * du.numpy())
    np.add.at(C2, negatives.reshape(-1), -lr * dn.numpy().reshape(B * k, d))
    W1, C1 = W.copy(), C.copy()
    loss, Wo, Co = S.sgd_step(W1, C1, centers, contexts, negatives, lr)
    assert Wo is W1 and Co is C1
    close(loss, loss_b.mean())
    close(W1, W2)
    close(C1, C2)
    seen = []
    S.sgd_step(W.copy(), C.copy(), centers, contexts, negatives, lr,
               gradients=lambda *a: seen.append(a) or S.ns_loss_and_gradients(*a))
    close(seen[0][0], W[centers], 0)
    for bad in (-1, V):                      # -1 reads the last row before scatter_rows refuses it
        c = centers.copy()
        c[0] = bad
        with pytest.raises(IndexError):
            S.sgd_step(W.copy(), C.copy(), c, contexts, negatives, lr)
