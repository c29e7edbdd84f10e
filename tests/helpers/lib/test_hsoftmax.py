"""Tests of helpers.lib.hsoftmax (lesson 07): the Huffman tree, a proper distribution, the loss's
gradients against finite differences and PyTorch autograd, clear errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import hsoftmax as HS
from helpers.lib.gradcheck import numerical_gradient
from helpers.lib.hsoftmax import hs_loss_and_grads, huffman_tree
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    dims,
    float_arrays,
    inject,
    raises_naming,
)

T = torch.tensor
close = closeness(1e-9)


def test_huffman_tree_of_a_textbook_example_and_clear_errors():
    # counts 5, 9, 12, 13, 16, 45 (the classic example): the optimal code lengths are 4 4 3 3 3 1
    tree = huffman_tree([5, 9, 12, 13, 16, 45])
    assert tree.depth.tolist() == [4, 4, 3, 3, 3, 1]
    assert tree.n_inner == 5 and tree.nodes.shape == (6, 4)
    assert np.all(tree.nodes[:, 0] == tree.n_inner - 1)     # every path starts at the root
    with pytest.raises(ValueError, match="counts must be .* at least 2"):
        huffman_tree([3])
    with pytest.raises(ValueError, match="positive"):
        huffman_tree([3, 0, 2])
    with pytest.raises(ValueError, match="inner nodes"):
        hs_loss_and_grads(np.zeros((1, 2)), np.zeros((5, 2)), huffman_tree([1, 2]), np.array([0]))


def test_frequent_words_get_short_paths_and_the_expected_length_is_near_the_entropy():
    counts = 1.0 / np.arange(1, 2001)                       # Zipf
    tree = huffman_tree(counts)
    p = counts / counts.sum()
    assert tree.depth[0] <= tree.depth[-1]
    mean_depth = float(p @ tree.depth)
    entropy = float(-(p * np.log2(p)).sum())
    assert entropy <= mean_depth < entropy + 1               # Huffman's bound


def test_gradients_with_repeated_targets_against_finite_differences():
    rng = np.random.default_rng(1)
    tree = huffman_tree(rng.integers(1, 30, 10))
    h, U, t = rng.standard_normal((5, 4)), rng.standard_normal((9, 4)), np.array([5, 1, 3, 3, 5])
    _, dh, nodes, dU_rows = hs_loss_and_grads(h, U, tree, t)
    dU = np.zeros_like(U)
    np.add.at(dU, nodes.reshape(-1), dU_rows.reshape(-1, 4))
    loss = lambda: hs_loss_and_grads(h, U, tree, t)[0]  # noqa: E731
    np.testing.assert_allclose(dh, numerical_gradient(loss, h), atol=1e-8)
    np.testing.assert_allclose(dU, numerical_gradient(loss, U), atol=1e-8)


@budget(2)
@given(st.data())
def test_the_huffman_tree_is_a_prefix_code_and_the_loss_is_autograds(data):
    counts = np.array(data.draw(st.lists(st.integers(1, 40), min_size=2, max_size=7)), float)
    tree = HS.huffman_tree(counts)
    V = len(counts)
    codes = ["".join(map(str, tree.codes[w, :tree.depth[w]])) for w in range(V)]
    assert not any(a != b and b.startswith(a) for a in codes for b in codes)      # prefix-free
    close(sum(2.0 ** -d for d in tree.depth), 1.0)                     # a full binary tree
    D, N = data.draw(dims(1, 3)), data.draw(dims(1, 4))
    h, U = data.draw(float_arrays((N, D))), data.draw(float_arrays((V - 1, D)))
    close(HS.hs_probabilities(h, U, tree).sum(1), np.ones(N))
    t = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=N, max_size=N)), np.int64)
    th, tU = T(h, requires_grad=True), T(U, requires_grad=True)
    s = (tU[T(tree.nodes[t])] * th[:, None]).sum(-1)
    sign = T(1.0 - 2.0 * tree.codes[t])
    ref = (T(tree.mask[t].astype(float)) * F.softplus(-sign * s)).sum(1).mean()
    ref.backward()
    loss, dh, nodes, dU_rows = HS.hs_loss_and_grads(h, U, tree, t)
    close(loss, ref.item())
    close(dh, th.grad)
    dU = np.zeros_like(U)
    np.add.at(dU, nodes.reshape(-1), dU_rows.reshape(-1, D))
    close(dU, tU.grad)
    close(loss, -np.log(HS.hs_probabilities(h, U, tree)[np.arange(N), t]).mean(), 1e-8)
    check_bad_ids(lambda x: HS.hs_loss_and_grads(h, U, tree, x), t, V, "targets",
                  data.draw(corrupted(t, V)))
    raises_naming(lambda: HS.hs_loss_and_grads(inject(h, np.nan, 0), U, tree, t), "h", ValueError)
