"""helpers.lib.layers: forward and backward against PyTorch and finite differences, the bad
inputs refused, and every library layer's backward checking its upstream gradient."""
import importlib
import pkgutil
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import given
from hypothesis import strategies as st

import helpers.lib
from helpers.lib import checks, layers
from helpers.lib.gradcheck import check_function, check_layer
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
close = closeness(1e-10)


@budget(2)
@given(st.data())
def test_the_functions_are_torchs_and_refuse_an_empty_axis(data):
    shape = data.draw(st.tuples(dims(1, 4), dims(1, 5)))
    z = data.draw(float_arrays(shape, -40, 40))
    if data.draw(st.booleans()):                        # nan and ±inf propagate as in torch
        z = inject(z, data.draw(non_finite), data.draw(st.integers(0, 100)))
    axis = data.draw(st.sampled_from([-1, 0]))
    with np.errstate(all="ignore"):
        close(layers.sigmoid(z), torch.sigmoid(T(z)))
        close(layers.relu(z), torch.relu(T(z)))
        close(layers.softmax(z, axis), torch.softmax(T(z), axis))
        close(layers.log_softmax(z, axis), torch.log_softmax(T(z), axis))
    huge = np.array([1000.0, 1001.0, 1002.0])
    close(layers.softmax(huge), [0.09003057, 0.24472847, 0.66524096], 1e-7)
    raises_naming(lambda: layers.softmax(np.zeros((shape[0], 0))), "softmax", ValueError)
    raises_naming(lambda: layers.log_softmax(z, axis=3), "log_softmax", ValueError)


@budget(2)
@given(st.data())
def test_an_mlp_is_torchs_forward_and_backward_and_refuses_nan(data):
    n, d_in, h, k = (data.draw(dims(1, 4)) for _ in range(4))
    act = data.draw(st.sampled_from(sorted(layers.ACTIVATIONS)))
    net = layers.mlp([d_in, h, k], np.random.default_rng(0), activation=act)
    x = data.draw(float_arrays((n, d_in)))
    lin1, lin2 = net.layers[0], net.layers[2]
    f = {"tanh": torch.nn.Tanh(), "relu": torch.nn.ReLU(), "sigmoid": torch.nn.Sigmoid()}[act]
    tnet = torch.nn.Sequential(torch.nn.Linear(d_in, h), f, torch.nn.Linear(h, k)).double()
    with torch.no_grad():
        for ours, theirs in ((lin1, tnet[0]), (lin2, tnet[2])):
            theirs.weight.copy_(T(ours.params[0].T))
            theirs.bias.copy_(T(ours.params[1]))
    tx = T(x, requires_grad=True)
    ty = tnet(tx)
    dout = data.draw(float_arrays((n, k)))
    ty.backward(T(dout))
    close(net.forward(x), ty.detach())
    dx = net.backward(dout)
    if act != "relu" or np.all(np.abs(x @ lin1.params[0] + lin1.params[1]) > 1e-9):   # relu'(0)
        close(dx, tx.grad)
        close(lin1.grads[0], tnet[0].weight.grad.T)
    close(lin2.grads[1], tnet[2].bias.grad)
    raises_naming(lambda: net.forward(inject(x, data.draw(non_finite), 0)), "x", ValueError)
    raises_naming(lambda: net.backward(inject(dout, np.nan, 0)), "dout", ValueError)
    raises_naming(lambda: lin1.forward(np.zeros((n, d_in + 1))), "Linear", ValueError)
    raises_naming(lambda: layers.Activation("gelu"), "activation", ValueError)


@pytest.mark.parametrize("make, x", [
    (lambda rng: layers.Linear(3, 2, rng), (4, 3)),
    (lambda rng: layers.Activation("sigmoid"), (3, 4)),
    (lambda rng: layers.Activation("tanh"), (3, 4)),
    (lambda rng: layers.Activation("relu"), (3, 4)),
    (lambda rng: layers.mlp([5, 4, 3], rng, activation="tanh"), (6, 5)),
    (lambda rng: layers.LayerNorm(4), (2, 3, 4)),
], ids=["Linear", "sigmoid", "tanh", "relu", "mlp", "LayerNorm"])
def test_each_backward_matches_finite_differences(make, x):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x)
    x[np.abs(x) < 0.05] = 0.5                          # away from ReLU's kink
    report = check_layer(make(rng), x, rng=rng)
    assert report.ok, report


def test_dropout_the_embedding_and_the_losses_match_finite_differences():
    rng = np.random.default_rng(0)
    drop = layers.Dropout(0.4, rng)
    reset = lambda: setattr(drop, "rng", np.random.default_rng(7))  # noqa: E731  (one mask)
    assert check_layer(drop, rng.standard_normal((5, 6)), rng=rng, reset=reset).ok
    ids = np.array([[1, 2, 1], [0, 1, 5]])
    assert check_layer(layers.Embedding(6, 3, rng, scale=1.0), ids, rng=rng).ok
    s, t = rng.standard_normal((3, 4)), (rng.random((3, 4)) > 0.5).astype(float)
    for loss, target in ((layers.SigmoidCrossEntropy(), t),
                         (layers.SoftmaxCrossEntropy(), np.array([0, 3, 1]))):
        loss.forward(s, target)
        assert check_function(lambda loss=loss, target=target: loss.forward(s, target), [s],
                              [loss.backward()]).ok


@budget()
@given(st.data())
def test_layer_norm_is_torchs(data):
    shape = data.draw(st.tuples(dims(1, 3), dims(1, 3), dims(1, 5)))
    x = data.draw(float_arrays(shape))
    ln = layers.LayerNorm(shape[-1])
    ln.params[0][...] = data.draw(float_arrays(shape[-1:]))
    tln = torch.nn.LayerNorm(shape[-1]).double()
    with torch.no_grad():
        tln.weight.copy_(T(ln.params[0]))
    tx = T(x, requires_grad=True)
    ty = tln(tx)
    dout = data.draw(float_arrays(shape))
    ty.backward(T(dout))
    close(ln.forward(x), ty.detach(), 1e-8)
    close(ln.backward(dout), tx.grad, 1e-7)
    close(ln.grads[0], tln.weight.grad, 1e-8)
    raises_naming(lambda: ln.forward(inject(x, np.nan, 0)), "x", ValueError)
    wide = np.zeros(shape[:-1] + (shape[-1] + 1,))
    raises_naming(lambda: ln.forward(wide), "LayerNorm", ValueError)


@budget()
@given(rate=st.sampled_from([0.0, 0.25, 0.5, 0.9]), n=dims(1, 50))
def test_dropout_keeps_the_expectation_and_is_the_identity_in_eval(rate, n):
    x = np.ones((n, 40))
    drop = layers.Dropout(rate, np.random.default_rng(n))
    y = drop.forward(x)
    close(y[y != 0], 1 / (1 - rate))                    # survivors scaled by 1/(1-p)
    close(drop.backward(np.ones_like(x)), y)            # the same mask on the way back
    np.testing.assert_array_equal(drop.eval().forward(x), x)
    for bad in (-0.1, 1.0):
        raises_naming(lambda bad=bad: layers.Dropout(bad, drop.rng), "rate", ValueError)


@budget(3)
@given(st.data())
def test_softmax_cross_entropy_is_torchs_and_refuses_bad_targets_and_nan(data):
    n, k = data.draw(dims(1, 5)), data.draw(dims(1, 5))
    logits = data.draw(float_arrays((n, k), -20, 20))
    t = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    loss = layers.SoftmaxCrossEntropy()
    tl = T(logits, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(tl, T(t))
    ref.backward()
    close(loss.forward(logits, t), ref.item())
    close(loss.backward(), tl.grad)
    check_bad_ids(lambda ids: loss.forward(logits, ids), t, k, "targets",
                  data.draw(corrupted(t, k)))
    err = raises_naming(lambda: loss.forward(logits, np.full(n, k)), "targets", ValueError)
    assert isinstance(err, checks.IdOutOfRangeError) and isinstance(err, IndexError)
    bad = inject(logits, data.draw(non_finite), 0)
    raises_naming(lambda: loss.forward(bad, t), "logits", ValueError)


def test_the_losses_name_bad_targets_and_refuse_an_empty_batch():
    with pytest.raises(ValueError, match=r"^SoftmaxCrossEntropy: targets must be class ids in "
                                         r"\[0, 3\), got 3 at index 1, -1 at index 3 \(2 of 5 "
                                         r"targets\)$"):
        layers.SoftmaxCrossEntropy().forward(np.zeros((5, 3)), np.array([0, 3, 2, -1, 1]))
    with pytest.raises(ValueError, match=r"got 5 at index 0, 6 at index 1, 7 at index 2, \.\.\. "
                                         r"\(5 of 6 ids\)"):
        layers.check_class_ids(np.array([5, 6, 7, 8, 9, 0]), 5, "f", "ids")
    labels = np.array([[1, -1, 1], [-1, 1, -1]])            # -1/+1 labels gave a loss of -2.49
    with pytest.raises(ValueError, match=r"labels must be 0 or 1 \(binary cross-entropy\), got "
                                         r"-1 at index \(0, 1\), .* \(3 of 6 labels\); for labels"):
        layers.SigmoidCrossEntropy().forward(np.zeros((2, 3)), labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # no nan, no RuntimeWarning
        for loss, args in [(layers.SoftmaxCrossEntropy(), (np.zeros((0, 3)), np.zeros(0, int))),
                           (layers.SigmoidCrossEntropy(), (np.zeros((0, 4)), np.zeros((0, 4))))]:
            with pytest.raises(ValueError, match=r"a mean .*over no examples is undefined"):
                loss.forward(*args)


@budget()
@given(st.data())
def test_sigmoid_cross_entropy_is_torchs(data):
    shape = data.draw(st.tuples(dims(1, 4), dims(1, 4)))
    s = data.draw(float_arrays(shape, -30, 30))
    y = data.draw(st.sampled_from([np.zeros, np.ones]))(shape)
    y.reshape(-1)[0] = 1 - y.reshape(-1)[0]
    loss = layers.SigmoidCrossEntropy()
    ts = T(s, requires_grad=True)
    ref = torch.nn.functional.binary_cross_entropy_with_logits(ts, T(y))
    ref.backward()
    close(loss.forward(s, y), ref.item(), 1e-9)
    close(loss.backward(), ts.grad, 1e-9)
    for bad in (0.5, 2.0, np.nan, -1.0):
        raises_naming(lambda bad=bad: loss.forward(s, inject(y, bad, 0)), "labels", ValueError)
    raises_naming(lambda: loss.forward(inject(s, np.inf, 0), y), "scores", ValueError)


@budget(2)
@given(st.data())
def test_embedding_is_torchs_for_every_id_and_refuses_the_rest(data):
    V, D = data.draw(dims(1, 6)), data.draw(dims(1, 3))
    shape = data.draw(st.tuples(dims(1, 3), dims(1, 4)))
    ids = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=shape[0] * shape[1],
                                      max_size=shape[0] * shape[1]))).reshape(shape)
    pad = data.draw(st.sampled_from([None, 0, V - 1]))
    emb = layers.Embedding(V, D, np.random.default_rng(0), padding_idx=pad)
    temb = torch.nn.Embedding(V, D, padding_idx=pad).double()
    with torch.no_grad():
        temb.weight.copy_(T(emb.params[0]))
    dout = data.draw(float_arrays(shape + (D,)))
    ty = temb(T(ids))
    ty.backward(T(dout))
    close(emb.forward(ids), ty.detach())
    emb.backward(dout)                                  # repeated ids summed, padding row untouched
    close(emb.grads[0], temb.weight.grad)
    check_bad_ids(emb.forward, ids, V, "ids", data.draw(corrupted(ids, V)))


def test_embedding_row_gradients_equal_the_dense_ones():
    rng = np.random.default_rng(0)
    dense = layers.Embedding(8, 3, rng, padding_idx=0)
    rows_only = layers.Embedding(8, 3, rng, padding_idx=0, scatter="rows")
    rows_only.params[0][...] = dense.params[0]
    ids, dout = np.array([[1, 7, 1], [0, 1, 5]]), rng.standard_normal((2, 3, 3))
    for emb in (dense, rows_only):
        emb.forward(ids)
        emb.backward(dout)
    rows, grad = rows_only.row_grad
    assert rows.tolist() == [1, 5, 7]                   # distinct ids, padding left out
    assert np.allclose(grad, dense.grads[0][rows]) and np.all(rows_only.grads[0] == 0)
    assert np.all(dense.grads[0][np.setdiff1d(np.arange(8), rows)] == 0)
    with pytest.raises(ValueError, match="scatter must be 'add.at' or 'rows'"):
        layers.Embedding(4, 2, rng, scatter="dense")


def test_linear_reads_sparse_input():
    layer = layers.Linear(5, 2, np.random.default_rng(0))
    X = sp.random(4, 5, density=0.4, random_state=0, format="csr")
    assert np.allclose(layer.forward(X), layer.forward(X.toarray()))
    with pytest.raises(ValueError, match=r"expects input \(N, 5\), got \(4, 3\)"):
        layer.forward(np.zeros((4, 3)))


# ---------------------------------------------------------------- Layer.check_dout, every layer
def _layer_classes():
    """Every class of helpers.lib with a Layer base, by name: a reload of helpers.lib.layers (as
    the guard's tests do) leaves other modules' classes on the old Layer."""
    found = set()
    for info in pkgutil.iter_modules(helpers.lib.__path__):
        module = importlib.import_module(f"helpers.lib.{info.name}")
        for cls in vars(module).values():
            if (isinstance(cls, type) and cls.__module__ == module.__name__
                    and hasattr(cls, "forward")
                    and any(base.__name__ == "Layer" and base.__module__ == layers.__name__
                            for base in cls.__mro__[1:])):
                found.add(cls)
    return found


def _cases():
    """{class name: make() -> (layer, forward args, a correct dout, a wrong dout)}."""
    from helpers.lib.attention import Attention, MultiHeadAttention
    from helpers.lib.decoder import GELU, DecoderBlock, FeedForward, NumpyDecoderLM
    from helpers.lib.encoder_numpy import EncoderBlock
    from helpers.lib.negative_sampling import EmbeddingDot
    from helpers.lib.positions import LearnedPositions
    rng = np.random.default_rng(0)
    x, xs, x4 = (rng.standard_normal(s) for s in ((2, 3), (2, 5, 3), (2, 5, 4)))
    ids, ones = np.array([[1, 2], [3, 0]]), np.ones
    return {
        "Linear": lambda: (layers.Linear(3, 4, rng), (x,), ones((2, 4)), ones((2, 1))),
        "Activation": lambda: (layers.Activation("tanh"), (x,), ones((2, 3)), ones((3, 2))),
        "Dropout": lambda: (layers.Dropout(0.5, rng), (x,), ones((2, 3)), ones((1, 3))),
        "Sequential": lambda: (layers.Sequential(layers.Linear(3, 4, rng),
                                                 layers.Activation("relu")),
                               (x,), ones((2, 4)), ones((2, 1))),
        "SoftmaxCrossEntropy": lambda: (layers.SoftmaxCrossEntropy(), (x, np.array([0, 2])),
                                        1.0, ones((2, 3))),
        "SigmoidCrossEntropy": lambda: (layers.SigmoidCrossEntropy(), (x, ones((2, 3))),
                                        1.0, ones(2)),
        "Embedding": lambda: (layers.Embedding(5, 3, rng), (ids,), ones((2, 2, 3)), ones((2, 3))),
        "Attention": lambda: (Attention(), (xs, xs, xs), ones((2, 5, 3)), ones((2, 5, 1))),
        "MultiHeadAttention": lambda: (MultiHeadAttention(4, 2, rng), (x4,),
                                       ones((2, 5, 4)), ones((2, 4, 4))),
        "LearnedPositions": lambda: (LearnedPositions(8, 3, rng), (5,),
                                     ones((2, 5, 3)), ones((4, 3))),
        "EmbeddingDot": lambda: (EmbeddingDot(5, 3, rng), (x, ids), ones((2, 2)), ones((2, 3))),
        "LayerNorm": lambda: (layers.LayerNorm(3), (xs,), ones((2, 5, 3)), ones((2, 5, 4))),
        "GELU": lambda: (GELU(), (x,), ones((2, 3)), ones((3, 2))),
        "FeedForward": lambda: (FeedForward(4, 8, rng, np.float64), (x4,),
                                ones((2, 5, 4)), ones((2, 5, 1))),
        "DecoderBlock": lambda: (DecoderBlock(4, 2, 8, rng, dtype=np.float64), (x4,),
                                 ones((2, 5, 4)), ones((2, 5, 1))),
        "EncoderBlock": lambda: (EncoderBlock(4, 2, 8, rng), (x4,),
                                 ones((2, 5, 4)), ones((2, 5, 1))),
        "NumpyDecoderLM": lambda: (NumpyDecoderLM(7, d_model=4, n_heads=2, n_layers=1,
                                                  max_len=8, dtype=np.float64),
                                   (ids,), ones((2, 2, 7)), ones((2, 2, 1))),
    }


CASES = _cases()


def test_every_layer_class_of_the_library_has_a_check_dout_case():
    assert {c.__name__ for c in _layer_classes()} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_backward_refuses_to_run_before_forward_and_a_dout_of_the_wrong_shape(name):
    layer, inputs, dout, wrong = CASES[name]()
    with pytest.raises(RuntimeError, match=rf"^{name}.backward was called before forward: "
                                           "call forward before backward"):
        layer.backward(dout)
    out = layer.forward(*inputs)
    layer.backward(dout)                                      # the right shape is accepted
    expected, got = np.shape(out), np.shape(wrong)
    if expected == ():
        message = ("must be a number like the forward output (a scalar loss), "
                   f"got an array of shape {got}")
    else:
        message = f"must have shape {expected} like the forward output, got {got}"
    with pytest.raises(ValueError) as err:
        layer.backward(wrong)
    assert str(err.value).startswith(f"{name}.backward: "), str(err.value)
    assert str(err.value).endswith(message), str(err.value)


def test_a_loss_takes_a_number_and_a_position_table_a_batch():
    from helpers.lib.positions import LearnedPositions
    rng = np.random.default_rng(0)
    loss = layers.SoftmaxCrossEntropy()
    loss.forward(rng.standard_normal((3, 4)), np.array([0, 1, 3]))
    assert np.allclose(loss.backward(2.0), 2 * loss.backward())          # the default dout = 1.0
    pos = LearnedPositions(6, 2, rng)
    pos.forward(4)
    pos.backward(np.ones((3, 4, 2)))
    assert np.allclose(pos.grads[0][:4], 3)                              # summed over the batch
    pos.backward(np.ones((2, 3, 4, 2)))                                  # any leading axes
    assert np.allclose(pos.grads[0][:4], 6)
    with pytest.raises(ValueError, match=r"must have shape \(4, 2\) like the forward output, "
                                         r"got \(3, 4, 3\)"):
        pos.backward(np.ones((3, 4, 3)))
