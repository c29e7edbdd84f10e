import numpy as np
import pytest

from helpers.lib.batching import (
    bptt_batches,
    minibatch_indices,
    ngram_windows,
    pad_sequences,
    train_valid_test_split,
)
from helpers.lib.text import UnknownWordError, Vocab, split_sentences, tokenize


def test_tokenize():
    assert tokenize("The King's men don't sleep, 1603!") == ["the", "king's", "men", "don't", "sleep", "1603"]
    assert tokenize("Hi, you.", punctuation=True) == ["hi", ",", "you", "."]


def test_split_sentences():
    assert split_sentences("It rained. Then it stopped! Did it?\nYes") == \
        ["It rained.", "Then it stopped!", "Did it?", "Yes"]


def test_vocab_order_min_count_and_specials():
    v = Vocab.build("b a c a b a d".split(), min_count=2)
    assert v.itos == ["<pad>", "<unk>", "a", "b"]
    assert v.counts.tolist() == [0, 0, 3, 2]
    assert v.pad_id == 0 and v.unk_id == 1
    assert v.encode(["a", "zebra", "b"]).tolist() == [2, 1, 3]
    assert v.decode([2, 3]) == ["a", "b"]
    assert Vocab.build("x y y z z z".split(), max_size=2, specials=()).itos == ["z", "y"]


def test_vocab_errors_name_the_problem():
    v = Vocab.build("a b".split(), specials=())
    with pytest.raises(UnknownWordError, match="'zebra' is not in the vocabulary"):
        v.encode(["a", "zebra"])
    with pytest.raises(UnknownWordError, match="'<pad>' is not in the vocabulary"):
        _ = v.pad_id
    with pytest.raises(ValueError, match="empty corpus"):
        Vocab.build([])
    with pytest.raises(ValueError, match="min_count=5"):
        Vocab.build("a b".split(), min_count=5)
    with pytest.raises(IndexError, match=r"ids must be token ids in \[0, 2\), got 7"):
        v.decode([7])


def test_minibatches_cover_everything_once():
    batches = list(minibatch_indices(10, 3, np.random.default_rng(0)))
    assert [len(b) for b in batches] == [3, 3, 3, 1]
    assert sorted(np.concatenate(batches).tolist()) == list(range(10))
    assert [len(b) for b in minibatch_indices(10, 3, drop_last=True)] == [3, 3, 3]


def test_ngram_windows():
    X, y = ngram_windows(np.arange(6), 3)
    assert X.tolist() == [[0, 1, 2], [1, 2, 3], [2, 3, 4]] and y.tolist() == [3, 4, 5]
    with pytest.raises(ValueError, match="need more than 3 tokens"):
        ngram_windows(np.arange(3), 3)


def test_bptt_batches_are_contiguous_streams():
    ids = np.arange(21)
    batches = list(bptt_batches(ids, batch_size=2, seq_len=4))
    x0, y0 = batches[0]
    assert x0.tolist() == [[0, 1, 2, 3], [10, 11, 12, 13]]
    assert y0.tolist() == [[1, 2, 3, 4], [11, 12, 13, 14]]
    # row b of the next batch continues row b of this one
    assert batches[1][0][:, 0].tolist() == [4, 14]
    assert np.concatenate([x for x, _ in batches], axis=1)[0].tolist() == list(range(10))
    with pytest.raises(ValueError, match="too few for batch_size=50"):
        list(bptt_batches(ids, 50, 4))


def test_pad_sequences():
    ids, mask = pad_sequences([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[True, True, True], [True, False, False]]
    with pytest.raises(ValueError, match="empty list"):
        pad_sequences([], 0)


def test_split_fractions_and_errors():
    tr, va, te = train_valid_test_split(100, (0.8, 0.1, 0.1))
    assert (len(tr), len(va), len(te)) == (80, 10, 10)
    assert np.array_equal(np.concatenate([tr, va, te]), np.arange(100))  # contiguous without rng
    tr2, _, _ = train_valid_test_split(100, (0.8, 0.1, 0.1), np.random.default_rng(0))
    assert not np.array_equal(tr2, np.arange(80)) and len(set(tr2)) == 80
    with pytest.raises(ValueError, match="empty collection"):
        train_valid_test_split(0)
    with pytest.raises(ValueError, match="summing to 1"):
        train_valid_test_split(10, (0.5, 0.2, 0.2))
