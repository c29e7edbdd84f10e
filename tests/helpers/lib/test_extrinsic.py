"""helpers.lib.extrinsic: softmax regression's loss and gradient are PyTorch's (scores in the
thousands too), its L-BFGS fit reaches scikit-learn's minimum, and bad input names the argument."""
import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from helpers.lib import extrinsic as EX
from tests.props import budget, corrupted, dims, float_arrays, inject, non_finite, raises_naming


@budget(2)
@given(st.data())
def test_the_loss_and_gradient_are_pytorchs(data):
    n, d, k = data.draw(dims(1, 6)), data.draw(dims(1, 4)), data.draw(dims(2, 4))
    scale = data.draw(st.sampled_from([1.0, 300.0]))          # 300: scores in the thousands
    X, W, b = (data.draw(float_arrays((n, d))), scale * data.draw(float_arrays((d, k))),
               data.draw(float_arrays((k,))))
    y = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    l2 = data.draw(st.sampled_from([0.0, 0.01, 1.0]))
    Wt, bt = torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(torch.tensor(X) @ Wt + bt, torch.tensor(y))
    loss = loss + 0.5 * l2 * (Wt * Wt).sum()
    loss.backward()
    for got, want in zip(EX.softmax_regression_loss_grad(X, y, W, b, l2),
                         (loss.item(), Wt.grad.numpy(), bt.grad.numpy())):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(want).max()))
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, data.draw(corrupted(y, k))[0], W, b,
                                                          l2), "y")
    value, where = data.draw(non_finite), data.draw(st.integers(0, 100))
    bad_X, bad_W = inject(X, value, where), inject(W, value, where)
    raises_naming(lambda: EX.softmax_regression_loss_grad(bad_X, y, W, b, l2), "X", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y, bad_W, b, l2), "W", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y, W, b, -1.0), "l2", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y[:-1], W, b, l2), "y", ValueError)
    raises_naming(lambda: EX.softmax_regression_loss_grad(X, y, W[:, :1], b, l2), "W", ValueError)


def test_the_fit_reaches_scikit_learns_minimum():
    rng = np.random.default_rng(3)
    n, d, k = 30, 3, 3
    y = np.arange(n) % k
    X = rng.normal(size=(n, d)) + np.eye(k, d)[y] * 2.0
    for l2 in (0.1 / n, 1.0 / n):
        W, b = EX.fit_softmax_regression(X, y, k, l2)
        sk = LogisticRegression(C=1 / (l2 * n), tol=1e-10, max_iter=10_000).fit(X, y)
        P = np.exp(X @ W + b)
        np.testing.assert_allclose(P / P.sum(axis=1, keepdims=True), sk.predict_proba(X), atol=1e-3)
    raises_naming(lambda: EX.fit_softmax_regression(X, y, 2, 0.1), "y", ValueError)
    raises_naming(lambda: EX.fit_softmax_regression(X, y, 2.0, 0.1), "n_classes", TypeError)
    raises_naming(lambda: EX.fit_softmax_regression(inject(X, np.nan, 0), y, k, 0.1), "X")


def test_the_held_out_split_leaves_copies_of_training_documents_out():
    labels = ["a"] * 40 + ["b"] * 40
    train, test = EX.held_out_split(labels, 0)
    assert len(test) == 24 and not set(train) & set(test)
    assert sum(labels[i] == "a" for i in test) == 12                  # stratified
    groups = [i // 2 for i in range(80)]                               # 2k and 2k + 1: copies
    kept = EX.held_out_split(labels, 0, groups)[1]
    assert list(kept) == [i for i in test if groups[i] not in {groups[j] for j in train}]
    assert 0 < len(kept) < len(test)
    raises_naming(lambda: EX.held_out_split(labels, 0, groups[:-1]), "group", ValueError)
    raises_naming(lambda: EX.held_out_split(labels, 0, [0] * 80), "groups", ValueError)
    raises_naming(lambda: EX.make_classifier("svm"), "classifier", ValueError)
