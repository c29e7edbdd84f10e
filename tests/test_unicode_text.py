"""The tokeniser reads every script (issue 13, defect 5).

Before the fix ``tokenize`` kept ASCII letters only: ``tokenize("Zürich café naïve 한국어")`` was
``['z', 'rich', 'caf', 'na', 've']``, Korean vanished, and ``Vocab``/BPE then reported an
"empty corpus" without saying why.
"""
import random
import unicodedata
from collections import Counter

import pytest

from helpers.lib import text
from helpers.lib.bpe import BPETokenizer
from helpers.lib.text import Vocab, split_sentences, tokenize


def test_accented_and_korean_words_are_whole_tokens():
    assert tokenize("Zürich café naïve 한국어") == ["zürich", "café", "naïve", "한국어"]


def test_decomposed_input_gives_the_same_tokens():
    composed = "Zürich café naïve 한국어 Ελληνικά Ångström"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed and len(decomposed) > len(composed)     # really decomposed
    assert tokenize(decomposed) == tokenize(composed) == ["zürich", "café", "naïve", "한국어", "ελληνικά", "ångström"]


@pytest.mark.parametrize("word", [
    "हिन्दी",             # Devanagari: the vowel signs ि ी and the virama ् are combining marks
    "العَرَبِيَّة",        # Arabic with its vowel marks (harakat)
    "தமிழ்",              # Tamil
    "น้ำแข็ง",             # Thai: tone mark and vowel sign above the consonants
])
def test_combining_marks_do_not_split_a_word(word):
    assert any(unicodedata.category(c).startswith("M") for c in word)
    assert tokenize(f"{word}, {word}!") == [word, word]


def test_mixed_scripts_digits_apostrophes_and_separators():
    assert tokenize("Das Café in Zürich, 서울 and 東京: 2024!") == ["das", "café", "in", "zürich", "서울", "and", "東京", "2024"]
    assert tokenize("Don't stop the King’s men; l'été, rock'n'roll") == \
        ["don't", "stop", "the", "king’s", "men", "l'été", "rock'n'roll"]
    assert tokenize("3rd covid19 1,000 2.5 ٣٤") == ["3rd", "covid19", "1", "000", "2", "5", "٣٤"]   # digits as before
    assert tokenize("foo_bar well-known 'quoted'") == ["foo", "bar", "well", "known", "quoted"]
    assert tokenize("Olá, mundo! ¿Qué?", punctuation=True) == ["olá", ",", "mundo", "!", "¿", "qué", "?"]


def test_lower_keeps_spellings_unlike_casefold():
    # str.lower (as scikit-learn and gensim): "ß" stays; casefold would turn "straße" into "strasse"
    assert tokenize("STRASSE Straße ΟΔΟΣ") == ["strasse", "straße", "οδος"]


def test_the_ascii_fast_path_gives_the_unicode_patterns_tokens():
    rng = random.Random(0)
    alphabet = "abcXYZ019 _'’.,!-\n\t"
    unicode_words, unicode_all = text._unicode_patterns()
    ascii_words, ascii_all = text._ASCII_PATTERNS
    for _ in range(2000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))).replace("’", "'").lower()
        assert ascii_words.findall(s) == unicode_words.findall(s), s
        assert ascii_all.findall(s) == unicode_all.findall(s), s


def test_tokenize_wants_one_text():
    with pytest.raises(TypeError, match="tokenize takes one text .* got list; tokenize each text of a list separately"):
        tokenize(["a text", "another"])


def test_split_sentences_sees_capitals_and_scripts_without_case():
    assert split_sentences("Er kam. Über Nacht blieb er. 서울은 크다. 한국어 문장이다. Ende.") == \
        ["Er kam.", "Über Nacht blieb er.", "서울은 크다.", "한국어 문장이다.", "Ende."]
    assert split_sentences("It rained. then it stopped. ärger? “Quoted start. 3 cats.") == \
        ["It rained. then it stopped. ärger?", "“Quoted start.", "3 cats."]        # lower case: no break
    assert split_sentences("東京は大きい。大阪も大きい！ 本当？") == ["東京は大きい。", "大阪も大きい！", "本当？"]
    assert split_sentences("क्या यह सही है? हाँ। यह सही है।") == ["क्या यह सही है?", "हाँ।", "यह सही है।"]
    assert split_sentences("هل هذا صحيح؟ نعم") == ["هل هذا صحيح؟", "نعم"]


def test_a_corpus_in_other_scripts_builds_a_vocabulary_and_bpe():
    corpus = "한국어 문장 한국어. Zürich und Zürich! हिन्दी हिन्दी"
    tokens = tokenize(corpus)
    v = Vocab.build(tokens, min_count=2)          # used to be "empty corpus": Korean vanished
    assert set(v.itos[2:]) == {"한국어", "zürich", "हिन्दी"}
    bpe = BPETokenizer.train(Counter(tokens), vocab_size=40, min_frequency=1)
    assert bpe.decode(bpe.encode(corpus)) == " ".join(tokens)
    assert "[UNK]" not in bpe.pieces(bpe.encode(corpus))


@pytest.mark.parametrize("build", [
    lambda toks: Vocab.build(toks),
    lambda toks: BPETokenizer.train(toks, vocab_size=50),
], ids=["Vocab", "BPE"])
def test_a_corpus_with_no_tokens_says_why(build):
    tokens = [t for x in ("...", "!!", "— —") for t in tokenize(x)]
    assert tokens == []
    with pytest.raises(ValueError, match=r"empty corpus: it has no (tokens|words).*tokenize\(\) gives no (tokens|words) "
                                         "for a text without letters or digits"):
        build(tokens)


def test_bpe_and_vocab_explain_other_empty_inputs():
    with pytest.raises(ValueError, match="every one of the 2 distinct words is an empty string or has a count <= 0"):
        BPETokenizer.train({"": 3, "cat": 0}, vocab_size=50)
    with pytest.raises(ValueError, match=r"no token occurs at least min_count=3 times: the corpus has 3 tokens "
                                         r"of 2 types, the most frequent \('b'\) 2 times"):
        Vocab.build(["a", "b", "b"], min_count=3)
    with pytest.raises(TypeError, match=r"holds lists; flatten the sentences first"):
        Vocab.build([["a", "b"], ["c"]])


def test_the_course_corpus_says_when_it_has_no_tokens(monkeypatch):
    from helpers.course import corpus
    from helpers.infra.checksums import DataError
    monkeypatch.setattr(corpus, "modern_english_documents", lambda: (("wikipedia", "... !!"), ("bbc:tech", "— ?")))
    with pytest.raises(DataError, match=r"the corpus has no tokens: tokenize\(\) found no sentence of 3 or more "
                                        r"words \(letters or digits\) in its 2 texts"):
        corpus.modern_english_sentences.__wrapped__(3)
    with pytest.raises(DataError, match="in its 2 texts"):
        corpus.document_sentences.__wrapped__(3)
