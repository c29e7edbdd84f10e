"""Hierarchical softmax (Morin & Bengio 2005; Mikolov et al. 2013a) in NumPy: P(o | c) is a
product of sigmoids along o's path in a Huffman tree."""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from helpers.lib.checks import all_finite, check_finite, check_ids
from helpers.lib.layers import sigmoid


@dataclass
class HuffmanTree:
    """A Huffman tree over V words (lesson 07 §6): ``nodes`` (V, L) the inner nodes on each word's
    path, root first, ``codes`` (V, L) the branch taken (0 or 1), ``mask`` (V, L) True on the
    path, ``depth`` (V,) its length; padded with 0."""

    nodes: np.ndarray
    codes: np.ndarray
    mask: np.ndarray
    depth: np.ndarray

    @property
    def n_inner(self) -> int:
        """Number of inner nodes (V - 1): the rows of the output matrix."""
        return len(self.depth) - 1


def huffman_tree(counts: Sequence[float]) -> HuffmanTree:
    """The Huffman tree of word2vec.c from (V,) positive word counts, V >= 2 (lesson 07 §6); ties
    broken by node number."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 1 or len(counts) < 2:
        raise ValueError(f"counts must be a 1-D array of at least 2 word counts, "
                         f"got shape {counts.shape}")
    if not np.all(np.isfinite(counts)) or np.any(counts <= 0):
        raise ValueError("word counts must be finite and positive (a word with count 0 has no "
                         "place in the tree)")
    V = len(counts)
    parent = np.zeros(2 * V - 1, dtype=np.int64)  # leaves 0..V-1, inner V..2V-2 (root last)
    branch = np.zeros(2 * V - 1, dtype=np.int8)
    heap = [(float(c), i) for i, c in enumerate(counts)]
    heapq.heapify(heap)
    for new in range(V, 2 * V - 1):
        c0, a = heapq.heappop(heap)
        c1, b = heapq.heappop(heap)
        parent[a], branch[a] = new, 0
        parent[b], branch[b] = new, 1
        heapq.heappush(heap, (c0 + c1, new))
    paths = []                                           # each leaf's walk up to the root
    for leaf in range(V):
        up_nodes, up_codes, node = [], [], leaf
        while node != 2 * V - 2:
            up_codes.append(branch[node])
            node = parent[node]
            up_nodes.append(node - V)                    # inner node n is row n - V of U
        paths.append((up_nodes[::-1], up_codes[::-1]))   # root first
    depth = np.array([len(p[0]) for p in paths], dtype=np.int64)
    nodes = np.zeros((V, depth.max()), dtype=np.int64)
    codes = np.zeros((V, depth.max()), dtype=np.int8)
    for w, (path, code) in enumerate(paths):
        nodes[w, :len(path)], codes[w, :len(code)] = path, code
    mask = np.arange(depth.max())[None, :] < depth[:, None]
    return HuffmanTree(nodes, codes, mask, depth)


def hs_loss_and_grads(h: np.ndarray, U: np.ndarray, tree: HuffmanTree, targets: np.ndarray):
    """Hierarchical-softmax loss of a batch and its gradients (lesson 07 §6): h (N, D), U (V-1, D),
    targets (N,); loss = mean of -Σ_j log σ(sign_j s_j), s_j = u_{n_j} · h, dL/ds_j = σ(s_j) - t_j,
    t = 1 - code. Returns (loss, dh (N, D), nodes (N, L), dU_rows (N, L, D))."""
    h = check_finite(np.asarray(h), "h", "hs_loss_and_grads")
    U = np.asarray(U)
    if h.ndim != 2 or U.ndim != 2 or h.shape[1] != U.shape[1]:
        raise ValueError(f"h must be (N, D) and U (V-1, D) with the same D, "
                         f"got {h.shape} and {U.shape}")
    targets = check_ids(targets, len(tree.depth), "targets", "hs_loss_and_grads", noun="word ids")
    if targets.shape != (h.shape[0],):
        raise ValueError(f"targets must be ({h.shape[0]},) integer ids, "
                         f"got {targets.shape} {targets.dtype}")
    if U.shape[0] != tree.n_inner:
        raise ValueError(f"U has {U.shape[0]} rows; the tree has {tree.n_inner} inner nodes")
    n = len(targets)
    nodes, mask = tree.nodes[targets], tree.mask[targets]            # (N, L)
    t = 1.0 - tree.codes[targets]                                    # code 0 -> t = 1 ("left")
    u = U[nodes]                                                     # (N, L, D)
    if not all_finite(u):                       # only the rows used: all of U costs O(V D)
        check_finite(U, "U", "hs_loss_and_grads")
    s = np.einsum("nld,nd->nl", u, h)                                # (N, L)
    sign = 2 * t - 1
    loss = float(np.sum(mask * np.logaddexp(0.0, -sign * s)) / n)   # -log σ(x) = log(1 + e^-x)
    ds = mask * (sigmoid(s) - t) / n                                 # dL/ds = y - t, mean over N
    dh = np.einsum("nl,nld->nd", ds, u)
    dU_rows = ds[:, :, None] * h[:, None, :]
    return loss, dh, nodes, dU_rows


def hs_probabilities(h: np.ndarray, U: np.ndarray, tree: HuffmanTree) -> np.ndarray:
    """P(w | h) for every word w, (N, V), from h (N, D) and U (V-1, D) (lesson 07 §6)."""
    h = check_finite(np.asarray(h), "h", "hs_probabilities")
    U = check_finite(np.asarray(U), "U", "hs_probabilities")
    if h.ndim != 2 or U.ndim != 2 or h.shape[1] != U.shape[1] or U.shape[0] != tree.n_inner:
        raise ValueError(f"hs_probabilities: h must be (N, D) and U ({tree.n_inner}, D) with the "
                         f"same D, got {h.shape} and {U.shape}")
    s = np.einsum("vld,nd->nvl", U[tree.nodes], h)                   # (N, V, L)
    sign = 1.0 - 2.0 * tree.codes
    logp = np.sum(tree.mask * -np.logaddexp(0.0, -sign * s), axis=2)
    return np.exp(logp)
