"""helpers.lib.fasttext: character n-grams and FNV-1a hashing against gensim's, FastTextVectors
against gensim's vectors for known and unseen words, and the misspelling test."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import fasttext as FT
from helpers.lib.fasttext import FastTextVectors, char_ngrams
from tests.props import budget, closeness, dims, float_arrays, raises_naming

close = closeness(1e-9)


def test_where_worked_example():
    assert char_ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]
    assert char_ngrams("where", 3, 3, include_word=True)[-1] == "<where>"
    grams = char_ngrams("where")                             # n = 3..6
    assert len(grams) == 5 + 4 + 3 + 2
    assert grams[5:9] == ["<whe", "wher", "here", "ere>"]
    assert "<where>" not in grams                            # 7 characters: longer than max_n


def test_random_ngram_vectors_already_put_a_misspelling_near_its_word():
    rng = np.random.default_rng(1)
    sketch = FastTextVectors([], np.zeros((0, 64)), np.zeros((0, 64)),
                             rng.standard_normal((50_000, 64)), 3, 6, 0.0)
    v = sketch.vectors_for(["government", "goverment", "parliament", "xylophone"])
    cos = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)       # noqa: E731
    assert cos(v[0], v[1]) > 0.4 and abs(cos(v[0], v[3])) < 0.3
    assert cos(v[0], v[1]) > cos(v[0], v[2])
    with pytest.raises(TypeError, match="words must be a sequence of tokens .* got one str"):
        sketch.vectors_for("word")


def test_the_misspelling_test_finds_a_word_by_its_ngrams():
    rng = np.random.default_rng(0)
    words = ["government", "election", "football", "economy", "minister"]
    sketch = FastTextVectors([], np.zeros((0, 32)), np.zeros((0, 32)),
                             rng.standard_normal((20_000, 32)), 3, 6, 0.0)
    W = sketch.vectors_for(words)
    ft = FastTextVectors(words, W, W, sketch.ngram_vectors, 3, 6, 0.0)
    test = FT.misspelling_test(ft, words, k=1)
    assert all(m not in words and m[0] == w[0] and m[-1] == w[-1] for w, m in test["pairs"])
    assert test["hits"].mean() >= 0.8
    assert [nb[0] for nb in test["neighbours"]].count("government") <= 2


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
    known = [w in model.wv.key_to_index for w in words]
    assert [w in ft for w in words] == known == [True] * 2 + [False] * 5
    for w in words:
        assert np.allclose(ft.vector(w), model.wv.get_vector(w), rtol=1e-5, atol=1e-7), w
    nb = ft.neighbours("the", k=3)
    assert len(nb) == 3 and "the" not in [w for w, _ in nb]


# ---------------------------------------------------------------- properties
@budget()
@given(word=st.text(alphabet="abcéü한", min_size=1, max_size=8), lo=dims(1, 3),
       extra=st.integers(0, 3))
def test_ngrams_and_hashes_are_fasttexts(word, lo, extra):
    from gensim.models.fasttext import ft_ngram_hashes
    from gensim.models.fasttext_inner import compute_ngrams, ft_hash_bytes
    hi = lo + extra
    assert FT.char_ngrams(word, lo, hi) == compute_ngrams(word, lo, hi)
    assert FT.fnv1a_32(word) == ft_hash_bytes(word.encode("utf-8"))
    # the same multiset of buckets (a word vector is their mean; gensim lists them by position)
    expected = sorted(ft_ngram_hashes(word, lo, hi, 1000))
    assert sorted(FT.ngram_buckets(word, 1000, lo, hi)) == expected
    raises_naming(lambda: FT.char_ngrams(word, hi + 1, lo), "min_n", ValueError)
    raises_naming(lambda: FT.char_ngrams(3), "word", TypeError)
    raises_naming(lambda: FT.ngram_buckets(word, 0), "buckets", ValueError)
    raises_naming(lambda: FT.char_ngrams(""), "empty", ValueError)


@budget()
@given(st.data())
def test_an_unseen_word_is_the_mean_of_its_buckets_and_misspell_makes_one_slip(data):
    table = data.draw(float_arrays((50, 3)))
    ftv = FT.FastTextVectors(["bank"], np.ones((1, 3), np.float32), np.ones((1, 3), np.float32),
                             table.astype(np.float32), 3, 6, 0.0)
    word = data.draw(st.sampled_from(["zzzz", "banks", "rivers"]))
    close(ftv.vector(word), table[FT.ngram_buckets(word, 50)].mean(0), 1e-6)
    raises_naming(lambda: FT.FastTextVectors(["a"], np.ones((3, 3)), np.ones((1, 3)), table,
                                             3, 6, 0.0), "W", ValueError)
    rng = np.random.default_rng(data.draw(st.integers(0, 9)))
    m = FT.misspell("riverbank", rng)
    assert m != "riverbank" and m[0] == "r" and m[-1] == "k" and abs(len(m) - 9) <= 1
    raises_naming(lambda: FT.misspell("abc", rng), "misspell", ValueError)
