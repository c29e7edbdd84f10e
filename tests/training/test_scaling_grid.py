"""Tests of training.scaling_grid: the cells it trains. Its first cells are replayed and one cell
retrained by tests/test_models.py."""
from helpers.course.models import load_model
from training.scaling_grid import SHIPPED, _cells


def test_the_cells_are_the_grid_and_the_control_below_the_whole_corpus():
    cells = _cells(SHIPPED)
    S, F, D = len(SHIPPED["seeds"]), len(SHIPPED["fractions"]), len(SHIPPED["dims"])
    assert len(cells) == S * (2 * F - 1) * D == len(set(cells))
    assert not any(control and SHIPPED["fractions"][i] == 1.0 for _, control, i, _ in cells)
    assert cells[:D] == [(0, False, 0, j) for j in range(D)]        # cheapest first
    assert load_model("wv_scaling_grid").metadata["cells"] == len(cells)
