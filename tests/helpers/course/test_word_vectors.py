"""Tests of helpers.course.word_vectors: the shipped vectors as the lessons load them, the
count-based vectors' cache, and what the lessons measure on vectors (queen's rank, the share of
rare neighbours)."""
from types import SimpleNamespace

import numpy as np
import pytest

from helpers.course import word_vectors
from helpers.course.corpus import course_corpus
from helpers.course.models import read_manifest
from helpers.course.word_vectors import (
    NAMES,
    SHIPPED_LABELS,
    CountVectorsCodec,
    load_vectors_artifact,
    load_word_vectors,
    rare_neighbour_share,
    shipped_embeddings,
)
from helpers.infra.artifacts import load_artifact, save_artifact
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
    assert (
        back.vocab.itos == v.itos and back.vocab.counts.tolist() == [9, 5, 5, 1] and back.C is None
    )
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


def test_shipped_embeddings_table_shares_one_vocabulary():
    table = shipped_embeddings(count_based=False)
    assert set(table) == {SHIPPED_LABELS[n] for n in SHIPPED}
    itos = course_corpus().vocab.itos
    for label, (W, vocab, seconds) in table.items():
        assert vocab.itos == itos and W.shape[0] == len(itos) and seconds > 0, label


def test_the_count_vectors_cache_key_names_every_validated_setting(monkeypatch):
    key = word_vectors.validated_count_key()
    for method, cfg in word_vectors.VALIDATED_COUNT_SETTINGS.items():
        for k, v in cfg.items():
            assert f"{method}-{k}{v}" in key[1]
    changed = dict(word_vectors.VALIDATED_COUNT_SETTINGS["LSA"], k=50)
    monkeypatch.setitem(word_vectors.VALIDATED_COUNT_SETTINGS, "LSA", changed)
    assert word_vectors.validated_count_key() != key          # a changed setting rebuilds the cache


def test_the_count_vectors_are_cached_with_one_vocabulary(tmp_path):
    rng = np.random.default_rng(0)
    vocab = Vocab(["<pad>", "<unk>", "the", "Zürich", "café"], [0, 0, 9, 3, 2])
    value = {"LSA": (rng.standard_normal((5, 2)).astype(np.float32), vocab, 1.5),
             "PPMI-SVD": (rng.standard_normal((5, 2)).astype(np.float32), vocab, 2.5)}
    arrays, meta = CountVectorsCodec.to_arrays(value)
    assert sum(k.startswith("vocab/") for k in arrays) == 2          # itos and counts, once
    save_artifact(tmp_path / "v", arrays, meta)
    art = load_artifact(tmp_path / "v")
    back = CountVectorsCodec.from_arrays(art.arrays, art.meta)
    assert list(back) == ["LSA", "PPMI-SVD"] and back["LSA"][1] is back["PPMI-SVD"][1]
    assert all(np.array_equal(back[k][0], value[k][0]) and back[k][2] == value[k][2] for k in value)


def test_rare_neighbour_share_counts_rare_words_among_the_neighbours():
    counts = np.array([100] * 6 + [1] * 6)
    # frequent words 0-5 point one way, rare words 6-11 the other: no rare neighbour, then only rare
    W = np.r_[np.tile([1.0, 0.0], (6, 1)), np.tile([0.0, 1.0], (6, 1))] + 1e-3 * np.arange(
        24
    ).reshape(12, 2)
    assert rare_neighbour_share(W, counts, k=3, rare_below=20, probe=(0, 6)) == 0.0
    W[:6] = W[6:][::-1] + 1e-4
    assert rare_neighbour_share(W, counts, k=3, rare_below=20, probe=(0, 6)) > 0.5
