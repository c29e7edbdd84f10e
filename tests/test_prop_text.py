"""Properties of helpers.lib.bpe, near_duplicates, mlm and counting (those of text, batching
and ngram are in tests/helpers/lib/):
round trips, the reference implementations (plain Python loops, scikit-learn), and errors naming
the argument for ids at -1 and V, float or bool ids and every mask form."""
import math

import numpy as np
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import counting as C
from helpers.lib import mlm as M
from helpers.lib import near_duplicates as ND
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
    non_finite,
    raises_naming,
)

WORDS = st.text(alphabet="abcdé", min_size=1, max_size=5)
TOK = BPETokenizer.train(["the", "bank", "banks", "river", "money", "the", "bank"] * 4, vocab_size=40)


close = closeness(1e-10)


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


# ---------------------------------------------------------------- near duplicates
@covers("near_duplicates.near_duplicate_groups", "near_duplicates.seen_ngram_share",
        "near_duplicates.without_copies", "near_duplicates.split_by_group")
@budget()
@given(st.data())
def test_copies_share_a_group_and_a_split_never_cuts_one(data):
    base = [data.draw(st.lists(st.sampled_from("abcdefgh"), min_size=6, max_size=12)) for _ in range(4)]
    docs = base + [list(base[0])]                               # document 4 is a copy of 0
    groups = ND.near_duplicate_groups(docs, n=3, threshold=1.0)
    assert groups[4] == groups[0] == 0 and all(groups[i] <= i for i in range(5))
    assert ND.seen_ngram_share(base[0], base[0], n=3) == 1.0
    order = list(np.random.default_rng(0).permutation(5))
    parts = ND.split_by_group(groups, order, [0.6, 0.4])
    assert sorted(sum(parts, [])) == list(range(5))
    assert not {groups[i] for i in parts[0]} & {groups[i] for i in parts[1]}
    np.testing.assert_array_equal(ND.without_copies([4, 1], [0], groups), [1] if groups[1] != 0 else [])
    raises_naming(lambda: ND.near_duplicate_groups(docs, n=0), "n", ValueError)
    raises_naming(lambda: ND.near_duplicate_groups(docs, threshold=1.5), "threshold", ValueError)
    raises_naming(lambda: ND.seen_ngram_share("abc", base[0]), "train", TypeError)
    raises_naming(lambda: ND.split_by_group(groups, [0, 1], [1.0]), "order", ValueError)


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


# ---------------------------------------------------------------- counting
@st.composite
def sentences_ids(draw, V):
    n = draw(dims(1, 4))
    return [np.array(draw(st.lists(st.integers(-1, V - 1), min_size=0, max_size=8)), dtype=np.int64) for _ in range(n)]


@covers("counting.flatten_sentences", "counting.cooccurrence_matrix", "counting.cooccurrence_python",
        "counting.cooccurrence_countvectorizer")
@budget(2)
@given(st.data())
def test_the_vectorised_counts_are_the_python_loops_and_scikit_learns(data):
    V = data.draw(dims(1, 5))
    sents = data.draw(sentences_ids(V))
    if sum(s.size for s in sents) == 0:
        raises_naming(lambda: C.cooccurrence_matrix(sents, V), "corpus", ValueError)
        return
    window = data.draw(dims(1, 4))
    kw = dict(weighting=data.draw(st.sampled_from(["uniform", "harmonic"])), cross_sentences=data.draw(st.booleans()),
              symmetric=data.draw(st.booleans()))
    fast = C.cooccurrence_matrix(sents, V, window, **kw)
    close(fast.toarray(), C.cooccurrence_python(sents, V, window, **kw).toarray())
    if all(np.all(s >= 0) for s in sents):
        close(C.cooccurrence_countvectorizer(sents, V, window).toarray(), C.cooccurrence_matrix(sents, V, window).toarray())
    ids, sent = C.flatten_sentences(sents, V)
    assert len(ids) == len(sent) == sum(s.size for s in sents)
    bad = [s.copy() for s in sents]
    k = next(i for i, s in enumerate(bad) if s.size)
    bad[k][0] = V
    raises_naming(lambda: C.cooccurrence_matrix(bad, V), "vocabulary", ValueError)
    raises_naming(lambda: C.cooccurrence_matrix([s.astype(float) for s in sents], V), "token ids", TypeError)
    raises_naming(lambda: C.cooccurrence_matrix(sents, V, window=0), "window", ValueError)
    raises_naming(lambda: C.flatten_sentences(sents, 0), "vocab_size", ValueError)


@covers("counting.pmi", "counting.ppmi", "counting.npmi", "counting.pmi_table", "counting.ppmi_python",
        "counting.top_pmi_pairs")
@budget(2)
@given(st.data())
def test_pmi_and_its_variants_are_their_formulas(data):
    W, Cn = data.draw(dims(1, 4)), data.draw(dims(1, 4))
    counts = np.array(data.draw(st.lists(st.integers(0, 5), min_size=W * Cn, max_size=W * Cn)), float).reshape(W, Cn)
    counts[0, 0] += 1
    base = data.draw(st.sampled_from([2.0, math.e, 10.0]))
    n, r, c = counts.sum(), counts.sum(1, keepdims=True), counts.sum(0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.where(counts > 0, np.log(counts * n / (r * c)) / np.log(base), -np.inf)
    close(C.pmi(counts, base=base), ref)
    close(C.pmi(sp.csr_matrix(counts), base=base).toarray(), np.where(counts > 0, ref, 0))
    close(C.ppmi(counts, alpha=1.0, base=base).toarray(), np.where(counts > 0, np.maximum(ref, 0), 0))
    nz = counts > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.log(counts / n) / np.log(base)
        ref_n = np.where(nz, np.where(h > 0, ref / np.where(h > 0, h, 1), 1.0), -1.0)
    close(C.npmi(counts), ref_n)
    table = {(i, j): counts[i, j] for i in range(W) for j in range(Cn) if counts[i, j] > 0}
    got = C.ppmi_python(table, base=base)
    close([got.get(k, 0.0) for k in table], [max(ref[k], 0) for k in table])
    words = [f"w{i}" for i in range(W)]
    cols = [f"c{j}" for j in range(Cn)]
    pt = C.pmi_table(counts, words, cols, r.ravel(), c.ravel(), n, base=base)
    close(pt[words[0], cols[0]], ref[0, 0])
    if W == Cn:
        top = C.top_pmi_pairs(sp.csr_matrix(counts), words, n=3, exclude_self=False)
        assert all(a in words and b in words for a, b, _, _ in top)
        assert [p for _, _, p, _ in top] == sorted((p for _, _, p, _ in top), reverse=True)
    for bad in (1.0, 0.0, -1.0):
        raises_naming(lambda bad=bad: C.pmi(counts, base=bad), "base", ValueError)
        raises_naming(lambda bad=bad: C.ppmi_python(table, base=bad), "base", ValueError)
    raises_naming(lambda: C.pmi(inject(counts, data.draw(non_finite), 0)), "counts", ValueError)
    raises_naming(lambda: C.pmi(-counts), "counts", ValueError)
