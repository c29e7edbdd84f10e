"""The character-level Shakespeare corpus of lesson 04: 42 works as one stream of characters,
with chosen works held out."""
from __future__ import annotations

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
