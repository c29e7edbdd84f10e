"""Cutting data into mini-batches: shuffled index batches, n-gram windows, random windows,
truncated-BPTT streams, and padded batches of variable-length sequences."""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from helpers.lib.checks import check_integers, check_whole


def minibatch_indices(n: int, batch_size: int, rng: np.random.Generator | None = None,
                      drop_last: bool = False) -> Iterator[np.ndarray]:
    """Yield index arrays of at most ``batch_size`` covering ``range(n)`` once. Taught in lesson 01, section 5.

    Shuffled when ``rng`` is given, in order otherwise.
    """
    n = check_whole(n, "n", "minibatch_indices", minimum=0)
    batch_size = check_whole(batch_size, "batch_size", "minibatch_indices")
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    order = rng.permutation(n) if rng is not None else np.arange(n)
    for start in range(0, n, batch_size):
        idx = order[start:start + batch_size]
        if drop_last and len(idx) < batch_size:
            return
        yield idx


def ngram_windows(ids: np.ndarray, context: int) -> tuple[np.ndarray, np.ndarray]:
    """All (context, next-token) pairs of a token-id stream. Taught in lesson 01, section 10.

    Returns X (N, context) int64 — the ``context`` ids before each target — and
    y (N,) int64, with N = len(ids) - context.
    """
    ids = check_integers(ids, "ids", "ngram_windows", "integer token ids").astype(np.int64, copy=False)
    context = check_whole(context, "context", "ngram_windows", minimum=1)
    if ids.ndim != 1:
        raise ValueError(f"ids must be 1-D, got shape {ids.shape}")
    if len(ids) <= context:
        raise ValueError(f"need more than {context} tokens for {context}-token contexts, got {len(ids)}")
    X = np.lib.stride_tricks.sliding_window_view(ids[:-1], context).copy()
    return X, ids[context:].copy()


def random_windows(ids: np.ndarray, batch_size: int, seq_len: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random windows of a token stream, the last one included. Taught in lesson 04, section 8.

    ``batch_size`` windows of ``seq_len + 1`` tokens, every start 0 .. len(ids) - seq_len - 1
    equally likely. Returns x and y, both (batch_size, seq_len) int64, y = x shifted by one."""
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


def bptt_batches(ids: np.ndarray, batch_size: int, seq_len: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Truncated-BPTT batches of a token stream. Taught in lesson 02, section 3.

    The stream is cut into ``batch_size`` equal contiguous rows; each yielded pair is
    (x, y) of shape (batch_size, T) with T <= seq_len and ``y`` shifted by one token.
    Row b of one batch continues row b of the previous batch, so a stateful model can
    carry its hidden state across batches (detached).
    """
    ids = check_integers(ids, "ids", "bptt_batches", "integer token ids").astype(np.int64, copy=False)
    batch_size = check_whole(batch_size, "batch_size", "bptt_batches", minimum=1)
    seq_len = check_whole(seq_len, "seq_len", "bptt_batches")
    if ids.ndim != 1:
        raise ValueError(f"ids must be 1-D, got shape {ids.shape}")
    n_cols = (len(ids) - 1) // batch_size
    if n_cols < 1:
        raise ValueError(f"{len(ids)} tokens are too few for batch_size={batch_size}")
    if seq_len < 1:
        raise ValueError(f"seq_len must be >= 1, got {seq_len}")
    x_all = ids[: n_cols * batch_size].reshape(batch_size, n_cols)
    y_all = ids[1: n_cols * batch_size + 1].reshape(batch_size, n_cols)
    for start in range(0, n_cols, seq_len):
        yield x_all[:, start:start + seq_len], y_all[:, start:start + seq_len]


def pad_sequences(seqs: Sequence[Sequence[int]], pad_id: int, max_len: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Pad (and truncate to ``max_len``) integer sequences into one array. Taught in lesson 10, section 2.2.

    Returns ids (B, L) int64 filled with ``pad_id`` after each sequence, and
    mask (B, L) bool, True at real tokens.
    """
    if len(seqs) == 0:
        raise ValueError("cannot pad an empty list of sequences")
    pad_id = check_whole(pad_id, "pad_id", "pad_sequences")
    seqs = [check_integers(s, f"sequence {i}", "pad_sequences", "integer token ids") for i, s in enumerate(seqs)]
    for i, s in enumerate(seqs):
        if s.ndim != 1:
            raise ValueError(f"pad_sequences: sequence {i} must be 1-D (a list of ids), got shape {s.shape}")
    L = max(len(s) for s in seqs) if max_len is None else check_whole(max_len, "max_len", "pad_sequences")
    if L < 1:
        raise ValueError("pad_sequences: every sequence is empty (or max_len < 1): a batch needs at least one position")
    ids = np.full((len(seqs), L), pad_id, dtype=np.int64)
    mask = np.zeros((len(seqs), L), dtype=bool)
    for i, s in enumerate(seqs):
        s = s[:L]
        ids[i, :len(s)] = s
        mask[i, :len(s)] = True
    return ids, mask


def train_valid_test_split(n: int, fractions=(0.8, 0.1, 0.1), rng: np.random.Generator | None = None):
    """Split ``range(n)`` into three index arrays with the given fractions. Taught in lesson 01, section 5.

    With ``rng`` the indices are shuffled first; without, the split is contiguous
    (right for running text, where shuffling would leak context across the split).
    Returns (train_idx, valid_idx, test_idx), int64 arrays.
    """
    n = check_whole(n, "n", "train_valid_test_split")
    if n <= 0:
        raise ValueError("cannot split an empty collection (n = 0)")
    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-9 or min(fractions) < 0:
        raise ValueError(f"fractions must be three non-negative numbers summing to 1, got {fractions}")
    idx = rng.permutation(n) if rng is not None else np.arange(n)
    a = int(round(fractions[0] * n))
    b = a + int(round(fractions[1] * n))
    return idx[:a], idx[a:b], idx[b:]
