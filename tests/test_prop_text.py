"""Properties of helpers.lib.text, bpe, batching, ngram and mlm:
round trips, the reference implementations (plain Python loops, scikit-learn), and errors naming
the argument for ids at -1 and V, float or bool ids and every mask form."""
from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import batching as BA
from helpers.lib import mlm as M
from helpers.lib import ngram as NG
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
TOK = BPETokenizer.train(["the", "bank", "banks", "river", "money", "the", "bank"] * 4, vocab_size=40)


close = closeness(1e-10)


# ---------------------------------------------------------------- text
@covers("text.tokenize", "text.split_sentences", "text.check_tokens", "text.check_token_lists",
        "text.UnknownWordError")
@budget()
@given(words=st.lists(WORDS, min_size=1, max_size=6), punct=st.booleans())
def test_tokenize_splits_on_what_is_not_a_word_and_refuses_lists(words, punct):
    text = " , ".join(w.upper() for w in words)
    toks = TX.tokenize(text, punctuation=punct)
    assert [t for t in toks if t != ","] == [w.lower() for w in words]
    assert TX.split_sentences(". ".join(w.capitalize() for w in words) + ".")[0].startswith(words[0][0].upper())
    raises_naming(lambda: TX.tokenize(words), "tokenize", TypeError)
    raises_naming(lambda: TX.check_tokens("a b", "tokens", "here"), "tokens", TypeError)
    raises_naming(lambda: TX.check_token_lists([["a"], "b c"], "sentences", "here"), "sentences", TypeError)
    assert isinstance(TX.UnknownWordError("x"), KeyError)


@covers("text.Vocab", "text.decode_ids")
@budget(2)
@given(st.data())
def test_vocab_round_trips_and_refuses_ids_for_tokens_and_floats_for_ids(data):
    tokens = data.draw(st.lists(WORDS, min_size=1, max_size=12))
    vocab = TX.Vocab.build(tokens, max_size=data.draw(st.none() | st.integers(1, 5)))
    known = [t for t in tokens if t in vocab]
    assert vocab.decode(vocab.encode(known)) == known
    assert all(i == vocab.unk_id for i, t in zip(vocab.encode(tokens), tokens, strict=True) if t not in vocab)
    ids = vocab.encode(known or [vocab.itos[0]])
    check_bad_ids(vocab.decode, ids, len(vocab), "ids", data.draw(corrupted(ids, len(vocab))))
    raises_naming(lambda: vocab.encode([int(i) for i in ids]), "tokens", TypeError)
    raises_naming(lambda: vocab.decode([True]), "ids", TypeError)
    raises_naming(lambda: vocab.decode(ids[None]), "ids", ValueError)
    raises_naming(lambda: TX.Vocab.build(tokens, max_size=0), "max_size", ValueError)
    raises_naming(lambda: TX.Vocab.build([1, 2]), "token", TypeError)
    back = TX.Vocab.from_arrays(*vocab.to_arrays())
    assert back.itos == vocab.itos and np.array_equal(back.counts, vocab.counts)
    counts = Counter(tokens)
    assert all(vocab.counts[vocab.index(t)] == counts[t] for t in vocab.itos if t not in vocab.specials)


@covers("bpe.BPETokenizer")
@budget()
@given(st.data())
def test_bpe_decodes_what_it_encodes_and_refuses_bad_ids(data):
    words = data.draw(st.lists(st.sampled_from(["the", "bank", "banks", "river", "money", "bee", "tanker"]),
                               min_size=1, max_size=6))          # words spelt with characters seen in training
    text = " ".join(words)
    ids = TOK.encode(text)
    assert TOK.decode(ids) == " ".join(TX.tokenize(text))
    assert "".join(TOK.pieces(ids)).replace("▁", " ").strip() == text
    check_bad_ids(TOK.pieces, ids, len(TOK), "ids", data.draw(corrupted(ids, len(TOK))))
    raises_naming(lambda: BPETokenizer.train(["ab"], vocab_size=3), "vocab_size", ValueError)
    raises_naming(lambda: TOK.tokenize_word(3), "word", TypeError)


# ---------------------------------------------------------------- batching
@covers("batching.minibatch_indices", "batching.train_valid_test_split")
@budget()
@given(n=st.integers(0, 30), bs=dims(1, 8), drop=st.booleans(), shuffle=st.booleans())
def test_index_batches_cover_every_index_once(n, bs, drop, shuffle):
    rng = np.random.default_rng(n) if shuffle else None
    batches = list(BA.minibatch_indices(n, bs, rng, drop_last=drop))
    seen = np.concatenate(batches) if batches else np.array([], int)
    assert len(set(seen.tolist())) == len(seen) and (drop or sorted(seen.tolist()) == list(range(n)))
    assert all(len(b) == bs for b in batches[:-1])
    raises_naming(lambda: list(BA.minibatch_indices(n, 0)), "batch_size", ValueError)
    raises_naming(lambda: list(BA.minibatch_indices(float(n), bs)), "n", TypeError)
    if n:
        parts = BA.train_valid_test_split(n, rng=rng)
        assert sorted(np.concatenate(parts).tolist()) == list(range(n))
    raises_naming(lambda: BA.train_valid_test_split(n + 1, (0.5, 0.6, 0.1)), "fractions", ValueError)


@covers("batching.ngram_windows", "batching.bptt_batches", "batching.pad_sequences")
@budget()
@given(st.data())
def test_windows_streams_and_padding_are_their_formulas(data):
    ids = np.array(data.draw(st.lists(st.integers(0, 9), min_size=2, max_size=20)))
    c = data.draw(st.integers(1, len(ids) - 1))
    X, y = BA.ngram_windows(ids, c)
    assert all(list(X[i]) == list(ids[i:i + c]) and y[i] == ids[i + c] for i in range(len(y)))
    raises_naming(lambda: BA.ngram_windows(ids.astype(float), c), "ids", TypeError)
    bs = data.draw(st.integers(1, max(1, (len(ids) - 1))))
    seq = data.draw(dims(1, 5))
    pairs = list(BA.bptt_batches(ids, bs, seq))
    xs = np.concatenate([x for x, _ in pairs], axis=1)
    n_cols = (len(ids) - 1) // bs
    np.testing.assert_array_equal(xs, ids[:n_cols * bs].reshape(bs, n_cols))
    raises_naming(lambda: list(BA.bptt_batches(ids.astype(float), bs, seq)), "ids", TypeError)
    seqs = [list(ids[: data.draw(st.integers(0, len(ids)))]) for _ in range(3)]
    if any(seqs):
        padded, mask = BA.pad_sequences(seqs, pad_id=99)
        assert mask.sum(1).tolist() == [len(s) for s in seqs]
        assert all(list(padded[i, :len(s)]) == s for i, s in enumerate(seqs)) and np.all(padded[~mask] == 99)
    raises_naming(lambda: BA.pad_sequences([[1.5, 2.0]], 0), "sequence 0", TypeError)
    raises_naming(lambda: BA.pad_sequences([[1]], 0.5), "pad_id", TypeError)


# ---------------------------------------------------------------- n-grams
@covers("ngram.KneserNeyLM", "ngram.kneser_ney_nlls")
@budget(2)
@given(st.data())
def test_kneser_ney_sums_to_1_matches_its_vectorised_form_and_refuses_bad_ids(data):
    V, order = data.draw(dims(2, 5)), data.draw(dims(1, 3))
    train = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=order, max_size=25)))
    ev = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=order, max_size=12)))
    kn = NG.KneserNeyLM(order, V).fit(train)
    ctx = tuple(ev[: order - 1])
    close(sum(kn.prob(ctx, w) for w in range(V)), 1.0, 1e-9)        # a distribution over the vocabulary
    close(NG.kneser_ney_nlls(train, ev, order, V), kn.token_nll(ev), 1e-9)
    close(kn.mean_nll(ev), kn.token_nll(ev).mean())
    assert 0 <= kn.unseen_fraction(ev) <= 1
    check_bad_ids(kn.fit, train, V, "ids", data.draw(corrupted(train, V)))
    check_bad_ids(lambda x: kn.token_nll(x), ev, V, "ids", data.draw(corrupted(ev, V)))
    check_bad_ids(lambda x: NG.kneser_ney_nlls(x, ev, order, V), train, V, "train", data.draw(corrupted(train, V)))
    check_bad_ids(lambda x: NG.kneser_ney_nlls(train, x, order, V), ev, V, "eval_ids", data.draw(corrupted(ev, V)))
    w = data.draw(st.sampled_from([-1, V, V + 7]))
    raises_naming(lambda: kn.prob(ctx, w), "w", ValueError)
    raises_naming(lambda: kn.prob(ctx, 1.0), "w", TypeError)
    raises_naming(lambda: NG.KneserNeyLM(order, V).prob(ctx, 0), "fit", RuntimeError)
    raises_naming(lambda: NG.KneserNeyLM(0, V), "order", ValueError)


# ---------------------------------------------------------------- masked language modelling data
@covers("mlm.encode_sentence", "mlm.pad_batch", "mlm.mask_tokens", "mlm.MaskedBatch", "mlm.apply_80_10_10")
@budget(2)
@given(st.data())
def test_masking_never_chooses_specials_and_takes_every_mask_form(data):
    sents = [data.draw(st.lists(st.sampled_from(["the", "bank", "river", "money"]), min_size=1, max_size=5))
             for _ in range(data.draw(dims(1, 3)))]
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
    expect = np.where(ordinary & (u < 0.8), TOK.mask_id, np.where(ordinary & (u >= 0.8) & (u < 0.9), 7, ids))
    np.testing.assert_array_equal(out, expect)
    for _form, m, expected in mask_forms(ordinary):
        if expected == "same":
            np.testing.assert_array_equal(M.apply_80_10_10(ids, m, u, r, TOK.mask_id), expect)
        else:
            raises_naming(lambda m=m: M.apply_80_10_10(ids, m, u, r, TOK.mask_id), "chosen", expected)
    raises_naming(lambda: M.apply_80_10_10(ids, ordinary, u + 1, r, TOK.mask_id), "u", ValueError)
    raises_naming(lambda: M.apply_80_10_10(ids, ordinary, inject(u, np.nan, 0), r, TOK.mask_id), "u", ValueError)
    raises_naming(lambda: M.encode_sentence(TOK, ["the"], 2), "max_len", ValueError)


@covers("mlm.length_bucketed_batches", "mlm.SentencePair", "mlm.sentence_pair", "mlm.next_sentence_pairs")
@budget()
@given(st.data())
def test_buckets_cover_every_sequence_once_and_pairs_fit_max_len(data):
    lengths = data.draw(st.lists(st.integers(1, 20), min_size=1, max_size=30))
    bs = data.draw(dims(1, 5))
    batches = M.length_bucketed_batches(lengths, bs, np.random.default_rng(0), bucket=2)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    raises_naming(lambda: M.length_bucketed_batches(np.array(lengths, float), bs, np.random.default_rng(0)),
                  "lengths", TypeError)
    max_len = data.draw(st.integers(5, 12))
    a = data.draw(st.lists(st.sampled_from(["the", "bank", "river"]), min_size=1, max_size=6))
    pair = M.sentence_pair(TOK, a, ["money", "bank"], True, max_len)
    assert len(pair.ids) <= max_len and pair.ids[0] == TOK.cls_id and list(pair.ids).count(TOK.sep_id) == 2
    assert pair.segments[0] == 0 and pair.segments[-1] == 1
    raises_naming(lambda: M.sentence_pair(TOK, a, ["money"], True, 4), "max_len", ValueError)
    docs = [[["the", "bank"], ["the", "river"]], [["money", "bank"], ["the", "money"]]]
    pairs = M.next_sentence_pairs(TOK, docs, 4, np.random.default_rng(0))
    assert [p.is_next for p in pairs] == [True, False, True, False]
    raises_naming(lambda: M.next_sentence_pairs(TOK, docs, -1, np.random.default_rng(0)), "n", ValueError)
