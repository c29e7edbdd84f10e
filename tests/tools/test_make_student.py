"""``make student`` (tools/make_student.py): a student's copy of a lesson holds no solution cell,
its exercise cells have no output, every other cell is kept; one the student wrote in is kept
unless forced."""
import json

import nbformat
import pytest

from tests.lesson_text import NOTEBOOKS, load
from tools import make_student


def _tagged(cell, *tags) -> bool:
    return any(t in make_student.tags(cell) for t in tags)


# ----------------------------------------------------------------------------- the transformation
def _synthetic():
    md = nbformat.v4.new_markdown_cell("### Exercise 1 · warm-up — square\n> **Try this:** x?")
    setup = nbformat.v4.new_code_cell("import numpy as np\nx = np.arange(3)", execution_count=1,
                                      outputs=[nbformat.v4.new_output("stream", text="setup\n")])
    ex = nbformat.v4.new_code_cell(
        "def square(x):\n    raise NotImplementedError\n\ncheck_square(square)",
        execution_count=2,
        metadata={"tags": ["exercise"], "execution": {"iopub.status.idle": "2026-01-01T00:00:00Z"}},
        outputs=[nbformat.v4.new_output("stream", text="… not attempted yet\n")],
    )
    sol = nbformat.v4.new_code_cell(
        "def square_solution(x):\n    return x * x\n\nassert check_square(square_solution)",
        execution_count=3,
        metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}},
        outputs=[nbformat.v4.new_output("stream", text="✓\n")],
    )
    return nbformat.v4.new_notebook(cells=[md, setup, ex, sol])


def test_a_student_copy_drops_solutions_clears_exercises_and_keeps_the_rest():
    nb = _synthetic()
    before = json.dumps(nb)
    out = make_student.student_copy(nb, "01_x.ipynb")
    assert json.dumps(nb) == before, "the lesson itself is not changed"
    header, md, setup, ex = out["cells"]
    assert "Student copy" in header["source"] and "make student" in header["source"]
    assert md == nb["cells"][0] and setup == nb["cells"][1]
    assert ex["outputs"] == [] and ex["execution_count"] is None
    assert "execution" not in ex["metadata"]
    assert ex["source"] == nb["cells"][2]["source"]
    assert not make_student.written_in(out)
    bad = _synthetic()
    bad["cells"][3]["metadata"]["tags"].append("exercise")
    with pytest.raises(ValueError, match="tagged both 'solution' and"):
        make_student.student_copy(bad, "01_x.ipynb")


def test_make_student_keeps_a_copy_the_student_wrote_in(tmp_path, capsys):
    lesson = tmp_path / "01_x.ipynb"
    lesson.write_text(json.dumps(_synthetic()), encoding="utf-8")
    out = tmp_path / "student"
    assert [a for _, a in make_student.write_copies(out, [lesson])] == ["written"]
    assert (out / "01_x.ipynb").exists()
    assert [a for _, a in make_student.write_copies(out, [lesson])] == ["unchanged"]
    copy_path = out / "01_x.ipynb"
    ran = json.loads(copy_path.read_text(encoding="utf-8"))
    ran["cells"][3]["outputs"] = [nbformat.v4.new_output("stream", text="… not attempted yet\n")]
    copy_path.write_text(json.dumps(ran), encoding="utf-8")
    assert [a for _, a in make_student.write_copies(out, [lesson])] == ["updated"], \
        "a copy only run is refreshed"
    mine = json.loads(copy_path.read_text(encoding="utf-8"))
    mine["cells"][3]["source"] = "def square(x):\n    return x * x\n\ncheck_square(square)"
    copy_path.write_text(json.dumps(mine), encoding="utf-8")
    (action,) = [a for _, a in make_student.write_copies(out, [lesson])]
    assert action.startswith("kept") and "FORCE=1" in action
    assert "return x * x" in copy_path.read_text(encoding="utf-8")
    assert [a for _, a in make_student.write_copies(out, [lesson], force=True)] == ["updated"]
    assert "return x * x" not in copy_path.read_text(encoding="utf-8")
    make_student.main(["--out", str(out), str(lesson)])
    assert "01_x.ipynb: unchanged" in capsys.readouterr().out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_lesson_s_student_copy_clears_its_exercises_and_keeps_every_other_cell(path):
    """(That a published lesson holds no solution: tests/notebooks/test_student_edition.py.)"""
    nb = load(path)
    out = make_student.student_copy(nb, path.name)
    assert len(out["cells"]) == len(nb["cells"]) + 1
    exercises = [c for c in out["cells"] if _tagged(c, make_student.EXERCISE, make_student.CHECK)]
    assert exercises, f"{path.name}: no cell tagged 'exercise'"
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in exercises)
    for a, b in zip(nb["cells"], out["cells"][1:], strict=True):
        if not _tagged(a, make_student.EXERCISE, make_student.CHECK):
            assert a == b, f"{path.name}: a cell other than an exercise changed in the student copy"
