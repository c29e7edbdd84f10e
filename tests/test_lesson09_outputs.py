"""Lesson 09's committed outputs read well where no kernel runs: no printed line longer than an HTML
export shows without wrapping it mid-word (about 100 characters; issue 31), the comparison table fits,
and the restricted analogy test agrees with gensim's as the lesson says."""
from __future__ import annotations

import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "09_evaluation.ipynb"
MAX_LINE = 105


def _streams():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for c in nb["cells"]:
        for o in c.get("outputs", []) if c["cell_type"] == "code" else []:
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                yield c.get("id"), "".join(o["text"])


def test_no_printed_line_is_longer_than_an_export_shows():
    long = [(cid, len(line), line[:60]) for cid, text in _streams() for line in text.splitlines()
            if len(line) > MAX_LINE and not line.startswith(("loaded ", "count-vectors-validated"))]
    assert not long, f"printed lines over {MAX_LINE} characters (cell, length, start): {long}"


def test_the_lesson_states_what_its_cells_checked():
    text = "\n".join(t for _, t in _streams())
    for sentence in ("gensim (restrict_vocab=5000) counts the same right answers, category by category",
                     "refitted here, every split's accuracy is exactly the one recorded when the vectors were trained",
                     "the shipped cell reproduces"):
        assert f"✓ {sentence}" in text, sentence
    assert "✗" not in text
