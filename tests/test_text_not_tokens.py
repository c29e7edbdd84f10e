"""A text where a list of words is expected is an error, not a list of characters
(issue 13, defect 9).

A str is a sequence of one-character strings, so before the fix ``BPETokenizer.train("the
cat")`` learned merges of characters, ``Vocab.encode("the cat")`` encoded seven characters and
``Vocab.build("...")`` made a character vocabulary, without a word. Every library function
that takes tokens, or lists of tokens, now raises TypeError naming the argument and saying to
tokenize first. The last test finds those functions by their parameters' names, so a new one
without a case here fails.
"""
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import helpers.lib
from helpers.lib.bpe import BPETokenizer
from helpers.lib.text import Vocab

TEXT = "the cat sat on the mat"
V = Vocab.build(TEXT.split())
TOK = BPETokenizer.train(TEXT.split() * 2, vocab_size=30, min_frequency=1)
RNG = np.random.default_rng(0)


def _cases():
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
    vectors = RNG.standard_normal((len(V), 3))
    words = TEXT.split()
    texts = [TEXT, "a dog"]                    # texts, not token lists
    return {
        "text.Vocab.__init__": (lambda: Vocab(TEXT), "tokens"),
        "text.Vocab.build": (lambda: Vocab.build(TEXT), "tokens"),
        "text.Vocab.encode": (lambda: V.encode(TEXT), "tokens"),
        "bpe.BPETokenizer.train": (lambda: BPETokenizer.train(TEXT, vocab_size=30), "words"),
        "bpe.BPETokenizer.encode_words": (lambda: TOK.encode_words(TEXT), "words"),
        "mlm.encode_sentence": (lambda: mlm.encode_sentence(TOK, TEXT, 16), "words"),
        "mlm.sentence_pair": (lambda: mlm.sentence_pair(TOK, TEXT, words, True), "a"),
        "mlm.next_sentence_pairs": (lambda: mlm.next_sentence_pairs(TOK, [texts, texts], 2, RNG), "document 0"),
        "pretraining.encode_corpus": (lambda: pretraining.encode_corpus(TOK, texts, 16), "sentences"),
        "contextual.word_vectors": (lambda: contextual.word_vectors(None, TOK, texts, [0, 0]), "sentences"),
        "contextual.find_word": (lambda: contextual.find_word(TEXT, "cat"), "words"),
        "lsa.document_term_matrix": (lambda: lsa.document_term_matrix(texts, V), "documents"),
        "lsa.group_sentences": (lambda: lsa.group_sentences(texts, 2), "sentences"),
        "lsa.lsa_word_vectors": (lambda: lsa.lsa_word_vectors(texts, V, k=1), "sentences"),
        "metrics.document_vectors": (lambda: metrics.document_vectors(vectors, V, texts), "documents"),
        "metrics.nearest_neighbours": (lambda: metrics.nearest_neighbours(vectors, V, "cat", exclude="mat"),
                                       "exclude"),
        "metrics.vocab_maps": (lambda: metrics.vocab_maps(TEXT), "vocab"),
        "near_duplicates.near_duplicate_groups": (lambda: near_duplicates.near_duplicate_groups(texts), "documents"),
        "fasttext.FastTextVectors.vectors_for": (
            lambda: fasttext.FastTextVectors([], np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((4, 3)), 3, 6, 0.0)
            .vectors_for("cat"), "words"),
        "fasttext.misspelling_test": (
            lambda: fasttext.misspelling_test(
                fasttext.FastTextVectors([], np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((4, 3)), 3, 6, 0.0), "cat"),
            "words"),
        "word2vec.prepare_corpus": (lambda: word2vec.prepare_corpus(texts, min_count=1), "sentences"),
    }


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_str_for_tokens_is_a_type_error_naming_the_argument(name):
    call, argument = CASES[name]
    with pytest.raises(TypeError) as err:
        call()
    message = str(err.value)
    assert f"{argument} must be a sequence of token" in message and "tokenize" in message, message


def test_the_issues_examples():
    with pytest.raises(TypeError, match=r"^BPETokenizer.train: words must be a sequence of tokens \(a list of str\), "
                                        r"got one str 'the cat sat on the mat'; tokenize it first: tokenize\(text\) "
                                        r"\(or list\(text\) for its characters\)$"):
        BPETokenizer.train("the cat sat on the mat", vocab_size=30)
    with pytest.raises(TypeError, match=r"^Vocab.encode: tokens must be a sequence of tokens"):
        V.encode("the cat")                 # used to return seven ids, one per character
    with pytest.raises(TypeError, match=r"Vocab.decode: ids must be a sequence of integer ids, got a str"):
        V.decode("123")
    long = "word " * 50
    with pytest.raises(TypeError, match=r"got one str 'word word word word word word word word \.\.\.'"):
        Vocab.build(long)                   # the text is shown shortened


def test_lists_of_tokens_still_work():
    assert V.encode(["the", "cat"]).tolist() == [V.index("the"), V.index("cat")]
    assert TOK.decode(TOK.encode_words(["the", "cat"])[0]) == "the cat"
    assert Vocab.build(iter(["a", "b", "a"])).itos[2:] == ["a", "b"]          # a generator is fine


# ---------------------------------------------------------------- completeness
TOKEN_PARAMETERS = {"tokens", "words", "sentences", "documents", "prompt", "query", "exclude"}


def _functions_taking_tokens():
    found = set()
    for mod in pkgutil.iter_modules(helpers.lib.__path__):
        module = importlib.import_module(f"helpers.lib.{mod.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            members = [(name, obj)] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                members = [(f"{name}.{m}", f) for m, f in vars(obj).items()
                           if (not m.startswith("_") or m == "__init__") and callable(getattr(f, "__func__", f))]
            for qual, f in members:
                f = getattr(f, "__func__", f)
                try:
                    params = set(inspect.signature(f).parameters)
                except (TypeError, ValueError):
                    continue
                if params & TOKEN_PARAMETERS:
                    found.add(f"{mod.name}.{qual}")
    return found


# Parameters with those names that are not tokens.
NOT_TOKENS = {
    "contextual.nearest_sense": "query is a vector",
    "sgns.sgd_step": "words are word ids, a (B,) integer array",
    "text.check_tokens": "the check itself",
    "word2vec.Corpus.__init__": "a dataclass filled by prepare_corpus",
}


def test_every_function_taking_tokens_has_a_case():
    missing = _functions_taking_tokens() - set(CASES) - set(NOT_TOKENS)
    assert not missing, f"functions taking tokens with no case in this test: {sorted(missing)}"


def test_word2vec_prepare_corpus_refuses_texts():
    from helpers.lib import word2vec
    with pytest.raises(TypeError, match="sentences must be a sequence of token lists"):
        word2vec.prepare_corpus(["the cat sat", "a dog ran"], min_count=1)   # builds a vocabulary of letters
