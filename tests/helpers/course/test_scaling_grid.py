"""Tests of helpers.course.scaling_grid (lesson 09's grid of quality against corpus size and
dimension): the nested samples, and the shipped grid as the lesson reads it."""
import numpy as np
import pytest

from helpers.course.models import load_model, model_info
from helpers.course.scaling_grid import METRICS, SUBSET_CELL, cell_epochs, nested_samples


def test_nested_samples_are_nested_random_and_sized():
    sents = [[f"w{i}"] for i in range(100)]
    small, mid, full = nested_samples(sents, (0.1, 0.5, 1.0), seed=3)
    assert (len(small), len(mid), len(full)) == (10, 50, 100)
    assert all(s in mid for s in small) and all(s in full for s in mid)
    assert small != sents[:10]  # a random sample, not the first sentences
    assert nested_samples(sents, (0.1,), seed=3)[0] == small  # seeded
    with pytest.raises(ValueError, match="increasing"):
        nested_samples(sents, (0.5, 0.25))
    with pytest.raises(ValueError, match="empty corpus"):
        nested_samples([], (0.5,))


def test_the_shipped_grid_and_its_control():
    """Shapes, the control's definition (the same updates in every row), and the cell the subset
    metric retrains from scratch (tests/test_models.py) is the stored cell."""
    sg = load_model("wv_scaling_grid")
    s = sg.metadata["settings"]
    S, F, D = len(s["seeds"]), len(s["fractions"]), len(s["dims"])
    for part in (sg.grid, sg.control):
        for m in METRICS:
            assert part.scores[m].shape == (S, F, D) and np.all(np.isfinite(part.scores[m]))
    assert (
        sg.control_epochs
        == tuple(cell_epochs(s, f, True) for f in s["fractions"])
        == (40, 20, 10, 5)
    )
    updates = np.array(sg.control_epochs) * sg.grid.tokens   # about the whole corpus's 5 epochs
    assert np.allclose(updates / updates[-1], 1, atol=0.01)
    for m in METRICS:                     # the whole corpus with 5 epochs is the same cell in both
        assert np.array_equal(sg.control.scores[m][:, -1], sg.grid.scores[m][:, -1])
    c = SUBSET_CELL
    i, j = s["fractions"].index(c["fraction"]), s["dims"].index(c["dim"])
    retrained = model_info("wv_scaling_grid")["subset_metric"]["value"]
    assert retrained == pytest.approx(sg.grid.scores["wordsim353"][c["seed"], i, j], abs=1e-12)
