"""helpers.lib.ngram: interpolated Kneser-Ney is a distribution that never gives 0, reproduces hand
computations, and is NLTK's KneserNeyInterpolated where the two define the same model.

They differ only in the base of the recursion (NLTK, nltk/lm 3.8-3.10: an undiscounted
continuation unigram, 0 for a word that never follows another; the course: discounted too, the
freed mass to the uniform 1/|V|), so the comparison puts the course's base into NLTK; NLTK counts
the k-grams at the very start too, so the test text repeats its first n-1 tokens at the end.
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib.ngram import KneserNeyLM, kneser_ney_nlls
from tests.props import budget, check_bad_ids, closeness, corrupted, dims, raises_naming

close = closeness(1e-10)


@budget(2)
@given(st.data())
def test_kneser_ney_is_a_distribution_and_refuses_bad_ids(data):
    V, order = data.draw(dims(2, 5)), data.draw(dims(1, 3))
    train = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=order, max_size=25)))
    ev = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=order, max_size=12)))
    kn = KneserNeyLM(order, V).fit(train)
    ctx = tuple(ev[: order - 1])
    probs = [kn.prob(ctx, w) for w in range(V)]
    close(sum(probs), 1.0, 1e-9)
    assert min(probs) > 0
    close(kneser_ney_nlls(train, ev, order, V), kn.token_nll(ev))
    close(kn.mean_nll(ev), kn.token_nll(ev).mean())
    assert 0 <= kn.unseen_fraction(ev) <= 1
    check_bad_ids(kn.fit, train, V, "ids", data.draw(corrupted(train, V)))
    check_bad_ids(lambda x: kn.token_nll(x), ev, V, "ids", data.draw(corrupted(ev, V)))
    one = np.array([0])
    check_bad_ids(lambda x: kn.prob(x, 0), one, V, "context", data.draw(corrupted(one, V)))
    raises_naming(lambda: kn.prob(ctx, data.draw(st.sampled_from([-1, V, V + 7]))), "w", ValueError)
    raises_naming(lambda: kn.prob(ctx, 1.0), "w", TypeError)
    raises_naming(lambda: KneserNeyLM(order, V).prob(ctx, 0), "fit", RuntimeError)
    raises_naming(lambda: KneserNeyLM(0, V), "order", ValueError)
    raises_naming(lambda: KneserNeyLM(order, V, discount=1.0), "discount", ValueError)


def test_a_worked_bigram_and_histories_of_every_length():
    # "a b a b a c": c(a b) = 2, c(a ·) = 3, two different followers of a; D = 0.5
    lm = KneserNeyLM(2, vocab_size=3, discount=0.5).fit(np.array([0, 1, 0, 1, 0, 2]))
    p_cont_b = (1 - 0.5) / 3 + 0.5 * 3 / 3 * (1 / 3)
    assert math.isclose(lm.prob((0,), 1), (2 - 0.5) / 3 + 0.5 * 2 / 3 * p_cont_b)
    lm = KneserNeyLM(3, 10).fit(np.random.default_rng(1).integers(0, 10, 300))
    held = np.random.default_rng(2).integers(0, 10, 50)
    nll, early = lm.token_nll(held), lm.token_nll(held, start=1)   # the first: a one-token history
    assert nll.shape == (48,) and early.shape == (49,) and np.allclose(early[1:], nll)
    assert math.isclose(early[0], -math.log(lm.prob((int(held[0]),), int(held[1]))))
    with pytest.raises(ValueError, match="start must be in"):
        lm.token_nll(held, start=50)
    with pytest.raises(ValueError, match="need at least 3 tokens"):
        KneserNeyLM(3, 5).fit(np.array([1, 2]))
    with pytest.raises(ValueError, match="int64"):
        kneser_ney_nlls(np.arange(10), np.arange(10), 7, 10**4)


@pytest.mark.parametrize("order", [9, 10])
def test_long_orders_of_84_characters_equal_the_dictionary_version(order):
    """84**10 > 2**63: order 10 needs unsigned codes (lesson 04's character n-grams)."""
    rng = np.random.default_rng(order)
    base = rng.integers(0, 84, 300)
    pieces = [base[s:s + 12] for s in rng.integers(0, 288, 300)]
    train = np.concatenate(pieces + [rng.integers(0, 84, 1000)])
    ev = np.concatenate([train[:400], rng.integers(0, 84, 100)])
    kn = KneserNeyLM(order, 84, 0.9).fit(train)
    want = [-np.log(kn.prob(tuple(ev[i - order + 1:i]), ev[i])) for i in range(order - 1, len(ev))]
    np.testing.assert_allclose(kneser_ney_nlls(train, ev, order, 84, 0.9), want, rtol=1e-12)
    with pytest.raises(ValueError, match="int64"):
        kneser_ney_nlls(train, ev, 11, 84)


nltk_lm = pytest.importorskip("nltk.lm")


def _nltk_model(ids: list[int], n: int, D: float):
    from nltk.util import everygrams
    toks = [str(i) for i in ids]
    lm = nltk_lm.KneserNeyInterpolated(order=n, discount=D)
    lm.fit([list(everygrams(toks, max_len=n))], vocabulary_text=toks)
    return lm


@pytest.mark.parametrize("n,D", [(2, 0.75), (3, 0.6), (3, 0.9)])
def test_kneser_ney_agrees_with_nltk_where_they_define_the_same_model(n, D):
    V = 12                                         # ids 9, 10, 11 never occur in the text
    ids = [int(i) for i in np.random.default_rng(0).integers(0, 9, 240)]
    ids += ids[:n - 1]                             # the first n-1 tokens recur: no edge effect
    ours, theirs = KneserNeyLM(n, V, D).fit(np.array(ids)), _nltk_model(ids, n, D)
    est = theirs.estimator
    cont = {w: est._continuation_counts(str(w))[0] for w in range(9)}
    total, types = sum(cont.values()), sum(1 for c in cont.values() if c > 0)
    for w in range(9):                             # NLTK's unigram: the course's continuation share
        assert math.isclose(est.unigram_score(str(w)), cont[w] / total, rel_tol=1e-12)
    def unigram(word):                             # the course's base, from NLTK's own counts
        return max(cont.get(int(word), 0) - D, 0) / total + D * types / total / V

    est.unigram_score = unigram
    seen = sorted({tuple(ids[i:i + n - 1]) for i in range(len(ids) - n + 1)})[:25]
    unseen = [(10,) * (n - 1), (0,) * (n - 2) + (11,)]
    for ctx in seen + unseen:
        for w in range(V):
            theirs_p = theirs.unmasked_score(str(w), tuple(map(str, ctx)))
            assert math.isclose(ours.prob(ctx, w), theirs_p, rel_tol=1e-12, abs_tol=1e-15), (ctx, w)
    nine = _nltk_model([9] + ids, n, D)            # why the bases differ: 9 never follows a word
    assert nine.estimator.unigram_score("9") == 0.0
    assert KneserNeyLM(n, V, D).fit([9] + ids).prob((10,), 9) > 0
