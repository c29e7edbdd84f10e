"""Word2vec's training data: the corpus as one id stream, subsampling, and skip-gram pairs with
the dynamic window (lesson 07 §7). The trainers of the shipped models are in ``training/``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from helpers.lib.checks import check_integers, check_whole
from helpers.lib.text import Vocab, check_token_lists


@dataclass
class Corpus:
    """A tokenised corpus as one id stream (lesson 07 §7): ``vocab``, ``ids`` (T,) of the
    in-vocabulary tokens, ``sentence`` (T,) their sentence numbers, ``n_raw_tokens``."""

    vocab: Vocab
    ids: np.ndarray
    sentence: np.ndarray
    n_raw_tokens: int
    sentences: tuple = field(repr=False, default=())

    def sentence_ids(self) -> list[np.ndarray]:
        """The ids of each sentence, [(n_i,) int64 arrays]."""
        return np.split(self.ids, np.flatnonzero(np.diff(self.sentence)) + 1)


def prepare_corpus(sentences: Sequence[Sequence[str]], min_count: int = 5) -> Corpus:
    """The :class:`Corpus` of tokenised sentences, words seen ``min_count`` times (lesson 07 §7)."""
    check_token_lists(sentences, "sentences", "prepare_corpus")
    if not sentences or not any(len(s) for s in sentences):
        raise ValueError("cannot train word vectors on an empty corpus (no tokens)")
    vocab = Vocab.build((t for s in sentences for t in s), min_count=min_count, specials=())
    ids, sid, n_raw = [], [], 0
    stoi = vocab.stoi
    for i, s in enumerate(sentences):
        n_raw += len(s)
        kept = [stoi[t] for t in s if t in stoi]
        ids.extend(kept)
        sid.extend([i] * len(kept))
    return Corpus(vocab, np.array(ids, np.int64), np.array(sid, np.int64), n_raw, tuple(sentences))


def keep_probabilities(counts: np.ndarray, sample: float = 1e-3) -> np.ndarray:
    """Subsampling's chance of keeping each occurrence, (V,) from counts (V,) (lesson 07 §7):
    gensim's (sqrt(c / t) + 1) t / c with t = sample · total, capped at 1."""
    counts = np.asarray(counts, dtype=np.float64)
    if sample <= 0:
        return np.ones_like(counts)
    t = sample * counts.sum()
    with np.errstate(divide="ignore"):
        p = (np.sqrt(counts / t) + 1) * t / counts
    return np.minimum(p, 1.0)


def skipgram_pairs(ids: np.ndarray, sentence: np.ndarray, window: int, rng: np.random.Generator,
                   dynamic: bool = True):
    """Skip-gram (centre, context) pairs (P,) int64 with the dynamic window b ~ U{1..window}
    (lesson 07 §7), grouped by offset: shuffle before SGD."""
    where = "skipgram_pairs"
    check_whole(window, "window", where, minimum=1)
    ids = check_integers(ids, "ids", where, "integer word ids")
    sentence = check_integers(sentence, "sentence", where, "integer sentence numbers")
    if ids.ndim != 1 or ids.shape != sentence.shape:
        raise ValueError(f"{where}: ids and sentence must be 1-D of one length, got {ids.shape} "
                         f"and {sentence.shape}")

    b = rng.integers(1, window + 1, size=len(ids))
    if not dynamic:
        b[:] = window
    cs, os_ = [], []
    for o in range(1, window + 1):
        same = sentence[o:] == sentence[:-o]
        right = same & (b[:-o] >= o)            # centre i, context i + o
        left = same & (b[o:] >= o)              # centre i + o, context i
        cs += [ids[:-o][right], ids[o:][left]]
        os_ += [ids[o:][right], ids[:-o][left]]
    return np.concatenate(cs), np.concatenate(os_)
