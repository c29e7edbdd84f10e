"""``make student`` (tools/make_student.py): student copies without solutions that still run.

Static, for every lesson: the copy holds no solution cell and no ``*_solution`` name, its exercise
cells have no output, everything else is kept; a solution cell binds only names of its own (ending
in ``_solution``) that no other cell binds or uses, so removing it can break nothing and it never
overwrites the student's function. Then each copy is executed with nbclient (one test per lesson,
so xdist runs them in parallel): every checker call reports "not attempted yet" and no cell errors.

The full suite already executes every lesson under nbval, so by default this test executes only
what the exercises need: the exercise and check cells and, working backwards, each earlier
top-level statement that binds a name they use (a static slice over the Python syntax tree).
``STUDENT_COPIES_FULL=1`` executes the whole copies instead (minutes per lesson).
"""
from __future__ import annotations

import ast
import builtins
import importlib.util
import json
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "tools" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)

IMPLICIT = set(dir(builtins)) | {"get_ipython", "display", "In", "Out", "__file__"}


def _source(cell) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def _code(nb) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _tagged(cell, *tags) -> bool:
    return any(t in make_student.tags(cell) for t in tags)


def _python(source: str) -> ast.Module:
    return ast.parse(TransformerManager().transform_cell(source))


def bound_and_free(node: ast.AST) -> tuple[set[str], set[str]]:
    """Names a statement (or module) binds, and the names it uses without binding them itself."""
    bound, used = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (used if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
    return bound, used - bound - IMPLICIT


def top_level_bindings(source: str) -> set[str]:
    """Names bound by the top-level statements of a cell (not inside its functions)."""
    names = set()
    for stmt in _python(source).body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        else:
            # a comprehension's loop variables stay inside it (Python 3 scoping): they bind nothing here
            local = {n.id for c in ast.walk(stmt) if isinstance(c, ast.comprehension)
                     for n in ast.walk(c.target) if isinstance(n, ast.Name)}
            names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                      and n.id not in local}
    return names


# ----------------------------------------------------------------------------- the transformation
def _synthetic():
    md = nbformat.v4.new_markdown_cell("### Exercise 1 · warm-up — square\n> **Try this:** x?")
    setup = nbformat.v4.new_code_cell("import numpy as np\nx = np.arange(3)", execution_count=1,
                                      outputs=[nbformat.v4.new_output("stream", text="setup\n")])
    ex = nbformat.v4.new_code_cell("def square(x):\n    raise NotImplementedError\n\ncheck_square(square)",
                                   execution_count=2, metadata={"tags": ["exercise"], "execution": {"iopub.status.idle": "2026-01-01T00:00:00Z"}},
                                   outputs=[nbformat.v4.new_output("stream", text="… not attempted yet\n")])
    sol = nbformat.v4.new_code_cell("def square_solution(x):\n    return x * x\n\nassert check_square(square_solution)",
                                    execution_count=3, metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}},
                                    outputs=[nbformat.v4.new_output("stream", text="✓\n")])
    return nbformat.v4.new_notebook(cells=[md, setup, ex, sol])


def test_a_student_copy_drops_solutions_clears_exercises_and_keeps_the_rest():
    nb = _synthetic()
    before = json.dumps(nb)
    out = make_student.student_copy(nb, "01_x.ipynb")
    assert json.dumps(nb) == before, "the lesson itself is not changed"
    header, md, setup, ex = out["cells"]
    assert "Student copy" in header["source"] and "make student" in header["source"]
    assert md == nb["cells"][0] and setup == nb["cells"][1]
    assert ex["outputs"] == [] and ex["execution_count"] is None and "execution" not in ex["metadata"]
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
    assert [a for _, a in make_student.write_copies(out, [lesson])] == ["updated"], "a copy only run is refreshed"
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


# ----------------------------------------------------------------------------- every lesson, statically


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_student_copy_holds_no_solution(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = make_student.student_copy(nb, path.name)
    solutions = [_source(c) for c in nb["cells"] if _tagged(c, make_student.SOLUTION)]
    kept = [c for c in nb["cells"] if not _tagged(c, make_student.SOLUTION)]
    assert len(out["cells"]) == len(kept) + 1
    text = json.dumps(out["cells"], ensure_ascii=False)
    assert "_solution" not in text, f"{path.name}: a *_solution name is left in the student copy"
    for s in solutions:
        assert s not in [_source(c) for c in out["cells"]]
    exercises = [c for c in out["cells"] if _tagged(c, make_student.EXERCISE, make_student.CHECK)]
    assert exercises, f"{path.name}: no cell tagged 'exercise'"
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in exercises)
    for a, b in zip(kept, out["cells"][1:]):
        if not _tagged(a, make_student.EXERCISE, make_student.CHECK):
            assert a == b, f"{path.name}: a cell other than an exercise changed in the student copy"


# ----------------------------------------------------------------------------- every lesson, executed
