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

from helpers.lib.batching import pad_sequences
from helpers.lib.glove import GloVeNumpy, cooccurrence_entries, glove_weight
from helpers.lib.language_models import perplexity
from helpers.lib.negative_sampling import NoiseSampler, unigram_noise

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


def test_empty_sequences_and_evaluation_sets():
    with pytest.raises(ValueError, match="every sequence is empty"):
        pad_sequences([[], []], pad_id=0)
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
