"""Lesson 01's committed outputs: the live models below their simple baselines, and the figure's
blanks left for the student."""
import re

from tests.lesson_text import NOTEBOOKS, ROOT, code_cells, load, output_text, source


def test_the_live_models_beat_their_simple_baselines():
    nb = load(next(p for p in NOTEBOOKS if p.name.startswith("01_")))
    text = "\n".join(output_text(c) for c in code_cells(nb) if "your_work(" not in source(c))
    mlp = re.search(r"your MLP after [\d,]+ steps .*?held-out ([\d.]+) nats; topic shares\s+"
                    r"\(ignores\s+the\s+text\)\s+([\d.]+)", text, re.S)
    lm = re.search(r"your language model after [\d,]+ steps .*?held-out ([\d.]+) nats/token; "
                   r"unigram\s+\(no\s+context\)\s+([\d.]+)", text, re.S)
    assert mlp and float(mlp.group(1)) < 0.1 * float(mlp.group(2))
    assert lm and float(lm.group(1)) < float(lm.group(2)) - 0.3


def test_the_figure_leaves_the_student_s_step_blank():
    svg = (ROOT / "notebooks" / "figures" / "01_mlp_graph.svg").read_text(encoding="utf-8")
    assert svg.count(">?<") + svg.count("= ?") >= 5 and "-0.51" not in svg and "−0.51" not in svg
