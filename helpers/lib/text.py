"""Tokenisation and the vocabulary that maps tokens to integer ids."""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

from helpers.infra.artifacts import array_to_strings, strings_to_array

_WORD = r"[a-z0-9]+(?:['’][a-z]+)*"
_WORD_RE = re.compile(_WORD)
_WORD_PUNCT_RE = re.compile(_WORD + r"|[^\sa-z0-9]")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")

PAD, UNK = "<pad>", "<unk>"


def tokenize(text: str, punctuation: bool = False) -> list[str]:
    """Lower-case ``text`` and split it into word tokens. Taught in lesson 01, section 9.

    Words keep inner apostrophes ("don't", "king's"); digits form their own tokens.
    With ``punctuation=True`` every other non-space character is a token too.
    """
    text = text.lower()
    return (_WORD_PUNCT_RE if punctuation else _WORD_RE).findall(text)


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences at . ! ? followed by a capital, and at newlines. Taught in lesson 02, section 4."""
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s.strip()]


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
        """
        counter = Counter(tokens)
        if not counter:
            raise ValueError("cannot build a vocabulary from an empty corpus (no tokens)")
        kept = sorted((c, t) for t, c in counter.items() if c >= min_count and t not in specials)
        kept = sorted(kept, key=lambda ct: (-ct[0], ct[1]))
        if max_size is not None:
            kept = kept[:max_size]
        if not kept:
            raise ValueError(f"no token occurs at least min_count={min_count} times")
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
        except KeyError:
            raise UnknownWordError(
                f"{token!r} is not in the vocabulary ({len(self)} tokens)"
            ) from None

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Token ids, (n,) int64. Unknown tokens map to ``<unk>`` if the vocabulary has
        one, otherwise they raise UnknownWordError naming the first unknown token."""
        unk = self.unk_id
        if unk is None:
            return np.array([self.index(t) for t in tokens], dtype=np.int64)
        get = self.stoi.get
        return np.array([get(t, unk) for t in tokens], dtype=np.int64)

    def to_arrays(self) -> tuple[dict, dict]:
        """The vocabulary as arrays (for :mod:`helpers.infra.artifacts`, no pickle):
        ({'itos': (V,) unicode, 'counts': (V,) int64}, {'specials': [...]})."""
        return {"itos": strings_to_array(self.itos), "counts": self.counts}, {"specials": list(self.specials)}

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "Vocab":
        """The vocabulary stored by :meth:`to_arrays`."""
        return cls(array_to_strings(arrays["itos"]), arrays["counts"], tuple(meta["specials"]))

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens for ``ids``; raises IndexError naming an id outside [0, len)."""
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.itos):
                raise IndexError(f"token id {i} is outside the vocabulary [0, {len(self.itos)})")
            out.append(self.itos[i])
        return out
