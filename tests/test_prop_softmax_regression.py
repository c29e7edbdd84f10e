"""Properties of helpers.lib.extrinsic's softmax regression (lesson 09, Exercise 5's reference):
the loss and gradient are PyTorch's cross-entropy and autograd on random small inputs, also for scores
in the thousands; the L-BFGS fit reaches scikit-learn's minimum; bad input raises an error naming the
argument (nan refused, ids by the library's rule)."""
import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from helpers.lib import extrinsic as EX
from tests.props import (
    budget,
    corrupted,
    covers,
    dims,
    float_arrays,
    inject,
    non_finite,
    raises_naming,
)


def _torch_loss_grad(X, y, W, b, l2):
    Wt = torch.tensor(W, requires_grad=True)
    bt = torch.tensor(b, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(torch.tensor(X) @ Wt + bt, torch.tensor(y)) + 0.5 * l2 * (Wt * Wt).sum()
    loss.backward()
    return float(loss), Wt.grad.numpy(), bt.grad.numpy()


@covers("extrinsic.softmax_regression_loss_grad")
@budget(2)
@given(st.data())
def test_the_loss_and_gradient_are_pytorchs(data):
    n, d, k = data.draw(dims(1, 6)), data.draw(dims(1, 4)), data.draw(dims(2, 4))
    scale = data.draw(st.sampled_from([1.0, 300.0]))             # 300: scores in the hundreds to thousands
    X, W, b = data.draw(float_arrays((n, d))), scale * data.draw(float_arrays((d, k))), data.draw(float_arrays((k,)))
    y = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    l2 = data.draw(st.sampled_from([0.0, 0.01, 1.0]))
    got, want = EX.softmax_regression_loss_grad(X, y, W, b, l2), _torch_loss_grad(X, y, W, b, l2)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9 * max(1.0, abs(float(np.max(np.abs(w))))))
    assert np.isfinite(got[0])
    bad_y = data.draw(corrupted(y, k))
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, bad_y[0], W, b, l2), "y")
    value, where = data.draw(non_finite), data.draw(st.integers(0, 100))
    raises_naming(lambda: EX.softmax_regression_loss_grad(inject(X, value, where), y, W, b, l2), "X", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y, inject(W, value, where), b, l2), "W", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y, W, b, -1.0), "l2", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y[:-1] if n > 1 else np.array([], np.int64), W, b, l2),
                  "y", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y, W[:, :1], b, l2), "W", ValueError)


@covers("extrinsic.fit_softmax_regression")
@budget(0.5)
@given(st.data())
def test_the_fit_reaches_scikit_learns_minimum(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 10)))
    n, d, k = 30, 3, 3
    y = np.arange(n) % k
    X = rng.normal(size=(n, d)) + np.eye(k, d)[y] * 2.0
    l2 = data.draw(st.sampled_from([0.1, 1.0])) / n
    W, b = EX.fit_softmax_regression(X, y, k, l2)
    sk = LogisticRegression(C=1 / (l2 * n), tol=1e-10, max_iter=10_000).fit(X, y)
    ours = EX.softmax_regression_loss_grad(X, y, W, b, l2)[0]
    theirs = EX.softmax_regression_loss_grad(X, y, sk.coef_.T, sk.intercept_, l2)[0]
    assert ours <= theirs + 1e-7
    Z = X @ W + b
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(P / P.sum(axis=1, keepdims=True), sk.predict_proba(X), atol=1e-3)
    raises_naming(lambda: EX.fit_softmax_regression(X, y, 2, l2), "y", ValueError)
    raises_naming(lambda: EX.fit_softmax_regression(X, y, 2.0, l2), "n_classes", TypeError)
    raises_naming(lambda: EX.fit_softmax_regression(inject(X, np.nan, 0), y, k, l2), "X", ValueError)
