"""Tests of helpers.lib.mlm: masking proportions and every mask form, padding, NSP pairs."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import (
    IGNORE,
    apply_80_10_10,
    encode_sentence,
    length_bucketed_batches,
    mask_tokens,
    next_sentence_pairs,
    pad_batch,
    sentence_pair,
)
from helpers.lib.text import tokenize
from tests.props import (
    budget,
    check_bad_ids,
    corrupted,
    dims,
    float_arrays,
    inject,
    mask_forms,
    raises_naming,
)

WORDS = tokenize("""the quick brown fox jumps over the lazy dog while the bank by the river
floods and the bank in town raises its interest rates again and again""") * 20


@pytest.fixture(scope="module")
def tok():
    return BPETokenizer.train(WORDS, vocab_size=120)


@pytest.fixture(scope="module")
def big_batch(tok):
    rng = np.random.default_rng(0)
    seqs = [encode_sentence(tok, WORDS[s:s + int(rng.integers(3, 30))], 40)
            for s in rng.integers(0, 300, 2000)]
    return pad_batch(seqs, tok.pad_id)


def test_proportions_15_and_80_10_10(tok, big_batch):
    ids, att = big_batch
    b = mask_tokens(ids, tok, np.random.default_rng(1), attention_mask=att)
    candidates = att & ~np.isin(ids, tok.special_ids)
    chosen = b.chosen
    n_cand = candidates.sum()
    assert n_cand > 30_000
    assert abs(chosen.sum() / n_cand - 0.15) < 0.006                    # ~5 standard errors
    n = chosen.sum()
    frac_mask = np.mean(b.inputs[chosen] == tok.mask_id)
    frac_same = np.mean(b.inputs[chosen] == ids[chosen])
    frac_other = 1 - frac_mask - frac_same
    p_same = 0.1 + 0.1 / (len(tok) - 5)  # a random replacement can draw the original token
    se = np.sqrt(0.25 / n)
    assert abs(frac_mask - 0.8) < 5 * se
    assert abs(frac_same - p_same) < 5 * se
    assert abs(frac_other - (0.1 - 0.1 / (len(tok) - 5))) < 5 * se


def test_labels_are_the_originals_specials_and_padding_untouched_and_the_seed_decides(tok,
                                                                                     big_batch):
    ids, att = big_batch
    b = mask_tokens(ids, tok, np.random.default_rng(2), p=0.9, attention_mask=att)
    special = np.isin(ids, tok.special_ids) | ~att
    assert not b.chosen[special].any() and np.array_equal(b.inputs[special], ids[special])
    assert (~att).any() and np.all(ids[~att] == tok.pad_id)
    assert np.array_equal(b.attention_mask, att)
    assert np.array_equal(b.labels[b.chosen], ids[b.chosen])
    assert np.all(b.labels[~b.chosen] == IGNORE)
    replaced = b.chosen & (b.inputs != tok.mask_id) & (b.inputs != ids)
    assert replaced.sum() > 100 and not np.isin(b.inputs[replaced], tok.special_ids).any()
    assert b.inputs.dtype == np.int64 and b.labels.dtype == np.int64
    again = mask_tokens(ids, tok, np.random.default_rng(2), p=0.9, attention_mask=att)
    assert np.array_equal(again.inputs, b.inputs) and np.array_equal(again.labels, b.labels)


def test_apply_80_10_10_boundaries():
    ids = np.array([7, 7, 7, 7, 7])
    chosen = np.array([True, True, True, True, False])
    u = np.array([0.0, 0.7999, 0.8, 0.9, 0.0])
    out = apply_80_10_10(ids, chosen, u, np.full(5, 9), mask_id=4)
    assert list(out) == [4, 4, 9, 7, 7]
    assert list(ids) == [7] * 5
    with pytest.raises(ValueError, match="shapes differ"):
        apply_80_10_10(ids, chosen[:3], u, u, 4)


def test_mask_tokens_bad_input(tok):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"\(B, L\) integer array"):
        mask_tokens(np.arange(10), tok, rng)
    with pytest.raises(ValueError, match="p_mask \\+ p_random <= 1"):
        mask_tokens(np.ones((2, 3), np.int64) * 6, tok, rng, p_mask=0.95, p_random=0.1)
    with pytest.raises(ValueError,
                       match=r"ids must be token ids in \[0, \d+\), got 5000 at index \(0, 1\)"):
        mask_tokens(np.array([[6, 5000]]), tok, rng)
    ids, att = pad_batch([encode_sentence(tok, ["the", "bank"], 8), [2, 3]], tok.pad_id)
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of ids \(2, 4\)"):
        mask_tokens(ids, tok, rng, attention_mask=att[0])


def test_encode_sentence_and_padding(tok):
    s = encode_sentence(tok, ["the", "bank"], max_len=10)
    assert s[0] == tok.cls_id and s[-1] == tok.sep_id
    long = encode_sentence(tok, WORDS[:50], max_len=12)
    assert len(long) == 12 and long[-1] == tok.sep_id
    ids, att = pad_batch([s, long], tok.pad_id)
    assert ids.shape == (2, 12) and att.dtype == bool
    assert att[0].sum() == len(s) and np.all(ids[0, len(s):] == tok.pad_id)
    with pytest.raises(ValueError, match="max_len must be at least 3"):
        encode_sentence(tok, ["the"], max_len=2)
    docs = [[["the", "bank"], ["a", "river"]], [["the", "bank"], ["a", "river"]]]
    raises_naming(lambda: next_sentence_pairs(tok, docs, 2, np.random.default_rng(0), max_len=4),
                  "max_len", ValueError)


def test_sentence_pair_layout(tok):
    p = sentence_pair(tok, ["the", "bank"], ["the", "river", "floods"], is_next=True)
    assert tok.decode(p.ids) == "[CLS] the bank [SEP] the river floods [SEP]"
    first_sep = list(p.ids).index(tok.sep_id)
    assert np.all(p.segments[:first_sep + 1] == 0) and np.all(p.segments[first_sep + 1:] == 1)
    short = sentence_pair(tok, WORDS[:40], WORDS[:5], is_next=False, max_len=16)
    assert len(short.ids) == 16 and list(short.ids).count(tok.sep_id) == 2


def test_next_sentence_pairs_half_true_and_really_consecutive():
    tok = BPETokenizer.train(WORDS + list("0123456789"), vocab_size=60)
    docs = [[("the", "dog", str(d), str(i)) for i in range(6)] for d in range(10)]
    pairs = next_sentence_pairs(tok, docs, 40, np.random.default_rng(0))
    assert sum(p.is_next for p in pairs) == 20
    for p in pairs:
        a, b = (s.split()[-2:] for s in tok.decode(p.ids).split("[SEP]")[:2])
        same_doc_next = a[0] == b[0] and int(b[1]) == int(a[1]) + 1
        assert same_doc_next == p.is_next
    with pytest.raises(ValueError, match="at least two documents"):
        next_sentence_pairs(tok, docs[:1], 4, np.random.default_rng(0))
    raises_naming(lambda: next_sentence_pairs(tok, docs, -1, np.random.default_rng(0)), "n",
                  ValueError)


def test_length_buckets_cover_every_sequence_once():
    lengths = np.random.default_rng(0).integers(3, 40, 1003)
    batches = length_bucketed_batches(lengths, 16, np.random.default_rng(1), bucket=5)
    assert sorted(np.concatenate(batches)) == list(range(1003))
    spread = np.mean([np.ptp(lengths[b]) for b in batches])
    assert spread < 0.5 * np.ptp(lengths)  # similar lengths end up together
    raises_naming(lambda: length_bucketed_batches(lengths.astype(float), 16,
                                                  np.random.default_rng(0)), "lengths", TypeError)


@budget(2)
@given(st.data())
def test_masking_never_chooses_specials_and_takes_every_mask_form(tok, data):
    words = st.lists(st.sampled_from(["the", "bank", "river", "money"]), min_size=1, max_size=5)
    seqs = [encode_sentence(tok, data.draw(words), data.draw(st.integers(3, 8)))
            for _ in range(data.draw(dims(1, 3)))]
    ids, att = pad_batch(seqs, tok.pad_id)
    p = data.draw(st.sampled_from([0.0, 0.5, 1.0]))
    ref = mask_tokens(ids, tok, np.random.default_rng(1), p=p, attention_mask=att)
    ordinary = ~np.isin(ids, tok.special_ids)
    assert np.all(ref.chosen <= ordinary) and (p < 1 or np.array_equal(ref.chosen, ordinary))
    for _form, m, expected in mask_forms(att):
        def call(m=m):
            return mask_tokens(ids, tok, np.random.default_rng(1), p=p, attention_mask=m)
        if expected == "same":
            np.testing.assert_array_equal(call().inputs, ref.inputs)
        else:
            raises_naming(call, "attention_mask", expected)
    check_bad_ids(lambda x: mask_tokens(x, tok, np.random.default_rng(0)), ids, len(tok), "ids",
                  data.draw(corrupted(ids, len(tok))))
    u, r = data.draw(float_arrays(ids.shape, 0, 0.999)), np.full(ids.shape, 7)
    expect = np.where(ordinary & (u < 0.8), tok.mask_id,
                      np.where(ordinary & (u >= 0.8) & (u < 0.9), 7, ids))
    for _form, m, expected in mask_forms(ordinary):
        if expected == "same":
            np.testing.assert_array_equal(apply_80_10_10(ids, m, u, r, tok.mask_id), expect)
        else:
            raises_naming(lambda m=m: apply_80_10_10(ids, m, u, r, tok.mask_id), "chosen",
                          expected)
    raises_naming(lambda: apply_80_10_10(ids, ordinary, u + 1, r, tok.mask_id), "u", ValueError)
    raises_naming(lambda: apply_80_10_10(ids, ordinary, inject(u, np.nan, 0), r, tok.mask_id),
                  "u", ValueError)
