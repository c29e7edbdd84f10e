"""Masked-language-model batches (lesson 10): ``[CLS] w_1 ... w_n [SEP]`` sequences, padding, BERT's
masking (15 % chosen: 80 % [MASK], 10 % random, 10 % kept) and NSP pairs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from helpers.lib.batching import pad_sequences
from helpers.lib.bpe import BPETokenizer
from helpers.lib.checks import check_finite, check_ids, check_integers, check_mask, check_whole
from helpers.lib.text import check_token_lists, check_tokens

IGNORE = -100  # label of positions that are not predicted (PyTorch's ignore_index)


def encode_sentence(tok: BPETokenizer, words: Sequence[str], max_len: int) -> np.ndarray:
    """``[CLS] pieces [SEP]`` as (n,) int64, truncated so that n <= max_len (lesson 10 §2.2)."""
    max_len = check_whole(max_len, "max_len", "encode_sentence")
    if max_len < 3:
        raise ValueError(f"max_len must be at least 3 ([CLS], one piece, [SEP]), got {max_len}")
    check_tokens(words, "words", "encode_sentence")
    ids = tok.encode_words(list(words))[0][: max_len - 2]
    return np.concatenate([[tok.cls_id], ids, [tok.sep_id]]).astype(np.int64)


def pad_batch(seqs: Sequence[np.ndarray], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Sequences padded to the longest (lesson 10 §2.2): ids (B, L) int64 and attention_mask
    (B, L) bool, True at real tokens and False at padding."""
    return pad_sequences(seqs, pad_id)


def apply_80_10_10(ids: np.ndarray, chosen: np.ndarray, u: np.ndarray, random_ids: np.ndarray,
                   mask_id: int, p_mask: float = 0.8, p_random: float = 0.1) -> np.ndarray:
    """BERT's replacement rule given the uniform draws ``u`` (lesson 10 §2.3): at a chosen
    position ``u < p_mask`` -> ``mask_id``, ``p_mask <= u < p_mask + p_random`` -> ``random_ids``,
    else the original token; all arrays of one shape."""
    where = "apply_80_10_10"
    ids, chosen, u, random_ids = (np.asarray(a) for a in (ids, chosen, u, random_ids))
    if not (ids.shape == chosen.shape == u.shape == random_ids.shape):
        raise ValueError(f"shapes differ: ids {ids.shape}, chosen {chosen.shape}, u {u.shape}, "
                         f"random_ids {random_ids.shape}")
    ids = check_integers(ids, "ids", where, "integer token ids")
    chosen = check_mask(chosen, "chosen", where, "this position is chosen")
    random_ids = check_integers(random_ids, "random_ids", where, "integer token ids")
    mask_id = check_whole(mask_id, "mask_id", where, minimum=0)
    u = check_finite(np.asarray(u), "u", where)
    if not np.issubdtype(u.dtype, np.floating) or (u.size and (u.min() < 0 or u.max() >= 1)):
        raise ValueError(f"{where}: u must be uniform draws, floats in [0, 1), got dtype {u.dtype}"
                         + (f" and range [{u.min()}, {u.max()}]" if u.size else ""))
    if not (0 <= p_mask and 0 <= p_random and p_mask + p_random <= 1):
        raise ValueError(f"{where}: need p_mask >= 0, p_random >= 0 and p_mask + p_random <= 1, "
                         f"got p_mask={p_mask}, p_random={p_random}")
    out = ids.copy()
    to_mask = chosen & (u < p_mask)
    to_random = chosen & (u >= p_mask) & (u < p_mask + p_random)
    out[to_mask] = mask_id
    out[to_random] = random_ids[to_random]
    return out


@dataclass
class MaskedBatch:
    """One MLM batch (lesson 10 §2.3), all (B, L): ``inputs`` the ids the model sees, ``labels``
    the original ids where chosen, else ``IGNORE``; ``attention_mask`` True at real tokens."""

    inputs: np.ndarray
    labels: np.ndarray
    attention_mask: np.ndarray

    @property
    def chosen(self) -> np.ndarray:
        return self.labels != IGNORE


def mask_tokens(ids: np.ndarray, tok: BPETokenizer, rng: np.random.Generator, p: float = 0.15,
                p_mask: float = 0.8, p_random: float = 0.1, attention_mask: np.ndarray | None = None
                ) -> MaskedBatch:
    """A MaskedBatch of ``ids`` (B, L) (lesson 10 §2.3): each non-special real position chosen
    with probability ``p``, random replacements drawn from the ordinary ids. ``attention_mask``
    (B, L) bool or 0/1, True at real tokens; default ``ids != [PAD]``."""
    ids = check_ids(ids, len(tok), "ids", "mask_tokens", noun="token ids")
    if ids.ndim != 2:
        raise ValueError(f"ids must be a (B, L) integer array, got shape {ids.shape} and dtype "
                         f"{ids.dtype}")
    if not 0 <= p <= 1 or p_mask < 0 or p_random < 0 or p_mask + p_random > 1:
        raise ValueError(f"need 0 <= p <= 1 and p_mask + p_random <= 1, got p={p}, "
                         f"p_mask={p_mask}, p_random={p_random}")
    if attention_mask is None:
        attention_mask = ids != tok.pad_id
    attention_mask = check_mask(attention_mask, "attention_mask", "mask_tokens", "a real token")
    if attention_mask.shape != ids.shape:
        raise ValueError(f"mask_tokens: attention_mask must have the shape of ids {ids.shape}, "
                         f"got {attention_mask.shape}")
    n_special = len(tok.special_ids)  # specials occupy ids 0..4
    candidates = ~np.isin(ids, tok.special_ids) & attention_mask
    chosen = candidates & (rng.random(ids.shape) < p)
    u = rng.random(ids.shape)
    random_ids = rng.integers(n_special, len(tok), size=ids.shape)
    inputs = apply_80_10_10(ids, chosen, u, random_ids, tok.mask_id, p_mask, p_random)
    labels = np.where(chosen, ids, IGNORE).astype(np.int64)
    return MaskedBatch(inputs, labels, attention_mask.astype(bool))


def length_bucketed_batches(lengths: Sequence[int], batch_size: int, rng: np.random.Generator,
                            bucket: int = 50) -> list[np.ndarray]:
    """Index batches of sequences of similar length (lesson 10 §3): ``batch_size * bucket``
    shuffled indices at a time sorted by length and cut into batches; the batches shuffled."""
    batch_size = check_whole(batch_size, "batch_size", "length_bucketed_batches", minimum=1)
    bucket = check_whole(bucket, "bucket", "length_bucketed_batches", minimum=1)
    lengths = check_integers(lengths, "lengths", "length_bucketed_batches",
                             "whole numbers (sequence lengths)")
    if lengths.ndim != 1:
        raise ValueError("length_bucketed_batches: lengths must be 1-D (one per sequence), got "
                         f"shape {lengths.shape}")
    order = rng.permutation(len(lengths))
    batches = []
    for s in range(0, len(order), batch_size * bucket):
        chunk = order[s:s + batch_size * bucket]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches += [chunk[k:k + batch_size] for k in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


# ---------------------------------------------------------------- next-sentence prediction
@dataclass
class SentencePair:
    """A next-sentence-prediction example (lesson 10 §2.6): ``ids`` (n,) ``[CLS] A [SEP] B
    [SEP]``, ``segments`` (n,) 0 up to the first [SEP] and 1 after, ``is_next`` whether B
    follows A in its document."""

    ids: np.ndarray
    segments: np.ndarray
    is_next: bool


def sentence_pair(tok: BPETokenizer, a: Sequence[str], b: Sequence[str], is_next: bool,
                  max_len: int = 64) -> SentencePair:
    """``[CLS] A [SEP] B [SEP]`` (lesson 10 §2.6), the longer sentence cut until it fits."""
    ia, ib = tok.encode_words(list(a))[0], tok.encode_words(list(b))[0]
    if len(ia) == 0 or len(ib) == 0:
        raise ValueError("both sentences of a pair need at least one word")
    while len(ia) + len(ib) + 3 > max_len:
        if len(ia) >= len(ib):
            ia = ia[:-1]
        else:
            ib = ib[:-1]
    ids = np.concatenate([[tok.cls_id], ia, [tok.sep_id], ib, [tok.sep_id]]).astype(np.int64)
    segments = np.concatenate([np.zeros(len(ia) + 2), np.ones(len(ib) + 1)]).astype(np.int64)
    return SentencePair(ids, segments, bool(is_next))


def next_sentence_pairs(tok: BPETokenizer, documents: Sequence[Sequence[Sequence[str]]], n: int,
                        rng: np.random.Generator, max_len: int = 64) -> list[SentencePair]:
    """``n`` next-sentence-prediction examples (lesson 10 §2.6): the even ones with the true next
    sentence (IsNext), the odd ones with a sentence of another random document (NotNext)."""
    n = check_whole(n, "n", "next_sentence_pairs", minimum=0)
    max_len = check_whole(max_len, "max_len", "next_sentence_pairs")
    if max_len < 5:
        raise ValueError("next_sentence_pairs: max_len must be at least 5 ([CLS], a piece of A, "
                         f"[SEP], a piece of B, [SEP]), got {max_len}")
    check_token_lists(documents, "documents", "next_sentence_pairs", "document")
    for i, d in enumerate(documents):
        check_token_lists(d, f"document {i}", "next_sentence_pairs")
    docs = [d for d in documents if len(d) >= 2]
    if len(docs) < 2:
        raise ValueError("need at least two documents with two or more sentences")
    pairs = []
    for k in range(n):
        d = int(rng.integers(len(docs)))
        i = int(rng.integers(len(docs[d]) - 1))
        a = docs[d][i]
        if k % 2 == 0:
            b, is_next = docs[d][i + 1], True
        else:
            other = int(rng.integers(len(docs) - 1))
            other += other >= d  # any document but d
            b, is_next = docs[other][int(rng.integers(len(docs[other])))], False
        pairs.append(sentence_pair(tok, a, b, is_next, max_len))
    return pairs
