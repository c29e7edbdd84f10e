"""helpers.lib.blank_bigram: BlankBigram's blank distribution is its docstring's bigram formula,
computed here pair by pair in plain Python; bad arguments are named."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib.blank_bigram import BlankBigram
from helpers.lib.mlm import IGNORE, MaskedBatch
from tests.props import budget, covers, dims, raises_naming

T = torch.tensor
V = 12


def _formula(seqs, lam, n_special, mask_id, left, right, left_only):
    """P(w | l, _, r) by the docstring's formula, in plain Python (one w at a time)."""
    pairs, uni = {}, [1.0] * V
    for s in seqs:
        for a, b in zip(s[:-1], s[1:]):
            pairs[a, b] = pairs.get((a, b), 0) + 1
        for a in s:
            uni[a] += 1
    total = sum(uni)
    smooth = [u / total for u in uni]
    ordinary = sum(uni[n_special:])
    row = {a: sum(c for (x, _), c in pairs.items() if x == a) for a in range(V)}

    def follow(a, w):
        return lam * pairs.get((a, w), 0) / max(row[a], 1) + (1 - lam) * smooth[w]

    p = []
    for w in range(V):
        if w < n_special:
            p.append(0.0)
            continue
        q = uni[w] / ordinary if left == mask_id else follow(left, w)
        if not left_only and right != mask_id:
            q *= follow(w, right)
        p.append(q)
    return np.array(p) / sum(p)


@covers("blank_bigram.BlankBigram")
@budget(1)
@given(st.data())
def test_blank_bigram_is_its_formula_and_refuses_bad_arguments(data):
    n_special, mask_id = 3, 2
    n = data.draw(st.integers(1, 4))
    seqs = [np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=2, max_size=7)))
            for _ in range(n)]
    lam = data.draw(st.sampled_from([0.3, 0.8, 1.0]))
    left_only = data.draw(st.booleans())
    model = BlankBigram(V, n_special, mask_id, lam=lam, left_only=left_only).fit(seqs)
    B, L = data.draw(dims(1, 3)), data.draw(st.integers(3, 6))
    inputs = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=B * L, max_size=B * L)))
    inputs = inputs.reshape(B, L)
    rows = np.array(data.draw(st.lists(st.integers(0, B - 1), min_size=1, max_size=4)))
    cols = np.array([data.draw(st.integers(1, L - 2)) for _ in rows])
    p = model.probabilities(inputs, rows, cols)
    assert p.shape == (len(rows), V)
    for k, (r, c) in enumerate(zip(rows, cols)):
        expected = _formula([list(s) for s in seqs], lam, n_special, mask_id, inputs[r, c - 1],
                            inputs[r, c + 1], left_only)
        np.testing.assert_allclose(p[k], expected, rtol=1e-10, atol=1e-12)
    bad_lam = data.draw(st.sampled_from([0.0, -0.5, 1.5]))
    raises_naming(lambda: BlankBigram(V, n_special, mask_id, lam=bad_lam), "lam")
    raises_naming(lambda: BlankBigram(V, n_special, V), "mask_id")
    raises_naming(lambda: BlankBigram(V, n_special, mask_id).fit([np.array([0, V])]), "ids")
    raises_naming(lambda: model.probabilities(inputs, rows, np.zeros_like(rows)), "neighbour")


SPECIAL, MASK = 5, 4
SEQS = [np.array([2, 5, 6, 3]), np.array([2, 5, 7, 3]), np.array([2, 8, 6, 3])]


def test_the_bigram_fills_a_blank_from_both_neighbours_by_hand():
    bg = BlankBigram(10, SPECIAL, MASK, lam=1.0).fit(SEQS)
    # [CLS] 5 _ [SEP]: P(w | 5) = 1/2 for 6 and 7; P([SEP] | 6) = 2/2, P([SEP] | 7) = 1/1
    p = bg.probabilities(np.array([[2, 5, MASK, 3]]), np.array([0]), np.array([2]))[0]
    np.testing.assert_allclose(p[[6, 7]], [0.5, 0.5])
    # [CLS] _ 6 [SEP]: P(5 | CLS) = 2/3, P(8 | CLS) = 1/3; P(6 | 5) = 1/2, P(6 | 8) = 1 -> 1/2 each
    p = bg.probabilities(np.array([[2, MASK, 6, 3]]), np.array([0]), np.array([1]))[0]
    np.testing.assert_allclose(p[[5, 8]], [0.5, 0.5])
    assert p[:SPECIAL].sum() == 0 and np.isclose(p.sum(), 1)
    with pytest.raises(ValueError, match="no sequence"):
        BlankBigram(10, SPECIAL, MASK).fit([])
    with pytest.raises(RuntimeError, match="fit"):
        BlankBigram(10, SPECIAL, MASK).probabilities(np.array([[2, 4, 3]]), np.array([0]),
                                                     np.array([1]))


def test_smoothing_gives_every_piece_a_probability_and_score_counts_per_sentence():
    bg = BlankBigram(10, SPECIAL, MASK, lam=0.8).fit(SEQS)
    p = bg.probabilities(np.array([[2, 9, MASK, 3]]), np.array([0]), np.array([2]))[0]  # 9 unseen
    assert np.all(p[SPECIAL:] > 0) and np.isclose(p.sum(), 1)
    labels = np.full((3, 4), IGNORE)
    labels[0, 2], labels[2, 1], labels[2, 2] = 6, 5, 6
    inputs = np.where(labels != IGNORE, MASK, np.array([[2, 5, 6, 3]] * 3))
    out = bg.score([MaskedBatch(inputs, labels, np.ones_like(labels, bool))])
    np.testing.assert_array_equal(out["count"], [1, 2])   # the sentence without a blank: left out
    direct = [bg.probabilities(inputs, np.array([r]), np.array([c]))[0]
              for r, c in ((0, 2), (2, 1), (2, 2))]
    right = [int(np.argmax(direct[0]) == 6),
             int(np.argmax(direct[1]) == 5) + int(np.argmax(direct[2]) == 6)]
    np.testing.assert_array_equal(out["right"], right)
    nll = -np.mean([np.log(d[t]) for d, t in zip(direct, (6, 5, 6))])
    assert out["nll"] == pytest.approx(nll) and out["n_masked"] == 3
