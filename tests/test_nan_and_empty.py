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

from helpers.lib.batching import pad_sequences
from helpers.lib.language_models import perplexity

NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


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


