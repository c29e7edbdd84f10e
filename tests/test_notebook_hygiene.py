"""Committed notebooks: a clean top-to-bottom run, no errors, no widget state, the course's
structure (intro with run time, an explorer, an exercise with a hidden reference solution)."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ["01_feedforward", "02_rnn_bptt", "03_lstm_gates", "04_self_attention", "05_tfidf_svd",
           "06_pmi", "07_word2vec", "08_glove_fasttext", "09_evaluation", "10_contextual"]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_only_lesson_notebooks():
    assert NOTEBOOKS, "no notebooks found"
    for nb in NOTEBOOKS:
        assert nb.stem in LESSONS, f"{nb.name} is not one of the course's lessons {LESSONS}"
    assert not list((ROOT / "notebooks").glob(".ipynb_checkpoints/*"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_hygiene(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: execution counts {counts} are not 1, 2, 3, ..."
    for c in code:
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", f"{path.name}: a stored output is an error"
    assert "widgets" not in nb["metadata"], f"{path.name}: saved widget state (run tests/clean_notebooks.py)"
    assert path.stat().st_size < 3_000_000, f"{path.name} is {path.stat().st_size / 1e6:.1f} MB"
    first = "".join(cells[0]["source"])
    assert cells[0]["cell_type"] == "markdown" and re.search(r"run time|running it takes", first, re.I), \
        f"{path.name}: the first cell must say what the reader builds and the run time"
    sources = ["".join(c["source"]) for c in code]
    # an Explorer built in the lesson, or a live training's "train on" explorer (LiveTraining.explorer)
    assert any("Explorer(" in s or ".explorer(" in s for s in sources), f"{path.name}: no widget explorer"
    assert any("raise NotImplementedError" in s for s in sources), f"{path.name}: no exercise stub"
    solutions = path.parents[1] / "solutions" / f"{path.stem}_solutions.ipynb"
    if solutions.exists():   # the student edition: the reference solutions live apart
        sol = json.loads(solutions.read_text(encoding="utf-8"))
        assert any("assert check_" in "".join(c["source"]) for c in sol["cells"] if c["cell_type"] == "code"), \
            f"{solutions.name}: no reference solution with its checker"
    else:
        hidden = [s for c, s in zip(code, sources) if c["metadata"].get("jupyter", {}).get("source_hidden")]
        assert any("assert check_" in s for s in hidden), f"{path.name}: no collapsed reference solution with its checker"
    for s in sources:
        assert "sys.path" not in s, f"{path.name}: imports helpers through sys.path instead of the installed package"


SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_solutions_notebook_hygiene(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: execution counts {counts} are not 1, 2, 3, ..."
    assert not any(o["output_type"] == "error" for c in code for o in c.get("outputs", [])), \
        f"{path.name}: a stored output is an error"
    assert "widgets" not in nb["metadata"], f"{path.name}: saved widget state (run tests/clean_notebooks.py)"
    assert (ROOT / "notebooks" / path.name.replace("_solutions", "")).exists(), f"{path.name}: no lesson of that name"
