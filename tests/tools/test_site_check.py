"""The site check's judgements (tools/site_check.py) that need no browser: raw TeX, solution
traces, the diagrams a notebook shows, broken links."""
import json

from tools import site_check


def test_raw_tex_is_found_in_prose():
    assert site_check.raw_tex("the loss $L = -\\log p$ falls") == ["$L = -\\log p$"]
    assert site_check.raw_tex("a \\frac{a}{b} left") == ["\\frac"]
    assert site_check.raw_tex("costs US$5 and 10$ and nothing else") == []
    assert site_check.raw_tex("plain words") == []


def test_solution_traces_are_found():
    assert site_check.solution_traces("def adam_step_solution(p):") == ["def adam_step_solution"]
    assert site_check.solution_traces("The reference solution is below") == ["reference solution"]
    assert site_check.solution_traces("a solution of the exercise you write") == []


def test_the_diagrams_a_notebook_shows_are_listed(tmp_path):
    path = tmp_path / "01_small.ipynb"
    cells = [{"cell_type": "markdown", "metadata": {},
              "source": "![A diagram](figures/01_boxes.svg)"},
             {"cell_type": "code", "metadata": {}, "outputs": [], "source": "![no](figures/x.svg)"}]
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert site_check.diagrams_of(path) == ["01_boxes.svg"]


def test_broken_links_are_found(tmp_path):
    (tmp_path / "notebooks").mkdir()
    for name in ("index.html", "notebooks/01_a.html", "notebooks/02_b.html"):
        (tmp_path / name).write_text("<html></html>", encoding="utf-8")
    root = "http://127.0.0.1:9/"
    links = {"index.html": {root + "notebooks/01_a.html#intro", root + "notebooks/03_c.html",
                            "https://example.org/x", root + "notebooks/02_b.html#later",
                            root + "notebooks/01_a.html#nowhere"}}
    ids = {"index.html": set(), "notebooks/01_a.html": {"intro"}, "notebooks/02_b.html": set()}
    broken = site_check.broken_links(links, ids, tmp_path, root)
    assert broken == [f"index.html: {root}notebooks/01_a.html#nowhere "
                      "(no element with id 'nowhere')",
                      f"index.html: {root}notebooks/02_b.html#later (no element with id 'later')",
                      f"index.html: {root}notebooks/03_c.html (no such file)"]
    assert site_check.page_of(root, root) == ("index.html", "")
