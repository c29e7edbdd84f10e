"""Tests of helpers.lib.fasttext (lesson 08): character n-grams and FNV-1a hashing (against
gensim's), the NumPy sketch's gradients and its vectors of unseen and misspelled words, and
FastTextVectors against gensim's own vectors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import fasttext as FT
from helpers.lib.fasttext import (
    FastTextVectors,
    SubwordEmbedding,
    char_ngrams,
    fnv1a_32,
    ngram_buckets,
)
from helpers.lib.gradcheck import check_layer
from tests.props import budget, closeness, dims, float_arrays, raises_naming

close = closeness(1e-9)


def test_where_worked_example():
    assert char_ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]
    assert char_ngrams("where", 3, 3, include_word=True) == [
        "<wh",
        "whe",
        "her",
        "ere",
        "re>",
        "<where>",
    ]
    grams = char_ngrams("where")                             # n = 3..6
    assert len(grams) == 5 + 4 + 3 + 2
    assert grams[5:9] == ["<whe", "wher", "here", "ere>"]
    assert "<where>" not in grams                            # 7 characters: longer than max_n


def test_fnv1a_known_values():
    assert fnv1a_32("") == 2166136261                        # the offset basis
    assert fnv1a_32("a") == 0xE40C292C                       # published FNV-1a 32-bit test vector
    assert fnv1a_32("foobar") == 0xBF9CF968
    # non-ASCII bytes are sign-extended as in fastText's C++ (int8_t): differs from textbook FNV-1a
    textbook = 2166136261
    for b in "é".encode():
        textbook = ((textbook ^ b) * 16777619) & 0xFFFFFFFF
    assert fnv1a_32("é") != textbook


def test_ngram_bad_input():
    with pytest.raises(ValueError, match="empty"):
        char_ngrams("")
    with pytest.raises(ValueError, match="min_n"):
        char_ngrams("word", 4, 3)
    with pytest.raises(TypeError, match="string"):
        char_ngrams(42)
    with pytest.raises(ValueError, match="buckets"):
        ngram_buckets("word", 0)


def test_sketch_gradients_with_repeats_and_unknown_words():
    for combine in ("mean", "sum"):
        emb = SubwordEmbedding(
            4, buckets=13, vocab=["banana", "where"], combine=combine, rng=np.random.default_rng(0)
        )
        # banana repeats 'ana'; 13 buckets force collisions; 'bananas' is unseen
        report = check_layer(emb, ["banana", "bananas", "where", "banana"])
        assert report.ok, report


def test_sketch_vectors_of_unseen_and_misspelled_words():
    emb = SubwordEmbedding(64, buckets=50_000, vocab=["government"], rng=np.random.default_rng(1))
    own, grams = emb.rows("goverment")
    assert own == [] and len(grams) == len(char_ngrams("goverment"))    # unseen: n-grams only
    v = emb.forward(["government", "goverment", "parliament", "xylophone"])
    def cos(a, b):
        return a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    # even with random (untrained) n-gram vectors, shared n-grams make a misspelling close
    assert cos(v[0], v[1]) > 0.4
    assert abs(cos(v[0], v[3])) < 0.3
    assert cos(v[0], v[1]) > cos(v[0], v[2])
    # mean vs sum
    s = SubwordEmbedding(8, 100, rng=np.random.default_rng(0), combine="sum")
    m = SubwordEmbedding(8, 100, rng=np.random.default_rng(0), combine="mean")
    assert np.allclose(s.forward(["cat"]), m.forward(["cat"]) * len(char_ngrams("cat")))


def test_sketch_bad_input():
    emb = SubwordEmbedding(4, 10)
    with pytest.raises(TypeError, match="words must be a sequence of tokens .* got one str"):
        emb.forward("word")
    with pytest.raises(ValueError, match="empty"):
        emb.forward(["ok", ""])
    emb.forward(["ok"])
    with pytest.raises(ValueError, match="dout must have shape"):
        emb.backward(np.ones((2, 4)))
    with pytest.raises(ValueError, match="combine"):
        SubwordEmbedding(4, 10, combine="max")


@pytest.fixture(scope="module")
def gensim_fasttext():
    """A small gensim fastText and its vectors as a FastTextVectors (no gensim object kept)."""
    from gensim.models import FastText

    from helpers.course.corpus import modern_english_sentences
    model = FastText([list(s) for s in modern_english_sentences()[:1500]], vector_size=12,
                     min_count=3, epochs=1, bucket=3000, workers=1, seed=0)
    kv = model.wv
    ft = FastTextVectors(list(kv.index_to_key), np.array(kv.vectors, np.float32),
                         np.array(kv.vectors_vocab, np.float32),
                         np.array(kv.vectors_ngrams, np.float32), kv.min_n, kv.max_n, 0.0)
    return model, ft


def test_vectors_are_gensims_for_known_and_unseen_words(gensim_fasttext):
    """Unseen words get their vectors from the course's own n-gram hashing: gensim's get_vector."""
    model, ft = gensim_fasttext
    words = ["the", "government", "goverment", "unbelievablyx", "Zürichx", "한국어", "qq"]
    assert (
        [w in ft for w in words]
        == [w in model.wv.key_to_index for w in words]
        == [True] * 2 + [False] * 5
    )
    for w in words:
        assert np.allclose(ft.vector(w), model.wv.get_vector(w), rtol=1e-5, atol=1e-7), w
    nb = ft.neighbours("the", k=3)
    assert len(nb) == 3 and "the" not in [w for w, _ in nb]


def test_the_sketch_with_gensims_tables_gives_gensims_vectors(gensim_fasttext):
    _, ft = gensim_fasttext
    emb = SubwordEmbedding(12, 3000, ft.itos, dtype=np.float32)
    emb.params = [ft.word_vectors, ft.ngram_vectors]                     # gensim's trained tables
    words = ["the", "government", "goverment", "unbelievablyx"]
    assert np.allclose(emb.forward(words), ft.vectors_for(words), atol=1e-5)


# ---------------------------------------------------------------- properties
@budget()
@given(
    word=st.text(alphabet="abcéü한", min_size=1, max_size=8),
    lo=dims(1, 3),
    extra=st.integers(0, 3),
)
def test_ngrams_and_hashes_are_fasttexts(word, lo, extra):
    from gensim.models.fasttext import ft_ngram_hashes
    from gensim.models.fasttext_inner import compute_ngrams, ft_hash_bytes
    hi = lo + extra
    assert FT.char_ngrams(word, lo, hi) == compute_ngrams(word, lo, hi)
    assert FT.fnv1a_32(word) == ft_hash_bytes(word.encode("utf-8"))
    # the same multiset of buckets (a word vector is their mean; gensim lists them by position)
    assert sorted(FT.ngram_buckets(word, 1000, lo, hi)) == sorted(
        ft_ngram_hashes(word, lo, hi, 1000)
    )
    raises_naming(lambda: FT.char_ngrams(word, hi + 1, lo), "min_n", ValueError)
    raises_naming(lambda: FT.char_ngrams(3), "word", TypeError)
    raises_naming(lambda: FT.ngram_buckets(word, 0), "buckets", ValueError)


@budget()
@given(st.data())
def test_a_word_vector_is_the_mean_of_its_rows_and_its_gradient_is_their_share(data):
    vocab = ["bank", "river"]
    emb = FT.SubwordEmbedding(
        3, buckets=50, vocab=vocab, combine=data.draw(st.sampled_from(["mean", "sum"]))
    )
    words = data.draw(
        st.lists(st.sampled_from(["bank", "river", "banks", "rivers"]), min_size=1, max_size=3)
    )
    out = emb.forward(words)
    for k, w in enumerate(words):
        own, grams = emb.rows(w)
        rows = np.concatenate([emb.params[0][own], emb.params[1][grams]])
        close(out[k], rows.mean(0) if emb.combine == "mean" else rows.sum(0))
    dout = data.draw(float_arrays(out.shape))
    emb.backward(dout)
    close(emb.grads[1].sum(0) + emb.grads[0].sum(0),
          sum(dout[k] * (1 if emb.combine == "mean" else sum(map(len, emb.rows(w))))
              for k, w in enumerate(words)))
    raises_naming(
        lambda: emb.backward(dout[:, :1] if dout.shape[1] > 1 else dout[:0]), "dout", ValueError
    )
    raises_naming(lambda: emb.forward("bank"), "words", TypeError)
    rng = np.random.default_rng(data.draw(st.integers(0, 9)))
    m = FT.misspell("riverbank", rng)
    assert m != "riverbank" and m[0] == "r" and m[-1] == "k" and abs(len(m) - 9) <= 1
    raises_naming(lambda: FT.misspell("abc", rng), "misspell", ValueError)
    ftv = FT.FastTextVectors(vocab, np.ones((2, 3), np.float32), np.ones((2, 3), np.float32),
                             emb.params[1].astype(np.float32), 3, 6, 0.0)
    close(ftv.vector("zzzz"), emb.params[1][FT.ngram_buckets("zzzz", 50)].mean(0), 1e-6)
    raises_naming(
        lambda: FT.FastTextVectors(
            vocab, np.ones((3, 3)), np.ones((2, 3)), emb.params[1], 3, 6, 0.0
        ),
        "W",
        ValueError,
    )
