"""Tests of helpers.lib.negative_sampling (lessons 06-07): the noise distribution, its sampler and
table, EmbeddingDot against finite differences and PyTorch, and SGNS's pair gradients."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import negative_sampling as NS
from helpers.lib.gradcheck import assert_close_to_torch, check_layer
from tests.props import budget, closeness, dims, float_arrays, inject, non_finite, raises_naming

close = closeness(1e-9)


def test_the_worked_example_and_the_sampler_on_many_draws():
    p = NS.unigram_noise([0.8, 0.15, 0.05], 0.75)
    assert np.allclose(np.round(p, 3), [0.709, 0.202, 0.089]) and p.sum() == pytest.approx(1.0)
    counts = np.array([50, 30, 10, 5, 4, 1, 0])
    draws = NS.NoiseSampler(counts, 0.75, rng=np.random.default_rng(1)).sample((200_000,))
    # standard error <= sqrt(0.25 / 2e5) ~ 0.0011; allow 4 sigma
    shares = np.bincount(draws, minlength=7) / draws.size
    assert np.max(np.abs(shares - NS.unigram_noise(counts))) < 0.0045


@budget()
@given(st.data())
def test_the_noise_distribution_its_sampler_and_its_table(data):
    counts = np.array(data.draw(st.lists(st.integers(0, 50), min_size=1, max_size=6)), float)
    counts[0] += 1
    power = data.draw(st.sampled_from([0.0, 0.75, 1.0]))
    p = NS.unigram_noise(counts, power)
    ref = np.where(counts > 0, (counts / counts.sum()) ** power, 0)
    close(p, ref / ref.sum())
    draws = NS.NoiseSampler(counts, power, rng=np.random.default_rng(0)).sample((4000,))
    assert set(np.unique(draws)) <= set(np.flatnonzero(p > 0))
    table = NS.unigram_table(counts, power, size=1000)
    close(np.bincount(table, minlength=len(p)) / len(table), p, 2e-3 * len(p) + 1e-3)
    bad = inject(counts, data.draw(non_finite), 0)
    raises_naming(lambda: NS.unigram_noise(bad), "counts", ValueError)
    raises_naming(lambda: NS.unigram_noise(counts * 0), "counts", ValueError)
    raises_naming(lambda: NS.unigram_noise(counts, power=2), "power", ValueError)


def test_embedding_dot_with_repeated_ids_against_finite_differences_and_torch():
    rng = np.random.default_rng(0)
    dot = NS.EmbeddingDot(7, 4, rng)
    dot.params[0][...] = rng.standard_normal((7, 4))
    for ids in (np.array([[2, 5, 2], [1, 1, 6], [0, 3, 4]]), np.array([2, 2, 6])):
        h = rng.standard_normal((3, 4))
        assert check_layer(dot, h, ids).ok
        W, ht = torch.tensor(dot.params[0], requires_grad=True), torch.tensor(h, requires_grad=True)
        out_t = (W[torch.from_numpy(ids)] * (ht[:, None, :] if ids.ndim == 2 else ht)).sum(-1)
        g = rng.standard_normal(out_t.shape)
        out, dh = dot.forward(h, ids), dot.backward(g)
        out_t.backward(torch.from_numpy(g))
        for mine, theirs in ((out, out_t), (dh, ht.grad), (dot.grads[0], W.grad)):
            assert_close_to_torch(mine, theirs, "EmbeddingDot")
    raises_naming(lambda: dot.forward(np.ones((3, 5)), ids), "h", ValueError)
    raises_naming(lambda: dot.forward(np.ones((2, 4)), ids), "ids", ValueError)
    raises_naming(lambda: dot.forward(inject(np.ones((3, 4)), np.nan, 0), ids), "h", ValueError)


@budget()
@given(st.data())
def test_the_sgns_pair_gradients_are_autograds(data):
    N, D = data.draw(dims(1, 4)), data.draw(dims(1, 3))
    w, c = data.draw(float_arrays((N, D))), data.draw(float_arrays((N, D)))
    n_pos, n_neg = data.draw(float_arrays((N,), 0, 5)), data.draw(float_arrays((N,), 0, 5))
    tw, tc = torch.tensor(w, requires_grad=True), torch.tensor(c, requires_grad=True)
    x = (tw * tc).sum(1)
    loss = -(torch.tensor(n_pos) * F.logsigmoid(x)) - torch.tensor(n_neg) * F.logsigmoid(-x)
    loss.sum().backward()
    dw, dc = NS.sgns_pair_gradients(w, c, n_pos, n_neg)
    close(dw, tw.grad)
    close(dc, tc.grad)
    raises_naming(lambda: NS.sgns_pair_gradients(w, c, -n_pos - 1, n_neg), "n_pos", ValueError)
    raises_naming(lambda: NS.sgns_pair_gradients(inject(w, np.inf, 0), c, n_pos, n_neg), "w",
                  ValueError)
