"""Tokenisation in every script (NFC-normalised first, combining marks inside their word) and the
vocabulary that maps tokens to ids (lesson 01 §8)."""
from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from helpers.infra.artifacts import array_to_strings, strings_to_array
from helpers.lib.checks import check_ids

PAD, UNK = "<pad>", "<unk>"


def _word_patterns(alnum: str, letter: str, mark: str = "") -> tuple[re.Pattern, re.Pattern]:
    """(words, words or punctuation): a word starts with a letter or digit, goes on with letters,
    digits and marks, and keeps an apostrophe followed by letters ("don't", "king's")."""
    inner = f"(?:{alnum}|{mark})*+" if mark else f"{alnum}*+"
    after = f"(?:{letter}|{mark})*+" if mark else f"{letter}*+"
    word = f"{alnum}{inner}(?:['’]{letter}{after})*+"
    return re.compile(word), re.compile(word + r"|\S")


@lru_cache(maxsize=1)
def _unicode_patterns() -> tuple[re.Pattern, re.Pattern]:
    """The word patterns for every script, built on first use: letters and digits are
    ``[^\\W_]``; combining marks (categories M*) have no class in ``re``: listed as ranges."""
    ranges, run = [], []
    for cp in itertools.chain(range(0x300, 0x20000), range(0xE0100, 0xE01F0)):
        if unicodedata.category(chr(cp)).startswith("M"):
            if run and cp != run[-1] + 1:
                ranges.append((run[0], run[-1]))
                run = []
            run.append(cp)
    ranges.append((run[0], run[-1]))
    mark = "[" + "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "")
                         for a, b in ranges) + "]"
    return _word_patterns(r"[^\W_]", r"[^\W\d_]", mark)


_ASCII_PATTERNS = _word_patterns("[a-z0-9]", "[a-z]")   # the same tokens on ASCII text, faster


def tokenize(text: str, punctuation: bool = False) -> list[str]:
    """Lower-cased word tokens of ``text``, in any script (lesson 01 §8); ``punctuation=True``
    keeps every other non-space character as a token too."""
    if not isinstance(text, str):
        many = isinstance(text, (list, tuple))
        hint = "; tokenize each text of a list separately" if many else ""
        raise TypeError(f"tokenize takes one text (a str), got {type(text).__name__}{hint}")
    text = text.lower()
    if text.isascii():
        words, words_and_punctuation = _ASCII_PATTERNS
    else:
        words, words_and_punctuation = _unicode_patterns()
        text = unicodedata.normalize("NFC", text)
    return (words_and_punctuation if punctuation else words).findall(text)


_OPENERS = "\"'([“‘«„¿¡"
# a newline; . ! ? ؟ । then spaces and (maybe after an opener) a capital, a digit or a non-ASCII
# character (checked by _starts_a_sentence); an ideographic 。！？ with the spaces after it
_SENTENCE_BREAK = re.compile(r"\n+|(?<=[.!?؟।])\s+(?=[" + re.escape(_OPENERS)
                             + r"]?(?:[A-Z0-9]|[^\x00-\x7f]))|[。！？]\s*")


def _starts_a_sentence(text: str, i: int) -> bool:
    """True when ``text[i:]`` (after an optional opener) starts with a digit or a letter that is
    not lower-case: a capital, or a letter of a script without case."""
    if i < len(text) and text[i] in _OPENERS:
        i += 1
    return i < len(text) and (text[i].isdigit() or (text[i].isalpha() and not text[i].islower()))


def split_sentences(text: str) -> list[str]:
    """Running text cut into sentences at newlines, at ``. ! ? ؟ ।`` before a capital, a caseless
    letter or a digit, and at ``。！？`` (lesson 02 §4)."""
    if not isinstance(text, str):
        raise TypeError(f"split_sentences takes one text (a str), got {type(text).__name__}")
    out, start = [], 0
    for m in _SENTENCE_BREAK.finditer(text):
        end = m.start()
        if text[end] in "。！？":
            end += 1                                   # the full stop stays with its sentence
        elif text[end] != "\n" and not _starts_a_sentence(text, m.end()):
            continue                                   # e.g. "... Mr. müller": not a new sentence
        out.append(text[start:end])
        start = m.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def _preview(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def check_tokens(tokens, name: str, where: str) -> None:
    """Refuse a str where a sequence of tokens is expected (read as characters) (lesson 01 §8)."""
    if isinstance(tokens, str):
        raise TypeError(f"{where}: {name} must be a sequence of tokens (a list of str), got one "
                        f"str {_preview(tokens)}; tokenize it first: tokenize(text) (or "
                        "list(text) for its characters)")


def check_token_lists(lists, name: str, where: str, item: str = "sentence") -> None:
    """Refuse a str, or a list holding a str, where token lists are expected (lesson 01 §8)."""
    fix = "tokenize each text first: [tokenize(t) for t in texts]"
    if isinstance(lists, str):
        raise TypeError(f"{where}: {name} must be a sequence of token lists, got one str "
                        f"{_preview(lists)}; {fix}")
    for i, x in enumerate(lists if isinstance(lists, (list, tuple)) else ()):
        if isinstance(x, str):
            raise TypeError(f"{where}: {name} must be a sequence of token lists, but {item} {i} "
                            f"is a str {_preview(x)}; {fix}")


def _check_token_type(token, where: str, position: int | None = None) -> None:
    """Refuse a token that is not a str (an id, a list): it would silently encode as <unk>."""
    if not isinstance(token, str):
        at = "" if position is None else f" at position {position}"
        hint = ""
        if isinstance(token, (int, np.integer)):
            hint = "; these look like ids, already encoded (Vocab.decode turns ids into tokens)"
        elif isinstance(token, (list, tuple)):
            hint = "; tokenised sentences must be flattened first"
        raise TypeError(f"{where}: tokens must be str, got {type(token).__name__} {token!r}"
                        f"{at}{hint}")


def decode_ids(ids, n: int, where: str) -> list[int]:
    """``ids``, a sequence or 1-D array of integer ids in [0, n), as a list (lesson 01 §8)."""
    if isinstance(ids, str):
        raise TypeError(f"{where}: ids must be a sequence of integer ids, got a str "
                        f"{_preview(ids)}")
    if not isinstance(ids, np.ndarray) and not hasattr(ids, "detach"):
        ids = list(ids)
        if any(isinstance(i, (bool, np.bool_)) for i in ids):   # np.asarray([1, True]) is int
            raise TypeError(f"{where}: ids must be integer ids, got a bool among them")
    ids = check_ids(ids, n, "ids", where, noun="token ids")
    if ids.ndim != 1:
        raise ValueError(f"{where}: ids must be one sequence (1-D), got shape {tuple(ids.shape)}; "
                         "decode each row")
    return [int(i) for i in ids]


class UnknownWordError(KeyError):
    """A word is not in the vocabulary, which has no unknown token (lesson 01 §8)."""

    def __str__(self) -> str:  # KeyError would print the message with quotes
        return self.args[0]


class Vocab:
    """Tokens <-> ids (``itos``, ``stoi``, ``counts`` (V,)): specials first (``<pad>`` = 0,
    ``<unk>`` = 1), then tokens by decreasing count, ties alphabetically (lesson 01 §8)."""


    def __init__(self, tokens: Sequence[str], counts: Sequence[int] | None = None,
                 specials: Sequence[str] = (PAD, UNK)):
        check_tokens(tokens, "tokens", "Vocab")
        check_tokens(specials, "specials", "Vocab")
        self.specials, self.itos = tuple(specials), list(tokens)
        if len(set(self.itos)) != len(self.itos):
            raise ValueError("vocabulary tokens must be unique")
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        counts = np.zeros(len(self.itos)) if counts is None else counts
        self.counts = np.asarray(counts, np.int64)
        if self.counts.shape != (len(self.itos),):
            raise ValueError(f"counts has shape {self.counts.shape}, expected ({len(self.itos)},)")

    @classmethod
    def build(cls, tokens: Iterable[str], min_count: int = 1, max_size: int | None = None,
              specials: Sequence[str] = (PAD, UNK)) -> "Vocab":
        """Count one flat sequence of ``tokens``; keep those seen ``min_count`` times, at most
        ``max_size`` of them (the most frequent), after the ``specials``."""
        check_tokens(tokens, "tokens", "Vocab.build")
        check_tokens(specials, "specials", "Vocab.build")
        try:
            counter = Counter(tokens)
        except TypeError:      # a list among the tokens: sentences, not tokens
            raise TypeError("Vocab.build: tokens must be one flat sequence of str, but it holds "
                            "lists; flatten the sentences first: (t for s in sentences for t in s)"
                            ) from None
        not_str = next((t for t in counter if not isinstance(t, str)), None)
        if not_str is not None:
            raise TypeError(f"Vocab.build: every token must be a str, got {type(not_str).__name__} "
                            f"{not_str!r}; a vocabulary maps words to ids (ids are numbers)")
        whole = isinstance(max_size, (int, np.integer)) and not isinstance(max_size, bool)
        if max_size is not None and not (whole and max_size >= 1):
            raise ValueError(f"Vocab.build: max_size must be a whole number >= 1 or None, got "
                             f"{max_size!r}")
        if not counter:
            raise ValueError("cannot build a vocabulary from an empty corpus: it has no tokens. "
                             "tokenize() gives no tokens for a text without letters or digits: "
                             "check that the texts were read and are not empty")
        kept = sorted(((c, t) for t, c in counter.items() if c >= min_count and t not in specials),
                      key=lambda ct: (-ct[0], ct[1]))[:max_size]
        if not kept:
            top, n = max(counter.items(), key=lambda tc: (tc[1], tc[0]))
            raise ValueError(f"no token occurs at least min_count={min_count} times: the corpus "
                             f"has {sum(counter.values())} tokens of {len(counter)} types, the "
                             f"most frequent ({top!r}) {n} time" + ("" if n == 1 else "s"))
        itos = list(specials) + [t for _, t in kept]
        return cls(itos, [0] * len(specials) + [c for c, _ in kept], specials)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, specials={self.specials})"

    @property
    def pad_id(self) -> int:
        """Id of ``<pad>``; raises if the vocabulary has none."""
        return self.index(PAD)

    @property
    def unk_id(self) -> int | None:
        """Id of ``<unk>``, or None."""
        return self.stoi.get(UNK)

    def index(self, token: str) -> int:
        """The id of ``token``; UnknownWordError naming it if absent."""
        try:
            return self.stoi[token]
        except (KeyError, TypeError):      # TypeError: an unhashable token (a list)
            _check_token_type(token, "Vocab.index")
            raise UnknownWordError(f"{token!r} is not in the vocabulary ({len(self)} tokens)"
                                   ) from None

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Token ids (n,) int64; an unknown token is ``<unk>``, or without one UnknownWordError."""
        check_tokens(tokens, "tokens", "Vocab.encode")
        unk = self.unk_id
        if unk is None:
            return np.array([self.index(t) for t in tokens], dtype=np.int64)
        tokens = tokens if isinstance(tokens, (list, tuple)) else list(tokens)
        try:
            ids = np.array([self.stoi.get(t, unk) for t in tokens], dtype=np.int64)
        except TypeError:                  # an unhashable token (a list)
            ids = np.full(len(tokens), unk, dtype=np.int64)
        for i in np.flatnonzero(ids == unk):   # only an unknown token can be a non-str
            _check_token_type(tokens[i], "Vocab.encode", i)
        return ids

    def decode(self, ids: Iterable[int]) -> list[str]:
        """The tokens of integer ``ids`` (float, bool or out-of-range ids raise)."""
        return [self.itos[i] for i in decode_ids(ids, len(self.itos), "Vocab.decode")]

    def to_arrays(self) -> tuple[dict, dict]:
        """({'itos': (V,) unicode, 'counts': (V,) int64}, {'specials': [...]}): no pickle."""
        arrays = {"itos": strings_to_array(self.itos), "counts": self.counts}
        return arrays, {"specials": list(self.specials)}

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "Vocab":
        """The vocabulary saved by :meth:`to_arrays`."""
        return cls(array_to_strings(arrays["itos"]), arrays["counts"], tuple(meta["specials"]))
