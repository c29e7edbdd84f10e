"""Issue 28, robustness second round: each silent wrong result and each unhelpful error of the issue,
as it was reported, now gives the correct result or an error that names the problem."""

import numpy as np
import pytest

from helpers.lib import mlm
from helpers.lib.bpe import BPETokenizer
from helpers.lib.hsoftmax import hs_loss_and_grads, huffman_tree
from helpers.lib.layers import SoftmaxCrossEntropy, softmax
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.optim import Adam
from helpers.lib.text import Vocab

TOK = BPETokenizer.train(["the", "cat", "sat", "on", "a", "mat", "the", "cat"] * 3, vocab_size=30)


# ====================================================================== silent wrong results
def _batch():
    seqs = [mlm.encode_sentence(TOK, "the cat sat on the mat".split(), 16),
            mlm.encode_sentence(TOK, "a cat".split(), 16)]
    return mlm.pad_batch(seqs, TOK.pad_id)


def test_1_mask_tokens_reads_an_integer_attention_mask_as_booleans():
    ids, att = _batch()
    as_bool = mlm.mask_tokens(ids, TOK, np.random.default_rng(0), p=0.5, attention_mask=att)
    as_int = mlm.mask_tokens(ids, TOK, np.random.default_rng(0), p=0.5, attention_mask=att.astype(int))
    np.testing.assert_array_equal(as_int.inputs, as_bool.inputs)     # the 0/1 mask was used as row indices
    np.testing.assert_array_equal(as_int.labels, as_bool.labels)
    special = np.isin(ids, TOK.special_ids)
    np.testing.assert_array_equal(as_int.inputs[special], ids[special])  # [CLS], [SEP], [PAD] untouched
    with pytest.raises(ValueError, match="attention_mask must hold only 0 and 1"):
        mlm.mask_tokens(ids, TOK, np.random.default_rng(0), attention_mask=att.astype(int) * 2)
    with pytest.raises(TypeError, match="attention_mask must be boolean .* float mask is ambiguous"):
        mlm.mask_tokens(ids, TOK, np.random.default_rng(0), attention_mask=att.astype(float))
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of ids \(2, 8\)"):
        mlm.mask_tokens(ids, TOK, np.random.default_rng(0), attention_mask=att[0])


def test_2_apply_80_10_10_reads_an_integer_chosen_as_booleans():
    ids = np.array([[10, 11, 12, 13], [14, 15, 16, 17]])
    u, r = np.full(ids.shape, 0.1), np.full(ids.shape, 9)
    out = mlm.apply_80_10_10(ids, np.array([[0, 1, 0, 0], [0, 0, 0, 0]]), u, r, 4)
    np.testing.assert_array_equal(out, [[10, 4, 12, 13], [14, 15, 16, 17]])   # was [[0, 0, 0, 0], [4, 4, 4, 4]]
    with pytest.raises(ValueError, match="chosen must hold only 0 and 1"):
        mlm.apply_80_10_10(ids, np.full(ids.shape, 2), u, r, 4)
    with pytest.raises(TypeError, match="chosen must be boolean"):
        mlm.apply_80_10_10(ids, np.zeros(ids.shape), u, r, 4)


    vectors = np.eye(3) + 0.5
    with pytest.raises(ValueError, match="k must be >= 0, got -1"):
        nearest_neighbours(vectors, ["a", "b", "c"], "a", k=-1)
    assert nearest_neighbours(vectors, ["a", "b", "c"], "a", k=0) == []      # a slider at 0: no neighbours
    assert [w for w, _ in nearest_neighbours(vectors, ["a", "b", "c"], "a", k=1)] == ["b"]
    with pytest.raises(TypeError, match="k must be a whole number"):
        nearest_neighbours(vectors, ["a", "b", "c"], "a", k=1.5)


def test_14_nan_and_inf_are_refused_by_the_loss_and_adam():
    loss = SoftmaxCrossEntropy()
    for bad in (np.inf, np.nan, -np.inf):
        logits = np.array([[bad, 0.0, 1.0]])
        with pytest.raises(ValueError, match="SoftmaxCrossEntropy.forward: logits holds nan or inf"):
            loss.forward(logits, np.array([0]))
    p, g = np.ones(3), np.array([0.1, np.nan, 0.2])
    with pytest.raises(ValueError, match=r"Adam.step: gradient 0 \(shape \(3,\)\) holds inf or nan"):
        Adam().step([p], [g])
    np.testing.assert_array_equal(p, np.ones(3))             # not updated


# ====================================================================== unhelpful errors


def test_bare_numpy_errors_now_name_the_problem():
    with pytest.raises(ValueError, match=r"softmax: z \(shape \(3, 0\)\) needs a non-empty axis -1"):
        softmax(np.zeros((3, 0)))
    tree = huffman_tree([3, 2, 1])
    with pytest.raises(ValueError, match=r"targets must be word ids in \[0, 3\), got 3"):
        hs_loss_and_grads(np.ones((1, 2)), np.zeros((2, 2)), tree, np.array([3]))
    with pytest.raises(ValueError, match="max_size must be a whole number >= 1"):
        Vocab.build(["a", "b"], max_size=0)
    from helpers.course.data import gensim_test_file
    with pytest.raises(ValueError, match=r"gensim_test_file: the course reads only .*'lee.cor'"):
        gensim_test_file("lee.cor")
