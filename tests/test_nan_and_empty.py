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
from helpers.lib.counting import cooccurrence_matrix, cooccurrence_python, pmi, ppmi
from helpers.lib.language_models import perplexity
from helpers.lib.lsa import energy_kept, inverse_document_frequency, svd_vectors, truncated_svd
from helpers.lib.metrics import analogy, cosine, nearest_neighbours, similarity_correlation
from helpers.lib.optim import SGD, Adam, Momentum, RMSProp
from helpers.lib.recurrent import TimeLSTM

NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_softmax_cross_entropy_on_an_empty_batch():
    from helpers.lib.layers import SoftmaxCrossEntropy
    with pytest.raises(ValueError, match="the batch is empty"):
        SoftmaxCrossEntropy().forward(np.zeros((0, 5)), np.zeros(0, int))    # was nan + 2 warnings


# ---------------------------------------------------------------- the same class of problem elsewhere
def test_counting_refuses_an_empty_corpus_and_nan_marginals():
    with pytest.raises(ValueError, match="empty corpus"):
        cooccurrence_python([np.array([], int)], 5)                  # returned an empty matrix
    with pytest.raises(ValueError, match=r"token id 7 is outside the vocabulary \[0, 5\)"):
        cooccurrence_python([np.array([1, 7])], 5)                   # failed inside SciPy
    with pytest.raises(ValueError, match="window must be an integer >= 1"):
        cooccurrence_python([np.array([1, 2])], 5, window=0)
    with pytest.raises(ValueError, match="empty corpus"):
        cooccurrence_matrix([np.array([], int)], 5)                  # already so: the two agree
    counts = np.array([[2.0, 1.0], [1.0, 3.0]])
    with pytest.raises(ValueError, match="counts must be finite"):
        pmi(np.array([[2.0, NAN], [1.0, 3.0]]))
    with pytest.raises(ValueError, match="row_sums must be finite and non-negative"):
        pmi(counts, row_sums=[3.0, NAN])                            # gave nan PMI
    with pytest.raises(ValueError, match="the total count must be finite, got nan"):
        ppmi(counts, total=NAN)


def test_svd_refuses_nan_and_more_dimensions_than_the_rank():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="the matrix holds nan or inf"):
        truncated_svd(np.array([[1.0, NAN], [0.0, 1.0]]), 1)
    with pytest.raises(ValueError, match="the matrix holds nan or inf"):
        truncated_svd(sp.csr_matrix(np.array([[1.0, INF], [0.0, 1.0]])), 1)
    rank2 = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 6))
    with pytest.raises(ValueError, match=r"k=4 exceeds the matrix's numerical rank 2; the last 2 columns of U are "
                                         r"arbitrary"):
        svd_vectors(rank2, 4, weighting="U", solver="dense")      # gave two random directions per word
    with pytest.raises(ValueError, match="rank 2"):
        svd_vectors(rank2, 3, weighting="sqrtS", solver="dense")
    us = svd_vectors(rank2, 4, weighting="US", solver="dense")   # US scales them to zero: allowed
    assert np.allclose(us[:, 2:], 0, atol=1e-12)
    assert svd_vectors(rank2, 2, weighting="U", solver="dense").shape == (8, 2)
    with pytest.raises(ValueError, match="the matrix is all zeros"):
        svd_vectors(np.zeros((4, 3)), 2, solver="dense")
    with pytest.raises(ValueError, match="frobenius_sq must be positive and finite"):
        energy_kept([1.0, 0.5], 0.0)                               # was inf/nan with warnings
    with pytest.raises(ValueError, match="finite numbers"):
        energy_kept([1.0, NAN], 2.0)
    with pytest.raises(ValueError, match="document frequencies must lie in"):
        inverse_document_frequency([1.0, NAN], 3)


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
