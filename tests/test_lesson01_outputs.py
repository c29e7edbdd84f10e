"""Lesson 01's committed outputs read well where no kernel runs: no printed line longer than an
HTML export shows without wrapping it mid-word (about 100 characters; issue 31), and the live
trainings' summaries are what the prose says of them."""
from __future__ import annotations

import json
import re
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "01_feedforward.ipynb"
MAX_LINE = 105


def _streams():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for i, c in enumerate(nb["cells"]):
        for o in c.get("outputs", []) if c["cell_type"] == "code" else []:
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                yield i, "".join(o["text"])


def test_no_printed_line_is_longer_than_an_export_shows():
    long = [(i, len(line), line[:60]) for i, text in _streams() for line in text.splitlines() if len(line) > MAX_LINE]
    assert not long, f"printed lines over {MAX_LINE} characters (cell, length, start): {long}"


def test_the_live_models_beat_their_simple_baselines():
    text = "\n".join(t for _, t in _streams())
    mlp = re.search(r"your MLP after [\d,]+ steps .*?held-out ([\d.]+) nats; topic shares \(ignores the text\) ([\d.]+)",
                    text, re.S)
    lm = re.search(r"your NumPy LM after [\d,]+ steps .*?held-out ([\d.]+) nats/token; unigram \(no context\) ([\d.]+)",
                   text, re.S)
    assert mlp and float(mlp.group(1)) < 0.1 * float(mlp.group(2)), "the MLP is far below the topic-share baseline"
    assert lm and float(lm.group(1)) < float(lm.group(2)) - 0.3, "the NumPy LM is well below the unigram model"
