"""The character-level Shakespeare corpus of lesson 04: 42 works as one stream of characters,
with chosen works held out."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from helpers.course.data import load_shakespeare
from helpers.lib.text import Vocab
from helpers.lib.transformer import CharCorpus, encode_chars


def shakespeare_chars(valid_works: tuple[str, ...] = ("hamlet",)) -> CharCorpus:
    """All 42 works as one character stream; ``valid_works`` are held out (not trained on).

    The vocabulary is the set of characters of the whole corpus (84 symbols), without
    specials: every character is known, so held-out text never meets an unknown symbol.
    """
    works = load_shakespeare()
    missing = [w for w in valid_works if w not in works]
    if missing:
        raise KeyError(f"unknown work(s) {missing}; choose from {sorted(works)}")
    train_text = "\n".join(t for w, t in works.items() if w not in valid_works)
    valid_text = "\n".join(works[w] for w in valid_works)
    vocab = Vocab.build(list(train_text + valid_text), specials=())   # a vocabulary of characters
    return CharCorpus(vocab, encode_chars(vocab, train_text), encode_chars(vocab, valid_text), tuple(valid_works))


VALID_WORK = "othello"     # lesson 04's character models: early stopping and every choice
TEST_WORK = "hamlet"       # final numbers only


@dataclass(frozen=True)
class CharSplit:
    """The character corpus split by work: ``train`` (the other 40 works joined by newlines),
    ``valid`` (one whole play), ``test`` (another), each an (n,) int64 array of character ids;
    ``vocab``: the 84 characters of the whole corpus (no specials)."""

    vocab: Vocab
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray
    valid_work: str
    test_work: str

    @property
    def V(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> np.ndarray:
        """Character ids of ``text`` (an unknown character is an error naming it)."""
        return encode_chars(self.vocab, text)

    def decode(self, ids) -> str:
        return "".join(self.vocab.decode(ids))


@functools.lru_cache(maxsize=2)
def char_split(valid_work: str = VALID_WORK, test_work: str = TEST_WORK) -> CharSplit:
    """Lesson 04's split by work: validation = *Othello*, test = *Hamlet*, train = the rest.

    Nothing of the two held-out plays is trained on; the vocabulary (84 characters) is the
    character set of all 42 works, the same ids as :func:`shakespeare_chars`."""
    works = load_shakespeare()
    missing = [w for w in (valid_work, test_work) if w not in works]
    if missing or valid_work == test_work:
        raise KeyError(f"need two different works, got {valid_work!r}, {test_work!r}; choose from {sorted(works)}")
    train_text = "\n".join(t for w, t in works.items() if w not in (valid_work, test_work))
    vocab = Vocab.build(list(train_text + works[valid_work] + works[test_work]), specials=())
    return CharSplit(vocab, encode_chars(vocab, train_text), encode_chars(vocab, works[valid_work]),
                     encode_chars(vocab, works[test_work]), valid_work, test_work)
