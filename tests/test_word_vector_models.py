"""The shipped word vectors (helpers.course.word_vector_models, data/models/wv_*): the lessons'
loader, the records lesson 09 prints, and the float16 check. tests/test_models.py checks every
artefact's checksum, its subset metric and the replay of its first epochs."""
import numpy as np
import pytest

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.models import read_manifest
from helpers.course.word_vector_models import (
    FLOAT16,
    NAMES,
    SETTINGS,
    vocab_from_arrays,
    vocab_to_arrays,
)
from helpers.course.word_vectors import SHIPPED_VECTORS, load_word_vectors
from helpers.lib.text import Vocab
from training.registry import MODELS

SHIPPED = [n for n, m in NAMES.items() if m in read_manifest()["models"]]


def test_every_word_vector_model_is_registered():
    assert set(NAMES.values()) == set(SETTINGS) <= set(MODELS)
    assert SHIPPED_VECTORS == tuple(NAMES)


def test_vocabulary_round_trip():
    v = Vocab(["the", "été", "naïve", "x"], np.array([9, 5, 5, 1]), ())
    back = vocab_from_arrays(vocab_to_arrays(v))
    assert back.itos == v.itos and back.counts.tolist() == [9, 5, 5, 1]
    with pytest.raises(ValueError, match="newline"):
        vocab_to_arrays(Vocab(["a\nb"], np.array([1]), ()))


def test_unknown_name():
    with pytest.raises(KeyError, match="no shipped word vectors named 'bert'; the course has"):
        load_word_vectors("bert")


@pytest.mark.parametrize("name", SHIPPED)
def test_load_word_vectors_gives_W_C_vocab_metadata(name):
    W, C, vocab, meta = load_word_vectors(name)
    assert vocab.itos == course_corpus().vocab.itos
    assert W.dtype == np.float32 and W.shape == (len(vocab), SETTINGS[NAMES[name]]["dim"])
    assert (C is not None) == (SETTINGS[NAMES[name]]["impl"] in ("torch", "numpy")
                              and SETTINGS[NAMES[name]].get("ship_context", True))   # C only where shipped
    if C is not None:
        assert C.shape == W.shape
    assert meta["settings"] == SETTINGS[NAMES[name]]
    curve = meta["curve"]
    assert curve["epoch"] == list(range(1, len(curve["epoch"]) + 1))
    if SETTINGS[NAMES[name]].get("keep") == "last":      # the course's trainers keep their schedule's last epoch
        assert meta["best_epoch"] == len(curve["epoch"]) == SETTINGS[NAMES[name]]["max_epochs"]
    else:                                                  # the others their best epoch on validation
        assert meta["best_epoch"] == 1 + int(np.argmax(curve["valid_wordsim"]))


@pytest.mark.parametrize("name", SHIPPED)
def test_the_records_reproduce_from_the_shipped_vectors(name):
    W, _, vocab, meta = load_word_vectors(name)
    rec = meta["records"]
    check = rec["float16_check"]
    assert "W" in FLOAT16[NAMES[name]]
    # float16 moves no score by half a unit of the printed third decimal (a score on a rounding boundary
    # may still print one unit apart: gensim skip-gram's WordSim-353, 0.56749 / 0.56770)
    assert all(abs(check["float32"][k] - check["float16"][k]) < 5e-4 for k in check["float32"]), check
    got = evaluate_vectors(W, vocab, "report")
    for key in ("wordsim", "simlex", "analogy"):          # recorded from float32, checked here from float16
        assert abs(got[key] - rec["report"][key]) < 5e-4, key
        assert got[key] == check["float16"][key], key
        lo, hi = rec["report_intervals"][key][1:]
        assert lo < rec["report"][key] < hi
    # the records were computed from the float32 vectors; float16 may flip a question or two
    # (measured: one of 548 in gensim CBOW's gram7-past-tense), never the counts of questions
    for cat, (correct, answered, oov) in rec["report"]["analogy_by_category"].items():
        c16, a16, o16 = got["analogy_by_category"][cat]
        assert (a16, o16) == (answered, oov) and abs(c16 - correct) <= 2, cat
    assert rec["queen_rank"] >= 1 and set(rec["bbc_topic_accuracy"]) == {"logreg", "knn"}
    assert all(0.2 < a <= 1 for accs in rec["bbc_topic_accuracy"].values() for a in accs)


def test_the_count_vectors_cache_key_names_every_validated_setting(monkeypatch):
    from helpers.course import word_vectors
    key = word_vectors.validated_count_key()
    for method, cfg in word_vectors.VALIDATED_COUNT_SETTINGS.items():
        for k, v in cfg.items():
            assert f"{method}-{k}{v}" in key[1]
    monkeypatch.setitem(word_vectors.VALIDATED_COUNT_SETTINGS, "LSA", dict(word_vectors.VALIDATED_COUNT_SETTINGS["LSA"], k=50))
    assert word_vectors.validated_count_key() != key          # a changed setting rebuilds the cache


def test_shipped_embeddings_table_shares_one_vocabulary():
    from helpers.course.word_vectors import SHIPPED_LABELS, shipped_embeddings
    table = shipped_embeddings(count_based=False)
    assert set(table) == {SHIPPED_LABELS[n] for n in SHIPPED}
    itos = course_corpus().vocab.itos
    for label, (W, vocab, seconds) in table.items():
        assert vocab.itos == itos and W.shape[0] == len(itos) and seconds > 0, label
