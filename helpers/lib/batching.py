"""Cutting data into mini-batches: shuffled index batches, n-gram windows, random windows,
truncated-BPTT streams, and padded batches of sequences of different lengths."""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from helpers.lib.checks import check_integers, check_whole


def minibatch_indices(n: int, batch_size: int, rng: np.random.Generator | None = None,
                      drop_last: bool = False) -> Iterator[np.ndarray]:
    """Shuffled index arrays of at most ``batch_size`` covering ``range(n)`` (lesson 01 §5)."""
    n = check_whole(n, "n", "minibatch_indices", minimum=0)
    batch_size = check_whole(batch_size, "batch_size", "minibatch_indices", minimum=1)
    order = rng.permutation(n) if rng is not None else np.arange(n)
    for start in range(0, n - batch_size + 1 if drop_last else n, batch_size):
        yield order[start:start + batch_size]


def _token_stream(ids, where: str) -> np.ndarray:
    ids = check_integers(ids, "ids", where, "integer token ids").astype(np.int64, copy=False)
    if ids.ndim != 1:
        raise ValueError(f"{where}: ids must be 1-D, got shape {ids.shape}")
    return ids


def ngram_windows(ids: np.ndarray, context: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (``context`` ids, next id) pair of a stream: X (N, context), y (N,) (lesson 01 §9)."""
    ids = _token_stream(ids, "ngram_windows")
    context = check_whole(context, "context", "ngram_windows", minimum=1)
    if len(ids) <= context:
        raise ValueError(f"need more than {context} tokens for {context}-token contexts, got "
                         f"{len(ids)}")
    return np.lib.stride_tricks.sliding_window_view(ids[:-1], context).copy(), ids[context:].copy()


def random_windows(ids: np.ndarray, batch_size: int, seq_len: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``batch_size`` random windows x and y (batch_size, seq_len) of a stream, y = x shifted by
    one (lesson 04 §8)."""
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise TypeError(f"ids must be a 1-D integer array, got {ids.dtype} of shape {ids.shape}")
    if batch_size < 1 or seq_len < 1:
        raise ValueError(f"batch_size and seq_len must be >= 1, got {batch_size} and {seq_len}")
    if len(ids) < seq_len + 1:
        raise ValueError(f"a window of {seq_len} inputs and their targets needs {seq_len + 1} "
                         f"tokens, the stream has {len(ids)}")
    starts = rng.integers(0, len(ids) - seq_len, size=batch_size)
    rows = ids[starts[:, None] + np.arange(seq_len + 1)]
    return rows[:, :-1].astype(np.int64), rows[:, 1:].astype(np.int64)


def bptt_batches(ids: np.ndarray, batch_size: int,
                 seq_len: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Truncated-BPTT batches (x, y), (batch_size, ≤ seq_len), y shifted by one (lesson 02 §3);
    row b of a batch continues row b of the previous one."""
    ids = _token_stream(ids, "bptt_batches")
    batch_size = check_whole(batch_size, "batch_size", "bptt_batches", minimum=1)
    seq_len = check_whole(seq_len, "seq_len", "bptt_batches", minimum=1)
    n_cols = (len(ids) - 1) // batch_size
    if n_cols < 1:
        raise ValueError(f"{len(ids)} tokens are too few for batch_size={batch_size}")
    x_all = ids[:n_cols * batch_size].reshape(batch_size, n_cols)
    y_all = ids[1:n_cols * batch_size + 1].reshape(batch_size, n_cols)
    for start in range(0, n_cols, seq_len):
        yield x_all[:, start:start + seq_len], y_all[:, start:start + seq_len]


def pad_sequences(seqs: Sequence[Sequence[int]], pad_id: int,
                  max_len: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Integer sequences padded (and cut to ``max_len``) into ids (B, L) and a mask, True at the
    real tokens (lesson 10 §2.2)."""
    if len(seqs) == 0:
        raise ValueError("cannot pad an empty list of sequences")
    pad_id = check_whole(pad_id, "pad_id", "pad_sequences")
    seqs = [check_integers(s, f"sequence {i}", "pad_sequences", "integer token ids")
            for i, s in enumerate(seqs)]
    for i, s in enumerate(seqs):
        if s.ndim != 1:
            raise ValueError(f"pad_sequences: sequence {i} must be 1-D (a list of ids), got shape "
                             f"{s.shape}")
    L = max(map(len, seqs)) if max_len is None else check_whole(max_len, "max_len", "pad_sequences")
    if L < 1:
        raise ValueError("pad_sequences: every sequence is empty (or max_len < 1): a batch needs "
                         "at least one position")
    ids = np.full((len(seqs), L), pad_id, dtype=np.int64)
    mask = np.zeros((len(seqs), L), dtype=bool)
    for i, s in enumerate(seqs):
        s = s[:L]
        ids[i, :len(s)] = s
        mask[i, :len(s)] = True
    return ids, mask
