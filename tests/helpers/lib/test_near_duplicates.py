"""helpers.lib.near_duplicates: copies, extended copies and chains grouped, the threshold a share
of the shorter document's n-grams, splits that never cut a group, and bad inputs named."""

import pytest

from helpers.lib.near_duplicates import near_duplicate_groups, split_by_group, without_copies
from tests.props import raises_naming

WORDS = [f"w{i}" for i in range(400)]


def doc(start, length):
    return WORDS[start : start + length]


def test_copies_extended_copies_and_chains_are_grouped_and_unrelated_texts_are_not():
    a = doc(0, 60)
    # 2 copies 0; 3 is 0 with a paragraph added; 5 is shorter than n = 12
    docs = [a, doc(100, 60), list(a), a + doc(200, 40), doc(300, 60), doc(5, 8)]
    assert near_duplicate_groups(docs) == [0, 1, 0, 0, 4, 5]
    d0, d1, d2 = doc(0, 40), doc(0, 40) + doc(100, 40), doc(100, 40)
    assert near_duplicate_groups([d0, d2, d1]) == [0, 0, 0]         # a chain through d1
    assert near_duplicate_groups([d0, d2]) == [0, 1]


def test_the_threshold_is_a_share_of_the_shorter_document_s_ngrams():
    a, half = doc(0, 41), doc(0, 26) + doc(300, 30)  # half shares 15 of a's 30 12-grams
    assert near_duplicate_groups([a, half], threshold=0.5) == [0, 0]
    assert near_duplicate_groups([a, half], threshold=0.51) == [0, 1]


def test_split_by_group_never_cuts_a_group_and_keeps_the_shuffled_order():
    groups, order = [0, 1, 0, 3, 4, 4, 6, 7, 8, 9], [9, 2, 5, 1, 7, 0, 3, 8, 4, 6]
    parts = split_by_group(groups, order, (0.6, 0.2, 0.2))
    assert parts == [[9, 2, 5, 1, 0, 4], [7, 3], [8, 6]]  # groups in order of first appearance
    assert without_copies([3, 2, 9], parts[0], groups).tolist() == [3]


@pytest.mark.parametrize("call, name", [
    (lambda: near_duplicate_groups([doc(0, 20)], n=0), "n"),
    (lambda: near_duplicate_groups([doc(0, 20)], threshold=1.5), "threshold"),
    (lambda: near_duplicate_groups(["a whole text"]), "documents"),
    (lambda: split_by_group([0, 1, 2], [0, 1, 1], (0.5, 0.5)), "order"),
    (lambda: split_by_group([0, 1, 2], [0, 1, 2], (0.5, 0.4)), "fractions"),
])
def test_bad_inputs_are_named(call, name):
    raises_naming(call, name)
