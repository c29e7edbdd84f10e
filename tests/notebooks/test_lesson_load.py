"""A lesson a student can finish in the time it states: at most 4,000 words of open prose (the
rest folded), at most 12 visible claim lines (the others run silently), and a closing section that
lists what the student wrote and where it ran."""
from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_open_prose_and_visible_claims_are_within_the_load(path):
    nb = load(path)
    n = open_prose_words(nb)
    assert n <= MAX_OPEN_WORDS, f"{path.name}: {n} words of open prose (at most {MAX_OPEN_WORDS}; fold evidence)"
    claims = visible_claims(nb)
    assert len(claims) <= MAX_VISIBLE_CLAIMS, \
        f"{path.name}: {len(claims)} visible claims (at most {MAX_VISIBLE_CLAIMS}; use show=False):\n" + \
        "\n".join(claims)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_closing_section_lists_the_student_s_work(path):
    cells = code_cells(load(path))
    assert any("your_work(" in source(c) for c in cells[-4:]), \
        f"{path.name}: the closing section must call your_work(EXERCISES) (what you wrote, where it ran)"
