"""Lesson 10's role probe (helpers.lessons.lesson10): minimal pairs on which static vectors are at
chance by construction, and a clear refusal of words the tokeniser splits or the vectors lack."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.lessons.lesson10 import role_probe, role_sentences


class _Tok:
    """A tokeniser that keeps every word whole except the ones listed in ``split``."""

    def __init__(self, split=()):
        self.split = set(split)

    def tokenize_word(self, w):
        return (w[:1], w[1:]) if w in self.split else (w,)


class _Vectors(dict):
    vector_size = 3


def _vectors(words):
    rng = np.random.default_rng(0)
    kv = _Vectors({w: rng.standard_normal(3) for w in words})
    return kv


def _all_words():
    from helpers.lessons.lesson10 import ROLE_ADJECTIVES, ROLE_NOUNS, ROLE_VERBS
    return ROLE_NOUNS + ROLE_VERBS + ROLE_ADJECTIVES + ["the", "that"]


def test_the_twins_hold_the_same_words_at_the_same_position_with_opposite_roles():
    S, P, A, G = role_sentences(_Tok(), _vectors(_all_words()), n_pairs=12)
    assert len(S) == 48 and set(A.tolist()) == {0, 1}
    for k in range(0, len(S), 2):                 # (agent, patient) twins
        assert sorted(S[k]) == sorted(S[k + 1]) and P[k] == P[k + 1] and S[k][P[k]] == S[k + 1][P[k]]
        assert (A[k], A[k + 1]) == (1, 0) and G[k] == G[k + 1]


def test_the_word_s_own_vector_and_its_context_mean_are_at_chance():
    kv = _vectors(_all_words())
    S, P, A, G = role_sentences(_Tok(), kv, n_pairs=40)

    def classify(query, support, senses):
        senses = np.asarray(senses)
        return max(("agent", "patient"), key=lambda s: float(query @ support[senses == s].mean(0)))

    own = np.array([kv[s[p]] for s, p in zip(S, P)])
    context = np.array([np.mean([kv[w] for i, w in enumerate(s) if i != p], 0) for s, p in zip(S, P)])
    right = role_probe({"own": own, "context": context}, A, G, classify, splits=2)
    assert right["own"].mean() == 0.5 and right["context"].mean() == 0.5
    assert right["own"].size == 2 * 2 * 2 * (40 // 4)       # splits x twins x directions x held-out pairs


def test_words_the_tokeniser_splits_are_refused_by_name():
    with pytest.raises(ValueError, match="helped"):
        role_sentences(_Tok(split=["helped"]), _vectors(_all_words()))
    with pytest.raises(ValueError, match="that"):
        role_sentences(_Tok(), _vectors([w for w in _all_words() if w != "that"]))
