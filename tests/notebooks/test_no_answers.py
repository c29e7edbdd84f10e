"""No answer before the student's own passes: no line of an exercise's reference code (or of
what it forbids) and no experiment's answer appears in a lesson's outputs or markdown."""
import ast
import html
import importlib
import inspect
import re
import textwrap

import pytest

from helpers.exercises import ExperimentExercise, FunctionExercise
from tests.lesson_text import NOTEBOOKS, code_cells, load, markdown_cells, source

IDS = [p.stem for p in NOTEBOOKS]
SKIP_START = ("def ", "class ", "@", "raise ", "import ", "from ", "return self", "#",
              "super().__init__")
MIN_CHARS = 24


def _normal(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip()


def _docstring_lines(code: str) -> set[int]:
    lines = set()
    for node in ast.walk(ast.parse(code)):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
            lines |= set(range(first.lineno, first.end_lineno + 1))
    return lines


def code_lines(obj) -> set[str]:
    """The substantive lines of ``obj``'s source: no signatures, docstrings, comments or imports."""
    obj = getattr(obj, "__func__", obj)
    try:
        code = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return set()
    skip = _docstring_lines(code)
    out = set()
    for i, line in enumerate(code.splitlines(), 1):
        text = _normal(line.split("  #")[0])
        if i not in skip and len(text) >= MIN_CHARS and not text.startswith(SKIP_START):
            out.add(text)
    return out


def answers(lesson: str) -> tuple[set[str], set[str]]:
    """(reference code lines, experiment answers as printed) of the lesson's exercises."""
    module = importlib.import_module(f"helpers.exercises.lesson{lesson}")
    lines, numbers = set(), set()
    for ex in module.EXERCISES:
        if isinstance(ex, FunctionExercise):
            for obj in ex.forbidden:
                lines |= code_lines(obj)
        elif isinstance(ex, ExperimentExercise) and ex.choices is None:
            try:
                value = float(ex.right_answer())
            except Exception:
                continue
            if value != round(value):
                numbers |= {f"{value:.3g}", f"{value:.4g}"} - {f"{round(value, 1):g}"}
    return lines, {n for n in numbers if len(n.replace("-", "").replace(".", "").lstrip("0")) >= 3}


def shown_text(nb: dict) -> list[str]:
    """Every line a reader sees besides the code cells' sources: markdown and outputs."""
    texts = [source(c) for c in markdown_cells(nb)]
    for cell in code_cells(nb):
        for out in cell.get("outputs", []):
            if "text" in out:
                texts.append(source({"source": out["text"]}))
            for kind, value in out.get("data", {}).items():
                if kind in ("text/plain", "text/markdown"):
                    texts.append(source({"source": value}))
                elif kind == "text/html":
                    texts.append(html.unescape(re.sub(r"<[^>]+>", "", source({"source": value}))))
    return [_normal(line) for text in texts for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_reference_line_or_experiment_answer_is_shown(path):
    lines, numbers = answers(path.stem[:2])
    shown = shown_text(load(path))
    leaked = sorted({ref for ref in lines for line in shown if ref in line})
    assert not leaked, (f"{path.name} shows lines of an exercise's reference code before the "
                        "student's answer passes:\n  " + "\n  ".join(leaked[:10]))
    number = (re.compile(r"(?<![\d.])(" + "|".join(map(re.escape, numbers)) + r")(?![\d])")
              if numbers else None)
    found = sorted({m.group(1) for line in shown
                    for m in ([number.search(line)] if number else []) if m})
    assert not found, f"{path.name} prints an experiment's answer: {found}"


def test_the_leak_finder_finds_a_shown_reference():
    from helpers.lib.layers import softmax
    lines = code_lines(softmax)
    assert lines and all(len(line) >= MIN_CHARS for line in lines)
    shown = [_normal(line) for line in inspect.getsource(softmax).splitlines()]
    assert any(ref in line for ref in lines for line in shown)
