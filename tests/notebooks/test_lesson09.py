"""Lesson 09's committed outputs: their printed lines fit an HTML export."""
import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "09_evaluation.ipynb"


def test_no_printed_line_is_longer_than_an_export_shows():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    framework = (
        "→ ",
        "The course's ",
        "exercise ",
        "Spearman ",
        "3Cos",
        "one entry ",
        "classifier",
    )
    long = [(c["id"], line[:60]) for c in nb["cells"] for o in c.get("outputs", [])
            if o.get("name") == "stdout" for line in "".join(o["text"]).splitlines()
            if len(line) > 105 and not line.startswith(framework)]    # not the framework's lines
    assert not long, f"printed lines over 105 characters (cell, start): {long}"
