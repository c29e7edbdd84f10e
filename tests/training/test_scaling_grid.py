"""training.scaling_grid: its nested samples, its cells and the one the replay retrains."""
import pytest

from helpers.course.models import load_model, model_info
from training.scaling_grid import SHIPPED, SUBSET_CELL, _cells, nested_samples


def test_nested_samples_are_nested_random_and_sized():
    sents = [[f"w{i}"] for i in range(100)]
    small, mid, full = nested_samples(sents, (0.1, 0.5, 1.0), seed=3)
    assert (len(small), len(mid), len(full)) == (10, 50, 100)
    assert all(s in mid for s in small) and all(s in full for s in mid)
    assert small != sents[:10] and nested_samples(sents, (0.1,), seed=3)[0] == small
    with pytest.raises(ValueError, match="increasing"):
        nested_samples(sents, (0.5, 0.25))
    with pytest.raises(ValueError, match="empty corpus"):
        nested_samples([], (0.5,))


def test_the_cells_are_the_grid_and_the_control_below_the_whole_corpus():
    cells = _cells(SHIPPED)
    S, F, D = len(SHIPPED["seeds"]), len(SHIPPED["fractions"]), len(SHIPPED["dims"])
    assert len(cells) == S * (2 * F - 1) * D == len(set(cells))
    assert not any(control and SHIPPED["fractions"][i] == 1.0 for _, control, i, _ in cells)
    assert cells[:D] == [(0, False, 0, j) for j in range(D)]        # cheapest first
    sg = load_model("wv_scaling_grid")
    assert sg.metadata["cells"] == len(cells)
    c = SUBSET_CELL                    # the cell the replay retrains is the stored one
    i, j = SHIPPED["fractions"].index(c["fraction"]), SHIPPED["dims"].index(c["dim"])
    assert model_info("wv_scaling_grid")["subset_metric"]["value"] == \
        pytest.approx(sg.grid.scores["wordsim353"][c["seed"], i, j], abs=1e-12)
