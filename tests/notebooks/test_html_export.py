"""What a committed notebook shows where no kernel runs (GitHub, nbviewer, an HTML export): no
dead widget or progress bars saved, each explorer's static fallback saved (timestamps and redraws:
tests/tools/test_clean_notebooks.py); and in ``jupyter nbconvert --to html --embed-images``,
every diagram embedded, an image for every explorer, no ``VBox(`` or dead progress-bar text. (The
fallback itself: tests/helpers/infra/test_widgets.py; a real browser: ``make browser-check``.)
"""
import base64
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from nbconvert import HTMLExporter
from PIL import Image
from traitlets.config import Config

from helpers.infra.plotting import new_figure
from helpers.infra.widgets import FALLBACK_CLASS, WIDGET_NOTE, Explorer, slider
from tests.lesson_text import NOTEBOOKS, code_cells, load, source

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

# the first state of a tqdm bar: "0step [00:00, ?step/s]", "  0%|   | 0/4 [00:00<?, ?it/s]"
DEAD_BAR = re.compile(r"(?<![\d.])0(\.00)?[a-zA-Z]* \[00:00|(?<!\d)0%\|")
DIAGRAM = re.compile(r"!\[[^\]]*\]\((figures/[^)\s]+)\)")


def _text(value) -> str:
    return source({"source": value})


def _explorers_built(cell: dict) -> int:
    return _text(cell["source"]).count("Explorer(")


def _is_fallback(output: dict) -> bool:
    data = output.get("data", {})
    return FALLBACK_CLASS in _text(data.get("text/html", "")) and bool(data.get("image/png"))


def saved_output_problems(nb: dict) -> list[str]:
    """What in a saved notebook (a dict) breaks the rules of this module's docstring."""
    problems = []
    for k, cell in enumerate(code_cells(nb), 1):
        where = f"code cell {k} (execution count {cell.get('execution_count')})"
        outputs = cell.get("outputs", [])
        for out in outputs:
            if out.get("output_type") == "stream":
                text = _text(out["text"])
                if DEAD_BAR.search(text):
                    problems.append(f"{where}: a progress bar's first state "
                                    f"{DEAD_BAR.search(text).group(0)!r}")
            data = out.get("data", {})
            plain = _text(data.get("text/plain", ""))
            if WIDGET_VIEW in data and plain != WIDGET_NOTE:
                problems.append(f"{where}: a widget other than an Explorer is saved "
                                f"({plain[:60]!r}); it shows as dead text outside JupyterLab "
                                "(progress bars: helpers.infra.progress.progress_bar)")
        n = _explorers_built(cell)
        fallbacks = sum(map(_is_fallback, outputs))
        if n and fallbacks < n:
            problems.append(f"{where}: builds {n} explorer(s) but holds {fallbacks} static "
                            "fallback(s)")
    return problems


def export_html(path: Path) -> str:
    """The notebook as ``jupyter nbconvert --to html --embed-images`` writes it, in this process."""
    exporter = HTMLExporter(config=Config({"HTMLExporter": {"embed_images": True}}))
    return exporter.from_filename(str(path))[0]


def test_the_in_process_export_is_the_command_line_one():
    path = NOTEBOOKS[0]
    done = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html",
                           "--embed-images", "--stdout", str(path)],
                          capture_output=True, text=True, cwd=path.parent, timeout=300)
    assert done.returncode == 0, f"nbconvert failed on {path.name}:\n{done.stderr[-2000:]}"
    assert done.stdout.rstrip("\n") == export_html(path).rstrip("\n")


def _png_size(src: str) -> tuple[int, int]:
    head, _, b64 = src.partition(",")
    assert head == "data:image/png;base64", f"not an inline PNG: {src[:40]!r}"
    return Image.open(io.BytesIO(base64.b64decode(b64))).size


def html_export_problems(nb: dict, page: str) -> list[str]:
    """What the HTML export ``page`` of ``nb`` fails to show (see the module docstring)."""
    problems = []
    soup = BeautifulSoup(page, "html.parser")
    text = soup.get_text(" ")
    for dead in ("VBox(", "HBox("):
        if dead in text:
            problems.append(f"the export shows {dead!r} (a widget without a static fallback)")
    if DEAD_BAR.search(text):
        problems.append(f"the export shows a dead progress bar {DEAD_BAR.search(text).group(0)!r}")
    wanted = [m for c in nb["cells"] if c["cell_type"] == "markdown"
              for m in DIAGRAM.findall(_text(c["source"]))]
    embedded = [img for img in soup.select(".jp-MarkdownCell img")
                if img.get("src", "").startswith("data:image/svg+xml")]
    if len(embedded) < len(wanted):
        problems.append(f"{len(wanted)} diagrams referenced from markdown, {len(embedded)} "
                        "embedded in the export")
    cells = soup.select("div.jp-CodeCell")
    code = code_cells(nb)
    if len(cells) != len(code):
        return problems + [f"the export has {len(cells)} code cells, the notebook {len(code)}"]
    for k, (cell, div) in enumerate(zip(code, cells, strict=True), 1):
        n = _explorers_built(cell)
        if not n:
            continue
        images = div.select(f".{FALLBACK_CLASS} img")
        if len(images) < n:
            problems.append(f"code cell {k}: {n} explorer(s), {len(images)} image(s) in the export")
        for img in images:
            w, h = _png_size(img.get("src", ""))
            if w < 100 or h < 100:
                problems.append(f"code cell {k}: an explorer image of {w}x{h} pixels")
        for out in div.select(".jp-OutputArea-output"):
            if not out.get_text(strip=True) and not out.select("img, svg, table"):
                problems.append(f"code cell {k}: an empty output where an explorer is")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_saved_outputs(path):
    problems = saved_output_problems(load(path))
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_html_export(path):
    nb = load(path)
    problems = html_export_problems(nb, export_html(path))
    assert not problems, f"{path.name} exported to HTML:\n  " + "\n  ".join(problems)


# lesson -> the widest printed line its outputs keep, and the starts of the lines the exercise
# framework prints (they name the student's function), which are exempt
PRINTED_WIDTH = {
    "01": (105, ("… ", "The course's ", "→ ")),
    "04": (100, ("→ the lesson goes on", "… ", "The course's ", "exercise ", "attention ",
                 "multi-head ", "the softmax", "the key bias", "LayerNorm backward")),
    "09": (105, ("→ ", "The course's ", "exercise ", "Spearman ", "3Cos", "one entry ",
                 "classifier")),
    "10": (105, ("… ", "The course's ", "→ ")),
}


@pytest.mark.parametrize("lesson", sorted(PRINTED_WIDTH))
def test_no_printed_line_is_wider_than_an_export_shows(lesson):
    """An HTML export wraps a printed line of more than 100 characters mid-word."""
    (path,) = [p for p in NOTEBOOKS if p.name.startswith(lesson)]
    width, framework = PRINTED_WIDTH[lesson]
    nb = load(path)
    long = [(c.get("id"), line[:60]) for c in code_cells(nb)
            if not {"exercise", "check"} & set(c["metadata"].get("tags", []))
            and "your_work(" not in _text(c["source"])
            for o in c.get("outputs", []) if o.get("name") == "stdout"
            for line in _text(o["text"]).splitlines()
            if len(line) > width and not line.startswith(framework)]
    assert not long, f"{path.name}: printed lines over {width} characters (cell, start): {long}"


# ---------------------------------------------------------------- the checks themselves can fail
def _code_cell(source, outputs, count=1):
    return {"cell_type": "code", "execution_count": count, "metadata": {},
            "source": source, "outputs": outputs}


def _explorer_cell(outputs):
    return _code_cell("Explorer(render, {})", outputs)


def _widget_output(plain):
    return {"output_type": "display_data", "metadata": {},
            "data": {WIDGET_VIEW: {"model_id": "x", "version_major": 2, "version_minor": 0},
                     "text/plain": plain}}


def test_saved_output_checks_find_old_style_outputs():
    bar = {"output_type": "stream", "name": "stdout", "text": "a:  0%|  | 0/4\n"}
    old = {"cells": [
        _code_cell("train()", [_widget_output("MLP SGD: 0step [00:00, ?step/s]"), bar], count=2),
        _explorer_cell([_widget_output("VBox(children=(HTML(value='<b>t</b>'),))")])]}
    problems = "\n".join(saved_output_problems(old))
    for expected in ("first state", "other than an Explorer", "holds 0 static fallback"):
        assert expected in problems, (expected, problems)


def test_saved_output_checks_pass_an_explorer_with_its_fallback():
    def render(a):
        fig, ax = new_figure()
        ax.plot([0, 1], [0, a])
        return fig, f"a = {a}"

    ex = Explorer(render, {"a": slider(1, 0, 3, 1, "a")}, "demo")
    cell = _explorer_cell([{"output_type": "display_data", "metadata": {}, "data": bundle}
                           for bundle in (ex.fallback_bundle(), ex.widget_bundle())])
    assert saved_output_problems({"cells": [cell]}) == []


def test_html_checks_find_a_missing_image_and_dead_text():
    nb = {"cells": [_explorer_cell([]),
                    {"cell_type": "markdown", "metadata": {}, "source": "![d](figures/x.svg)"}]}
    page = ("<div class='jp-Cell jp-CodeCell'><div class='jp-OutputArea-output'></div>"
            "<div class='jp-OutputArea-output'>VBox(children=())</div></div><div "
            "class='jp-MarkdownCell'><img src='figures/x.svg'></div><pre>0step [00:00, "
            "?step/s]</pre>")
    problems = "\n".join(html_export_problems(nb, page))
    for expected in ("'VBox('", "dead progress bar", "1 diagrams referenced", "0 image(s)",
                     "empty output"):
        assert expected in problems, (expected, problems)
