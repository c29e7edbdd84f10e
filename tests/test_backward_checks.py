"""Every NumPy layer's backward checks its upstream gradient (issue 13, defect 6).

Before the fix a recurrent layer's backward given dhs of shape (2, 5, 1) instead of (2, 5, 4)
broadcast it and returned gradients; other layers failed with raw NumPy errors, and backward before
forward raised AttributeError. Now :class:`helpers.lib.layers.Layer` checks both for every
subclass. The test builds every layer class of the library (found by walking the subclasses of
``Layer``, so a new layer without an entry below fails here) and checks the two errors.
"""
import importlib
import pkgutil

import numpy as np
import pytest

import helpers.lib
from helpers.lib.layers import Layer


def _import_library():
    for mod in pkgutil.iter_modules(helpers.lib.__path__):
        importlib.import_module(f"helpers.lib.{mod.name}")


def _layer_classes():
    _import_library()
    found, todo = set(), [Layer]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("helpers.lib.") and callable(getattr(sub, "forward", None)):
                found.add(sub)
    return found


def _cases():
    """{class name: make() -> (layer, forward args, a correct dout, a wrong dout)}."""
    from helpers.lib.attention import Attention, MultiHeadAttention
    from helpers.lib.decoder import GELU, DecoderBlock, FeedForward, NumpyDecoderLM
    from helpers.lib.encoder_numpy import EncoderBlock
    from helpers.lib.layers import (
        Activation,
        Dropout,
        Embedding,
        LayerNorm,
        Linear,
        Sequential,
        SigmoidCrossEntropy,
        SoftmaxCrossEntropy,
    )
    from helpers.lib.negative_sampling import EmbeddingDot
    from helpers.lib.positions import LearnedPositions

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3))
    xs = rng.standard_normal((2, 5, 3))
    ids = np.array([[1, 2], [3, 0]])

    return {
        "Linear": lambda: (Linear(3, 4, rng), (x,), np.ones((2, 4)), np.ones((2, 1))),
        "Activation": lambda: (Activation("tanh"), (x,), np.ones((2, 3)), np.ones((3, 2))),
        "Dropout": lambda: (Dropout(0.5, rng), (x,), np.ones((2, 3)), np.ones((1, 3))),
        "Sequential": lambda: (Sequential(Linear(3, 4, rng), Activation("relu")), (x,),
                               np.ones((2, 4)), np.ones((2, 1))),
        "SoftmaxCrossEntropy": lambda: (SoftmaxCrossEntropy(), (x, np.array([0, 2])), 1.0, np.ones((2, 3))),
        "SigmoidCrossEntropy": lambda: (SigmoidCrossEntropy(), (x, np.ones((2, 3))), 1.0, np.ones(2)),
        "Embedding": lambda: (Embedding(5, 3, rng), (ids,), np.ones((2, 2, 3)), np.ones((2, 3))),
        "Attention": lambda: (Attention(), (xs, xs, xs), np.ones((2, 5, 3)), np.ones((2, 5, 1))),
        "MultiHeadAttention": lambda: (MultiHeadAttention(4, 2, rng), (rng.standard_normal((2, 5, 4)),),
                                       np.ones((2, 5, 4)), np.ones((2, 4, 4))),
        "LearnedPositions": lambda: (LearnedPositions(8, 3, rng), (5,), np.ones((2, 5, 3)), np.ones((4, 3))),
        "EmbeddingDot": lambda: (EmbeddingDot(5, 3, rng), (x, ids), np.ones((2, 2)), np.ones((2, 3))),
        "LayerNorm": lambda: (LayerNorm(3), (xs,), np.ones((2, 5, 3)), np.ones((2, 5, 4))),
        "GELU": lambda: (GELU(), (x,), np.ones((2, 3)), np.ones((3, 2))),
        "FeedForward": lambda: (FeedForward(4, 8, rng, np.float64), (rng.standard_normal((2, 5, 4)),),
                                np.ones((2, 5, 4)), np.ones((2, 5, 1))),
        "DecoderBlock": lambda: (DecoderBlock(4, 2, 8, rng, dtype=np.float64), (rng.standard_normal((2, 5, 4)),),
                                 np.ones((2, 5, 4)), np.ones((2, 5, 1))),
        "EncoderBlock": lambda: (EncoderBlock(4, 2, 8, rng), (rng.standard_normal((2, 5, 4)),),
                                 np.ones((2, 5, 4)), np.ones((2, 5, 1))),
        "NumpyDecoderLM": lambda: (NumpyDecoderLM(7, d_model=4, n_heads=2, n_layers=1, max_len=8,
                                                  dtype=np.float64), (ids,), np.ones((2, 2, 7)), np.ones((2, 2, 1))),
    }


CASES = _cases()


def _call_backward(layer, dout):
    return layer.backward(*dout) if isinstance(dout, tuple) else layer.backward(dout)


def test_every_layer_class_of_the_library_has_a_case():
    assert {c.__name__ for c in _layer_classes()} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_backward_before_forward_says_so(name):
    layer, _, dout, _ = CASES[name]()
    with pytest.raises(RuntimeError, match=rf"^{name}.backward was called before forward: call forward before backward"):
        _call_backward(layer, dout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_backward_checks_the_shape_of_the_upstream_gradient(name):
    layer, inputs, dout, wrong = CASES[name]()
    out = layer.forward(*inputs)
    _call_backward(layer, dout)                               # the right shape is accepted
    if isinstance(out, tuple):                                # (h, c): the second one is wrong
        expected, got, what = np.shape(out[1]), np.shape(wrong[1]), "forward's output 2"
    else:
        expected, got, what = np.shape(out), np.shape(wrong), "the forward output"
    if expected == ():
        message = f"must be a number like the forward output (a scalar loss), got an array of shape {got}"
    else:
        message = f"must have shape {expected} like {what}, got {got}"
    with pytest.raises(ValueError) as err:
        _call_backward(layer, wrong)
    assert str(err.value).startswith(f"{name}.backward: ") and str(err.value).endswith(message), str(err.value)


def test_a_loss_takes_a_number_and_a_position_table_a_batch():
    from helpers.lib.layers import SoftmaxCrossEntropy
    from helpers.lib.positions import LearnedPositions
    rng = np.random.default_rng(0)
    loss = SoftmaxCrossEntropy()
    loss.forward(rng.standard_normal((3, 4)), np.array([0, 1, 3]))
    assert np.allclose(loss.backward(2.0), 2 * loss.backward())          # the default dout = 1.0
    pos = LearnedPositions(6, 2, rng)
    pos.forward(4)
    pos.backward(np.ones((3, 4, 2)))
    assert np.allclose(pos.grads[0][:4], 3)                              # summed over the batch of 3
    pos.backward(np.ones((2, 3, 4, 2)))                                  # any leading axes
    assert np.allclose(pos.grads[0][:4], 6)
    with pytest.raises(ValueError, match=r"must have shape \(4, 2\) like the forward output, got \(3, 4, 3\)"):
        pos.backward(np.ones((3, 4, 3)))


