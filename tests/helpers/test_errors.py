"""Bad input across the library is an error that names the problem, never a silent wrong
result: NaN, infinity, empty inputs, out-of-range ids and counts. Run with warnings as errors,
so that a "nan with a RuntimeWarning" fails too."""
import warnings

import numpy as np
import pytest

from helpers.lib import mlm
from helpers.lib.batching import pad_sequences
from helpers.lib.bpe import BPETokenizer
from helpers.lib.hsoftmax import hs_loss_and_grads, huffman_tree
from helpers.lib.language_models import perplexity
from helpers.lib.layers import SoftmaxCrossEntropy, softmax
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.optim import Adam
from helpers.lib.pretraining import unigram_baseline
from helpers.lib.text import Vocab

TOK = BPETokenizer.train(["the", "cat", "sat", "on", "a", "mat", "the", "cat"] * 3, vocab_size=30)


@pytest.fixture(autouse=True)
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_nan_and_inf_are_refused_by_the_loss_adam_and_perplexity():
    for bad in (np.inf, np.nan, -np.inf):
        with pytest.raises(ValueError, match="SoftmaxCrossEntropy.forward: logits holds nan"):
            SoftmaxCrossEntropy().forward(np.array([[bad, 0.0, 1.0]]), np.array([0]))
    p, g = np.ones(3), np.array([0.1, np.nan, 0.2])
    with pytest.raises(ValueError, match=r"Adam.step: gradient 0 \(shape \(3,\)\) holds inf"):
        Adam().step([p], [g])
    np.testing.assert_array_equal(p, np.ones(3))             # not updated
    with pytest.raises(ValueError, match=r"perplexity: .* got nan \(nan: did training diverge"):
        perplexity(float("nan"))


def test_empty_inputs_are_refused():
    with pytest.raises(ValueError, match=r"softmax: z \(shape \(3, 0\)\) needs a non-empty axis"):
        softmax(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="every sequence is empty"):
        pad_sequences([[], []], pad_id=0)
    tok = BPETokenizer.train(["the", "cat", "the"], vocab_size=20, min_frequency=1)
    ids = np.array([[2, 7, 3]])
    nothing = mlm.MaskedBatch(ids, np.full((1, 3), mlm.IGNORE), np.ones((1, 3), bool))
    with pytest.raises(ValueError, match="unigram_baseline: the batches have no masked position"):
        unigram_baseline(tok, [ids[0]], [nothing])
    with pytest.raises(ValueError, match="one of them is empty"):
        unigram_baseline(tok, [], [nothing])


def test_ids_shapes_and_counts_out_of_range_are_named():
    seqs = [mlm.encode_sentence(TOK, "the cat sat on the mat".split(), 16),
            mlm.encode_sentence(TOK, "a cat".split(), 16)]
    ids, att = mlm.pad_batch(seqs, TOK.pad_id)
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of ids \(2, 8\)"):
        mlm.mask_tokens(ids, TOK, np.random.default_rng(0), attention_mask=att[0])
    with pytest.raises(ValueError, match=r"targets must be word ids in \[0, 3\), got 3"):
        hs_loss_and_grads(np.ones((1, 2)), np.zeros((2, 2)), huffman_tree([3, 2, 1]),
                          np.array([3]))
    with pytest.raises(ValueError, match="max_size must be a whole number >= 1"):
        Vocab.build(["a", "b"], max_size=0)
    from helpers.course.data import gensim_test_file
    with pytest.raises(ValueError, match=r"gensim_test_file: the course reads only .*'lee.cor'"):
        gensim_test_file("lee.cor")


def test_nearest_neighbours_reads_k_as_a_count():
    vectors, words = np.eye(3) + 0.5, ["a", "b", "c"]
    with pytest.raises(ValueError, match="k must be >= 0, got -1"):
        nearest_neighbours(vectors, words, "a", k=-1)
    assert nearest_neighbours(vectors, words, "a", k=0) == []    # a slider at 0: no neighbours
    assert [w for w, _ in nearest_neighbours(vectors, words, "a", k=1)] == ["b"]
    with pytest.raises(TypeError, match="k must be a whole number"):
        nearest_neighbours(vectors, words, "a", k=1.5)
