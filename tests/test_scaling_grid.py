"""Tests of helpers.course.scaling_grid (the corpus-size x dimension grid of lesson 09) and its explorer."""
import numpy as np
import pytest

from helpers.course.corpus import modern_english_sentences
from helpers.course.scaling_grid import (
    METRICS,
    course_scaling_key,
    nested_samples,
    train_scaling_grid,
)
from helpers.course.word_vectors import course_cache_jobs
from helpers.lessons.lesson09 import scaling_render


def test_nested_samples_are_nested_random_and_sized():
    sents = [[f"w{i}"] for i in range(100)]
    small, mid, full = nested_samples(sents, (0.1, 0.5, 1.0), seed=3)
    assert (len(small), len(mid), len(full)) == (10, 50, 100)
    assert all(s in mid for s in small) and all(s in full for s in mid)
    assert small != sents[:10]                               # a random sample, not the first sentences
    assert nested_samples(sents, (0.1,), seed=3)[0] == small  # seeded
    with pytest.raises(ValueError, match="increasing"):
        nested_samples(sents, (0.5, 0.25))
    with pytest.raises(ValueError, match="empty corpus"):
        nested_samples([], (0.5,))


@pytest.fixture(scope="module")
def small_grid():
    # 3,000 real sentences, two sizes, two dimensions: a few seconds
    return train_scaling_grid(modern_english_sentences()[:3000], fractions=(0.5, 1.0), dims=(5, 20),
                              progress=False, epochs=2, workers=1)


def test_grid_shapes_and_shared_test_set(small_grid):
    g = small_grid
    assert g.tokens[0] < g.tokens[1]
    for m in METRICS:
        assert g.scores[m].shape == (2, 2)
    assert np.all(g.seconds > 0)
    # every cell is scored on the words of the smallest sample: the same pairs everywhere
    assert g.n_scored["wordsim353"] > 0 and g.n_words > 100
    assert np.all(np.isfinite(g.scores["wordsim353"]))


def test_grid_bad_settings():
    with pytest.raises(ValueError, match="unknown settings"):
        train_scaling_grid([["a", "b"]], dimension=5)
    with pytest.raises(ValueError, match="dims must be positive"):
        train_scaling_grid([["a", "b"]], dims=(0,))


def test_render_both_views(small_grid):
    for across in ("corpus size", "dimension"):
        fig, summary = scaling_render(small_grid, "wordsim353", across)
        assert len(fig.axes[0].lines) >= 2 and "WordSim-353" in summary
    _, summary = scaling_render(small_grid, "analogy")
    assert "%" in summary
    with pytest.raises(ValueError, match="unknown metric"):
        scaling_render(small_grid, "accuracy")
    with pytest.raises(ValueError, match="across must be"):
        scaling_render(small_grid, "analogy", "epochs")


def test_course_jobs_have_distinct_entries():
    jobs = course_cache_jobs()
    keys = [(j.name, j.version) for j in jobs]
    assert len(set(keys)) == len(keys) == 10
    assert course_scaling_key() in keys
    assert course_scaling_key() not in [(j.name, j.version) for j in course_cache_jobs(scaling_grid=False)]
