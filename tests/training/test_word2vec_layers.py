"""training.word2vec_layers: the shipped NumPy skip-gram's and CBOW's layers and gradients."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.lib.gradcheck import assert_close_to_torch, check_layer
from helpers.lib.negative_sampling import NoiseSampler
from training.word2vec_layers import CBOWNS, SkipGramNS


def _torch_loss(W, C, inputs, targets, negatives, weights=None):
    h = W[inputs] if weights is None else (W[inputs] * weights[..., None]).sum(1)
    s = (C[torch.cat([targets[:, None], negatives], 1)] * h[:, None, :]).sum(-1)
    return (F.softplus(-s[:, 0]) + F.softplus(s[:, 1:]).sum(1)).mean()


@pytest.mark.parametrize("k_given", [1, 2, 8])
def test_both_layers_are_autograds_and_finite_differences(k_given):
    rng = np.random.default_rng(7)
    V, D, n = 10, 4, 6
    sampler = NoiseSampler(np.arange(1, V + 1), rng=rng)
    c, o, neg = rng.integers(0, V, n), rng.integers(0, V, n), rng.integers(0, V, (n, k_given))
    c[0] = o[0] = 4
    ctx = rng.integers(0, V, (n, 3))
    ctx[0, :2] = 5                                            # a repeated context word
    mask = np.ones((n, 3), bool)
    mask[0, 2] = False
    for cls in (SkipGramNS, CBOWNS):
        m = cls(V, D, sampler, k=5, rng=np.random.default_rng(1))
        m.params[1][...] = rng.standard_normal((V, D))
        args = (c, o, neg) if cls is SkipGramNS else (ctx, o, mask, neg)
        loss = m.forward(*args)
        m.backward()
        W, C = (torch.tensor(p, requires_grad=True) for p in m.params)
        weights = None if cls is SkipGramNS else torch.tensor(mask / mask.sum(1, keepdims=True))
        lt = _torch_loss(W, C, torch.tensor(args[0]), torch.tensor(o), torch.tensor(neg), weights)
        lt.backward()
        assert loss == pytest.approx(float(lt.detach()), rel=1e-10)
        assert_close_to_torch(m.grads[0], W.grad, f"{cls.__name__} dW, k'={k_given}")
        assert_close_to_torch(m.grads[1], C.grad, f"{cls.__name__} dC, k'={k_given}")
        assert check_layer(m, *args).ok


def test_word2vecs_cbow_update_and_the_row_gradients():
    rng = np.random.default_rng(4)
    V, D = 6, 3
    s = NoiseSampler(np.ones(V), rng=rng)
    exact = CBOWNS(V, D, s, k=2, rng=np.random.default_rng(0))
    w2v = CBOWNS(V, D, s, k=2, rng=np.random.default_rng(0), word2vec_update=True)
    exact.params[1][...] = w2v.params[1][...] = rng.standard_normal((V, D))
    for m in (exact, w2v):
        m.forward(np.array([[1, 2, 3, 0]]), np.array([4]), np.array([[1, 1, 1, 0]]),
                  np.array([[5, 0]]))
        m.backward()
    assert np.allclose(w2v.grads[0], 3 * exact.grads[0])
    assert np.allclose(w2v.grads[1], exact.grads[1])
    dense, rows = (
        SkipGramNS(7, 4, NoiseSampler(np.ones(7)), k=3, rng=np.random.default_rng(0), scatter=sc)
        for sc in ("add.at", "rows")
    )
    rows.params[1][...] = dense.params[1][...] = rng.standard_normal((7, 4))
    args = (np.array([1, 1, 3]), np.array([2, 4, 0]), np.array([[2, 2, 5], [0, 6, 2], [2, 1, 1]]))
    assert dense.forward(*args) == rows.forward(*args)
    dense.backward()
    rows.backward()
    for layer, dW in ((rows.embed, dense.grads[0]), (rows.ns.dot.embed, dense.grads[1])):
        r, grad = layer.row_grad
        assert np.array_equal(r, np.flatnonzero(np.any(dW != 0, axis=1)))
        assert np.allclose(grad, dW[r])


def test_bad_input_is_named():
    s = NoiseSampler(np.ones(5))
    m = SkipGramNS(5, 2, s, k=2)
    with pytest.raises(ValueError, match=r"negatives must be an \(N, k'\) array with N=2"):
        m.forward(np.array([0, 1]), np.array([1, 2]), np.zeros((3, 2), int))
    with pytest.raises(ValueError, match="equal length"):
        m.forward(np.array([1, 2]), np.array([1]))
    with pytest.raises(ValueError, match="at least one context word"):
        CBOWNS(5, 2, s).forward(np.array([[1, 2]]), np.array([0]), mask=np.zeros((1, 2), bool))
    with pytest.raises(ValueError, match="k .* at least 1"):
        SkipGramNS(5, 2, s, k=0)
