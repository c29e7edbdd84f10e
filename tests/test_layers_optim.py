import numpy as np
import pytest
import scipy.sparse as sp
import torch

from helpers.lib.gradcheck import (
    assert_close_to_torch,
    check_function,
    check_layer,
    numerical_gradient,
    relative_error,
)
from helpers.lib.layers import (
    Activation,
    Dropout,
    Embedding,
    Linear,
    SigmoidCrossEntropy,
    SoftmaxCrossEntropy,
    log_softmax,
    mlp,
    sigmoid,
    softmax,
)
from helpers.lib.optim import SGD, Adam, Momentum, RMSProp, add_weight_penalty, clip_global_norm


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("shape", [(1, 3), (4, 5)])
def test_linear_gradients(rng, shape):
    report = check_layer(Linear(shape[1], 2, rng), rng.standard_normal(shape), rng=rng)
    assert report.ok, report


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "relu"])
def test_activation_gradients(rng, name):
    x = rng.standard_normal((3, 4))
    x[np.abs(x) < 0.05] = 0.5  # keep ReLU away from its kink
    assert check_layer(Activation(name), x, rng=rng).ok


def test_dropout_gradient_with_fixed_mask(rng):
    layer = Dropout(0.4, rng)
    reset = lambda: setattr(layer, "rng", np.random.default_rng(7))  # noqa: E731
    assert check_layer(layer, rng.standard_normal((5, 6)), rng=rng, reset=reset).ok


def test_mlp_gradients_and_torch_equivalence(rng):
    net = mlp([5, 4, 3], rng, activation="relu")
    X = rng.standard_normal((6, 5))
    assert check_layer(net, X, rng=rng).ok
    t = np.array([0, 1, 2, 2, 1, 0])
    loss_fn = SoftmaxCrossEntropy()
    loss = loss_fn.forward(net.forward(X), t)
    dX = net.backward(loss_fn.backward())
    W1, b1, W2, b2 = [torch.tensor(p, requires_grad=True) for p in net.params]
    Xt = torch.tensor(X, requires_grad=True)
    tl = torch.nn.functional.cross_entropy(torch.relu(Xt @ W1 + b1) @ W2 + b2, torch.tensor(t))
    tl.backward()
    assert_close_to_torch(loss, tl, "loss")
    for ours, theirs, name in zip(net.grads, [W1, b1, W2, b2], ["dW1", "db1", "dW2", "db2"]):
        assert_close_to_torch(ours, theirs.grad, name, rtol=1e-9)
    assert_close_to_torch(dX, Xt.grad, "dX", rtol=1e-9)


def test_softmax_cross_entropy_gradient_and_errors(rng):
    logits, t = rng.standard_normal((4, 3)), np.array([0, 2, 1, 1])
    loss_fn = SoftmaxCrossEntropy()
    loss_fn.forward(logits, t)
    g = loss_fn.backward()
    report = check_function(lambda: loss_fn.forward(logits, t), [logits], [g])
    assert report.ok, report
    with pytest.raises(ValueError, match=r"targets must have shape \(4,\)"):
        loss_fn.forward(logits, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"must be class ids in \[0, 3\), got 3 at index 2"):
        loss_fn.forward(logits, np.array([0, 1, 3, 0]))


def test_sigmoid_cross_entropy_gradient_is_y_minus_t(rng):
    s, t = rng.standard_normal((3, 4)) * 3, (rng.random((3, 4)) > 0.5).astype(float)
    loss_fn = SigmoidCrossEntropy()
    loss = loss_fn.forward(s, t)
    g = loss_fn.backward()
    assert np.allclose(g, (sigmoid(s) - t) / s.size)
    assert check_function(lambda: loss_fn.forward(s, t), [s], [g]).ok
    ref = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(s), torch.tensor(t))
    assert_close_to_torch(loss, ref, "BCE loss")
    assert np.isfinite(loss_fn.forward(np.array([1000.0, -1000.0]), np.array([0.0, 1.0])))


def test_stable_functions():
    z = np.array([[1000.0, 1001.0, 1002.0]])
    assert np.allclose(softmax(z), [[0.09003057, 0.24472847, 0.66524096]])
    assert np.allclose(np.exp(log_softmax(z)), softmax(z))
    assert np.allclose(sigmoid(np.array([-800.0, 0.0, 800.0])), [0.0, 0.5, 1.0])


def test_embedding_accumulates_repeated_ids_and_respects_padding(rng):
    emb = Embedding(6, 3, rng, padding_idx=0)
    ids = np.array([[1, 2, 1], [0, 1, 5]])
    out = emb.forward(ids)
    assert out.shape == (2, 3, 3) and np.all(out[1, 0] == 0)
    dout = rng.standard_normal(out.shape)
    emb.backward(dout)
    assert np.allclose(emb.grads[0][1], dout[0, 0] + dout[0, 2] + dout[1, 1])  # three occurrences summed
    assert np.all(emb.grads[0][0] == 0)
    # finite differences see the padding row (forward reads it); by design it gets no gradient,
    # so the full check is done on a table without padding
    assert check_layer(Embedding(6, 3, rng, scale=1.0), ids, rng=rng).ok
    fast = Embedding(6, 3, rng, padding_idx=0, scatter="sparse")
    fast.params[0][...] = emb.params[0]
    fast.forward(ids)
    fast.backward(dout)
    assert np.allclose(fast.grads[0], emb.grads[0])
    with pytest.raises(IndexError, match=r"ids must be token ids in \[0, 6\)"):
        emb.forward(np.array([6]))


def test_embedding_row_gradients_equal_the_dense_ones(rng):
    dense = Embedding(8, 3, rng, padding_idx=0)
    rows_only = Embedding(8, 3, rng, padding_idx=0, scatter="rows")
    rows_only.params[0][...] = dense.params[0]
    ids = np.array([[1, 7, 1], [0, 1, 5]])
    dout = rng.standard_normal((2, 3, 3))
    for emb in (dense, rows_only):
        emb.forward(ids)
        emb.backward(dout)
    rows, grad = rows_only.row_grad
    assert rows.tolist() == [1, 5, 7]                      # distinct ids, padding left out
    assert np.allclose(grad, dense.grads[0][rows])
    assert np.all(rows_only.grads[0] == 0)                 # the dense gradient is not filled
    untouched = np.setdiff1d(np.arange(8), rows)
    assert np.all(dense.grads[0][untouched] == 0)          # so a row update is the same SGD step
    with pytest.raises(ValueError, match="scatter must be 'add.at', 'sparse' or 'rows'"):
        Embedding(4, 2, rng, scatter="dense")


def test_linear_accepts_sparse_input(rng):
    layer = Linear(5, 2, rng)
    X = sp.random(4, 5, density=0.4, random_state=0, format="csr")
    dense = layer.forward(X.toarray())
    assert np.allclose(layer.forward(X), dense)
    with pytest.raises(ValueError, match=r"expects input \(N, 5\), got \(4, 3\)"):
        layer.forward(np.zeros((4, 3)))


def test_gradcheck_catches_a_wrong_backward(rng):
    class WrongTanh(Activation):
        def backward(self, dout):
            return dout * (1 - self.out)  # missing the square

    assert not check_layer(WrongTanh("tanh"), rng.standard_normal((3, 3)), rng=rng).ok


def test_numerical_gradient_and_relative_error():
    x = np.array([1.0, 2.0, 3.0])
    g = numerical_gradient(lambda: float((x ** 3).sum()), x)
    assert relative_error(g, 3 * x ** 2) < 1e-9
    assert np.array_equal(x, [1.0, 2.0, 3.0])  # restored
    with pytest.raises(TypeError, match="float64"):
        numerical_gradient(lambda: 0.0, np.zeros(2, np.float32))
    with pytest.raises(AssertionError, match=r"dW: differs from PyTorch by up to 1.000e\+00 at index \(1,\)"):
        assert_close_to_torch(np.array([0.0, 1.0]), torch.tensor([0.0, 0.0]), "dW")


@pytest.mark.parametrize("ours, make_torch", [
    (lambda: SGD(0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    (lambda: Momentum(0.05, 0.9), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
    (lambda: RMSProp(0.01, 0.9), lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8)),
    (lambda: Adam(0.05), lambda p: torch.optim.Adam(p, lr=0.05)),
])
def test_optimizers_match_torch(ours, make_torch):
    rng = np.random.default_rng(1)
    theta = rng.standard_normal(6)
    theta_t = torch.tensor(theta.copy(), requires_grad=True)
    opt, opt_t = ours(), make_torch([theta_t])
    for _ in range(15):
        opt.step([theta], [4 * theta ** 3 + np.sin(theta)])
        opt_t.zero_grad()
        ((theta_t ** 4).sum() - torch.cos(theta_t).sum()).backward()
        opt_t.step()
    assert_close_to_torch(theta, theta_t, "parameters after 15 steps", rtol=1e-9, atol=1e-12)


def test_weight_penalty_gradient_and_clipping(rng):
    w = rng.standard_normal(5)
    g = np.zeros(5)
    value = add_weight_penalty([w], [g], l1=0.1, l2=0.2)
    assert np.isclose(value, 0.1 * np.abs(w).sum() + 0.2 * (w ** 2).sum())
    assert check_function(lambda: add_weight_penalty([w], [np.zeros(5)], l1=0.1, l2=0.2), [w], [g]).ok
    grads = [np.array([3.0, 0.0]), np.array([4.0])]
    assert clip_global_norm(grads, 1.0) == 5.0
    assert np.isclose(np.sqrt(sum((x ** 2).sum() for x in grads)), 1.0)
    assert np.allclose(grads[0], [0.6, 0.0])
    small = [np.array([0.1])]
    clip_global_norm(small, 1.0)
    assert small[0][0] == 0.1
