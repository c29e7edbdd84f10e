"""Write the student copies of the lessons: ``make student`` runs ``python tools/make_student.py``.

A student copy is a lesson notebook with its reference solutions removed (cells tagged
``solution``) and the outputs of its exercise cells cleared (cells tagged ``exercise``, and
``check`` for a checker call in a cell of its own); everything else — the prose, the diagrams,
the outputs of every other cell — is kept. A first markdown cell says that it is the student copy
and how to regenerate it. The copies go to ``student/`` (git-ignored), with a copy of
``notebooks/figures/`` beside them so that the diagrams show.

A copy the student has written in is never overwritten: each copy records a digest of its cells'
sources in its metadata, and a copy whose sources no longer match it is kept (``make student
FORCE=1``, or ``--force``, overwrites it). Running a copy changes only outputs, so a copy that was
only run is refreshed when its lesson changes.

Usage: ``python tools/make_student.py [--out DIR] [--force] [NOTEBOOK ...]``
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOLUTION, EXERCISE, CHECK = "solution", "exercise", "check"
METADATA_KEY = "student_copy"


def tags(cell: dict) -> list[str]:
    """The cell's tags (``metadata.tags``), [] when it has none."""
    return list(cell.get("metadata", {}).get("tags", []))


def _source(cell: dict) -> str:
    s = cell.get("source", "")
    return s if isinstance(s, str) else "".join(s)


def sources_digest(cells: list[dict]) -> str:
    """sha256 of the cells' types and sources (not their outputs): what the student writes."""
    text = json.dumps([[c["cell_type"], _source(c)] for c in cells], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def header_cell(name: str) -> dict:
    """The markdown cell at the top of a student copy of ``notebooks/<name>``."""
    text = (
        f"> **Student copy** of `notebooks/{name}`, made by `make student`: the reference "
        "solutions are removed and the exercise cells start without output. Write your answers in "
        "the exercise cells and run them to see the checker's verdict.\n"
        ">\n"
        "> `make student` refreshes this copy when the lesson changes, but never overwrites it "
        "once you have written in it (`make student FORCE=1` does). Instructors find the "
        "solutions in the `solutions/` folder."
    )
    return {
        "cell_type": "markdown",
        "id": "student-copy-header",
        "metadata": {"tags": ["student-copy"]},
        "source": text,
    }


def student_copy(nb: dict, name: str) -> dict:
    """The student copy of the notebook ``nb`` (a dict in nbformat 4) named ``name``; ``nb`` is not
    changed.

    Raises ValueError for a cell tagged both ``solution`` and ``exercise``/``check``."""
    out = copy.deepcopy(nb)
    cells = []
    for i, cell in enumerate(out["cells"]):
        t = tags(cell)
        if SOLUTION in t:
            if EXERCISE in t or CHECK in t:
                raise ValueError(
                    f"{name}: cell {i} is tagged both {SOLUTION!r} and {EXERCISE!r}/{CHECK!r}"
                )
            continue
        if cell["cell_type"] == "code" and (EXERCISE in t or CHECK in t):
            cell["outputs"], cell["execution_count"] = [], None
            cell.get("metadata", {}).pop("execution", None)
        cells.append(cell)
    out["cells"] = [header_cell(name)] + cells
    out.setdefault("metadata", {})[METADATA_KEY] = {"source": f"notebooks/{name}",
                                                    "sources_sha256": sources_digest(out["cells"])}
    return out


def written_in(nb: dict) -> bool:
    """True when a student copy's sources differ from those it was made with (the student wrote in
    it)."""
    recorded = nb.get("metadata", {}).get(METADATA_KEY, {}).get("sources_sha256")
    return recorded != sources_digest(nb.get("cells", []))


def _dump(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def write_copies(
    out_dir: Path, notebooks: list[Path] | None = None, force: bool = False
) -> list[tuple[Path, str]]:
    """Write the student copy of each notebook (default: every lesson) into ``out_dir``, and the
    figures beside them. Returns (path, what happened) per notebook: "written", "updated",
    "unchanged", or "kept: ..." for a copy the student has written in (unless ``force``)."""
    out_dir = Path(out_dir)
    notebooks = (
        sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
        if notebooks is None
        else [Path(p) for p in notebooks]
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    report = []
    for path in notebooks:
        text = _dump(student_copy(json.loads(path.read_text(encoding="utf-8")), path.name))
        target = out_dir / path.name
        if not target.exists():
            action = "written"
        elif target.read_text(encoding="utf-8") == text:
            report.append((target, "unchanged"))
            continue
        elif not force and written_in(json.loads(target.read_text(encoding="utf-8"))):
            report.append((target, "kept: you have written in it (FORCE=1 overwrites it)"))
            continue
        else:
            action = "updated"
        target.write_text(text, encoding="utf-8")
        report.append((target, action))
    figures = NOTEBOOKS / "figures"
    if figures.is_dir():
        shutil.copytree(figures, out_dir / "figures", dirs_exist_ok=True)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", default=str(ROOT / "student"), help="output folder (default: student/)"
    )
    parser.add_argument(
        "notebooks", nargs="*", help="lesson notebooks (default: all of notebooks/)"
    )
    parser.add_argument(
        "--force", action="store_true", help="overwrite copies the student has written in"
    )
    args = parser.parse_args(argv)
    for path, action in write_copies(
        Path(args.out), [Path(p) for p in args.notebooks] or None, args.force
    ):
        print(f"{path}: {action}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
