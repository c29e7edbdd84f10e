"""fastText (Bojanowski et al. 2017): a word is the sum of its character n-grams (lesson 08)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from helpers.lib.checks import check_whole
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.text import check_tokens

BOW, EOW = "<", ">"


def _check_word(word) -> str:
    if not isinstance(word, str):
        raise TypeError(f"a word must be a string, got {type(word).__name__}")
    if not word:
        raise ValueError("a word must not be empty")
    return word


def _check_n(min_n: int, max_n: int):
    if min_n < 1 or max_n < min_n:
        raise ValueError(f"need 1 <= min_n <= max_n, got min_n={min_n}, max_n={max_n}")


def char_ngrams(word: str, min_n: int = 3, max_n: int = 6, include_word: bool = False) -> list[str]:
    """Character n-grams of ``<word>``, n = min_n..max_n, by n then position (lesson 08 §6):
    ``char_ngrams("where", 3, 3)`` is ``['<wh', 'whe', 'her', 'ere', 're>']``."""
    word = _check_word(word)
    _check_n(min_n, max_n)
    w = BOW + word + EOW
    grams = [w[i:i + n] for n in range(min_n, max_n + 1) for i in range(len(w) - n + 1)]
    if include_word:
        grams.append(w)
    return grams


def fnv1a_32(text: str) -> int:
    """fastText's 32-bit FNV-1a hash of a string's UTF-8 bytes (lesson 08 §6): h = 2166136261,
    per byte h = (h XOR byte) * 16777619 mod 2^32, a byte >= 128 read as a signed char."""
    h = 2166136261
    for b in text.encode("utf-8"):
        h ^= (b - 256) & 0xFFFFFFFF if b >= 128 else b
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def ngram_buckets(word: str, buckets: int = 2_000_000, min_n: int = 3,
                  max_n: int = 6) -> np.ndarray:
    """``fnv1a_32(g) % buckets`` for a word's n-grams g (:func:`char_ngrams`), (n_grams,) int64,
    skipping the lone markers ``<`` and ``>`` as fastText does (lesson 08 §6)."""
    buckets = check_whole(buckets, "buckets", "ngram_buckets", minimum=1)
    grams = [g for g in char_ngrams(word, min_n, max_n) if g not in (BOW, EOW)]
    return np.array([fnv1a_32(g) % buckets for g in grams], dtype=np.int64)


# ---------------------------------------------------------------- a trained fastText
@dataclass
class FastTextVectors:
    """A fastText's vectors (lesson 08 §6): ``W`` (V, D) for the words, ``ngram_vectors``
    (buckets, D); an unseen word gets the mean of its n-gram buckets' vectors."""

    itos: list
    W: np.ndarray
    word_vectors: np.ndarray
    ngram_vectors: np.ndarray
    min_n: int
    max_n: int
    seconds: float
    config: dict = field(default_factory=dict)

    def __post_init__(self):
        self.itos = list(self.itos)
        self._stoi = {w: i for i, w in enumerate(self.itos)}
        V, D = len(self.itos), self.ngram_vectors.shape[1]
        for name in ("W", "word_vectors"):
            if getattr(self, name).shape != (V, D):
                raise ValueError(f"{name} has shape {getattr(self, name).shape}, "
                                 f"expected ({V}, {D})")
        _check_n(self.min_n, self.max_n)

    def __contains__(self, word: str) -> bool:
        """True when ``word`` was in the training vocabulary (it always *has* a vector)."""
        return word in self._stoi

    def vector(self, word: str) -> np.ndarray:
        """(D,) vector of any non-empty word: its row of W, else its n-gram buckets' mean."""
        word = _check_word(word)
        if word in self._stoi:
            return self.W[self._stoi[word]].copy()
        buckets = ngram_buckets(word, len(self.ngram_vectors), self.min_n, self.max_n)
        if not len(buckets):
            raise ValueError(f"{word!r} has no character n-grams of length "
                             f"{self.min_n}..{self.max_n}")
        return self.ngram_vectors[buckets].mean(axis=0, dtype=np.float32)

    def vectors_for(self, words: Sequence[str]) -> np.ndarray:
        """(N, D) float32 vectors of ``words`` (known, unseen or misspelled)."""
        check_tokens(words, "words", "FastTextVectors.vectors_for")
        return np.stack([self.vector(w) for w in words])

    def neighbours(self, word: str, k: int = 5) -> list[tuple[str, float]]:
        """The ``k`` in-vocabulary words closest (cosine) to ``word``'s vector, itself excluded."""
        exclude = (word,) if word in self else ()
        return nearest_neighbours(self.W, self.itos, self.vector(word), k=k, exclude=exclude)


# ---------------------------------------------------------------- misspellings
def misspell(word: str, rng: np.random.Generator) -> str:
    """One typing slip inside a word: a letter dropped, two swapped or one doubled (lesson 08 §6).
    """
    if len(word) < 4:
        raise ValueError(f"misspell needs a word of at least 4 letters, got {word!r}")
    i = int(rng.integers(1, len(word) - 2))
    kind = int(rng.integers(3))
    if kind == 0:
        return word[:i] + word[i + 1:]
    if kind == 1:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word[:i] + word[i] + word[i:]


def misspelling_test(fasttext: FastTextVectors, words: Sequence[str], k: int = 5,
                     seed: int = 0) -> dict:
    """Whether the word is among the ``k`` neighbours of its misspelling (lesson 08 §6): {'pairs',
    'hits' (n,), 'neighbours'}."""
    check_tokens(words, "words", "misspelling_test")
    rng = np.random.default_rng(seed)
    pairs = []
    for w in words:
        for _ in range(20):
            m = misspell(w, rng)
            if m != w and m not in fasttext:
                break
        else:
            raise ValueError(f"no misspelling of {w!r} outside the vocabulary in 20 draws")
        pairs.append((w, m))
    # the k nearest vocabulary words of every misspelling at once (cosine)
    M = fasttext.vectors_for([m for _, m in pairs])
    E = fasttext.W / np.maximum(np.linalg.norm(fasttext.W, axis=1, keepdims=True), 1e-12)
    sims = (M / np.maximum(np.linalg.norm(M, axis=1, keepdims=True), 1e-12)) @ E.T
    part = np.argpartition(-sims, k - 1, axis=1)[:, :k]             # the k best, then in order
    order = np.argsort(-np.take_along_axis(sims, part, axis=1), axis=1, kind="stable")
    top = np.take_along_axis(part, order, axis=1)
    neigh = [[fasttext.itos[j] for j in row] for row in top]
    hits = np.array([float(w in nb) for (w, _), nb in zip(pairs, neigh, strict=True)])
    return {"pairs": pairs, "hits": hits, "neighbours": neigh}
