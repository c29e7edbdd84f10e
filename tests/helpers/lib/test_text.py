"""helpers.lib.text: tokenisation in every script, sentences, and the vocabulary, with the bad
inputs each refuses; every library function taking tokens refuses a str."""
import importlib
import inspect
import pkgutil
import random
import unicodedata
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import helpers.lib
from helpers.lib import text
from helpers.lib.bpe import BPETokenizer
from helpers.lib.text import UnknownWordError, Vocab, split_sentences, tokenize
from tests.props import budget, check_bad_ids, corrupted, raises_naming

WORDS = st.text(alphabet="abcdé", min_size=1, max_size=5)


@budget()
@given(words=st.lists(WORDS, min_size=1, max_size=6), punct=st.booleans())
def test_tokenize_splits_on_what_is_not_a_word_and_refuses_a_list(words, punct):
    toks = tokenize(" , ".join(w.upper() for w in words), punctuation=punct)
    assert [t for t in toks if t != ","] == [w.lower() for w in words]
    first = split_sentences(". ".join(w.capitalize() for w in words) + ".")[0]
    assert first.startswith(words[0][0].upper())
    raises_naming(lambda: tokenize(words), "tokenize", TypeError)


@budget(2)
@given(st.data())
def test_vocab_round_trips_and_refuses_ids_for_tokens_and_floats_for_ids(data):
    tokens = data.draw(st.lists(WORDS, min_size=1, max_size=12))
    vocab = Vocab.build(tokens, max_size=data.draw(st.none() | st.integers(1, 5)))
    known = [t for t in tokens if t in vocab]
    assert vocab.decode(vocab.encode(known)) == known
    assert all(i == vocab.unk_id for i, t in zip(vocab.encode(tokens), tokens, strict=True)
               if t not in vocab)
    ids = vocab.encode(known or [vocab.itos[0]])
    check_bad_ids(vocab.decode, ids, len(vocab), "ids", data.draw(corrupted(ids, len(vocab))))
    raises_naming(lambda: vocab.encode([int(i) for i in ids]), "tokens", TypeError)
    raises_naming(lambda: vocab.decode([True]), "ids", TypeError)
    raises_naming(lambda: vocab.decode(ids[None]), "ids", ValueError)
    raises_naming(lambda: Vocab.build(tokens, max_size=0), "max_size", ValueError)
    raises_naming(lambda: Vocab.build([1, 2]), "token", TypeError)
    back = Vocab.from_arrays(*vocab.to_arrays())
    assert back.itos == vocab.itos and np.array_equal(back.counts, vocab.counts)
    counts = Counter(tokens)
    assert all(vocab.counts[vocab.index(t)] == counts[t] for t in vocab.itos[2:])


def test_vocab_order_min_count_specials_and_errors():
    v = Vocab.build("b a c a b a d".split(), min_count=2)
    assert v.itos == ["<pad>", "<unk>", "a", "b"] and v.counts.tolist() == [0, 0, 3, 2]
    assert v.pad_id == 0 and v.unk_id == 1 and v.encode(["a", "zebra", "b"]).tolist() == [2, 1, 3]
    assert Vocab.build("x y y z z z".split(), max_size=2, specials=()).itos == ["z", "y"]
    plain = Vocab.build("a b".split(), specials=())
    with pytest.raises(UnknownWordError, match="'zebra' is not in the vocabulary"):
        plain.encode(["a", "zebra"])
    with pytest.raises(UnknownWordError, match="'<pad>' is not in the vocabulary"):
        _ = plain.pad_id
    with pytest.raises(IndexError, match=r"ids must be token ids in \[0, 2\), got 7"):
        plain.decode([7])
    with pytest.raises(TypeError, match="ids must be integer token ids, got dtype float64"):
        v.decode([1.7])
    with pytest.raises(TypeError, match="tokens must be str, got int 0 at position 0; these look"):
        v.encode([0, 1])


def test_tokenize_and_split_sentences_on_english():
    assert tokenize("The King's men don't, 1603!") == ["the", "king's", "men", "don't", "1603"]
    assert tokenize("Hi, you.", punctuation=True) == ["hi", ",", "you", "."]
    assert split_sentences("It rained. Then it stopped! Did it?\nYes") == \
        ["It rained.", "Then it stopped!", "Did it?", "Yes"]


def test_words_of_every_script_are_whole_tokens_decomposed_or_not():
    composed = "Zürich café naïve 한국어 Ελληνικά Ångström"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed                                  # really decomposed
    assert tokenize(decomposed) == tokenize(composed) == ["zürich", "café", "naïve", "한국어",
                                                          "ελληνικά", "ångström"]
    # a combining mark does not split a word: Devanagari, Arabic with harakat, Tamil, Thai
    for word in ["हिन्दी", "العَرَبِيَّة", "தமிழ்", "น้ำแข็ง"]:
        assert any(unicodedata.category(c).startswith("M") for c in word)
        assert tokenize(f"{word}, {word}!") == [word, word]
    assert tokenize("Das Café in Zürich, 서울 and 東京: 2024!") == ["das", "café", "in", "zürich",
                                                                  "서울", "and", "東京", "2024"]
    assert tokenize("Don't stop the King’s men; l'été, rock'n'roll") == \
        ["don't", "stop", "the", "king’s", "men", "l'été", "rock'n'roll"]
    assert tokenize("3rd covid19 1,000 2.5 ٣٤") == ["3rd", "covid19", "1", "000", "2", "5", "٣٤"]
    assert tokenize("foo_bar well-known 'quoted'") == ["foo", "bar", "well", "known", "quoted"]
    assert tokenize("Olá, ¿Qué?", punctuation=True) == ["olá", ",", "¿", "qué", "?"]
    assert tokenize("STRASSE Straße ΟΔΟΣ") == ["strasse", "straße", "οδος"]   # lower, not casefold
    with pytest.raises(TypeError, match="got list; tokenize each text of a list separately"):
        tokenize(["a text", "another"])


def test_the_ascii_fast_path_gives_the_unicode_patterns_tokens():
    rng = random.Random(0)
    alphabet = "abcXYZ019 _'’.,!-\n\t"
    unicode_words, unicode_all = text._unicode_patterns()
    ascii_words, ascii_all = text._ASCII_PATTERNS
    for _ in range(2000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        s = s.replace("’", "'").lower()
        assert ascii_words.findall(s) == unicode_words.findall(s), s
        assert ascii_all.findall(s) == unicode_all.findall(s), s


def test_split_sentences_sees_capitals_and_scripts_without_case():
    assert split_sentences("Er kam. Über Nacht blieb er. 서울은 크다. 한국어 문장이다. Ende.") == \
        ["Er kam.", "Über Nacht blieb er.", "서울은 크다.", "한국어 문장이다.", "Ende."]
    assert split_sentences("It rained. then it stopped. ärger? “Quoted start. 3 cats.") == \
        ["It rained. then it stopped. ärger?", "“Quoted start.", "3 cats."]   # lower case: no break
    assert split_sentences("東京は大きい。大阪も大きい！ 本当？") == \
        ["東京は大きい。", "大阪も大きい！", "本当？"]
    assert split_sentences("क्या यह सही है? हाँ। यह सही है।") == ["क्या यह सही है?", "हाँ।",
                                                            "यह सही है।"]
    assert split_sentences("هل هذا صحيح؟ نعم") == ["هل هذا صحيح؟", "نعم"]


def test_a_corpus_in_other_scripts_or_with_no_tokens():
    corpus = "한국어 문장 한국어. Zürich und Zürich! हिन्दी हिन्दी"
    tokens = tokenize(corpus)
    v = Vocab.build(tokens, min_count=2)          # used to be "empty corpus": Korean vanished
    assert set(v.itos[2:]) == {"한국어", "zürich", "हिन्दी"}
    bpe = BPETokenizer.train(Counter(tokens), vocab_size=40, min_frequency=1)
    assert bpe.decode(bpe.encode(corpus)) == " ".join(tokens)
    assert "[UNK]" not in bpe.pieces(bpe.encode(corpus))
    nothing = [t for x in ("...", "!!", "— —") for t in tokenize(x)]
    for build in (Vocab.build, lambda toks: BPETokenizer.train(toks, vocab_size=50)):
        with pytest.raises(ValueError, match=r"empty corpus: it has no (tokens|words).*"
                                             r"tokenize\(\) gives no (tokens|words) for a text"):
            build(nothing)
    with pytest.raises(ValueError, match="every one of the 2 distinct words is an empty string"):
        BPETokenizer.train({"": 3, "cat": 0}, vocab_size=50)
    with pytest.raises(ValueError, match=r"no token occurs at least min_count=3 times: the corpus "
                                         r"has 3 tokens of 2 types, the most frequent \('b'\) 2"):
        Vocab.build(["a", "b", "b"], min_count=3)
    with pytest.raises(TypeError, match=r"holds lists; flatten the sentences first"):
        Vocab.build([["a", "b"], ["c"]])


def test_the_course_corpus_says_when_it_has_no_tokens(monkeypatch):
    from helpers.course import corpus
    from helpers.infra.checksums import DataError
    monkeypatch.setattr(corpus, "modern_english_documents",
                        lambda: (("wikipedia", "... !!"), ("bbc:tech", "— ?")))
    corpus.document_sentences.cache_clear()          # the real corpus may be cached already
    with pytest.raises(DataError, match=r"the corpus has no tokens: tokenize\(\) found no sentence "
                                        r"of 3 or more words \(letters or digits\) in its 2 texts"):
        corpus.modern_english_sentences.__wrapped__(3)
    with pytest.raises(DataError, match="in its 2 texts"):
        corpus.document_sentences.__wrapped__(3)


# ---------------------------------------------------------------- a text where tokens are expected
TEXT = "the cat sat on the mat"
V = Vocab.build(TEXT.split())
TOK = BPETokenizer.train(TEXT.split() * 2, vocab_size=30, min_frequency=1)


def _str_for_tokens_cases():
    """{qualified name: (call with a str where tokens are expected, the argument's name)}."""
    from helpers.lib import (
        contextual,
        fasttext,
        lsa,
        metrics,
        mlm,
        near_duplicates,
        pretraining,
        word2vec,
    )
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(V), 3))
    texts = [TEXT, "a dog"]                    # texts, not token lists
    ft = fasttext.FastTextVectors([], np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((4, 3)),
                                  3, 6, 0.0)
    return {
        "text.Vocab.__init__": (lambda: Vocab(TEXT), "tokens"),
        "text.Vocab.build": (lambda: Vocab.build(TEXT), "tokens"),
        "text.Vocab.encode": (lambda: V.encode(TEXT), "tokens"),
        "bpe.BPETokenizer.train": (lambda: BPETokenizer.train(TEXT, vocab_size=30), "words"),
        "bpe.BPETokenizer.encode_words": (lambda: TOK.encode_words(TEXT), "words"),
        "mlm.encode_sentence": (lambda: mlm.encode_sentence(TOK, TEXT, 16), "words"),
        "mlm.next_sentence_pairs": (lambda: mlm.next_sentence_pairs(TOK, [texts, texts], 2, rng),
                                    "document 0"),
        "pretraining.encode_corpus": (lambda: pretraining.encode_corpus(TOK, texts, 16),
                                      "sentences"),
        "contextual.word_vectors": (lambda: contextual.word_vectors(None, TOK, texts, [0, 0]),
                                    "sentences"),
        "contextual.numpy_word_vectors": (
            lambda: contextual.numpy_word_vectors(None, TOK, texts, [0, 0]), "sentences"),
        "contextual.find_word": (lambda: contextual.find_word(TEXT, "cat"), "words"),
        "lsa.document_term_matrix": (lambda: lsa.document_term_matrix(texts, V), "documents"),
        "lsa.group_sentences": (lambda: lsa.group_sentences(texts, 2), "sentences"),
        "lsa.lsa_word_vectors": (lambda: lsa.lsa_word_vectors(texts, V, k=1), "sentences"),
        "metrics.document_vectors": (lambda: metrics.document_vectors(vectors, V, texts),
                                     "documents"),
        "metrics.nearest_neighbours": (
            lambda: metrics.nearest_neighbours(vectors, V, "cat", exclude="mat"), "exclude"),
        "metrics.vocab_maps": (lambda: metrics.vocab_maps(TEXT), "vocab"),
        "near_duplicates.near_duplicate_groups": (
            lambda: near_duplicates.near_duplicate_groups(texts), "documents"),
        "fasttext.FastTextVectors.vectors_for": (lambda: ft.vectors_for("cat"), "words"),
        "fasttext.misspelling_test": (lambda: fasttext.misspelling_test(ft, "cat"), "words"),
        "word2vec.prepare_corpus": (lambda: word2vec.prepare_corpus(texts, min_count=1),
                                    "sentences"),
    }


STR_CASES = _str_for_tokens_cases()


@pytest.mark.parametrize("name", sorted(STR_CASES))
def test_a_str_for_tokens_is_a_type_error_naming_the_argument(name):
    call, argument = STR_CASES[name]
    with pytest.raises(TypeError) as err:
        call()
    message = str(err.value)
    assert f"{argument} must be a sequence of token" in message and "tokenize" in message, message


def test_the_message_for_a_str_shows_it_shortened_and_lists_still_work():
    with pytest.raises(TypeError, match=r"^BPETokenizer.train: words must be a sequence of tokens "
                                        r"\(a list of str\), got one str 'the cat sat on the mat'; "
                                        r"tokenize it first: tokenize\(text\) \(or list\(text\) "
                                        r"for its characters\)$"):
        BPETokenizer.train(TEXT, vocab_size=30)
    with pytest.raises(TypeError, match=r"Vocab.decode: ids must be a sequence of integer ids, "
                                        r"got a str"):
        V.decode("123")
    with pytest.raises(TypeError, match=r"got one str 'word word word word word word word word "
                                        r"\.\.\.'"):
        Vocab.build("word " * 50)
    assert V.encode(["the", "cat"]).tolist() == [V.index("the"), V.index("cat")]
    assert Vocab.build(iter(["a", "b", "a"])).itos[2:] == ["a", "b"]       # a generator is fine


TOKEN_PARAMETERS = {"tokens", "words", "sentences", "documents", "prompt", "query", "exclude"}
NOT_TOKENS = {                                 # parameters with those names that are not tokens
    "contextual.nearest_sense": "query is a vector",
    "sgns.sgd_step": "words are word ids, a (B,) integer array",
    "text.check_tokens": "the check itself",
    "word2vec.Corpus.__init__": "a dataclass filled by prepare_corpus",
}


def test_every_library_function_taking_tokens_has_a_case():
    found = set()
    for mod in pkgutil.iter_modules(helpers.lib.__path__):
        module = importlib.import_module(f"helpers.lib.{mod.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            members = [(name, obj)] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                members = [(f"{name}.{m}", getattr(f, "__func__", f)) for m, f in vars(obj).items()
                           if (not m.startswith("_") or m == "__init__")
                           and callable(getattr(f, "__func__", f))]
            for qual, f in members:
                try:
                    params = set(inspect.signature(f).parameters)
                except (TypeError, ValueError):
                    continue
                if params & TOKEN_PARAMETERS:
                    found.add(f"{mod.name}.{qual}")
    missing = found - set(STR_CASES) - set(NOT_TOKENS)
    assert not missing, f"functions taking tokens with no case in this test: {sorted(missing)}"
