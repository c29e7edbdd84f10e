"""Lesson 01's n-gram language models: the course's interpolated Kneser-Ney (``helpers.lib.ngram``)
checked against an independent implementation, NLTK's ``KneserNeyInterpolated``, and the
vectorised ``kneser_ney_nlls`` against the dictionary version.

Where the two define the same model (read from ``nltk/lm/smoothing.py`` and ``nltk/lm/models.py``,
NLTK 3.8-3.10): both discount the top order's raw counts by one D, use continuation counts
N1+(• h w) at every lower order, give a context the back-off weight D·N1+(h •)/total, and skip
an unseen context (weight 1). They differ in one place, the base of the recursion: NLTK's unigram
is N1+(• w)/N1+(• •), undiscounted, which is 0 for a word that never follows another, whereas the
course discounts the unigram level too and gives the freed mass to the uniform 1/|V|, so that no
word of the vocabulary gets probability 0 (a held-out text would otherwise have infinite
perplexity). The tests check (1) that NLTK's unigram is exactly the course's continuation
distribution before that step, and (2) that NLTK with its unigram replaced by the course's base —
the one formula of the lesson, computed from NLTK's own counts — gives the course's probability
for every word in every context, seen and unseen, to 1e-12.

NLTK counts every k-gram of its input, including those at the very start of the text, while the
course's lower orders are the continuations of its top-order n-grams: the two agree when the
text's first n-1 tokens occur again later, which the test text is built to do.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.lib.ngram import KneserNeyLM, kneser_ney_nlls

nltk_lm = pytest.importorskip("nltk.lm")
from nltk.util import everygrams  # noqa: E402


def _text(n: int, length: int = 240, seed: int = 0, used: int = 9) -> list[int]:
    ids = [int(i) for i in np.random.default_rng(seed).integers(0, used, length)]
    return ids + ids[:n - 1]                  # the first n-1 tokens recur: no edge effect at the start


def _nltk_model(ids: list[int], n: int, D: float):
    toks = [str(i) for i in ids]
    lm = nltk_lm.KneserNeyInterpolated(order=n, discount=D)
    lm.fit([list(everygrams(toks, max_len=n))], vocabulary_text=toks)
    return lm


def _with_the_course_s_base(lm, V: int, D: float):
    """NLTK's model with its unigram replaced by the lesson's base: the continuation unigram,
    discounted by D, interpolated with the uniform 1/V — from NLTK's own continuation counts."""
    est = lm.estimator
    words = [w for w in lm.vocab if w != lm.vocab.unk_label]
    cont = {w: est._continuation_counts(w)[0] for w in words}
    total = sum(cont.values())
    types = sum(1 for c in cont.values() if c > 0)

    def unigram(word):
        c = cont.get(word, 0)
        return max(c - D, 0) / total + D * types / total / V

    est.unigram_score = unigram
    return lm


@pytest.mark.parametrize("n,D", [(2, 0.75), (3, 0.6), (3, 0.9)])
def test_kneser_ney_agrees_with_nltk_where_they_define_the_same_model(n, D):
    V = 12                                     # ids 9, 10, 11 never occur in the text
    ids = _text(n)
    ours = KneserNeyLM(n, V, D).fit(np.array(ids))
    theirs = _nltk_model(ids, n, D)
    # (1) NLTK's unigram is the course's continuation distribution, before the discount and the uniform
    total = ours.ctx_total[0][()]
    for w in range(9):
        assert math.isclose(theirs.estimator.unigram_score(str(w)), ours.counts[0].get((w,), 0) / total,
                            rel_tol=1e-12)
    # (2) with the course's base, the same model: every word, seen contexts and unseen ones
    theirs = _with_the_course_s_base(theirs, V, D)
    seen = sorted({tuple(ids[i:i + n - 1]) for i in range(len(ids) - n + 1)})[:25]
    unseen = [(10,) * (n - 1), (0,) * (n - 2) + (11,)] if n > 2 else [(10,), (11,)]
    checked = 0
    for ctx in seen + unseen:
        for w in range(V):
            p_ours = ours.prob(ctx, w)
            p_theirs = theirs.unmasked_score(str(w), tuple(map(str, ctx)))
            assert math.isclose(p_ours, p_theirs, rel_tol=1e-12, abs_tol=1e-15), (ctx, w, p_ours, p_theirs)
            checked += 1
        assert math.isclose(sum(ours.prob(ctx, w) for w in range(V)), 1.0, rel_tol=1e-12)
    assert checked == (len(seen) + len(unseen)) * V


def test_nltk_s_own_base_gives_zero_to_a_word_that_never_follows_another():
    """Why the course's base differs: without the uniform floor, a vocabulary word with no
    continuation gets probability 0 in an unseen context, so a text containing it has infinite
    perplexity; the course's model gives it D·types/total/|V| > 0."""
    n, D = 3, 0.75
    ids = [9] + _text(n)                       # 9 occurs once, as the first token: it never follows a word
    theirs = _nltk_model(ids, n, D)
    ours = KneserNeyLM(n, 12, D).fit(np.array(ids))
    assert theirs.estimator.unigram_score("9") == 0.0
    assert ours.prob((10, 11), 9) > 0


def test_the_vectorised_kneser_ney_is_the_dictionary_one():
    rng = np.random.default_rng(3)
    train, held = rng.integers(0, 30, 3000), rng.integers(0, 32, 500)     # held-out ids 30, 31 unseen
    for n, D in [(1, 0.5), (2, 0.75), (3, 0.9), (4, 0.8)]:
        lm = KneserNeyLM(n, 32, D).fit(train)
        np.testing.assert_allclose(kneser_ney_nlls(train, held, n, 32, D), lm.token_nll(held), rtol=1e-10)
