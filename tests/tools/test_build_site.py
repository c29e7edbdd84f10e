"""tools/build_site.py (``make site``): what it reads from a lesson and leaves out, formulas as
MathML (every committed one), and a real Sphinx build of a small course read back."""
import base64
import copy
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.lesson_text import NOTEBOOKS as LESSONS
from tests.lesson_text import SOLUTIONS, load, markdown_cells, source
from tools import site_check

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build_site = _load("build_site", ROOT / "tools" / "build_site.py")
mathml = _load("mathml", ROOT / "tools" / "site" / "mathml.py")
NOTEBOOKS = LESSONS + sorted(SOLUTIONS.glob("*.ipynb"))
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73000000164944415478"
    "9c63f8cfc0f09f8181e13f03c37f0606008f1f0ffd1b6f0a5f0000000049454e44ae426082")).decode()


def md(text, **meta):
    return {"cell_type": "markdown", "metadata": meta, "source": text}


def code(text, outputs=(), tags=()):
    return {"cell_type": "code", "execution_count": 1, "outputs": list(outputs), "source": text,
            "metadata": {"tags": list(tags)} if tags else {}}


def notebook(cells):
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5}


FIRST = ("# 01 · A small lesson\n\n**Time:** running it takes about 1 minute; working through it, "
         "about 2 hours.\n")


def small_lesson() -> dict:
    image = f'<img src="data:image/png;base64,{PNG}" alt="an explorer">'
    fallback = {"output_type": "display_data", "metadata": {}, "data": {
        "text/html": f'<div class="course-explorer-fallback"><b>An explorer</b><br>{image}</div>',
        "image/png": PNG, "text/plain": "An explorer"}}
    view = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    widget = {"output_type": "display_data", "metadata": {}, "data": {
        "application/vnd.jupyter.widget-view+json": view,
        "text/plain": "(above: the explorer's first view; run the notebook to move its controls)"}}
    long_line = {"output_type": "stream", "name": "stdout", "text": "word " * 60 + "\n"}
    return notebook([
        md(FIRST),
        md('<a id="the-idea"></a>\n\n## The idea\n\nThe loss is $L = -\\log p$ and\n\n'
           "$$\\frac{\\partial L}{\\partial z} = p - y,$$\n\n"
           "![A two-box diagram](figures/01_boxes.svg)\n\n"
           "<details><summary>The evidence</summary>\n\n"
           "It holds for $\\arg\\max_i p_i$ too.\n\n</details>\n"),
        code("explorer", [fallback, widget]),
        code("print('word ' * 60)", [long_line]),
        code("def softmax_solution(z):\n    return z", tags=["solution"]),
        md("See [the idea](01_small.ipynb#the-idea)."),
    ])


def small_course(tmp_path: Path) -> tuple[list[Path], list[Path]]:
    (tmp_path / "notebooks" / "figures").mkdir(parents=True)
    (tmp_path / "solutions").mkdir()
    (tmp_path / "notebooks" / "figures" / "01_boxes.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><title>boxes</title>'
        '<rect width="20" height="20" fill="#0072B2"/></svg>\n', encoding="utf-8")
    lesson = tmp_path / "notebooks" / "01_small.ipynb"
    lesson.write_text(json.dumps(small_lesson()), encoding="utf-8")
    solution = tmp_path / "solutions" / "01_small_solutions.ipynb"
    cells = [md("# Solutions of lesson 01"),
             code("def softmax_solution(z):\n    return z", tags=["solution"])]
    solution.write_text(json.dumps(notebook(cells)), encoding="utf-8")
    return [lesson], [solution]


# ---------------------------------------------------------------- what the builder reads
LESSON = build_site.Lesson("01", "01_small", "A small lesson", "about 1 minute", "about 2 hours")


def test_lesson_info_reads_the_title_and_both_times_or_says_they_are_not_stated(tmp_path):
    assert build_site.lesson_info(tmp_path / "01_small.ipynb", small_lesson()) == LESSON
    nb = notebook([md("# 02 · Older\n\n**Run time**: Under a minute on a 2-core laptop.\n")])
    info = build_site.lesson_info(tmp_path / "02_older.ipynb", nb)
    assert (info.run, info.work) == (build_site.NOT_STATED, build_site.NOT_STATED)


@pytest.mark.parametrize("name, nb, message", [
    ("lesson.ipynb", notebook([md(FIRST)]), "named NN_topic.ipynb"),
    ("01_small.ipynb", notebook([code("x = 1")]),
     "first cell must be markdown starting with '# 01 · Title'"),
    ("01_small.ipynb", notebook([md("Some text, no heading")]), "first cell must be markdown"),
])
def test_a_lesson_the_site_cannot_show_is_a_clear_error(tmp_path, name, nb, message):
    with pytest.raises(build_site.SiteError, match=re.escape(message)):
        build_site.lesson_info(tmp_path / name, nb)


def test_a_file_that_is_not_a_notebook_or_no_lesson_or_no_package_is_a_clear_error(
        tmp_path, monkeypatch):
    bad = tmp_path / "01_bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(build_site.SiteError, match="01_bad.ipynb: not a readable notebook"):
        build_site.load(bad)
    with pytest.raises(build_site.SiteError, match="no lesson to build"):
        build_site.write_source(tmp_path / "src", [], [])
    real = build_site.importlib.util.find_spec
    monkeypatch.setattr(build_site.importlib.util, "find_spec",
                        lambda name: None if name == "myst_nb" else real(name))
    with pytest.raises(build_site.SiteError, match=r"missing \(myst_nb\): run `make setup`"):
        build_site.sphinx(tmp_path, tmp_path / "out", strict=True)


def test_the_student_page_drops_solutions_and_turns_anchors_into_targets():
    page = build_site.student_page(small_lesson())
    sources = [c["source"] for c in page["cells"]]
    assert not any("_solution" in s for s in sources)
    assert len(page["cells"]) == len(small_lesson()["cells"]) - 1
    assert "(the-idea)=\n" in sources[1] and "<a id" not in sources[1]


def test_a_one_lesson_export_unlinks_the_lessons_it_does_not_hold():
    nb = notebook([md("See [how we compare](01_feedforward.ipynb#comparing-models) and "
                      "[this](05_tfidf_svd.ipynb).")])
    out = build_site.student_page(copy.deepcopy(nb), present={"05_tfidf_svd"})
    assert out["cells"][0]["source"] == ("See how we compare (lesson 01) and "
                                         "[this](05_tfidf_svd.ipynb).")


def test_the_index_holds_the_lesson_table_and_links_the_instructors_pages():
    text = build_site.index_page([LESSON])
    row = "| 01 | [A small lesson](notebooks/01_small.ipynb) | about 1 minute | about 2 hours |"
    assert row in text
    assert ":caption: Lessons" in text and "notebooks/01_small" in text
    assert "](solutions/index.md)" in text and "solutions/index\n" not in text   # no toctree


# ---------------------------------------------------------------- formulas
def test_formulas_become_mathml():
    out = mathml.to_mathml(r"\frac{\partial L}{\partial z}", display=True)
    assert out.startswith("<math") and 'display="block"' in out and "<mfrac>" in out
    assert "\\" not in re.sub(r"<[^>]+>", "", out)
    argmax = mathml.to_mathml(r"\arg\max_d f(d)")
    assert "arg" in argmax and "\\arg" not in argmax


@pytest.mark.parametrize("tex", [r"W \mathrel{+}= x", "a += b", "a -= b"])
def test_an_update_operator_is_one_operator(tex):
    out = mathml.to_mathml(tex)
    assert re.search(r"<mo>&#x0(002B|2212|002D);=</mo>", out), out
    assert "<mo>&#x0003D;</mo>" not in out       # not a separate "=", which browsers space apart


@pytest.mark.parametrize("tex, message", [("", "empty formula"),
                                          (r"\notacommand{x}", "would show the TeX command")])
def test_a_formula_that_cannot_be_shown_stops_the_build(tex, message):
    with pytest.raises(mathml.MathMLError, match=message):
        mathml.to_mathml(tex)


MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$([^$\n]+?)\$", re.S)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_formula_of_the_committed_notebooks_converts(path):
    n = 0
    for c in markdown_cells(load(path)):
        for m in MATH.finditer(re.sub(r"`[^`]*`", "", source(c))):
            mathml.to_mathml(m.group(1) or m.group(2), display=bool(m.group(1)))
            n += 1
    assert n or "solutions" in path.parts, f"{path.name}: no formula found (the pattern is wrong?)"


# ---------------------------------------------------------------- a real build
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("course")
    lessons, solutions = small_course(tmp)
    source, out = tmp / "site-source", tmp / "site"
    build_site.write_source(source, lessons, solutions)
    build_site.sphinx(source, out, strict=True)
    return out


def _page(out: Path, rel: str) -> BeautifulSoup:
    return BeautifulSoup((out / rel).read_text(encoding="utf-8"), "html.parser")


def test_the_build_shows_formulas_as_mathml_and_no_tex(built):
    page = _page(built, "notebooks/01_small.html")
    article = page.find("article")
    assert len(article.find_all("math")) == 3 and article.find("math", attrs={"display": "block"})
    for tag in article.find_all(["math", "pre", "code"]):
        tag.decompose()
    assert site_check.raw_tex(article.get_text()) == []
    assert not page.find("script", src=re.compile("mathjax", re.I))     # no MathJax at all


def test_the_build_keeps_details_folded_the_diagram_and_the_explorer_picture(built):
    page = _page(built, "notebooks/01_small.html")
    details = page.find("details")
    assert details is not None and not details.has_attr("open")
    assert details.find("summary").get_text() == "The evidence"
    assert details.find("math") is not None                    # markdown inside is rendered
    svg = page.find("img", alt="A two-box diagram")
    assert svg is not None and (built / "notebooks" / svg["src"]).resolve().is_file()
    fallback = page.find(class_="course-explorer-fallback")
    assert fallback.find("img")["src"].startswith("data:image/png")
    assert "run the notebook to move its controls" in page.get_text()
    assert not [w for w in ("widget-view", "cdn.jsdelivr", "require.js") if w in str(page)]


def test_the_build_leaves_out_the_solution_and_the_instructors_section_has_it(built):
    lesson = _page(built, "notebooks/01_small.html")
    assert site_check.solution_traces(lesson.get_text()) == []
    solutions = _page(built, "solutions/01_small_solutions.html")
    assert solutions.find(class_="tag_solution") is not None
    index = _page(built, "index.html")
    assert "For instructors" in index.get_text()
    assert index.find("a", href="notebooks/01_small.html") is not None


def test_the_build_links_anchors_prev_next_and_search(built):
    page = _page(built, "notebooks/01_small.html")
    link = page.find("a", string=re.compile("the idea"))
    path, _, fragment = link["href"].partition("#")
    assert path in ("", "01_small.html") and fragment, link["href"]
    assert page.find(id=fragment) is not None, f"the link's target #{fragment} is not on the page"
    assert page.find("a", class_="prev-page")["href"] == "../index.html"
    assert page.find("a", class_="next-page") is None       # the last lesson leads nowhere
    assert site_check.searchable_pages(built) == {"index", "notebooks/01_small"}   # no solutions
