"""Tests of helpers.lib.fasttext: character n-grams and FNV-1a hashing (against gensim's fastText
functions), the NumPy sketch (gradients, unseen and misspelled words), gensim equivalence; and
lesson 08's neighbours of unseen words."""
import numpy as np
import pytest
from gensim.models.fasttext import compute_ngrams, ft_hash_bytes, ft_ngram_hashes

from helpers.exercises.lesson08 import check_char_ngrams
from helpers.lessons.lesson08 import oov_neighbours
from helpers.lib.fasttext import (
    FastTextVectors,
    SubwordEmbedding,
    char_ngrams,
    fnv1a_32,
    ngram_buckets,
    train_fasttext,
)
from helpers.lib.gradcheck import check_layer

WORDS = ["where", "a", "banana", "café", "naïve", "日本", "goverment", "unbelievably"]


def test_where_worked_example():
    assert char_ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]
    assert char_ngrams("where", 3, 3, include_word=True) == ["<wh", "whe", "her", "ere", "re>", "<where>"]
    grams = char_ngrams("where")                             # n = 3..6
    assert len(grams) == 5 + 4 + 3 + 2
    assert grams[5:9] == ["<whe", "wher", "here", "ere>"]
    assert "<where>" not in grams                            # 7 characters: longer than max_n


def test_ngrams_and_hashes_match_gensim():
    for w in WORDS:
        assert char_ngrams(w) == compute_ngrams(w, 3, 6), w
        assert fnv1a_32(w) == ft_hash_bytes(w.encode("utf-8")), w
        # gensim lists the hashes by position then n; ours by n then position: same multiset
        assert sorted(ngram_buckets(w, 1000).tolist()) == sorted(ft_ngram_hashes(w, 3, 6, 1000)), w


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


def test_char_ngram_checker(capsys):
    assert check_char_ngrams.run_checks(lambda w, n: char_ngrams(w, n, n))                       # the guard bypassed
    assert not check_char_ngrams(lambda w, n: [w[i:i + n] for i in range(len(w) - n + 1)])     # no markers
    assert "boundary markers" in capsys.readouterr().out
    assert not check_char_ngrams.run_checks(lambda w, n: list(dict.fromkeys(char_ngrams(w, n, n))))   # drops repeats
    assert "banana" in capsys.readouterr().out
    assert not check_char_ngrams(lambda w, n: char_ngrams(w, n, n))                             # the course's own: refused
    assert "write it yourself" in capsys.readouterr().out


def test_sketch_gradients_with_repeats_and_unknown_words():
    for combine in ("mean", "sum"):
        emb = SubwordEmbedding(4, buckets=13, vocab=["banana", "where"], combine=combine, rng=np.random.default_rng(0))
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
def tiny_fasttext():
    from helpers.course.corpus import modern_english_sentences
    return train_fasttext(modern_english_sentences()[:2500], dim=16, epochs=1, buckets=5000, workers=1)


def test_sketch_reproduces_gensim_vectors(tiny_fasttext):
    ft = tiny_fasttext
    emb = SubwordEmbedding(16, 5000, ft.itos, dtype=np.float32)
    emb.params = [ft.word_vectors, ft.ngram_vectors]                     # gensim's trained tables
    words = ["the", "government", "goverment", "unbelievablyx"]
    assert [w in ft for w in words] == [True, True, False, False]
    assert np.allclose(emb.forward(words), ft.vectors_for(words), atol=1e-5)


def test_vectors_from_arrays_match_gensim_for_known_and_unseen_words(tmp_path):
    """FastTextVectors keeps no gensim object: unseen words get their vectors from the course's
    own n-gram hashing, which must give what gensim's get_vector gives; and the vectors survive
    the artefact format (no pickle) unchanged."""
    from gensim.models import FastText

    from helpers.course.corpus import modern_english_sentences
    from helpers.infra.artifacts import load_artifact, save_artifact
    model = FastText([list(s) for s in modern_english_sentences()[:1500]], vector_size=12, min_count=3, epochs=1,
                     bucket=3000, workers=1, seed=0)
    ft = FastTextVectors.from_gensim(model.wv, 1.0, {"dim": 12})
    save_artifact(tmp_path / "ft", *ft.to_arrays())
    art = load_artifact(tmp_path / "ft")
    back = FastTextVectors.from_arrays(art.arrays, art.meta)
    words = ["the", "government", "goverment", "unbelievablyx", "Zürichx", "한국어", "qq"]
    assert [w in back for w in words] == [w in model.wv.key_to_index for w in words] == [True, True] + [False] * 5
    for w in words:
        assert np.allclose(back.vector(w), model.wv.get_vector(w), rtol=1e-5, atol=1e-7), w
    assert back.itos == ft.itos and np.array_equal(back.ngram_vectors, ft.ngram_vectors)
    assert back.neighbours("goverment", 3) == ft.neighbours("goverment", 3)


def test_wrapper_oov_neighbours(tiny_fasttext):
    ft = tiny_fasttext
    assert ft.W.shape == (len(ft.itos), 16)
    nb = ft.neighbours("the", k=3)
    assert len(nb) == 3 and "the" not in [w for w, _ in nb]
    W = np.random.default_rng(0).standard_normal((3, 4))
    rows = oov_neighbours(["said", "goverment"], ft, W, ["said", "year", "people"], k=2)
    assert rows[0]["in_vocab"] and len(rows[0]["other"]) == 2
    assert rows[1]["other"] is None and not rows[1]["in_fasttext_vocab"] and len(rows[1]["fasttext"]) == 2
    with pytest.raises(ValueError, match="empty corpus"):
        train_fasttext([[], []])
