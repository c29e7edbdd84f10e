"""helpers.lib.ngram: the vectorised Kneser-Ney equals the dictionary version, refuses bad input."""
import numpy as np
import pytest

from helpers.lib.ngram import KneserNeyLM, kneser_ney_nlls


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_vectorised_kneser_ney_equals_the_dictionary_version(order):
    rng = np.random.default_rng(order)
    train = np.minimum(rng.integers(0, 11, 4000), rng.integers(0, 11, 4000))   # skewed, repeats
    ev = rng.integers(0, 11, 700)
    kn = KneserNeyLM(order, 11).fit(train)
    want = [-np.log(kn.prob(tuple(ev[i - order + 1:i]), ev[i])) for i in range(order - 1, len(ev))]
    got = kneser_ney_nlls(train, ev, order, 11)
    assert got.shape == (len(ev) - order + 1,)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isclose(got.mean(), kn.mean_nll(ev), rtol=1e-12)


def test_vectorised_kneser_ney_rejects_bad_input():
    with pytest.raises(ValueError, match="order"):
        kneser_ney_nlls(np.arange(10), np.arange(10), 0, 10)
    with pytest.raises(ValueError, match="discount"):
        kneser_ney_nlls(np.arange(10), np.arange(10), 2, 10, discount=1.0)
    with pytest.raises(ValueError):
        kneser_ney_nlls(np.arange(10), np.array([3, 12, 1]), 2, 10)        # outside the vocabulary
    with pytest.raises(ValueError, match="int64"):
        kneser_ney_nlls(np.arange(10), np.arange(10), 7, 10**4)


@pytest.mark.parametrize("order", [9, 10])
def test_long_orders_of_84_characters_equal_the_dictionary_version(order):
    """84**10 > 2**63: order 10 needs unsigned codes (lesson 04's character n-grams)."""
    rng = np.random.default_rng(order)
    base = rng.integers(0, 84, 300)
    train = np.concatenate([base[s:s + 12] for s in rng.integers(0, 288, 300)] + [rng.integers(0, 84, 1000)])
    ev = np.concatenate([train[:400], rng.integers(0, 84, 100)])
    kn = KneserNeyLM(order, 84, 0.9).fit(train)
    want = [-np.log(kn.prob(tuple(ev[i - order + 1:i]), ev[i])) for i in range(order - 1, len(ev))]
    np.testing.assert_allclose(kneser_ney_nlls(train, ev, order, 84, 0.9), want, rtol=1e-12)
    with pytest.raises(ValueError, match="int64"):
        kneser_ney_nlls(train, ev, 11, 84)
