"""fastText's idea (Bojanowski et al. 2017): a word is the sum of its character n-grams.

A word is wrapped in boundary markers, ``where`` -> ``<where>``, and cut into its character
n-grams for n = 3..6 (``<wh``, ``whe``, ``her``, ``ere``, ``re>``, ``<whe``, ...); the whole
marked word ``<where>`` is one more token. Each n-gram is hashed (FNV-1a, 32 bit, as fastText
does) into one of a fixed number of buckets, so the table of n-gram vectors has a fixed size
however many distinct n-grams a corpus holds (different n-grams can share a bucket).

A word's vector is the mean (fastText) or the sum of its n-gram vectors — plus its own
vector when it was in the training vocabulary. A word never seen in training (``unbelievably``,
a misspelling like ``goverment``) still has n-grams, so it still gets a vector; word2vec has none.

- :func:`char_ngrams`, :func:`fnv1a_32`, :func:`ngram_buckets`: the n-grams and their buckets
  (identical to gensim's ``compute_ngrams`` / ``ft_ngram_hashes``; tests check it).
- :class:`SubwordEmbedding`: the NumPy sketch, a layer of the course protocol
  (``forward(words) -> (N, D)``, ``backward`` fills the gradients of the used rows).
- :class:`FastTextVectors`: a trained fastText's vectors as arrays (the shipped gensim model,
  ``wv_gensim_fasttext``); an unseen word gets its vector from :func:`ngram_buckets`;
- :func:`misspelling_test`: do a misspelling's neighbours hold the right word?
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from helpers.lib.checks import check_whole
from helpers.lib.layers import Layer
from helpers.lib.metrics import nearest_neighbours
from helpers.lib.text import check_tokens

__all__ = ["char_ngrams", "fnv1a_32", "ngram_buckets", "SubwordEmbedding", "FastTextVectors",
           "misspell", "misspelling_test"]

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
    """Character n-grams of ``<word>`` for n = min_n..max_n. Taught in lesson 08, section 4.

    Ordered by n, then by position: ``char_ngrams("where", 3, 3)`` is
    ``['<wh', 'whe', 'her', 'ere', 're>']``. An n-gram may repeat (``banana`` has ``ana``
    twice) and is listed each time, as fastText counts it. With ``include_word=True`` the
    whole marked word (``'<where>'``) is appended as its own token (fastText keeps it as the
    word's own vector). Raises ValueError for an empty word or bad n.
    """
    word = _check_word(word)
    _check_n(min_n, max_n)
    w = BOW + word + EOW
    grams = [w[i:i + n] for n in range(min_n, max_n + 1) for i in range(len(w) - n + 1)]
    if include_word:
        grams.append(w)
    return grams


def fnv1a_32(text: str) -> int:
    """fastText's hash of a string: 32-bit FNV-1a over its UTF-8 bytes. Taught in lesson 08, section 4.

    h = 2166136261; for each byte: h = (h XOR byte) * 16777619 mod 2^32. As in fastText's C++
    code (and gensim's ``ft_hash_bytes``) each byte is read as a *signed* char, so a non-ASCII
    byte b >= 128 is XOR-ed as b - 256 (sign-extended to 32 bits). Returns an int in [0, 2^32).
    """
    h = 2166136261
    for b in text.encode("utf-8"):
        h ^= (b - 256) & 0xFFFFFFFF if b >= 128 else b
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def ngram_buckets(word: str, buckets: int = 2_000_000, min_n: int = 3, max_n: int = 6) -> np.ndarray:
    """The hash buckets of a word's character n-grams. Taught in lesson 08, section 4.

    Bucket ids ``fnv1a_32(g) % buckets`` of the character n-grams ``g`` of ``word``
    (in :func:`char_ngrams` order, repeats kept), except the lone boundary markers ``<`` and ``>``
    that :func:`char_ngrams` lists for ``min_n = 1``: fastText (and gensim's ``ft_ngram_hashes``)
    never hash those, so a vector built from them would differ from fastText's. Returns
    (n_grams,) int64."""
    buckets = check_whole(buckets, "buckets", "ngram_buckets")
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets}")
    grams = [g for g in char_ngrams(word, min_n, max_n) if g not in (BOW, EOW)]
    return np.array([fnv1a_32(g) % buckets for g in grams], dtype=np.int64)


# ---------------------------------------------------------------- the NumPy sketch
class SubwordEmbedding(Layer):
    """fastText's word vector from character n-grams, as a NumPy layer. Taught in lesson 08, section 4.

    A fastText-style word vector: the mean (or sum) of its n-gram bucket vectors, plus the
    word's own vector when it is in ``vocab``.

    params = [E_word (len(vocab), D), E_ngram (buckets, D)] (E_word is (0, D) without a vocab),
    initialised uniformly in [-1/D, 1/D] from ``rng``.

    forward(words: list of N str) -> (N, D): row k is
        combine({E_word[word_k] if word_k in vocab} ∪ {E_ngram[h] for h in ngram_buckets(word_k)})
        with combine = mean (default, as fastText) or sum.
    backward(dout (N, D)) fills ``grads`` (dense, repeated rows accumulate) and returns None
        (words are not differentiable).
    """

    def __init__(self, dim: int, buckets: int = 100_000, vocab: Sequence[str] = (), min_n: int = 3, max_n: int = 6,
                 combine: str = "mean", rng: np.random.Generator | None = None, dtype=np.float64):
        super().__init__()
        if dim < 1 or buckets < 1:
            raise ValueError(f"dim and buckets must be >= 1, got {dim} and {buckets}")
        if combine not in ("mean", "sum"):
            raise ValueError(f"combine must be 'mean' or 'sum', got {combine!r}")
        _check_n(min_n, max_n)
        check_tokens(vocab, "vocab", "SubwordEmbedding")
        rng = rng if rng is not None else np.random.default_rng(0)
        self.itos = list(vocab)
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.dim, self.buckets, self.min_n, self.max_n, self.combine = dim, buckets, min_n, max_n, combine
        def u(n):
            return rng.uniform(-1 / dim, 1 / dim, (n, dim)).astype(dtype)
        self.params = [u(len(self.itos)), u(buckets)]
        self.grads = [np.zeros_like(p) for p in self.params]
        self.cache = None

    def rows(self, word: str) -> tuple[list[int], np.ndarray]:
        """([row in E_word] or [], bucket rows in E_ngram) that make up ``word``'s vector."""
        own = [self.stoi[word]] if word in self.stoi else []
        return own, ngram_buckets(word, self.buckets, self.min_n, self.max_n)

    def forward(self, words: Sequence[str]) -> np.ndarray:
        check_tokens(words, "words", "SubwordEmbedding.forward")
        Ew, En = self.params
        out = np.zeros((len(words), self.dim), dtype=En.dtype)
        parts = []
        for k, w in enumerate(words):
            own, grams = self.rows(w)
            n = len(own) + len(grams)
            scale = 1.0 / n if self.combine == "mean" else 1.0
            out[k] = (Ew[own].sum(0) + En[grams].sum(0)) * scale
            parts.append((own, grams, scale))
        self.cache = parts
        return out

    def backward(self, dout):
        dout = np.asarray(dout)            # its shape (N, D) is checked by Layer
        for g in self.grads:
            g[...] = 0
        for k, (own, grams, scale) in enumerate(self.cache):
            np.add.at(self.grads[0], own, scale * dout[k])
            np.add.at(self.grads[1], grams, scale * dout[k])      # a repeated n-gram counts twice
        return None


# ---------------------------------------------------------------- gensim's FastText (the reference)
@dataclass
class FastTextVectors:
    """A trained fastText model's vectors, for known and unseen words. Taught in lesson 08, section 4.

    itos          : the vocabulary (list of str, most frequent first)
    W             : (V, D) float32, the vector of each vocabulary word in that order: its own
                    vector and its n-gram vectors, averaged (gensim's ``wv.vectors``)
    word_vectors  : (V, D) float32, the words' own vectors (gensim's ``wv.vectors_vocab``)
    ngram_vectors : (buckets, D) float32, the n-gram bucket vectors (``wv.vectors_ngrams``)
    min_n, max_n  : the n-gram lengths; seconds: training time; config: the hyperparameters

    A word outside the vocabulary gets the mean of its n-gram bucket vectors, the buckets found
    by this module's :func:`ngram_buckets` (fastText's hashing), exactly as gensim computes it
    (a test checks it against gensim's ``get_vector``). No gensim object is kept, so the vectors
    are stored as plain arrays (:meth:`to_arrays`)."""

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
                raise ValueError(f"{name} has shape {getattr(self, name).shape}, expected ({V}, {D})")
        _check_n(self.min_n, self.max_n)

    def __contains__(self, word: str) -> bool:
        """True when ``word`` was in the training vocabulary (it always *has* a vector)."""
        return word in self._stoi

    def vector(self, word: str) -> np.ndarray:
        """(D,) float32 vector of any non-empty word: the vocabulary vector (own vector and
        n-grams) if it was in the vocabulary, else the mean of its n-gram bucket vectors."""
        word = _check_word(word)
        if word in self._stoi:
            return self.W[self._stoi[word]].copy()
        buckets = ngram_buckets(word, len(self.ngram_vectors), self.min_n, self.max_n)
        if not len(buckets):
            raise ValueError(f"{word!r} has no character n-grams of length {self.min_n}..{self.max_n}")
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
    """One typing slip inside a word. Taught in lesson 08, section 4.

    One typing slip inside ``word`` (the first and last letters kept): a letter dropped, two
    neighbouring letters swapped, or a letter doubled, chosen by ``rng``."""
    if len(word) < 4:
        raise ValueError(f"misspell needs a word of at least 4 letters, got {word!r}")
    i = int(rng.integers(1, len(word) - 2))
    kind = int(rng.integers(3))
    if kind == 0:
        return word[:i] + word[i + 1:]
    if kind == 1:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    return word[:i] + word[i] + word[i:]


def misspelling_test(fasttext: FastTextVectors, words: Sequence[str], k: int = 5, seed: int = 0) -> dict:
    """Do fastText's neighbours of a misspelling hold the right word? Taught in lesson 08, section 4.

    Misspell every word once (:func:`misspell`, seeded; a slip that gives another vocabulary
    word or no change is redrawn) and ask fastText for the ``k`` neighbours of the misspelling.

    Returns {'pairs': [(word, misspelling)], 'hits' (n,) 0/1 (the right word among the k
    neighbours), 'neighbours': [[word, ...]]} — a word-level model (word2vec, GloVe) has no vector
    for any of the misspellings."""
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
    # the k nearest vocabulary words of every misspelling at once (cosine), as FastTextVectors.neighbours
    M = fasttext.vectors_for([m for _, m in pairs])
    E = fasttext.W / np.maximum(np.linalg.norm(fasttext.W, axis=1, keepdims=True), 1e-12)
    sims = (M / np.maximum(np.linalg.norm(M, axis=1, keepdims=True), 1e-12)) @ E.T
    part = np.argpartition(-sims, k - 1, axis=1)[:, :k]                   # the k best, then in order
    top = np.take_along_axis(part, np.argsort(-np.take_along_axis(sims, part, axis=1), axis=1, kind="stable"), axis=1)
    neigh = [[fasttext.itos[j] for j in row] for row in top]
    hits = np.array([float(w in nb) for (w, _), nb in zip(pairs, neigh, strict=True)])
    return {"pairs": pairs, "hits": hits, "neighbours": neigh}
