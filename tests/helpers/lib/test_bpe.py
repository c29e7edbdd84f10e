"""Tests of helpers.lib.bpe: merges, round trips, special tokens, bad input."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib.bpe import SPECIALS, BPETokenizer
from helpers.lib.text import tokenize
from tests.props import budget, check_bad_ids, corrupted, raises_naming

TOY = {"low": 5, "lower": 2, "newest": 6, "widest": 3}  # Sennrich et al. (2016)'s example

TEXT = """The river bank was flooded after the storm, and the bank on Main Street closed early.
Bankers worried about interest rates while children played on the riverbank.
A plant that grows near water needs light; the power plant needs coal."""


def test_toy_merges_in_order_until_min_frequency():
    tok = BPETokenizer.train(TOY, vocab_size=10_000)
    # counts: (e,s)=(s,t)=9 -> tie to the alphabetically first; then (es,t)=9; (o,w)=(▁l,o)=7 ...
    assert tok.merges[:10] == [("e", "s"), ("es", "t"), ("o", "w"), ("▁l", "ow"), ("e", "w"),
                               ("ew", "est"), ("▁n", "ewest"), ("d", "est"), ("i", "dest"),
                               ("▁w", "idest")]
    assert tok.tokenize_word("lowest") == ("▁low", "est")
    assert tok.tokenize_word("newer") == ("▁n", "ew", "er")  # (e, r) occurs twice: merged later
    tok = BPETokenizer.train(TOY, vocab_size=10_000, min_frequency=4)
    assert tok.merges[-1] == ("▁n", "ewest")  # the next merge, ('d', 'est'), occurs only 3 times


def test_vocab_size_is_respected_and_specials_come_first():
    tok = BPETokenizer.train(TOY, vocab_size=len(SPECIALS) + 11 + 3)  # 11 characters, 3 merges
    assert len(tok) == 19 and len(tok.merges) == 3
    assert tok.itos[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 1, 2, 3, 4)
    assert list(tok.special_ids) == [0, 1, 2, 3, 4]


@pytest.fixture(scope="module")
def corpus_tok():
    from helpers.course.corpus import modern_english_sentences
    sents = modern_english_sentences()[:3000]
    return BPETokenizer.train([w for s in sents for w in s], vocab_size=800)


def test_round_trip_on_unseen_text_and_rare_words_split(corpus_tok):
    for text in [TEXT, "Zygote xylophones quizzically juxtaposed 1,234 O'Neill's kumquats.", "a"]:
        ids = corpus_tok.encode(text)
        assert ids.dtype == np.int64
        assert corpus_tok.decode(ids) == " ".join(tokenize(text))
    assert corpus_tok.tokenize_word("the") == ("▁the",)
    pieces = corpus_tok.tokenize_word("xylophones")
    assert len(pieces) > 1 and "".join(pieces) == "▁xylophones"


def test_more_merges_give_shorter_encodings_and_training_is_deterministic():
    words = tokenize(TEXT * 5)
    lengths = [len(BPETokenizer.train(words, v).encode(TEXT)) for v in (50, 90, 160)]
    assert lengths[0] > lengths[1] > lengths[2]
    assert BPETokenizer.train(words, 80).merges == BPETokenizer.train(words, 80).merges


def test_encode_words_maps_pieces_to_words(corpus_tok):
    words = ["the", "xylophones", "bank"]
    ids, owner = corpus_tok.encode_words(words)
    assert len(ids) == len(owner)
    for k, w in enumerate(words):
        assert "".join(corpus_tok.pieces(ids[owner == k])) == "▁" + w


def test_unknown_characters_become_unk_and_special_tokens_decode():
    tok = BPETokenizer.train(["abc", "abc", "cab"], vocab_size=20)
    ids = tok.encode("abz")
    assert tok.unk_id in ids and tok.decode(ids) == "ab [UNK]"
    tok = BPETokenizer.train(TOY, vocab_size=30)
    ids = [tok.cls_id, *tok.encode("lowest newest"), tok.sep_id, tok.pad_id]
    assert tok.decode(ids) == "[CLS] lowest newest [SEP] [PAD]"
    assert tok.decode(ids, skip_special=True) == "lowest newest"


def test_bad_input():
    with pytest.raises(ValueError, match="vocab_size=12 is smaller than the 5 special tokens plus"):
        BPETokenizer.train(TOY, vocab_size=12)
    tok = BPETokenizer.train(TOY, vocab_size=30)
    with pytest.raises(IndexError, match=r"ids must be token ids in \[0, 28\), got 30 at index 1"):
        tok.decode([1, 30])


PROP_TOK = BPETokenizer.train(["the", "bank", "banks", "river", "money", "the", "bank"] * 4,
                              vocab_size=40)


@budget()
@given(st.data())
def test_bpe_decodes_what_it_encodes_and_refuses_bad_ids(data):
    known = ["the", "bank", "banks", "river", "money", "bee", "tanker"]   # characters seen
    text = " ".join(data.draw(st.lists(st.sampled_from(known), min_size=1, max_size=6)))
    ids = PROP_TOK.encode(text)
    assert PROP_TOK.decode(ids) == " ".join(tokenize(text))
    assert "".join(PROP_TOK.pieces(ids)).replace("▁", " ").strip() == text
    check_bad_ids(PROP_TOK.pieces, ids, len(PROP_TOK), "ids",
                  data.draw(corrupted(ids, len(PROP_TOK))))
    raises_naming(lambda: PROP_TOK.tokenize_word(3), "word", TypeError)
