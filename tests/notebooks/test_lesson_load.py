"""A lesson a student can finish in the time it states: at most 4,000 words of open prose (the
rest folded), at most 12 visible claim lines (the others run silently), and a closing section that
lists what the student wrote and where it ran."""
from __future__ import annotations

import pytest

from tests.lesson_status import pending_build
from tests.lesson_text import (
    MAX_OPEN_WORDS,
    MAX_VISIBLE_CLAIMS,
    NOTEBOOKS,
    code_cells,
    load,
    open_prose_words,
    source,
    visible_claims,
)

IDS = [p.stem for p in NOTEBOOKS]


def _skip(path):
    reason = pending_build(path.stem)
    if reason:
        pytest.skip(f"pending: {reason}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_open_prose_and_visible_claims_are_within_the_load(path):
    _skip(path)
    nb = load(path)
    n = open_prose_words(nb)
    assert n <= MAX_OPEN_WORDS, f"{path.name}: {n} words of open prose (at most {MAX_OPEN_WORDS}; fold evidence)"
    claims = visible_claims(nb)
    assert len(claims) <= MAX_VISIBLE_CLAIMS, \
        f"{path.name}: {len(claims)} visible claims (at most {MAX_VISIBLE_CLAIMS}; use show=False):\n" + \
        "\n".join(claims)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_closing_section_lists_the_student_s_work(path):
    _skip(path)
    cells = code_cells(load(path))
    assert any("your_work(" in source(c) for c in cells[-4:]), \
        f"{path.name}: the closing section must call your_work(EXERCISES) (what you wrote, where it ran)"


def _load_problems(path) -> list[str]:
    nb = load(path)
    problems = []
    if open_prose_words(nb) > MAX_OPEN_WORDS:
        problems.append("open prose")
    if len(visible_claims(nb)) > MAX_VISIBLE_CLAIMS:
        problems.append("visible claims")
    if not any("your_work(" in source(c) for c in code_cells(nb)[-4:]):
        problems.append("closing section")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_a_lesson_listed_as_pending_is_still_short_of_the_load_checks(path):
    """The pending list cannot outlive the work: a lesson that meets every check above leaves it."""
    if not pending_build(path.stem):
        pytest.skip("not pending")
    assert _load_problems(path), \
        f"{path.name} meets the load checks: remove it from tests/lesson_status.BUILD_PENDING"
