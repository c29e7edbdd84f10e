"""Tests of helpers.course.shipped_vectors: the shipped word vectors as the lessons load them."""
from types import SimpleNamespace

import numpy as np
import pytest

from helpers.course.corpus import course_corpus
from helpers.course.models import read_manifest
from helpers.course.shipped_vectors import NAMES, load_vectors_artifact, load_word_vectors
from helpers.lessons.lesson08 import load_shipped_fasttext
from helpers.lib.fasttext import ngram_buckets
from helpers.lib.text import Vocab
from training.word_vector_models import SETTINGS, vocab_to_arrays

SHIPPED = [n for n, m in NAMES.items() if m in read_manifest()["models"]]


def test_unknown_name():
    with pytest.raises(KeyError, match="no shipped word vectors named 'bert'; the course has"):
        load_word_vectors("bert")


def test_the_stored_vocabulary_comes_back():
    v = Vocab(["the", "été", "naïve", "x"], np.array([9, 5, 5, 1]), ())
    art = SimpleNamespace(arrays={"W": np.ones((4, 2), np.float32), **vocab_to_arrays(v)}, meta={})
    back = load_vectors_artifact(art)
    assert back.vocab.itos == v.itos and back.vocab.counts.tolist() == [9, 5, 5, 1]
    assert back.C is None
    with pytest.raises(ValueError, match="newline"):
        vocab_to_arrays(Vocab(["a\nb"], np.array([1]), ()))


@pytest.mark.parametrize("name", SHIPPED)
def test_load_word_vectors_gives_W_C_vocab_metadata(name):
    W, C, vocab, meta = load_word_vectors(name)
    s = SETTINGS[NAMES[name]]
    assert vocab.itos == course_corpus().vocab.itos
    assert W.dtype == np.float32 and W.shape == (len(vocab), s["dim"])
    # C only where it is shipped
    assert (C is not None) == (s["impl"] in ("torch", "numpy") and s.get("ship_context", True))
    if C is not None:
        assert C.shape == W.shape
    assert meta["settings"] == s
    curve = meta["curve"]
    assert curve["epoch"] == list(range(1, len(curve["epoch"]) + 1))
    if s.get("keep") == "last":            # the course's trainers keep their schedule's last epoch
        assert meta["best_epoch"] == len(curve["epoch"]) == s["max_epochs"]
    else:                                  # the others their best epoch on validation
        assert meta["best_epoch"] == 1 + int(np.argmax(curve["valid_wordsim"]))


def test_the_shipped_fasttext_gives_unseen_words_gensims_vectors():
    ft = load_shipped_fasttext()
    check = load_word_vectors("fasttext").metadata["records"]["oov_check"]
    assert check["max_abs_difference_from_gensim"] < 1e-5          # recorded against gensim
    word = check["words"][0]
    assert word not in ft
    buckets = ngram_buckets(word, len(ft.ngram_vectors), ft.min_n, ft.max_n)
    assert np.allclose(ft.vector(word), ft.ngram_vectors[buckets].mean(0))
