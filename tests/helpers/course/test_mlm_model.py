"""helpers.course.mlm_model: the tokenizer's storage as arrays and the split by document."""
from collections import Counter

from helpers.course.mlm_model import split_of, tokenizer_from_arrays
from helpers.lib.bpe import BPETokenizer
from training.mlm_bert import tokenizer_to_arrays


def test_tokenizer_round_trips_through_arrays():
    words = Counter("the river bank and the money bank the banks".split() * 3)
    tok = BPETokenizer.train(words, vocab_size=40)
    back = tokenizer_from_arrays(tokenizer_to_arrays(tok))
    assert back.itos == tok.itos and back.merges == tok.merges
    assert list(back.encode("the riverbank")) == list(tok.encode("the riverbank"))


def test_the_split_is_by_document_90_5_5():
    counts = Counter(split_of(k) for k in range(2000))
    assert counts == {"train": 1800, "valid": 100, "test": 100}
