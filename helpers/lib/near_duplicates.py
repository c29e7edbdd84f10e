"""Near-duplicate documents (n-gram containment, Broder 1997), grouped so that a split never puts
copies on both sides."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from helpers.lib.text import check_token_lists


def near_duplicate_groups(documents: Sequence[Sequence[str]], n: int = 12,
                          threshold: float = 0.5) -> list[int]:
    """The near-duplicate group of every document, the index of its first (lesson 02 §4)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int (the n-gram length in words), got {n!r}")
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1] (a share of the shorter document's "
                         f"n-grams), got {threshold!r}")
    check_token_lists(documents, "documents", "near_duplicate_groups", item="document")
    grams = [{tuple(doc[i:i + n]) for i in range(len(doc) - n + 1)} for doc in documents]
    holders: dict[tuple, list[int]] = defaultdict(list)      # n-gram -> the documents holding it
    for i, g in enumerate(grams):
        for gram in g:
            holders[gram].append(i)
    shared: Counter = Counter()                              # (i, j), i < j -> n-grams in common
    for docs in holders.values():
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


def without_copies(held_out: Sequence[int], train: Sequence[int], groups) -> np.ndarray:
    """The documents of ``held_out`` whose group has no member in ``train`` (lesson 02 §4)."""
    seen = {groups[i] for i in train}
    return np.array([i for i in held_out if groups[i] not in seen], dtype=np.int64)


def split_by_group(groups: Sequence[int], order: Sequence[int], fractions) -> list[list[int]]:
    """Documents split into parts of about ``fractions`` of them without cutting a group
    (lesson 02 §4): whole groups dealt out in the order of their first member in ``order`` (a
    permutation), to part 0 until it holds its share, then part 1 ..."""
    if sorted(order) != list(range(len(groups))):
        raise ValueError(f"order must be a permutation of range({len(groups)}), one index per "
                         "document")
    if not fractions or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"fractions must be non-negative and sum to 1, got {list(fractions)}")
    members: dict[int, list[int]] = defaultdict(list)
    for i in order:
        members[groups[i]].append(i)              # dict order: first appearance in `order`
    targets = [round(f * len(groups)) for f in fractions[:-1]]
    parts: list[list[int]] = [[] for _ in fractions]
    part = 0
    for docs in members.values():
        while part < len(targets) and len(parts[part]) >= targets[part]:
            part += 1
        parts[part].extend(docs)
    rank = {doc: k for k, doc in enumerate(order)}
    return [sorted(p, key=rank.__getitem__) for p in parts]
