"""The structure and hygiene of every lesson notebook (CONTRIBUTING.md has the conventions): its
own diagram, three graded exercises with solutions, three "Try this" prompts, Further reading with
years, an explorer, prose and claim limits, a closing ``your_work``; per lesson and solutions
notebook, a clean top-to-bottom run, no widget state, under 3 MB.
"""
import json
import re
from pathlib import Path

import pytest

from tests.lesson_text import (
    MAX_OPEN_WORDS,
    MAX_VISIBLE_CLAIMS,
    NOTEBOOKS,
    ROOT,
    SOLUTIONS,
    TRY_THIS,
    code_cells,
    load,
    markdown_cells,
    open_prose_words,
    solutions_path,
    source,
    tags,
    visible_claims,
)

IDS = [p.stem for p in NOTEBOOKS]
LESSONS = ["01_feedforward", "02_rnn_bptt", "03_lstm_gates", "04_self_attention", "05_tfidf_svd",
           "06_pmi", "07_word2vec", "08_glove_fasttext", "09_evaluation", "10_contextual"]
EXERCISE = re.compile(r"(?m)^#{2,4} Exercise (\d+) · (warm-up|core|experiment)\b")
REFERENCE = re.compile(r"(?m)^\s*[-*] .*\b(19|20)\d\d[a-z]?\b")


def test_only_lesson_notebooks_and_their_solutions():
    assert [p.stem for p in sorted((ROOT / "notebooks").glob("*.ipynb"))] == LESSONS
    assert not list((ROOT / "notebooks").glob(".ipynb_checkpoints/*"))
    lessons = {solutions_path(p).name for p in NOTEBOOKS}
    for sol in SOLUTIONS.glob("*.ipynb"):
        assert sol.name in lessons, f"{sol.name} is not named after a lesson"


def lesson_problems(path: Path, sol: Path | None = None) -> list[str]:
    """What the lesson at ``path`` (solutions at ``sol``, by default its own) lacks of the
    structure above: empty when it has everything."""
    nb = load(path)
    markdown = [source(c) for c in markdown_cells(nb)]
    text, number = "\n".join(markdown), path.stem[:2]
    problems = []
    if not re.search(rf"\]\(figures/{number}_[\w-]+\.svg\)", text):
        problems.append(f"no diagram of lesson {number} (`![…](figures/{number}_….svg)`)")
    steps = EXERCISE.findall(text)
    if len(steps) < 3 or {kind for _, kind in steps} != {"warm-up", "core", "experiment"}:
        problems.append("exercises: need ≥ 3 headings 'Exercise N · warm-up|core|experiment' "
                        f"with all three steps, found {steps}")
    sol = sol or solutions_path(path)
    sol_code = code_cells(load(sol)) if sol.exists() else []
    n_sol = sum(bool(re.search(r"(?m)^assert check_\w+\(", source(c))) for c in sol_code)
    n_ex = sum("exercise" in tags(c) for c in code_cells(nb))
    if n_ex < 3 or n_sol < 3:
        problems.append("need ≥ 3 code cells tagged 'exercise' and ≥ 3 solutions that assert "
                        f"their checker, found {n_ex} and {n_sol}")
    if len(TRY_THIS.findall(text)) < 3:
        problems.append("need ≥ 3 '> **Try this:**' prompts")
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_lesson_structure(path):
    problems = lesson_problems(path)
    assert not problems, f"{path.name}:\n  - " + "\n  - ".join(problems)


def test_the_structure_check_finds_what_is_missing(tmp_path):
    def cell(kind, text, tags=()):
        c = {"cell_type": kind, "metadata": {"tags": list(tags)}, "source": text}
        return c | ({"outputs": [], "execution_count": None} if kind == "code" else {})

    good, sol = [cell("markdown", "# 07 · x\n![d](figures/07_a.svg)")], []
    for i, kind in enumerate(["warm-up", "core", "experiment"], 1):
        good += [cell("markdown", f"### Exercise {i} · {kind} — t\n> **Try this:** q?"),
                 cell("code", "raise NotImplementedError", ["exercise"])]
        sol.append(cell("code", f"assert check_{i}(x_solution)"))
    good.append(cell("markdown", "## Further reading\n- A 2013. x\n- B 2014. y\n- C 1997. z"))
    path, sol_path = tmp_path / "07_x.ipynb", tmp_path / "07_x_solutions.ipynb"
    sol_path.write_text(json.dumps({"cells": sol}), encoding="utf-8")
    path.write_text(json.dumps({"cells": good}), encoding="utf-8")
    assert lesson_problems(path, sol_path) == []
    broken = [c for c in good if not re.search("figures/|core|Further", source(c))]
    path.write_text(json.dumps({"cells": broken}), encoding="utf-8")
    problems = "\n".join(lesson_problems(path, sol_path))
    assert "no diagram" in problems and "all three steps" in problems
    assert "'> **Try this:**' prompts" in problems and "no 'Further reading'" in problems


@pytest.mark.parametrize("path", NOTEBOOKS + sorted(SOLUTIONS.glob("*.ipynb")),
                         ids=IDS + [p.stem for p in sorted(SOLUTIONS.glob("*.ipynb"))])
def test_a_clean_committed_run(path):
    nb = load(path)
    code = code_cells(nb)
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: execution counts {counts}"
    assert not any(o["output_type"] == "error" for c in code for o in c.get("outputs", [])), \
        f"{path.name}: a stored output is an error"
    assert path.stat().st_size < 3_000_000, f"{path.name} is {path.stat().st_size / 1e6:.1f} MB"
    assert not any("sys.path" in source(c) for c in code), \
        f"{path.name}: imports helpers through sys.path instead of the installed package"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_an_explorer_an_exercise_stub_and_the_closing_section(path):
    code = [source(c) for c in code_cells(load(path))]
    # an Explorer built in the lesson, or a live training's "train on" explorer
    assert any("Explorer(" in s or ".explorer(" in s for s in code), f"{path.name}: no explorer"
    assert any("raise NotImplementedError" in s for s in code), f"{path.name}: no exercise stub"
    assert any("your_work(" in s for s in code[-4:]), \
        f"{path.name}: the closing section must call your_work(EXERCISES)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_open_prose_and_visible_claims_are_within_the_load(path):
    nb = load(path)
    n = open_prose_words(nb)
    assert n <= MAX_OPEN_WORDS, \
        f"{path.name}: {n} words of open prose (at most {MAX_OPEN_WORDS}; fold evidence)"
    claims = visible_claims(nb)
    assert len(claims) <= MAX_VISIBLE_CLAIMS, (
        f"{path.name}: {len(claims)} visible claims (at most {MAX_VISIBLE_CLAIMS}; use "
        "show=False):\n" + "\n".join(claims))
