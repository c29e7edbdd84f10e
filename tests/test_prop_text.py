"""Properties of helpers.lib.bpe and mlm: round trips, the reference implementations, and errors
naming the argument for ids at -1 and V, float or bool ids and every mask form."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import mlm as M
from helpers.lib import text as TX
from helpers.lib.bpe import BPETokenizer
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    covers,
    dims,
    float_arrays,
    inject,
    mask_forms,
    raises_naming,
)

WORDS = st.text(alphabet="abcdé", min_size=1, max_size=5)
TOK = BPETokenizer.train(
    ["the", "bank", "banks", "river", "money", "the", "bank"] * 4, vocab_size=40
)


close = closeness(1e-10)


@covers("bpe.BPETokenizer")
@budget()
@given(st.data())
def test_bpe_decodes_what_it_encodes_and_refuses_bad_ids(data):
    words = data.draw(
        st.lists(
            st.sampled_from(["the", "bank", "banks", "river", "money", "bee", "tanker"]),
            min_size=1,
            max_size=6,
        )
    )          # words spelt with characters seen in training
    text = " ".join(words)
    ids = TOK.encode(text)
    assert TOK.decode(ids) == " ".join(TX.tokenize(text))
    assert "".join(TOK.pieces(ids)).replace("▁", " ").strip() == text
    check_bad_ids(TOK.pieces, ids, len(TOK), "ids", data.draw(corrupted(ids, len(TOK))))
    raises_naming(lambda: BPETokenizer.train(["ab"], vocab_size=3), "vocab_size", ValueError)
    raises_naming(lambda: TOK.tokenize_word(3), "word", TypeError)


# ---------------------------------------------------------------- masked language modelling data
@covers(
    "mlm.encode_sentence", "mlm.pad_batch", "mlm.mask_tokens", "mlm.MaskedBatch",
    "mlm.apply_80_10_10",
)
@budget(2)
@given(st.data())
def test_masking_never_chooses_specials_and_takes_every_mask_form(data):
    sents = [
        data.draw(
            st.lists(st.sampled_from(["the", "bank", "river", "money"]), min_size=1, max_size=5)
        )
        for _ in range(data.draw(dims(1, 3)))
    ]
    seqs = [M.encode_sentence(TOK, s, data.draw(st.integers(3, 8))) for s in sents]
    assert all(s[0] == TOK.cls_id and s[-1] == TOK.sep_id for s in seqs)
    ids, att = M.pad_batch(seqs, TOK.pad_id)
    p = data.draw(st.sampled_from([0.0, 0.5, 1.0]))
    ref = M.mask_tokens(ids, TOK, np.random.default_rng(1), p=p, attention_mask=att)
    ordinary = ~np.isin(ids, TOK.special_ids)
    assert np.all(ref.chosen <= ordinary) and (p < 1 or np.array_equal(ref.chosen, ordinary))
    np.testing.assert_array_equal(ref.labels[ref.chosen], ids[ref.chosen])
    for _form, m, expected in mask_forms(att):
        call = lambda m=m: M.mask_tokens(ids, TOK, np.random.default_rng(1), p=p, attention_mask=m)  # noqa: E731
        if expected == "same":
            np.testing.assert_array_equal(call().inputs, ref.inputs)
        else:
            raises_naming(call, "attention_mask", expected)
    check_bad_ids(lambda x: M.mask_tokens(x, TOK, np.random.default_rng(0)), ids, len(TOK), "ids",
                  data.draw(corrupted(ids, len(TOK))))
    u = data.draw(float_arrays(ids.shape, 0, 0.999))
    r = np.full(ids.shape, 7)
    out = M.apply_80_10_10(ids, ordinary, u, r, TOK.mask_id)
    expect = np.where(
        ordinary & (u < 0.8), TOK.mask_id, np.where(ordinary & (u >= 0.8) & (u < 0.9), 7, ids)
    )
    np.testing.assert_array_equal(out, expect)
    for _form, m, expected in mask_forms(ordinary):
        if expected == "same":
            np.testing.assert_array_equal(M.apply_80_10_10(ids, m, u, r, TOK.mask_id), expect)
        else:
            raises_naming(
                lambda m=m: M.apply_80_10_10(ids, m, u, r, TOK.mask_id), "chosen", expected
            )
    raises_naming(lambda: M.apply_80_10_10(ids, ordinary, u + 1, r, TOK.mask_id), "u", ValueError)
    raises_naming(
        lambda: M.apply_80_10_10(ids, ordinary, inject(u, np.nan, 0), r, TOK.mask_id),
        "u",
        ValueError,
    )
    raises_naming(lambda: M.encode_sentence(TOK, ["the"], 2), "max_len", ValueError)


@covers(
    "mlm.length_bucketed_batches", "mlm.SentencePair", "mlm.sentence_pair",
    "mlm.next_sentence_pairs",
)
@budget()
@given(st.data())
def test_buckets_cover_every_sequence_once_and_pairs_fit_max_len(data):
    lengths = data.draw(st.lists(st.integers(1, 20), min_size=1, max_size=30))
    bs = data.draw(dims(1, 5))
    batches = M.length_bucketed_batches(lengths, bs, np.random.default_rng(0), bucket=2)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    raises_naming(
        lambda: M.length_bucketed_batches(np.array(lengths, float), bs, np.random.default_rng(0)),
        "lengths",
        TypeError,
    )
    max_len = data.draw(st.integers(5, 12))
    a = data.draw(st.lists(st.sampled_from(["the", "bank", "river"]), min_size=1, max_size=6))
    pair = M.sentence_pair(TOK, a, ["money", "bank"], True, max_len)
    assert (
        len(pair.ids) <= max_len
        and pair.ids[0] == TOK.cls_id
        and list(pair.ids).count(TOK.sep_id) == 2
    )
    assert pair.segments[0] == 0 and pair.segments[-1] == 1
    raises_naming(lambda: M.sentence_pair(TOK, a, ["money"], True, 4), "max_len", ValueError)
    docs = [[["the", "bank"], ["the", "river"]], [["money", "bank"], ["the", "money"]]]
    pairs = M.next_sentence_pairs(TOK, docs, 4, np.random.default_rng(0))
    assert [p.is_next for p in pairs] == [True, False, True, False]
    raises_naming(
        lambda: M.next_sentence_pairs(TOK, docs, -1, np.random.default_rng(0)), "n", ValueError
    )
