"""Issue 28, robustness second round: each silent wrong result and each unhelpful error of the issue,
as it was reported, now gives the correct result or an error that names the problem."""
import math
import warnings

import numpy as np
import pytest
import torch

from helpers.lib import mlm
from helpers.lib.attention import MultiHeadAttention, padding_mask, scaled_dot_product_attention
from helpers.lib.bpe import BPETokenizer
from helpers.lib.counting import pmi
from helpers.lib.hsoftmax import hs_loss_and_grads, huffman_tree
from helpers.lib.language_models import perplexity
from helpers.lib.layers import SoftmaxCrossEntropy, softmax
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.ngram import KneserNeyLM
from helpers.lib.optim import Adam
from helpers.lib.positions import apply_rope
from helpers.lib.recurrent import TimeLSTM, TimeRNN, copy_from_torch
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


def test_3_a_3d_mask_of_multi_head_attention_is_one_per_sequence_even_when_B_equals_the_heads():
    rng = np.random.default_rng(0)
    mha = MultiHeadAttention(4, 2, rng)
    X = rng.standard_normal((2, 3, 4))                       # B = 2 = number of heads
    m = np.array([[[1, 0, 0], [1, 1, 0], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], bool)
    per_sequence = mha.forward(X, mask=m[:, None])          # (B, 1, T, T): the unambiguous form
    np.testing.assert_allclose(mha.forward(X, mask=m), per_sequence, rtol=0, atol=0)
    np.testing.assert_allclose(mha.forward(X, mask=m.astype(int)), per_sequence, rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"mask must be \(T, T\), \(B, T, T\) or \(B, h, T, T\)"):
        mha.forward(X, mask=m[None, None])


def test_4_a_key_padding_mask_has_its_own_argument_and_a_2d_mask_is_always_Tq_Tk():
    rng = np.random.default_rng(1)
    Q = rng.standard_normal((3, 3, 4))                       # B = T_q = 3
    lengths = [3, 1, 2]
    reference, _ = scaled_dot_product_attention(Q, Q, Q, padding_mask(lengths, 3))
    keep = padding_mask(lengths, 3)[:, 0]                     # (B, T_k)
    out, w = scaled_dot_product_attention(Q, Q, Q, key_padding=keep)
    np.testing.assert_allclose(out, reference, rtol=0, atol=0)
    assert np.all(w[1, :, 1:] == 0)                           # sequence 1 has one real key
    # a (B, T_k) mask whose B is not T_q cannot pass for (T_q, T_k): the error points to key_padding
    Q2 = rng.standard_normal((2, 3, 4))
    with pytest.raises(ValueError, match="a key-padding mask .* goes in key_padding="):
        scaled_dot_product_attention(Q2, Q2, Q2, padding_mask([3, 1], 3)[:, 0])
    with pytest.raises(ValueError, match=r"key_padding must have shape \(B, T_k\) = \(2, 3\)"):
        scaled_dot_product_attention(Q2, Q2, Q2, key_padding=keep)


def test_5_time_lstm_backward_checks_the_shape_of_dc_T():
    rng = np.random.default_rng(2)
    layer = TimeLSTM(3, 4, rng)
    layer.forward(rng.standard_normal((2, 5, 3)))
    dhs = rng.standard_normal((2, 5, 4))
    for bad in (np.ones(4), np.ones((2, 1)), np.ones((1, 4))):
        with pytest.raises(ValueError, match=r"dc_T must have shape \(2, 4\)"):
            layer.backward(dhs, bad)
    layer.backward(dhs, np.ones((2, 4)))


def test_7_kneser_ney_prob_refuses_ids_outside_the_vocabulary():
    kn = KneserNeyLM(2, 3).fit([0, 1, 2, 0, 1, 2, 0])
    assert 0 < kn.prob((0,), 1) < 1
    for w in (7, -1):
        with pytest.raises(ValueError, match=r"w must be token ids in \[0, 3\)"):
            kn.prob((0,), w)
    with pytest.raises(ValueError, match=r"context must be token ids in \[0, 3\)"):
        kn.prob((5,), 1)


def test_8_kneser_ney_fit_refuses_float_ids():
    with pytest.raises(TypeError, match="ids must be integer token ids, got dtype float64.*truncated"):
        KneserNeyLM(2, 3).fit(np.array([0.0, 1.7, 2.2]))


def test_9_vocab_decode_refuses_float_ids_and_encode_refuses_ids_for_tokens():
    v = Vocab.build(["a", "b", "b"])
    with pytest.raises(TypeError, match="ids must be integer token ids, got dtype float64"):
        v.decode([1.7])
    with pytest.raises(TypeError, match="tokens must be str, got int 0 at position 0; these look like ids"):
        v.encode([0, 1])
    assert v.decode([2, 3]) == ["b", "a"] and v.encode(["a", "zzz"]).tolist() == [3, 1]


def test_10_padding_mask_refuses_float_lengths():
    with pytest.raises(TypeError, match="lengths must be whole numbers"):
        padding_mask([2.5], 4)
    np.testing.assert_array_equal(padding_mask(np.array([2]), 4)[0, 0], [True, True, False, False])


def test_13_pmi_refuses_base_1_and_nearest_neighbours_refuses_a_negative_k():
    counts = np.array([[2.0, 1.0], [1.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for base in (1.0, 0.0, -2.0, math.inf):
            with pytest.raises(ValueError, match="logarithm base must be a finite number > 0 and != 1"):
                pmi(counts, base=base)
    vectors = np.eye(3) + 0.5
    with pytest.raises(ValueError, match="k must be >= 0, got -1"):
        nearest_neighbours(vectors, ["a", "b", "c"], "a", k=-1)
    assert nearest_neighbours(vectors, ["a", "b", "c"], "a", k=0) == []      # a slider at 0: no neighbours
    assert [w for w, _ in nearest_neighbours(vectors, ["a", "b", "c"], "a", k=1)] == ["b"]
    with pytest.raises(TypeError, match="k must be a whole number"):
        nearest_neighbours(vectors, ["a", "b", "c"], "a", k=1.5)


def test_14_nan_and_inf_are_refused_by_the_loss_the_recurrent_layers_and_adam():
    loss = SoftmaxCrossEntropy()
    for bad in (np.inf, np.nan, -np.inf):
        logits = np.array([[bad, 0.0, 1.0]])
        with pytest.raises(ValueError, match="SoftmaxCrossEntropy.forward: logits holds nan or inf"):
            loss.forward(logits, np.array([0]))
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((2, 3, 4))
    xs[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"TimeRNN.forward: xs holds nan or inf \(nan at index \(1, 2, 0\)"):
        TimeRNN(4, 5, rng).forward(xs)
    layer = TimeRNN(4, 5, rng)
    layer.forward(xs[:1])
    with pytest.raises(ValueError, match="TimeRNN.backward: dhs holds nan or inf"):
        layer.backward(np.full((1, 3, 5), np.inf))
    p, g = np.ones(3), np.array([0.1, np.nan, 0.2])
    with pytest.raises(ValueError, match=r"Adam.step: gradient 0 \(shape \(3,\)\) holds inf or nan"):
        Adam().step([p], [g])
    np.testing.assert_array_equal(p, np.ones(3))             # not updated


# ====================================================================== unhelpful errors
def test_perplexity_of_a_diverged_nll_is_inf_with_a_warning():
    with pytest.warns(RuntimeWarning, match="beyond the largest float64"):
        assert perplexity(800.0) == math.inf
    assert perplexity(math.inf) == math.inf and perplexity(0.0) == 1.0


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_copy_from_torch_without_biases_gives_the_same_function(kind):
    from helpers.lib.recurrent import TimeGRU
    torch.manual_seed(0)
    module = getattr(torch.nn, kind)(3, 4, bias=False, batch_first=True).double()
    layer = copy_from_torch({"RNN": TimeRNN, "LSTM": TimeLSTM, "GRU": TimeGRU}[kind](3, 4, np.random.default_rng(0)),
                            module)
    x = np.random.default_rng(1).standard_normal((2, 5, 3))
    np.testing.assert_allclose(layer.forward(x), module(torch.tensor(x))[0].detach().numpy(), rtol=1e-10, atol=1e-12)


def test_multi_head_attention_loads_a_torch_module_without_biases():
    torch.manual_seed(0)
    t_mha = torch.nn.MultiheadAttention(4, 2, bias=False, batch_first=True).double()
    ours = MultiHeadAttention(4, 2, np.random.default_rng(0)).load_torch(t_mha)
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    tx = torch.tensor(x)
    np.testing.assert_allclose(ours.forward(x), t_mha(tx, tx, tx)[0].detach().numpy(), rtol=1e-10, atol=1e-12)


def test_bare_numpy_errors_now_name_the_problem():
    with pytest.raises(ValueError, match=r"softmax: axis -1 of z \(shape \(3, 0\)\) is empty"):
        softmax(np.zeros((3, 0)))
    with pytest.raises(ValueError, match=r"apply_rope expects x of shape \(\.\.\., T, d\)"):
        apply_rope(np.zeros(4))
    tree = huffman_tree([3, 2, 1])
    with pytest.raises(ValueError, match=r"targets must be word ids in \[0, 3\), got 3"):
        hs_loss_and_grads(np.ones((1, 2)), np.zeros((2, 2)), tree, np.array([3]))
    with pytest.raises(ValueError, match="max_size must be a whole number >= 1"):
        Vocab.build(["a", "b"], max_size=0)
    from helpers.course.data import gensim_test_file
    with pytest.raises(ValueError, match=r"gensim_test_file: the course reads only .*'lee.cor'"):
        gensim_test_file("lee.cor")
