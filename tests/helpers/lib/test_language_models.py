"""helpers.lib.language_models: perplexity, the unigram floor, the feed-forward LM and its
parameter table."""
import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import language_models as LM
from tests.props import budget, check_bad_ids, closeness, corrupted, raises_naming

close = closeness(1e-10)


@budget()
@given(st.data())
def test_perplexity_and_the_feed_forward_lm(data):
    nll = data.draw(st.floats(0, 700))
    close(LM.perplexity(nll), math.exp(nll))
    for bad in (-0.1, math.nan):
        raises_naming(lambda bad=bad: LM.perplexity(bad), "perplexity", ValueError)
    raises_naming(lambda: LM.perplexity([1.0, 2.0]), "mean_nll", TypeError)
    model = LM.FeedForwardLM(6, context=2, emb_dim=3, hidden=4)
    X = np.array(data.draw(st.lists(st.integers(0, 5), min_size=4, max_size=4))).reshape(2, 2)
    check_bad_ids(lambda x: model(torch.as_tensor(x)), X, 6, "ctx", data.draw(corrupted(X, 6)))
    table = LM.parameter_table(model)
    n_params = 6 * 3 + 6 * 4 + 4 + 4 * 6 + 6
    assert sum(n for _, _, n in table) == LM.count_parameters(model) == n_params


def test_a_diverged_loss_gives_an_infinite_perplexity_with_a_warning():
    with pytest.warns(RuntimeWarning, match="diverged"):
        assert LM.perplexity(800.0) == math.inf


def test_the_feed_forward_lm_table_and_shapes():
    lm = LM.FeedForwardLM(50, context=3, emb_dim=4, hidden=6)
    counts = {n: c for n, _, c in LM.parameter_table(lm)}
    assert counts == {"embed.weight": 200, "hidden.weight": 72, "hidden.bias": 6, "out.weight": 300,
                      "out.bias": 50}
    assert lm(torch.zeros(2, 3, dtype=torch.long)).shape == (2, 50)
    with pytest.raises(ValueError, match=r"shape \(B, 3\), got \(2, 2\)"):
        lm(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        LM.FeedForwardLM(5, dropout=1.0)
    torch.manual_seed(0)
    m = LM.FeedForwardLM(20, context=2, emb_dim=4, hidden=8, dropout=0.5)
    x = torch.tensor([[1, 2], [3, 4]])
    assert torch.equal(m.eval()(x), m(x)) and not torch.equal(m.train()(x), m(x))   # dropout


def test_the_unigram_loss_is_its_formula_and_checks_its_ids():
    train, valid = np.array([0, 1, 2, 1]), np.array([1, 0])
    counts = np.array([1, 2, 1]) + 1.0
    close(LM.unigram_loss(train, valid, 3), -np.log(counts / counts.sum())[valid].mean())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"unigram_loss: valid_ids must be class ids in "
                                             r"\[0, 3\), got -1 at index 1"):
            LM.unigram_loss(train, np.array([1, -1]), 3)
        with pytest.raises(ValueError, match=r"unigram_loss: train_ids must be class ids in "
                                             r"\[0, 2\), got 2 at index 2"):
            LM.unigram_loss(train, np.array([1]), 2)
        with pytest.raises(ValueError, match="unigram_loss: valid_ids is empty"):
            LM.unigram_loss(train, np.array([], int), 3)
