"""training.word_vector_models: every model is registered, the records stored with the vectors are
what the shipped (float16) vectors give, and the course's trainers keep their last epoch."""
import numpy as np
import pytest

from helpers.course.bbc_topics import bbc_groups, bbc_topic_task
from helpers.course.benchmarks import benchmark_halves, evaluate_vectors
from helpers.course.models import read_manifest
from helpers.course.shipped_vectors import NAMES, load_word_vectors
from helpers.lib.metrics import analogy_hits, similarity_interval
from training.registry import MODELS
from training.runlog import RunLog
from training.word_vector_models import (
    FLOAT16,
    SETTINGS,
    report_intervals,
    topic_accuracy,
    train_course_word2vec,
)

SHIPPED = [n for n, m in NAMES.items() if m in read_manifest()["models"]]


def test_every_word_vector_model_is_registered():
    assert set(NAMES.values()) == set(SETTINGS) <= set(MODELS)


@pytest.mark.parametrize("name", SHIPPED)
def test_the_records_reproduce_from_the_shipped_vectors(name):
    W, _, vocab, meta = load_word_vectors(name)
    rec = meta["records"]
    check = rec["float16_check"]
    assert "W" in FLOAT16[NAMES[name]]
    # float16 moves no score by half a unit of the printed third decimal
    assert all(abs(check["float32"][k] - check["float16"][k]) < 5e-4 for k in check["float32"]), \
        check
    got = evaluate_vectors(W, vocab, "report")
    for key in ("wordsim", "simlex", "analogy"):  # recorded from float32, checked from float16
        assert abs(got[key] - rec["report"][key]) < 5e-4, key
        assert got[key] == check["float16"][key], key
        lo, hi = rec["report_intervals"][key][1:]
        assert lo < rec["report"][key] < hi
    # float16 may flip a question or two, never the counts of questions
    for cat, (correct, answered, oov) in rec["report"]["analogy_by_category"].items():
        c16, a16, o16 = got["analogy_by_category"][cat]
        assert (a16, o16) == (answered, oov) and abs(c16 - correct) <= 2, cat
    assert rec["queen_rank"] >= 1 and set(rec["bbc_topic_accuracy"]) == {"logreg", "knn"}
    assert all(0.2 < a <= 1 for accs in rec["bbc_topic_accuracy"].values() for a in accs)


def test_report_intervals_hold_the_point_estimates():
    h = benchmark_halves()["report"]
    words = sorted({w for p in h.wordsim + h.simlex for w in p[:2]}
                   | {w for qs in h.analogies.values() for q in qs for w in q})
    W = np.random.default_rng(2).standard_normal((len(words), 20)).astype(np.float32)
    r = report_intervals(W, words, n_boot=100)
    assert r["wordsim"][0] == pytest.approx(similarity_interval(W, words, h.wordsim,
                                                                n_boot=10).estimate)
    assert r["analogy"][0] == pytest.approx(analogy_hits(W, words, h.analogies).mean())
    for key in ("wordsim", "simlex", "analogy"):
        assert r[key][1] <= r[key][0] <= r[key][2]


def test_keep_last_runs_the_whole_schedule():
    for name in ("wv_torch_skipgram", "wv_numpy_skipgram"):
        s = SETTINGS[name]
        assert s["keep"] == "last" and s["patience"] == s["max_epochs"]
    with pytest.raises(ValueError, match="patience"):
        train_course_word2vec(dict(SETTINGS["wv_torch_skipgram"], patience=5), RunLog(),
                              max_steps=1)
    with pytest.raises(ValueError, match="keep"):
        train_course_word2vec(dict(SETTINGS["wv_torch_skipgram"], keep="middle"), RunLog(),
                              max_steps=1)


def test_topics_are_scored_on_held_out_documents():
    E = np.array([[1.0, 0.0, 0.1], [0.9, 0.1, 0.0], [0.0, 1.0, 0.1], [0.1, 0.9, 0.0]])
    words = ["man", "woman", "apple", "pear"]
    rng = np.random.default_rng(0)
    docs = [list(rng.choice(words[:2], 6)) for _ in range(40)] + \
        [list(rng.choice(words[2:], 6)) for _ in range(40)]
    labels = ["people"] * 40 + ["fruit"] * 40
    for clf in ("logreg", "knn"):
        assert topic_accuracy(E, words, docs, labels, clf, 0) == 1.0
    assert topic_accuracy(np.ones_like(E), words, docs, labels, "logreg", 0) <= 0.6   # chance
    with pytest.raises(ValueError, match="labels"):
        topic_accuracy(E, words, docs, labels[:-1], "knn", 0)


def test_the_recorded_topic_accuracies_reproduce():
    W, _, vocab, meta = load_word_vectors("torch-skipgram")
    docs, labels = bbc_topic_task()
    for c, recorded in meta["records"]["bbc_topic_accuracy"].items():
        refit = [topic_accuracy(W, vocab, docs, labels, c, s, bbc_groups()) for s in (0, 1, 2)]
        assert refit == recorded
