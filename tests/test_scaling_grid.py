"""Tests of helpers.course.scaling_grid (the corpus-size x dimension grid of lesson 09) and its explorer."""
import numpy as np
import pytest

from helpers.course.corpus import modern_english_sentences
from helpers.course.scaling_grid import (
    METRICS,
    nested_samples,
    train_scaling_grid,
)
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


def test_shipped_grid_loads_and_one_cell_reproduces():
    """The shipped results (make models NAME=wv_scaling_grid): shapes, the control's definition, and
    one cell retrained from scratch gives the stored scores exactly (one worker: deterministic)."""
    from helpers.course.models import load_model
    from helpers.course.scaling_grid import SUBSET_CELL, cell_epochs, retrain_cell

    sg = load_model("wv_scaling_grid")
    s = sg.metadata["settings"]
    S, F, D = len(s["seeds"]), len(s["fractions"]), len(s["dims"])
    for part in (sg.grid, sg.control):
        for m in METRICS:
            assert part.scores[m].shape == (S, F, D) and np.all(np.isfinite(part.scores[m]))
    assert sg.control_epochs == tuple(cell_epochs(s, f, True) for f in s["fractions"]) == (40, 20, 10, 5)
    # same updates: epochs x sample tokens is about the whole corpus's 5 epochs in every row of the control
    updates = np.array(sg.control_epochs) * sg.grid.tokens
    assert np.allclose(updates / updates[-1], 1, atol=0.01)
    for m in METRICS:                     # the whole corpus with 5 epochs is the same cell in both
        assert np.array_equal(sg.control.scores[m][:, -1], sg.grid.scores[m][:, -1])
    c = SUBSET_CELL
    live = retrain_cell(s, c["fraction"], c["dim"], c["seed"], c["control"])
    i, j = s["fractions"].index(c["fraction"]), s["dims"].index(c["dim"])
    for m in METRICS:
        assert live[m] == pytest.approx(sg.grid.scores[m][c["seed"], i, j], abs=1e-12)


def test_shipped_render_with_seeds():
    from helpers.course.models import load_model
    from helpers.lessons.lesson09 import plot_grid_and_control

    sg = load_model("wv_scaling_grid")
    fig, summary = scaling_render(sg.grid, "wordsim353", "dimension")
    assert "mean of 3 trainings" in summary and len(fig.axes[0].containers) == len(sg.grid.tokens)   # error bars
    fig = plot_grid_and_control(sg.grid, sg.control, sg.control_epochs, "analogy")
    assert len(fig.axes) == 2 and "equal updates: 40/20/10/5 epochs" in fig.axes[1].get_title()
