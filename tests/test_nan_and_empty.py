"""NaN and empty inputs are errors that say what is wrong, not silent nans (issue 13, defect 7).

Before the fix ``glove_weight(nan)`` returned 1.0, ``NoiseSampler`` with a NaN count drew id 0
forever, and the same class of problem hid across the library: NaN marginals gave NaN PMI, an
SVD with more dimensions than the matrix's rank kept arbitrary directions, a NaN word vector
made every similarity nan, an empty evaluation set had accuracy 0. Each now raises; all the
tests run with warnings turned into errors, so a "nan with a RuntimeWarning" fails too.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from helpers.lib.attention import attention_single_query, scaled_dot_product_attention
from helpers.lib.batching import pad_sequences
from helpers.lib.glove import GloVeNumpy, cooccurrence_entries, glove_weight
from helpers.lib.language_models import perplexity
from helpers.lib.metrics import analogy, cosine, nearest_neighbours, similarity_correlation
from helpers.lib.negative_sampling import NoiseSampler, unigram_noise
from helpers.lib.optim import SGD, Adam, Momentum, RMSProp
from helpers.lib.recurrent import TimeLSTM

NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------- the three examples
def test_glove_weight_refuses_nan_and_inf():
    with pytest.raises(ValueError, match=r"counts must be finite and non-negative, got nan at index 1"):
        glove_weight(np.array([1.0, NAN]))                 # used to return 1.0
    with pytest.raises(ValueError, match="non-negative, got nan$"):
        glove_weight(NAN)
    with pytest.raises(ValueError, match="got inf"):
        glove_weight([INF])
    for bad in (NAN, INF, 0.0):
        with pytest.raises(ValueError, match="x_max must be a positive number"):
            glove_weight(1.0, x_max=bad)
        with pytest.raises(ValueError, match="alpha must be a positive number"):
            glove_weight(1.0, alpha=bad)


@pytest.mark.parametrize("make", [unigram_noise, NoiseSampler], ids=["unigram_noise", "NoiseSampler"])
def test_the_noise_distribution_refuses_nan_negative_and_all_zero_counts(make):
    with pytest.raises(ValueError, match=r"counts must be finite and non-negative, got nan at index 1 \(1 of 3 counts\)"):
        make([3.0, NAN, 1.0])                              # NoiseSampler then drew id 0 forever
    with pytest.raises(ValueError, match=r"got -2.0 at index 2"):
        make([3.0, 1.0, -2.0])
    with pytest.raises(ValueError, match="got inf at index 0"):
        make([INF, 1.0])
    with pytest.raises(ValueError, match="every one of the 3 counts is 0"):
        make([0, 0, 0])


def test_softmax_cross_entropy_on_an_empty_batch():
    from helpers.lib.layers import SoftmaxCrossEntropy
    with pytest.raises(ValueError, match="the batch is empty"):
        SoftmaxCrossEntropy().forward(np.zeros((0, 5)), np.zeros(0, int))    # was nan + 2 warnings


# ---------------------------------------------------------------- the same class of problem elsewhere
def test_word_vectors_with_nan_name_the_word():
    vocab = ["king", "queen", "man", "woman"]
    vectors = np.eye(4)
    vectors[2, 1] = NAN
    with pytest.raises(ValueError, match=r"the vectors hold nan or inf \(first in row 2, the word 'man'\); "
                                         "did their training diverge"):
        nearest_neighbours(vectors, vocab, "king")                 # ranked nan similarities
    with pytest.raises(ValueError, match="the word 'man'"):
        nearest_neighbours(sp.csr_matrix(vectors), vocab, "king")
    with pytest.raises(ValueError, match="the word 'man'"):
        similarity_correlation(vectors, vocab, [("king", "queen", 8.0), ("man", "woman", 7.0)])
    with pytest.raises(ValueError, match="the word 'man'"):
        analogy(vectors, vocab, "man", "king", "woman")
    with pytest.raises(ValueError, match="the query vector holds nan or inf"):
        nearest_neighbours(np.eye(4), vocab, np.array([1.0, NAN, 0, 0]))
    with pytest.raises(ValueError, match="cosine: a vector holds nan or inf"):
        cosine(np.array([1.0, NAN]), np.array([1.0, 0.0]))


def test_attention_over_no_keys():
    with pytest.raises(ValueError, match=r"there are no keys \(T_k = 0"):
        scaled_dot_product_attention(np.ones((2, 3, 4)), np.ones((2, 0, 4)), np.ones((2, 0, 5)))
    with pytest.raises(ValueError, match=r"there are no keys \(T = 0\)"):
        attention_single_query(np.ones(4), np.ones((0, 4)), np.ones((0, 5)))


def test_empty_sequences_and_evaluation_sets():
    with pytest.raises(ValueError, match="the sequence is empty"):
        TimeLSTM(3, 4, np.random.default_rng(0)).forward(np.zeros((2, 0, 3)))
    with pytest.raises(ValueError, match="every sequence is empty"):
        pad_sequences([[], []], pad_id=0)
    from helpers.lib.language_models import FeedForwardLM
    from training.ffnn_lm import mean_nll
    with pytest.raises(ValueError, match="mean_nll: 0 contexts and 0 targets"):
        mean_nll(FeedForwardLM(5, context=2), np.zeros((0, 2), np.int64), np.zeros(0, np.int64))
    with pytest.raises(ValueError, match=r"perplexity: .* got nan \(nan: did training diverge\?\)"):
        perplexity(NAN)


def test_the_mlm_evaluation_needs_masked_positions():
    from helpers.lib.bpe import BPETokenizer
    from helpers.lib.mlm import IGNORE, MaskedBatch
    from helpers.lib.pretraining import unigram_baseline
    tok = BPETokenizer.train(["the", "cat", "the"], vocab_size=20, min_frequency=1)
    nothing = MaskedBatch(np.array([[2, 7, 3]]), np.full((1, 3), IGNORE), np.ones((1, 3), bool))
    with pytest.raises(ValueError, match="unigram_baseline: the batches have no masked position"):
        unigram_baseline(tok, [np.array([2, 7, 3])], [nothing])
    with pytest.raises(ValueError, match="one of them is empty"):
        unigram_baseline(tok, [], [nothing])


def test_glove_layer_and_entries_refuse_nan_counts():
    with pytest.raises(ValueError, match="co-occurrence counts must be finite and non-negative, got nan"):
        cooccurrence_entries(sp.csr_matrix(np.array([[0.0, NAN], [2.0, 0.0]])))   # dropped the nan pair
    layer = GloVeNumpy(3, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="every count x must be positive and finite .* got nan at index 1"):
        layer.forward(np.array([0, 1]), np.array([1, 2]), np.array([2.0, NAN]))


@pytest.mark.parametrize("cls", [SGD, Momentum, RMSProp, Adam], ids=lambda c: c.__name__)
def test_optimizers_refuse_a_learning_rate_that_is_not_a_positive_number(cls):
    for bad in (0.0, -0.1, NAN, INF):
        with pytest.raises(ValueError, match=rf"{cls.__name__}: the learning rate must be a positive number"):
            cls(bad)


def test_decay_rates_lie_in_0_1():
    with pytest.raises(ValueError, match=r"Momentum: beta must lie in \[0, 1\), got 1.0"):
        Momentum(0.1, beta=1.0)
    with pytest.raises(ValueError, match=r"RMSProp: rho must lie in \[0, 1\)"):
        RMSProp(0.1, rho=NAN)
    with pytest.raises(ValueError, match=r"Adam: beta2 must lie in \[0, 1\), got 1.5"):
        Adam(0.1, beta2=1.5)
