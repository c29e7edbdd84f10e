"""Near-duplicate documents: group texts that repeat each other, so a split never puts one copy in
training and another in the test data.

News collections repeat themselves: the BBC News set holds the same story filed twice, or a later
version with a paragraph added. If one copy lands in the training split and the other in the test
split, a model that memorises long word sequences (a Kneser-Ney 5-gram) is scored on text it has
read, and looks far better than it is. Splitting *by group* keeps every copy on one side.

Two documents are near-duplicates when at least ``threshold`` of the word ``n``-grams of the
shorter one also occur in the other (containment, Broder 1997). Groups are the connected
components of that relation (a union-find), so a chain a ~ b ~ c is one group.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from helpers.lib.text import check_token_lists, check_tokens


def _ngrams(tokens: Sequence[str], n: int) -> set:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def near_duplicate_groups(documents: Sequence[Sequence[str]], n: int = 12,
                          threshold: float = 0.5) -> list[int]:
    """The near-duplicate group of every document. Taught in lesson 02, section 4.

    ``groups[i] == groups[j]`` when documents i and j are linked by a chain of near-duplicate pairs
    (a pair shares at least ``threshold`` of the shorter one's distinct word ``n``-grams). A group's id is the index of its first document, so a document
    without any duplicate has ``groups[i] == i``; documents shorter than ``n`` tokens are never
    duplicates.

    documents: a sequence of token lists (one per document). Returns a list of ``len(documents)`` ints.
    Cost: one pass over all n-grams plus one count per pair of documents sharing an n-gram (about
    4 s for the 2,330 documents of the course's corpus)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int (the n-gram length in words), got {n!r}")
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1] (a fraction of the shorter document's n-grams), got {threshold!r}")
    check_token_lists(documents, "documents", "near_duplicate_groups", item="document")
    grams = [_ngrams(doc, n) for doc in documents]
    holders: dict[tuple, list[int]] = defaultdict(list)      # n-gram -> the documents that contain it
    for i, g in enumerate(grams):
        for gram in g:
            holders[gram].append(i)
    shared: Counter = Counter()                              # (i, j), i < j -> n-grams in common
    for docs in holders.values():
        if len(docs) > 1:
            for a in range(len(docs)):
                for b in range(a + 1, len(docs)):
                    shared[docs[a], docs[b]] += 1
    parent = list(range(len(documents)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for (i, j), count in shared.items():
        if count >= threshold * min(len(grams[i]), len(grams[j])):
            ri, rj = root(i), root(j)
            parent[max(ri, rj)] = min(ri, rj)                 # the smaller index stays the root
    return [root(i) for i in range(len(documents))]


def seen_ngram_share(train: Sequence, test: Sequence, n: int = 20) -> float:
    """The share of the test text's n-grams found in the training text. Taught in lesson 02, section 4.

    The share of the ``n``-grams of ``test`` (a token or id sequence) that occur anywhere in
    ``train``: near 0 for independent text at n = 20, large when the test text has copies in training."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    check_tokens(train, "train", "seen_ngram_share")
    check_tokens(test, "test", "seen_ngram_share")
    if len(test) < n:
        raise ValueError(f"the test sequence has {len(test)} tokens, fewer than n = {n}")
    train, test = list(train), list(test)
    seen = {tuple(train[i:i + n]) for i in range(len(train) - n + 1)}
    return sum(tuple(test[i:i + n]) in seen for i in range(len(test) - n + 1)) / (len(test) - n + 1)


def without_copies(held_out: Sequence[int], train: Sequence[int], groups: Sequence[int]) -> np.ndarray:
    """The held-out documents that have no copy in training. Taught in lesson 02, section 4.

    ``held_out`` and ``train`` are document indices, ``groups`` one group id per document
    (:func:`near_duplicate_groups`); returns the indices of ``held_out`` whose group has no member in
    ``train``, in their order, as an (n,) int64 array."""
    seen = {groups[i] for i in train}
    return np.array([i for i in held_out if groups[i] not in seen], dtype=np.int64)


def split_by_group(groups: Sequence[int], order: Sequence[int], fractions: Sequence[float]) -> list[list[int]]:
    """Split documents into parts without cutting a group. Taught in lesson 02, section 4.

    ``order`` is a permutation of the document indices (a shuffle). Groups are taken in the order of
    their first member in ``order`` and dealt out whole: the first groups go to part 0 until it holds
    ``round(fractions[0] * len(groups))`` documents or more, then part 1, ...; the last part takes the
    rest. Within a part, documents keep the order of ``order``. Returns a list of index lists."""
    if sorted(order) != list(range(len(groups))):
        raise ValueError(f"order must be a permutation of range({len(groups)}) (one index per document)")
    if not fractions or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"fractions must be non-negative and sum to 1, got {list(fractions)}")
    members: dict[int, list[int]] = defaultdict(list)
    for i in order:
        members[groups[i]].append(i)                         # dict order: first appearance in `order`
    targets = [round(f * len(groups)) for f in fractions[:-1]]
    parts: list[list[int]] = [[] for _ in fractions]
    part = 0
    for docs in members.values():
        while part < len(targets) and len(parts[part]) >= targets[part]:
            part += 1
        parts[part].extend(docs)
    rank = {doc: k for k, doc in enumerate(order)}
    return [sorted(p, key=rank.__getitem__) for p in parts]
