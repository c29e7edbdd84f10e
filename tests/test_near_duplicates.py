"""Near-duplicate documents (helpers/lib/near_duplicates.py) and the splits that use them: the
word-LM split of lessons 02-03 keeps every copy of a story on one side."""
import numpy as np
import pytest

from helpers.lib.near_duplicates import near_duplicate_groups, seen_ngram_share, split_by_group

WORDS = [f"w{i}" for i in range(400)]


def doc(start, length):
    return WORDS[start:start + length]


def test_copies_and_extended_copies_are_grouped_and_unrelated_texts_are_not():
    a = doc(0, 60)
    docs = [a, doc(100, 60), list(a), a + doc(200, 40), doc(300, 60), doc(5, 8)]
    # 0 and 2 are copies; 3 is 0 with a paragraph added (all of 0's 12-grams are in 3); 5 is shorter than n
    assert near_duplicate_groups(docs) == [0, 1, 0, 0, 4, 5]


def test_the_threshold_is_a_fraction_of_the_shorter_documents_ngrams():
    a = doc(0, 41)                      # 30 distinct 12-grams
    half = doc(0, 26) + doc(300, 30)    # shares a's first 15 12-grams: half of a's 30, 15 of its own 45
    assert near_duplicate_groups([a, half], threshold=0.5) == [0, 0]
    assert near_duplicate_groups([a, half], threshold=0.51) == [0, 1]


def test_groups_are_chains():
    # 0 ~ 1 and 1 ~ 2 (each pair shares most of the shorter one), 0 and 2 share nothing
    d0, d1, d2 = doc(0, 40), doc(0, 40) + doc(100, 40), doc(100, 40)
    assert near_duplicate_groups([d0, d2, d1]) == [0, 0, 0]
    assert near_duplicate_groups([d0, d2]) == [0, 1]


@pytest.mark.parametrize("kwargs, message", [({"n": 0}, "n must be"), ({"n": 2.5}, "n must be"),
                                             ({"threshold": 0}, "threshold"), ({"threshold": 1.5}, "threshold")])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        near_duplicate_groups([doc(0, 20)], **kwargs)


def test_a_string_instead_of_tokens_is_an_error():
    with pytest.raises(TypeError, match="token lists"):
        near_duplicate_groups(["a whole text as one string"])
    with pytest.raises(TypeError, match="test must be a sequence of tokens"):
        seen_ngram_share(["a", "b", "c"], "a b c d")


def test_split_by_group_never_cuts_a_group_and_keeps_the_shuffled_order():
    groups = [0, 1, 0, 3, 4, 4, 6, 7, 8, 9]
    order = [9, 2, 5, 1, 7, 0, 3, 8, 4, 6]
    parts = split_by_group(groups, order, (0.6, 0.2, 0.2))
    assert sorted(sum(parts, [])) == list(range(10))
    for g in set(groups):
        assert sum(any(groups[i] == g for i in p) for p in parts) == 1
    # groups in order of first appearance: 9 | 2, 0 | 5, 4 | 1 -> six documents, part 0 is full
    assert parts[0] == [9, 2, 5, 1, 0, 4]
    assert parts[1] == [7, 3] and parts[2] == [8, 6]
    rank = {d: k for k, d in enumerate(order)}
    assert all(sorted(p, key=rank.get) == p for p in parts)


def test_split_by_group_rejects_bad_input():
    with pytest.raises(ValueError, match="permutation"):
        split_by_group([0, 1, 2], [0, 1, 1], (0.5, 0.5))
    with pytest.raises(ValueError, match="sum to 1"):
        split_by_group([0, 1, 2], [0, 1, 2], (0.5, 0.4))


def test_the_word_lm_split_has_no_copy_across_splits():
    from helpers.course.corpus import document_groups, modern_english_documents
    from helpers.course.word_lms import lm_data

    groups = document_groups()
    assert len(groups) == len(modern_english_documents())
    sizes = np.bincount(groups)
    assert (sizes > 1).sum() == 170 and sizes[sizes > 1].sum() == 341     # the BBC collection's repeats
    data = lm_data()
    train, test = data.train.tolist(), data.test.tolist()
    n = 20
    seen = {tuple(train[i:i + n]) for i in range(len(train) - n + 1)}
    shared = np.mean([tuple(test[i:i + n]) in seen for i in range(len(test) - n + 1)])
    # with copies across the splits 14.6 % of the test 20-grams were in the training text
    assert shared < 0.01, shared


def test_seen_ngram_share():
    train = list("abcdefghij")
    assert seen_ngram_share(train, list("cdefg"), n=3) == 1.0
    assert seen_ngram_share(train, list("xyzcde"), n=3) == 0.25      # of xyz yzc zcd cde only cde
    assert seen_ngram_share(train, list("jihgf"), n=2) == 0.0
    with pytest.raises(ValueError, match="fewer than n"):
        seen_ngram_share(train, list("ab"), n=3)
    with pytest.raises(ValueError, match="positive int"):
        seen_ngram_share(train, list("abc"), n=0)


def test_the_plain_split_is_the_old_one_and_leaks():
    from helpers.course.word_lms import lm_data

    plain, grouped = lm_data(keep_copies_together=False), lm_data()
    # the plain split is the shuffle cut at the same fractions: the split of the course before the groups
    assert (len(plain.train), len(plain.valid), len(plain.test)) == (1_221_389, 68_464, 62_451)
    assert seen_ngram_share(plain.train, plain.test) > 10 * seen_ngram_share(grouped.train, grouped.test)
