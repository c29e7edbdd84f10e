"""Tests of helpers.lib.positions: sinusoidal, learned and rotary position encodings."""
import numpy as np
import pytest
import torch

from helpers.lib.attention import scaled_dot_product_attention
from helpers.lib.gradcheck import check_layer
from helpers.lib.positions import (
    LearnedPositions,
    alibi_bias,
    apply_rope,
    rope_angles,
    sinusoidal_encoding,
)
from helpers.lib.transformer import rope_torch


def test_sinusoidal_formula_and_first_rows():
    pe = sinusoidal_encoding(50, 8)
    assert pe.shape == (50, 8)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1, 0, 1, 0, 1], atol=1e-15)
    # PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(...)
    pos, i, d = 7, 2, 8
    assert np.isclose(pe[pos, 2 * i], np.sin(pos / 10000 ** (2 * i / d)))
    assert np.isclose(pe[pos, 2 * i + 1], np.cos(pos / 10000 ** (2 * i / d)))
    # the first pair has period 2π positions
    assert np.isclose(pe[1, 0], np.sin(1.0)) and np.isclose(pe[3, 1], np.cos(3.0))


def test_sinusoidal_shift_is_a_linear_map():
    # PE[pos + k] = M_k PE[pos] for a fixed matrix M_k (block rotations), for every pos
    pe = sinusoidal_encoding(60, 6)
    k = 5
    M, *_ = np.linalg.lstsq(pe[:40], pe[k:40 + k], rcond=None)
    np.testing.assert_allclose(pe[40:55] @ M, pe[40 + k:55 + k], atol=1e-8)


def test_sinusoidal_errors():
    with pytest.raises(ValueError, match="even d"):
        sinusoidal_encoding(10, 5)


def test_learned_positions_gradients_and_limit():
    rng = np.random.default_rng(0)
    lp = LearnedPositions(8, 4, rng)
    out = lp.forward(5)
    np.testing.assert_array_equal(out, lp.params[0][:5])
    dout = rng.standard_normal((3, 5, 4))
    lp.backward(dout)
    np.testing.assert_allclose(lp.grads[0][:5], dout.sum(axis=0))  # summed over the batch
    assert np.all(lp.grads[0][5:] == 0)
    with pytest.raises(ValueError, match="outside the learned table"):
        lp.forward(9)


class _AddPositions:
    """x + P[:T] as a layer, to gradient-check LearnedPositions through a batch."""

    def __init__(self, lp):
        self.lp, self.params, self.grads = lp, lp.params, lp.grads

    def forward(self, x):
        return x + self.lp.forward(x.shape[1])

    def backward(self, dout):
        self.lp.backward(dout)
        return dout


def test_learned_positions_finite_differences():
    rng = np.random.default_rng(1)
    layer = _AddPositions(LearnedPositions(6, 3, rng))
    report = check_layer(layer, rng.standard_normal((2, 4, 3)))
    assert report.ok, report


def test_rope_scores_depend_only_on_relative_position():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal(16), rng.standard_normal(16)

    def score(m, n):
        qm = apply_rope(q[None], positions=[m])[0]
        kn = apply_rope(k[None], positions=[n])[0]
        return qm @ kn

    for m, n in [(0, 0), (3, 1), (10, 2), (2, 10), (50, 49)]:
        for shift in (1, 7, 1000):
            assert np.isclose(score(m, n), score(m + shift, n + shift), rtol=1e-9, atol=1e-10)
    # ... and it really does depend on the offset (otherwise the test above would be empty)
    assert not np.isclose(score(5, 0), score(5, 3))
    # in matrix form: a whole sequence shifted by s gives the same attention weights
    Q, K, V = (rng.standard_normal((6, 8)) for _ in range(3))
    _, W0 = scaled_dot_product_attention(apply_rope(Q), apply_rope(K), V)
    _, W1 = scaled_dot_product_attention(apply_rope(Q, np.arange(6) + 37), apply_rope(K, np.arange(6) + 37), V)
    np.testing.assert_allclose(W0, W1, rtol=1e-9)


def test_rope_is_a_rotation_and_matches_complex_multiplication():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 8))
    r = apply_rope(x)
    np.testing.assert_allclose(np.linalg.norm(r, axis=-1), np.linalg.norm(x, axis=-1))
    np.testing.assert_array_equal(r[0], x[0])  # position 0 is not rotated
    cos, sin = rope_angles(5, 8)
    z = (x[:, 0::2] + 1j * x[:, 1::2]) * (cos + 1j * sin)
    np.testing.assert_allclose(r[:, 0::2], z.real, atol=1e-12)
    np.testing.assert_allclose(r[:, 1::2], z.imag, atol=1e-12)


def test_rope_torch_matches_numpy():
    x = np.random.default_rng(4).standard_normal((2, 3, 7, 6))
    np.testing.assert_allclose(rope_torch(torch.tensor(x)).numpy(), apply_rope(x), rtol=1e-12, atol=1e-12)


def test_rope_errors():
    with pytest.raises(ValueError, match="d must be even"):
        apply_rope(np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"positions must have shape \(3,\)"):
        apply_rope(np.zeros((3, 4)), positions=[0, 1])


def test_alibi_bias():
    b = alibi_bias(4, 0.5)
    np.testing.assert_allclose(np.diag(b), 0)
    assert b[3, 0] == -1.5 and np.isneginf(b[0, 1])
