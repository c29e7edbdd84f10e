"""Tokenisation and the vocabulary that maps tokens to integer ids.

Text of every script is tokenised: letters and digits are Unicode's (``\\w`` of Python's ``re``),
combining marks (accents written as separate code points, Devanagari vowel signs, Arabic
vowel marks) stay inside their word, and the text is NFC-normalised first, so a word typed
with a precomposed ``ü`` and one with ``u`` + a combining diaeresis give the same token.
"""
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
    """(words, words-or-punctuation) for the given classes of letters-or-digits, letters, marks.

    A word starts with a letter or digit and goes on with letters, digits and combining marks;
    an apostrophe followed by letters stays inside it ("don't", "king's")."""
    inner = f"(?:{alnum}|{mark})*+" if mark else f"{alnum}*+"
    after = f"(?:{letter}|{mark})*+" if mark else f"{letter}*+"
    word = f"{alnum}{inner}(?:['’]{letter}{after})*+"
    return re.compile(word), re.compile(word + r"|\S")


@lru_cache(maxsize=1)
def _unicode_patterns() -> tuple[re.Pattern, re.Pattern]:
    """The word patterns for text of every script (built once, on first use).

    Letters and digits are ``[^\\W_]`` (Python's Unicode ``\\w`` without the underscore, which
    separates words); combining marks (categories Mn, Mc, Me) have no class in ``re``, so they
    are listed from ``unicodedata`` as ranges of code points.
    """
    ranges, run = [], []
    for cp in itertools.chain(range(0x300, 0x20000), range(0xE0100, 0xE01F0)):
        if unicodedata.category(chr(cp)).startswith("M"):
            if run and cp != run[-1] + 1:
                ranges.append((run[0], run[-1]))
                run = []
            run.append(cp)
    ranges.append((run[0], run[-1]))
    mark = "[" + "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges) + "]"
    return _word_patterns(r"[^\W_]", r"[^\W\d_]", mark)


# The same patterns restricted to ASCII: identical tokens on ASCII text, three times faster
# (95 % of the course corpus's sentences are ASCII).
_ASCII_PATTERNS = _word_patterns("[a-z0-9]", "[a-z]")


def tokenize(text: str, punctuation: bool = False) -> list[str]:
    """Lower-case ``text`` and split it into word tokens, in any script. Taught in lesson 01, section 9.

    ``tokenize("Zürich café naïve 한국어")`` is ``['zürich', 'café', 'naïve', '한국어']``. Words keep
    inner apostrophes ("don't", "king's") and their combining marks; a run of letters and
    digits is one token ("3rd", "covid19"); everything else separates words. The text is
    NFC-normalised, so decomposed input gives the same tokens. Lower-casing is ``str.lower``
    (what scikit-learn's and gensim's tokenisers use), not ``casefold``, which would also
    rewrite spellings ("straße" -> "strasse"). With ``punctuation=True`` every other
    non-space character is a token too.
    """
    if not isinstance(text, str):
        raise TypeError(f"tokenize takes one text (a str), got {type(text).__name__}"
                        + ("; tokenize each text of a list separately" if isinstance(text, (list, tuple)) else ""))
    text = text.lower()
    if text.isascii():
        words, words_and_punctuation = _ASCII_PATTERNS
    else:
        words, words_and_punctuation = _unicode_patterns()
        text = unicodedata.normalize("NFC", text)
    return (words_and_punctuation if punctuation else words).findall(text)


_OPENERS = "\"'([“‘«„¿¡"
# Candidate sentence breaks: a newline; . ! ? (and the Arabic question mark, the Devanagari
# danda) followed by spaces and then, maybe after an opener, an ASCII capital or digit or any
# non-ASCII character (that one is checked by _starts_a_sentence); an ideographic 。！？ with
# the spaces after it (none are needed).
_SENTENCE_BREAK = re.compile(r"\n+"
                             r"|(?<=[.!?؟।])\s+(?=[" + re.escape(_OPENERS) + r"]?(?:[A-Z0-9]|[^\x00-\x7f]))"
                             r"|[。！？]\s*")


def _starts_a_sentence(text: str, i: int) -> bool:
    """True when the text from position ``i`` (after an optional opening quote or bracket)
    starts with a digit or a letter that is not lower-case: a capital, or a letter of a script
    without case (Korean, Chinese, Arabic, Devanagari ...)."""
    if i < len(text) and text[i] in _OPENERS:
        i += 1
    if i >= len(text):
        return False
    ch = text[i]
    return ch.isdigit() or (ch.isalpha() and not ch.islower())


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences. Taught in lesson 02, section 4.

    A sentence ends at a newline, or at ``. ! ?`` (also Arabic ``؟`` and the Devanagari danda
    ``।``) followed by spaces and then a capital letter, a letter of a script without case, or
    a digit (after an optional opening quote or bracket); the ideographic ``。！？`` end a
    sentence without a following space.
    """
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


def check_tokens(tokens, name: str, where: str) -> None:
    """Refuse a str where a sequence of tokens is expected. Taught in lesson 01, section 9.

    A str is a sequence too, so ``Vocab.encode("the cat")`` would silently encode seven
    characters; this raises TypeError naming the argument (``name``) and the function
    (``where``), and saying to tokenize first (a sequence of characters is ``list(text)``)."""
    if isinstance(tokens, str):
        raise TypeError(f"{where}: {name} must be a sequence of tokens (a list of str), got one str "
                        f"{_preview(tokens)}; tokenize it first: tokenize(text) (or list(text) for its characters)")


def check_token_lists(lists, name: str, where: str, item: str = "sentence") -> None:
    """Refuse a str, or a list holding a str, where a sequence of token lists is expected. Taught in lesson 01, section 9.

    ``lists`` is, e.g., tokenised sentences or documents; each ``item`` must be a list of
    tokens, not a text (a text would be read as its characters). Elements are checked when
    ``lists`` is a list or tuple (a generator is not consumed here)."""
    if isinstance(lists, str):
        raise TypeError(f"{where}: {name} must be a sequence of token lists, got one str {_preview(lists)}; "
                        "tokenize each text first: [tokenize(t) for t in texts]")
    if isinstance(lists, (list, tuple)):
        for i, x in enumerate(lists):
            if isinstance(x, str):
                raise TypeError(f"{where}: {name} must be a sequence of token lists, but {item} {i} is a str "
                                f"{_preview(x)}; tokenize each text first: [tokenize(t) for t in texts]")


def _preview(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def _check_token_type(token, where: str, position: int | None = None) -> None:
    """Refuse a token that is not a str (an id, a list): it would silently encode as <unk>."""
    if not isinstance(token, str):
        at = "" if position is None else f" at position {position}"
        hint = ("; these look like ids, which are already encoded (Vocab.decode turns ids into tokens)"
                if isinstance(token, (int, np.integer)) else
                "; tokenised sentences must be flattened first" if isinstance(token, (list, tuple)) else "")
        raise TypeError(f"{where}: tokens must be str, got {type(token).__name__} {token!r}{at}{hint}")


def decode_ids(ids, n: int, where: str) -> list[int]:
    """``ids`` (a sequence of integer ids or an integer array) as a list of ints in [0, n), checked. Taught in lesson 01, section 9.

    A float id would be truncated (1.7 -> 1), so it raises TypeError; an id outside [0, n) raises
    IdOutOfRangeError naming it. Used by every decode of the library."""
    if isinstance(ids, str):
        raise TypeError(f"{where}: ids must be a sequence of integer ids, got a str {_preview(ids)}")
    if not isinstance(ids, np.ndarray) and not hasattr(ids, "detach"):
        ids = list(ids)
        if any(isinstance(i, (bool, np.bool_)) for i in ids):   # np.asarray([1, True]) would be int
            raise TypeError(f"{where}: ids must be integer ids, got a bool among them; True/False are not ids")
    ids = check_ids(ids, n, "ids", where, noun="token ids")
    if ids.ndim != 1:
        raise ValueError(f"{where}: ids must be one sequence (1-D), got shape {tuple(ids.shape)}; decode each row")
    return [int(i) for i in ids]


class UnknownWordError(KeyError):
    """A word is not in the vocabulary (and the vocabulary has no unknown token). Taught in lesson 01, section 9."""

    def __str__(self) -> str:  # KeyError would print the message with quotes
        return self.args[0]


class Vocab:
    """A bidirectional token <-> id mapping, built from token counts. Taught in lesson 01, section 9.

    Ids are ordered: special tokens first (``<pad>`` = 0 and ``<unk>`` = 1 by default),
    then tokens by decreasing count (ties broken alphabetically, so it is deterministic).

    Attributes
    ----------
    itos : list[str]          id -> token
    stoi : dict[str, int]     token -> id
    counts : np.ndarray       (len(vocab),) int64 corpus count of each token (0 for specials)
    """

    def __init__(self, tokens: Sequence[str], counts: Sequence[int] | None = None,
                 specials: Sequence[str] = (PAD, UNK)):
        check_tokens(tokens, "tokens", "Vocab")
        check_tokens(specials, "specials", "Vocab")
        self.specials = tuple(specials)
        self.itos = list(tokens)
        if len(set(self.itos)) != len(self.itos):
            raise ValueError("vocabulary tokens must be unique")
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.counts = np.zeros(len(self.itos), np.int64) if counts is None else np.asarray(counts, np.int64)
        if self.counts.shape != (len(self.itos),):
            raise ValueError(f"counts has shape {self.counts.shape}, expected ({len(self.itos)},)")

    @classmethod
    def build(cls, tokens: Iterable[str], min_count: int = 1, max_size: int | None = None,
              specials: Sequence[str] = (PAD, UNK)) -> "Vocab":
        """Count ``tokens`` and keep those seen at least ``min_count`` times.

        ``max_size`` caps the number of ordinary (non-special) tokens, keeping the most
        frequent. Pass ``specials=()`` for a vocabulary without padding or unknown tokens.
        ``tokens`` is one flat sequence of str; tokenised sentences are flattened first
        (``(t for s in sentences for t in s)``).
        """
        check_tokens(tokens, "tokens", "Vocab.build")
        check_tokens(specials, "specials", "Vocab.build")
        try:
            counter = Counter(tokens)
        except TypeError:      # a list (unhashable) among the tokens: sentences, not tokens
            raise TypeError("Vocab.build: tokens must be one flat sequence of str, but it holds lists; "
                            "flatten the sentences first: (t for s in sentences for t in s)") from None
        not_str = next((t for t in counter if not isinstance(t, str)), None)
        if not_str is not None:
            raise TypeError(f"Vocab.build: every token must be a str, got {type(not_str).__name__} {not_str!r}; "
                            "a vocabulary maps words to ids (ids are already numbers)")
        if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer))
                                     or max_size < 1):
            raise ValueError(f"Vocab.build: max_size must be a whole number >= 1 (the number of ordinary tokens "
                             f"to keep) or None for no cap, got {max_size!r}")
        if not counter:
            raise ValueError("cannot build a vocabulary from an empty corpus: it has no tokens (the sequence "
                             "of tokens is empty). tokenize() gives no tokens for a text without letters or "
                             "digits: check that the texts were read and are not empty")
        kept = sorted((c, t) for t, c in counter.items() if c >= min_count and t not in specials)
        kept = sorted(kept, key=lambda ct: (-ct[0], ct[1]))
        if max_size is not None:
            kept = kept[:max_size]
        if not kept:
            top, n = max(counter.items(), key=lambda tc: (tc[1], tc[0]))
            raise ValueError(f"no token occurs at least min_count={min_count} times: the corpus has "
                             f"{sum(counter.values())} tokens of {len(counter)} types, the most frequent "
                             f"({top!r}) {n} time" + ("" if n == 1 else "s"))
        itos = list(specials) + [t for _, t in kept]
        counts = [0] * len(specials) + [c for c, _ in kept]
        return cls(itos, counts, specials)

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
        """Id of ``<unk>``, or None if the vocabulary has no unknown token."""
        return self.stoi.get(UNK)

    def index(self, token: str) -> int:
        """The id of ``token``; raises UnknownWordError naming it if absent."""
        try:
            return self.stoi[token]
        except (KeyError, TypeError):      # TypeError: an unhashable token (a list)
            _check_token_type(token, "Vocab.index")
            raise UnknownWordError(
                f"{token!r} is not in the vocabulary ({len(self)} tokens)"
            ) from None

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Token ids, (n,) int64. Unknown tokens map to ``<unk>`` if the vocabulary has
        one, otherwise they raise UnknownWordError naming the first unknown token. A str
        (a text, not tokens) raises TypeError: tokenize it first."""
        check_tokens(tokens, "tokens", "Vocab.encode")
        unk = self.unk_id
        if unk is None:
            return np.array([self.index(t) for t in tokens], dtype=np.int64)
        tokens = tokens if isinstance(tokens, (list, tuple)) else list(tokens)
        get = self.stoi.get
        try:
            ids = np.array([get(t, unk) for t in tokens], dtype=np.int64)
        except TypeError:                  # an unhashable token (a list): sentences instead of tokens
            ids = np.full(len(tokens), unk, dtype=np.int64)
        for i in np.flatnonzero(ids == unk):   # only the unknown ones can be non-str (a str token is known or <unk>)
            _check_token_type(tokens[i], "Vocab.encode", i)
        return ids

    def to_arrays(self) -> tuple[dict, dict]:
        """The vocabulary as arrays (for :mod:`helpers.infra.artifacts`, no pickle):
        ({'itos': (V,) unicode, 'counts': (V,) int64}, {'specials': [...]})."""
        return {"itos": strings_to_array(self.itos), "counts": self.counts}, {"specials": list(self.specials)}

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "Vocab":
        """The vocabulary stored by :meth:`to_arrays`."""
        return cls(array_to_strings(arrays["itos"]), arrays["counts"], tuple(meta["specials"]))

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens for ``ids`` (integers); raises TypeError for float or bool ids and IdOutOfRangeError
        (a ValueError and an IndexError) naming an id outside [0, len)."""
        return [self.itos[i] for i in decode_ids(ids, len(self.itos), "Vocab.decode")]
