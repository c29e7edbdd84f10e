"""Tests of helpers.course.word_vectors: lesson 09's table of every method, the count-based
vectors' cache, and the share of rare neighbours."""
import numpy as np

from helpers.course import word_vectors
from helpers.course.corpus import course_corpus
from helpers.course.models import read_manifest
from helpers.course.shipped_vectors import NAMES, SHIPPED_LABELS
from helpers.course.word_vectors import CountVectorsCodec, rare_neighbour_share, shipped_embeddings
from helpers.infra.artifacts import load_artifact, save_artifact
from helpers.lib.text import Vocab

SHIPPED = [n for n, m in NAMES.items() if m in read_manifest()["models"]]


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
    W = (np.r_[np.tile([1.0, 0.0], (6, 1)), np.tile([0.0, 1.0], (6, 1))]
         + 1e-3 * np.arange(24).reshape(12, 2))
    assert rare_neighbour_share(W, counts, k=3, rare_below=20, probe=(0, 6)) == 0.0
    W[:6] = W[6:][::-1] + 1e-4
    assert rare_neighbour_share(W, counts, k=3, rare_below=20, probe=(0, 6)) > 0.5
