"""A byte-pair-encoding (BPE) subword tokeniser (Sennrich, Haddow & Birch 2016; lesson 10). Ids:
``[PAD]`` 0, ``[UNK]`` 1, ``[CLS]`` 2, ``[SEP]`` 3, ``[MASK]`` 4, characters, then merges."""
from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from typing import Iterable, Mapping, Sequence

import numpy as np

from helpers.infra.progress import progress_bar
from helpers.lib.text import check_tokens, decode_ids, tokenize

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIALS = (PAD, UNK, CLS, SEP, MASK)
WORD_START = "▁"  # U+2581, marks the first piece of a word


def _pairs(symbols: Sequence[str]) -> list[tuple[str, str]]:
    return list(zip(symbols[:-1], symbols[1:], strict=True))


def _merge(symbols: Sequence[str], pair: tuple[str, str]) -> list[str]:
    """Replace every occurrence of the adjacent ``pair`` in ``symbols`` by its concatenation."""
    a, b = pair
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def _split_word(word: str) -> list[str]:
    if not word:
        raise ValueError("cannot split an empty word")
    return [WORD_START + word[0]] + list(word[1:])


class BPETokenizer:
    """A subword tokeniser defined by an ordered list of merges (lesson 10 §2.1): ``merges``
    (most frequent first; rank = position), ``itos`` (id -> piece), ``stoi`` (piece -> id)."""

    def __init__(self, alphabet: Sequence[str], merges: Sequence[tuple[str, str]]):
        self.merges = [tuple(m) for m in merges]
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        pieces = list(dict.fromkeys(alphabet))
        pieces += [a + b for a, b in self.merges]
        self.itos = list(SPECIALS) + list(dict.fromkeys(pieces))
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self._cache: dict[str, tuple[str, ...]] = {}

    # ------------------------------------------------------------ training
    @classmethod
    def train(cls, words: Mapping[str, int] | Iterable[str], vocab_size: int,
              min_frequency: int = 2, progress: bool = False) -> "BPETokenizer":
        """A tokeniser with merges learned from ``words`` ({word: count} or tokens) until the
        vocabulary has ``vocab_size`` entries; ties go to the alphabetically smallest pair."""
        check_tokens(words, "words", "BPETokenizer.train")
        counts = Counter(words) if not isinstance(words, Mapping) else Counter(dict(words))
        for w in counts:
            if not isinstance(w, str):
                raise TypeError("BPETokenizer.train: every word must be a str, got "
                                f"{type(w).__name__} {w!r}")
        given = len(counts)
        counts = Counter({w: c for w, c in counts.items() if w and c > 0})
        if not counts:
            if given == 0:
                raise ValueError("cannot train BPE on an empty corpus: it has no words (no words "
                                 "were given). tokenize() gives no words for a text without "
                                 "letters or digits: check that the texts were read and are not "
                                 "empty")
            raise ValueError(f"cannot train BPE: every one of the {given} distinct words is an "
                             "empty string or has a count <= 0")
        vocab = sorted(counts)
        freq = [counts[w] for w in vocab]
        symbols = [_split_word(w) for w in vocab]
        alphabet = sorted({s for syms in symbols for s in syms})
        n_merges = vocab_size - len(SPECIALS) - len(alphabet)
        if n_merges < 0:
            raise ValueError(f"vocab_size={vocab_size} is smaller than the {len(SPECIALS)} "
                             f"special tokens plus the {len(alphabet)} characters of the corpus "
                             f"({len(SPECIALS) + len(alphabet)})")

        pair_count: Counter = Counter()
        where: dict[tuple[str, str], set[int]] = defaultdict(set)
        for i, syms in enumerate(symbols):
            for p in _pairs(syms):
                pair_count[p] += freq[i]
                where[p].add(i)
        heap = [(-c, p) for p, c in pair_count.items()]
        heapq.heapify(heap)

        merges: list[tuple[str, str]] = []
        bar = progress_bar(total=n_merges, desc="BPE merges", disable=not progress)
        while len(merges) < n_merges and heap:
            neg, pair = heapq.heappop(heap)
            if pair_count.get(pair, 0) != -neg:  # stale entry: the count changed since
                continue
            if -neg < min_frequency:
                break
            merges.append(pair)
            bar.update(1)
            changed = set()
            for i in list(where[pair]):
                old = symbols[i]
                for p in _pairs(old):
                    pair_count[p] -= freq[i]
                    where[p].discard(i)
                    changed.add(p)
                new = _merge(old, pair)
                symbols[i] = new
                for p in _pairs(new):
                    pair_count[p] += freq[i]
                    where[p].add(i)
                    changed.add(p)
            for p in changed:
                c = pair_count[p]
                if c <= 0:
                    del pair_count[p]
                else:
                    heapq.heappush(heap, (-c, p))
        bar.close()
        return cls(alphabet, merges)

    # ------------------------------------------------------------ ids of specials
    @property
    def pad_id(self) -> int:
        return self.stoi[PAD]

    @property
    def unk_id(self) -> int:
        return self.stoi[UNK]

    @property
    def cls_id(self) -> int:
        return self.stoi[CLS]

    @property
    def sep_id(self) -> int:
        return self.stoi[SEP]

    @property
    def mask_id(self) -> int:
        return self.stoi[MASK]

    @property
    def special_ids(self) -> np.ndarray:
        """Ids of the five special tokens, (5,) int64."""
        return np.array([self.stoi[s] for s in SPECIALS], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={len(self)}, merges={len(self.merges)})"

    # ------------------------------------------------------------ encoding
    def tokenize_word(self, word: str) -> tuple[str, ...]:
        """The pieces of one word, e.g. ``'banking'`` -> ``('▁bank', 'ing')``: the merges applied
        lowest rank first, as training did; characters unseen in training become ``[UNK]``."""
        if word in self._cache:
            return self._cache[word]
        if not isinstance(word, str):
            raise TypeError("BPETokenizer.tokenize_word: a word must be a str, got "
                            f"{type(word).__name__} {word!r}")
        syms = _split_word(word)
        while len(syms) > 1:
            ranked = [(self.ranks.get(p, len(self.ranks)), p) for p in _pairs(syms)]
            rank, best = min(ranked)
            if rank == len(self.ranks):
                break
            syms = _merge(syms, best)
        pieces = tuple(s if s in self.stoi else UNK for s in syms)
        self._cache[word] = pieces
        return pieces

    def encode_words(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The pieces of ``words``: ``ids`` (n_pieces,) int64 and ``word_index`` (n_pieces,) int64,
        the position in ``words`` of each piece's word."""
        check_tokens(words, "words", "BPETokenizer.encode_words")
        ids, owner = [], []
        for k, w in enumerate(words):
            for piece in self.tokenize_word(w):
                ids.append(self.stoi[piece])
                owner.append(k)
        return np.array(ids, dtype=np.int64), np.array(owner, dtype=np.int64)

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text`` (tokenised by :func:`helpers.lib.text.tokenize`), (n,) int64."""
        return self.encode_words(tokenize(text))[0]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The piece strings of ``ids`` (integers); raises TypeError for float or bool ids and
        IdOutOfRangeError (a ValueError and an IndexError) naming an id out of range."""
        return [self.itos[i] for i in decode_ids(ids, len(self.itos), "BPETokenizer.pieces")]

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> str:
        """The text of ``ids``: pieces joined, ``▁`` turned back into spaces; special tokens written
        as themselves (``[CLS]``), or left out with ``skip_special``."""
        out = []
        for p in self.pieces(ids):
            if p in SPECIALS:
                if not skip_special:
                    out.append(" " + p + " ")
            else:
                out.append(p.replace(WORD_START, " "))
        return " ".join("".join(out).split())
