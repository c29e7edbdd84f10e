"""helpers.course.scaling_grid: the shipped grid and its equal-updates control (lesson 09 §7)."""
import numpy as np

from helpers.course.models import load_model
from helpers.course.scaling_grid import METRICS, cell_epochs


def test_the_shipped_grid_and_its_control():
    """Shapes, and the control's definition: every row sees the whole corpus's updates, and its
    last row (the whole corpus, 5 epochs) is the grid's."""
    sg = load_model("wv_scaling_grid")
    s = sg.metadata["settings"]
    S, F, D = len(s["seeds"]), len(s["fractions"]), len(s["dims"])
    for part in (sg.grid, sg.control):
        for m in METRICS:
            assert part.scores[m].shape == (S, F, D) and np.all(np.isfinite(part.scores[m]))
    epochs = tuple(cell_epochs(s, f, True) for f in s["fractions"])
    assert sg.control_epochs == epochs == (40, 20, 10, 5)
    updates = np.array(sg.control_epochs) * sg.grid.tokens
    assert np.allclose(updates / updates[-1], 1, atol=0.01)
    for m in METRICS:
        assert np.array_equal(sg.control.scores[m][:, -1], sg.grid.scores[m][:, -1])
