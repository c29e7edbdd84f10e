"""Lesson 01's committed outputs: the live models below their simple baselines, and the figure's
blanks left for the student."""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "01_feedforward.ipynb"


def _stdout():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"]
             if c["cell_type"] == "code" and "your_work(" not in "".join(c["source"])]
    return ["".join(o["text"]) for c in cells for o in c["outputs"] if o.get("name") == "stdout"]


def test_the_live_models_beat_their_simple_baselines():
    text = "\n".join(_stdout())
    mlp = re.search(r"your MLP after [\d,]+ steps .*?held-out ([\d.]+) nats; topic shares\s+"
                    r"\(ignores\s+the\s+text\)\s+([\d.]+)", text, re.S)
    lm = re.search(r"your language model after [\d,]+ steps .*?held-out ([\d.]+) nats/token; "
                   r"unigram\s+\(no\s+context\)\s+([\d.]+)", text, re.S)
    assert mlp and float(mlp.group(1)) < 0.1 * float(mlp.group(2))
    assert lm and float(lm.group(1)) < float(lm.group(2)) - 0.3


def test_the_figure_leaves_the_student_s_step_blank():
    svg = (ROOT / "notebooks" / "figures" / "01_mlp_graph.svg").read_text(encoding="utf-8")
    assert svg.count(">?<") + svg.count("= ?") >= 5 and "-0.51" not in svg and "−0.51" not in svg
