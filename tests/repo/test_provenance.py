"""Every public function and class of the library names the lesson and section that teach it
("lesson 03 §2"), and that lesson's notebook has that section."""
import ast
import json
import re
from pathlib import Path

import pytest

from tests.lesson_text import load, markdown_cells, source

ROOT = Path(__file__).resolve().parents[2]
LIB = sorted(p for p in (ROOT / "helpers" / "lib").glob("*.py") if p.name != "__init__.py")
PROVENANCE = re.compile(r"lesson (\d\d)(?:, section | §)(\d+(?:\.\d+)*)")


def public_objects(path: Path):
    """(name, line, docstring or None) of every public module-level function and class."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            doc = ast.get_docstring(node)
            yield node.name, node.lineno, doc


def notebook_sections(lesson: str, root: Path = ROOT) -> set[str]:
    """Section numbers of the lesson's notebook: 'N' for '## N ·', 'N.M' for '### N.M'."""
    (nb,) = (root / "notebooks").glob(f"{lesson}_*.ipynb")
    text = "\n".join(source(c) for c in markdown_cells(load(nb)))
    return set(re.findall(r"(?m)^##\s+(\d+)\s*·", text)
               + re.findall(r"(?m)^###\s+(\d+\.\d+)\b", text))


def provenance_problems(paths, root: Path = ROOT) -> list[str]:
    """Every public object of the modules ``paths`` without a valid back-reference to its lesson."""
    problems, sections = [], {}
    for path in paths:
        rel = path.relative_to(root).as_posix()
        for name, line, first in public_objects(path):
            where = f"{rel}:{line} {name}"
            if first is None:
                problems.append(f"{where}: no docstring")
                continue
            m = PROVENANCE.search(first)
            if not m:
                problems.append(f"{where}: the docstring does not say where it is taught "
                                "('lesson NN §S')")
                continue
            lesson, section = m.groups()
            if not list((root / "notebooks").glob(f"{lesson}_*.ipynb")):
                problems.append(f"{where}: names lesson {lesson}, which has no notebook")
                continue
            sections.setdefault(lesson, notebook_sections(lesson, root))
            if section not in sections[lesson]:
                known = sorted(sections[lesson], key=lambda s: [int(x) for x in s.split(".")])
                problems.append(f"{where}: names lesson {lesson}, section {section}; that "
                                f"notebook's sections are {known}")
    return problems


def test_library_modules_exist():
    assert len(LIB) > 20


@pytest.mark.parametrize("path", LIB, ids=[p.stem for p in LIB])
def test_every_public_object_names_where_it_is_taught(path):
    problems = provenance_problems([path])
    assert not problems, "\n".join(problems)


def test_the_check_catches_missing_and_wrong_provenance(tmp_path):
    lib = tmp_path / "helpers" / "lib"
    lib.mkdir(parents=True)
    (tmp_path / "notebooks").mkdir()
    cell = {"cell_type": "markdown", "source": ["## 2 · Build it\n", "### 2.1 A part"]}
    (tmp_path / "notebooks" / "03_demo.ipynb").write_text(json.dumps({"cells": [cell]}),
                                                          encoding="utf-8")
    (lib / "demo.py").write_text(
        'def ok():\n    """Fine. Taught in lesson 03, section 2.1."""\n\n'
        'def nodoc():\n    pass\n\n'
        'def short():\n    """Fine (lesson 03 §2)."""\n\n'
        'def vague():\n    """Does things."""\n\n'
        'def wrong_section():\n    """Fine. Taught in lesson 03, section 4."""\n\n'
        'def wrong_lesson():\n    """Fine. Taught in lesson 11, section 1."""\n\n'
        'def _private():\n    pass\n', encoding="utf-8")
    problems = provenance_problems([lib / "demo.py"], root=tmp_path)
    text = "\n".join(problems)
    assert len(problems) == 4, text
    assert "nodoc: no docstring" in text
    assert "vague: the docstring does not say where it is taught" in text
    assert "wrong_section: names lesson 03, section 4; that notebook's sections are ['2', '2.1']" \
        in text
    assert "wrong_lesson: names lesson 11, which has no notebook" in text
