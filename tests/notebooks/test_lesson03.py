"""Lesson 03's prose gives away no answer that test_no_answers cannot see: the forget-bias
experiment's answer is a round number."""
import re

from tests.lesson_text import NOTEBOOKS, load, markdown_cells, source


def test_no_prose_gives_away_the_forget_bias_answer():
    for cell in markdown_cells(load(next(p for p in NOTEBOOKS if p.name.startswith("03_")))):
        text = source(cell)
        assert not re.search(r"\bbias (?:of )?2(?:\.0)?\b|sigma\(2\)|σ\(2\)", text), text[:200]
