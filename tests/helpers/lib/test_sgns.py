"""helpers.lib.sgns: the batch loss and gradients are autograd's and finite differences',
scatter_rows is np.add.at, one SGD step is the brute-force update, bad input is named."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import sgns
from helpers.lib.checks import IdOutOfRangeError
from helpers.lib.gradcheck import numerical_gradient
from tests.props import budget, closeness, dims, float_arrays, inject, raises_naming

close = closeness(1e-9)


def _ids(data, V, shape):
    n = int(np.prod(shape))
    ids = data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n))
    return np.array(ids, np.int64).reshape(shape)


@budget()
@given(st.data())
def test_the_loss_and_its_gradients_are_autograds_and_finite_differences(data):
    B, d, k = data.draw(dims(1, 4)), data.draw(dims(1, 3)), data.draw(dims(1, 3))
    v, u, U = (data.draw(float_arrays(s)) for s in ((B, d), (B, d), (B, k, d)))
    t = [torch.tensor(a, requires_grad=True) for a in (v, u, U)]
    ref = F.softplus(-(t[1] * t[0]).sum(1)) + F.softplus((t[2] * t[0][:, None]).sum(2)).sum(1)
    ref.sum().backward()
    loss, *grads = sgns.ns_loss_and_gradients(v, u, U)
    close(loss, ref.detach())
    for g, ti in zip(grads, t, strict=True):
        close(g, ti.grad)
    vn = v.copy()
    total = lambda: float(sgns.ns_loss_and_gradients(vn, u, U)[0].sum())  # noqa: E731
    close(grads[0], numerical_gradient(total, vn), 1e-6)


def test_the_loss_stays_finite_for_scores_of_800_and_nan_is_named():
    v, u = np.array([[40.0, 0.0]]), np.array([[-20.0, 0.0]])
    loss, dv, *_ = sgns.ns_loss_and_gradients(v, u, np.array([[[20.0, 0.0]]]))
    assert loss[0] == pytest.approx(1600.0) and np.isfinite(dv).all()
    with np.errstate(all="ignore"):
        checks = (("v", (inject(v, np.nan, 0), u, u[:, None])),
                  ("u_c", (v, inject(u, np.inf, 1), u[:, None])),
                  ("U_neg", (v, u, inject(u, -np.inf, 0)[:, None])))
        for name, args in checks:
            raises_naming(lambda args=args: sgns.ns_loss_and_gradients(*args), name, ValueError)
        W, C = np.ones((4, 2)), inject(np.zeros((4, 2)), np.inf, 5)   # a diverged table
        raises_naming(lambda: sgns.sgd_step(W, C, np.array([0]), np.array([2]), np.array([[1]]),
                                            0.1), "u_c", ValueError)
    raises_naming(lambda: sgns.ns_loss_and_gradients(v, u, u), "U_neg", ValueError)


@budget()
@given(st.data())
def test_scatter_rows_is_np_add_at_on_the_rows_used(data):
    V, n, d = data.draw(dims(1, 6)), data.draw(dims(1, 8)), data.draw(dims(1, 3))
    ids, grads = _ids(data, V, (n,)), data.draw(float_arrays((n, d)))
    rows, summed = sgns.scatter_rows(ids, grads, V)
    dense = np.zeros((V, d))
    np.add.at(dense, ids, grads)
    assert rows.tolist() == sorted(set(ids.tolist()))
    close(summed, dense[rows])
    raises_naming(lambda: sgns.scatter_rows(ids, grads[:-1], V), "grads", ValueError)


@budget()
@given(st.data())
def test_one_sgd_step_is_the_brute_force_update(data):
    V, d, B, k = (data.draw(dims(1, n)) for n in (5, 3, 4, 3))
    W, C = data.draw(float_arrays((V, d))), data.draw(float_arrays((V, d)))
    words, contexts, negatives = _ids(data, V, (B,)), _ids(data, V, (B,)), _ids(data, V, (B, k))
    loss, dv, du, dU = sgns.ns_loss_and_gradients(W[words], C[contexts], C[negatives])
    W_ref, C_ref = W.copy(), C.copy()
    for b in range(B):                          # every gradient from the values before the step
        W_ref[words[b]] -= 0.1 * dv[b]
        C_ref[contexts[b]] -= 0.1 * du[b]
        for j in range(k):
            C_ref[negatives[b, j]] -= 0.1 * dU[b, j]
    got = sgns.sgd_step(W, C, words, contexts, negatives, 0.1)
    close(got[0], loss.mean())
    close(got[1], W_ref)
    close(got[2], C_ref)


def test_bad_batches_name_their_argument():
    W, C = np.ones((5, 3)), np.zeros((5, 3))
    args = {"words": np.array([0, 1]), "contexts": np.array([2, 3]),
            "negatives": np.array([[1], [4]])}
    for which in args:
        bad = dict(args, **{which: np.full_like(args[which], 5)})
        with pytest.raises(IdOutOfRangeError, match=f"sgd_step.*{which}|{which}.*sgd_step"):
            sgns.sgd_step(W, C, bad["words"], bad["contexts"], bad["negatives"], 0.1)
    empty = np.zeros(0, np.int64)
    raises_naming(lambda: sgns.sgd_step(W, C, empty, empty, empty.reshape(0, 1), 0.1), "words",
                  ValueError)
    raises_naming(lambda: sgns.sgd_step(W, C, *args.values(), np.nan), "lr", ValueError)
    raises_naming(lambda: sgns.sgd_step(inject(W, np.nan, 0), C, *args.values(), 0.1), "v",
                  ValueError)
