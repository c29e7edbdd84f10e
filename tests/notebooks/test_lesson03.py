"""Lesson 03's prose gives away no answer that test_no_answers cannot see: the forget-bias
experiment's answer is a round number."""
import json
import re
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03_lstm_gates.ipynb"


def test_no_prose_gives_away_the_forget_bias_answer():
    for cell in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            assert not re.search(r"\bbias (?:of )?2(?:\.0)?\b|sigma\(2\)|σ\(2\)", text), text[:200]
