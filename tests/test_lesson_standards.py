"""The structure every lesson must have (issues 16, 17, 18; CONTRIBUTING.md has the conventions).

Per lesson notebook:
- at least one diagram from ``notebooks/figures/`` of its own lesson, referenced from markdown;
- at least three exercises in graded steps — markdown headings
  ``### Exercise N · warm-up|core|experiment — title`` with every step present — and at least three
  code cells tagged ``exercise``, with at least three solutions that assert their checker in
  ``solutions/NN_topic_solutions.ipynb`` (or, in a lesson not yet converted, three collapsed cells
  tagged ``solution``);
- at least three "Try this" prompts (a markdown line starting ``> **Try this:**``);
- a "Further reading" section at the end with at least three references (each with a year);
- its first cell states its times in one form, on a line of its own: ``**Time:** running it takes
  about N minutes; working through it, about H hours.`` (the README and the site read it).

"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


EXERCISE = re.compile(r"(?m)^#{2,4} Exercise (\d+) · (warm-up|core|experiment)\b")
TRY_THIS = re.compile(r"(?m)^> \*\*Try this:\*\*\s*\S")
REFERENCE = re.compile(r"(?m)^\s*[-*] .*\b(19|20)\d\d[a-z]?\b")


def _load(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return nb, markdown, code


def _tagged(code, tag):
    return [c for c in code if tag in c.get("metadata", {}).get("tags", [])]


def lesson_problems(path: Path) -> list[str]:
    """What ``path`` lacks of the structure above (empty when it has everything)."""
    nb, markdown, code = _load(path)
    text = "\n".join(markdown)
    number = path.stem[:2]
    problems = []
    figures = re.findall(rf"\]\(figures/({number}_[\w-]+\.svg)\)", text)
    if not figures:
        problems.append(f"no diagram of lesson {number} (`![…](figures/{number}_….svg)`) in the markdown")
    steps = EXERCISE.findall(text)
    kinds = {kind for _, kind in steps}
    if len(steps) < 3 or kinds != {"warm-up", "core", "experiment"}:
        problems.append(f"exercises: need ≥ 3 headings 'Exercise N · warm-up|core|experiment' with all "
                        f"three steps, found {steps}")
    solutions = path.parents[1] / "solutions" / f"{path.stem}_solutions.ipynb"
    if solutions.exists():   # the student edition: the solutions live apart
        sol_code = [c for c in json.loads(solutions.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        n_sol = sum(1 for c in sol_code if re.search(r"(?m)^assert check_\w+\(", "".join(c["source"])))
    else:                    # a lesson not yet converted: collapsed solution cells in the lesson
        n_sol = len(_tagged(code, "solution"))
        for c in _tagged(code, "solution"):
            if not c["metadata"].get("jupyter", {}).get("source_hidden"):
                problems.append("a solution cell is not collapsed (metadata.jupyter.source_hidden)")
                break
    n_ex = len(_tagged(code, "exercise"))
    if n_ex < 3 or n_sol < 3:
        problems.append(f"need ≥ 3 code cells tagged 'exercise' and ≥ 3 solutions that assert their checker, "
                        f"found {n_ex} and {n_sol}")
    n_try = len(TRY_THIS.findall(text))
    if n_try < 3:
        problems.append(f"need ≥ 3 '> **Try this:**' prompts, found {n_try}")
    reading = [i for i, m in enumerate(markdown) if re.search(r"(?m)^#{1,3} .*Further reading", m)]
    if not reading:
        problems.append("no 'Further reading' section")
    else:
        refs = REFERENCE.findall("\n".join(markdown[reading[-1]:]))
        if len(refs) < 3:
            problems.append(f"'Further reading' lists {len(refs)} references with a year; need ≥ 3")
        if reading[-1] < len(markdown) - 2:
            problems.append("'Further reading' is not at the end of the lesson")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_lesson_structure(path):
    problems = lesson_problems(path)
    assert not problems, f"{path.name}:\n  - " + "\n  - ".join(problems)


def test_the_checker_finds_what_is_missing(tmp_path):
    def cell(kind, text, tags=(), hidden=False):
        c = {"cell_type": kind, "metadata": {"tags": list(tags)}, "source": text}
        if kind == "code":
            c.update(outputs=[], execution_count=None)
            if hidden:
                c["metadata"]["jupyter"] = {"source_hidden": True}
        return c

    good = [cell("markdown", "# 07 · x\n![d](figures/07_a.svg)")]
    for i, kind in enumerate(["warm-up", "core", "experiment"], 1):
        good += [cell("markdown", f"### Exercise {i} · {kind} — t\n> **Try this:** q?"),
                 cell("code", "raise NotImplementedError", ["exercise"]),
                 cell("code", "assert check_x(x_solution)", ["solution"], hidden=True)]
    good.append(cell("markdown", "## Further reading\n- A 2013. x\n- B 2014. y\n- C 1997. z"))
    path = tmp_path / "07_x.ipynb"
    path.write_text(json.dumps({"cells": good, "metadata": {}}), encoding="utf-8")
    assert lesson_problems(path) == []
    broken = [c for c in good if "figures/" not in "".join(c["source"]) and "core" not in "".join(c["source"])]
    path.write_text(json.dumps({"cells": broken, "metadata": {}}), encoding="utf-8")
    problems = "\n".join(lesson_problems(path))
    assert "no diagram" in problems and "all three steps" in problems


TIME_LINE = re.compile(r"(?m)^\*\*Time:\*\* running it takes (?:about|under) [^;.\n]+; working through it, "
                       r"about [^.\n]+\.")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_first_cell_states_the_times_in_the_course_form(path):
    nb, markdown, _ = _load(path)
    first = "".join(nb["cells"][0]["source"])
    assert len(TIME_LINE.findall(first)) == 1, (
        f"{path.name}: the first cell needs one line '**Time:** running it takes about N minutes; "
        "working through it, about H hours.'")
    other = re.findall(r"(?i)\*\*(?:run time|time)\b[^*]*\*\*|^running it takes", first, re.M)
    assert other == ["**Time:**"], f"{path.name}: the times are stated in another form too: {other}"
