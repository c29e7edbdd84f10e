"""helpers.lib.language_models: perplexity, the unigram floor, parameter counts and sampling."""
import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import language_models as LM
from helpers.lib.layers import softmax
from tests.props import budget, closeness, raises_naming

close = closeness(1e-10)


@budget()
@given(nll=st.floats(0, 700))
def test_perplexity_is_exp_and_refuses_what_is_not_a_loss(nll):
    close(LM.perplexity(nll), math.exp(nll))
    for bad in (-0.1, math.nan):
        raises_naming(lambda bad=bad: LM.perplexity(bad), "perplexity", ValueError)
    raises_naming(lambda: LM.perplexity([1.0, 2.0]), "mean_nll", TypeError)
    with pytest.warns(RuntimeWarning, match="diverged"):
        assert LM.perplexity(800.0) == math.inf


def test_parameter_counts_and_the_unigram_loss():
    model = torch.nn.Sequential(torch.nn.Embedding(6, 3), torch.nn.Linear(3, 4))
    assert [n for _, _, n in LM.parameter_table(model)] == [18, 12, 4]
    assert LM.count_parameters(model) == 34
    train, valid = np.array([0, 1, 2, 1]), np.array([1, 0])
    counts = np.array([1, 2, 1]) + 1.0
    close(LM.unigram_loss(train, valid, 3), -np.log(counts / counts.sum())[valid].mean())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"valid_ids must be class ids in \[0, 3\), got -1"):
            LM.unigram_loss(train, np.array([1, -1]), 3)
        with pytest.raises(ValueError, match="unigram_loss: valid_ids is empty"):
            LM.unigram_loss(train, np.array([], int), 3)


def test_sampling_draws_from_the_tempered_distribution_and_never_a_banned_id():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))

    def next_probs(window):
        assert window.shape == (1, 2)                       # the window keeps its length
        return softmax(logits)[None]

    def draw(n, seed, **kw):
        return LM.sample_text(next_probs, [1, 2], n, np.random.default_rng(seed), **kw)

    a = draw(4000, 5, temperature=2.0, banned=[3])
    assert a == draw(4000, 5, temperature=2.0, banned=[3])
    want = np.exp(logits[:3] / 2) / np.exp(logits[:3] / 2).sum()
    assert 3 not in a and np.allclose(np.bincount(a, minlength=3)[:3] / 4000, want, atol=0.03)
    assert set(draw(20, 0, temperature=1e-3)) == {0}
    with pytest.raises(ValueError, match="temperature"):
        draw(5, 0, temperature=0)
    with pytest.raises(ValueError, match="every id is banned"):
        draw(5, 0, banned=[0, 1, 2, 3])
    with pytest.raises(IndexError, match=r"banned must be ids in \[0, 4\)"):
        draw(5, 0, banned=[4])
