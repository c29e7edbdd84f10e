"""helpers.course.vector_studies: the shipped word-vector studies read back whole."""
from types import SimpleNamespace

import numpy as np
import pytest

from helpers.course.models import load_model
from helpers.course.vector_studies import METRICS, cell_epochs, load_count_records


def test_the_shipped_tricks_study_reads_back_whole():
    shipped = load_model("wv_tricks")
    s = shipped.metadata["settings"]
    S, V, E = len(s["seeds"]), len(s["variants"]), s["epochs"]
    assert shipped.variants == ["shipped", "no_subsampling", "fixed_window"]
    assert (S, V, E) == (3, 3, 10)
    for key, c in shipped.curves.items():
        assert c.shape == (S, V, E) and np.all(np.isfinite(c)), key
    for key, f in shipped.final.items():
        assert f.shape == (S, V) and np.all(np.isfinite(f)), key
    assert np.all(shipped.curves["cpu_seconds"] > 0) and shipped.cpu_seconds().shape == (S, V)
    final, curves = shipped.final, shipped.curves
    assert np.array_equal(final["report/wordsim"], curves["report/wordsim"][:, :, -1])
    assert np.allclose(shipped.items["analogy"].mean(axis=2), final["report/analogy"], atol=1e-12)
    with pytest.raises(ValueError, match="unknown variant"):
        shipped.index("nothing")


def test_the_count_records():
    recs = load_model("wv_count_records")
    assert set(recs) == {"LSA", "PPMI-SVD"}
    assert recs is load_count_records(SimpleNamespace(meta={"records": recs}))


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
