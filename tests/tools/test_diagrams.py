"""The diagrams (``tools/diagrams/``): the committed SVGs are what the code draws, the lessons
reference only drawn figures, every SVG is well-formed, and the SVG builder is sound."""

import math
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from tests.lesson_text import NOTEBOOKS, load, markdown_cells, source
from tools.diagrams import figures, fonts
from tools.diagrams.svg import PALETTE, Box, Drawing, Span, fmt, markup_width, parse_markup

ROOT = Path(__file__).resolve().parents[2]
FIGURES_DIR = ROOT / "notebooks" / "figures"
SVG = "{http://www.w3.org/2000/svg}"
FIGURES = figures()
FIGURE_REF = re.compile(r"""(?:\]\(|src=["'])(figures/[^)"'\s]+)""")


def _check(out: Path) -> subprocess.CompletedProcess:
    """``python -m tools.diagrams --check --out out`` in a fresh interpreter (another hash seed)."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    return subprocess.run([sys.executable, "-m", "tools.diagrams", "--check", "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


# ---------------------------------------------------------------- the committed files
def test_committed_figures_are_what_the_code_draws_and_check_mode_names_each_stale_file(tmp_path):
    """Drawn by another process: in a copy of the committed files with one changed, one missing
    and one orphan, exactly those three are named; every other file is the same byte for byte."""
    out = tmp_path / "figures"
    shutil.copytree(FIGURES_DIR, out)
    changed, missing = sorted(FIGURES)[:2]
    edited = (out / changed).read_bytes().replace(b"</svg>", b"<!-- x --></svg>")
    (out / changed).write_bytes(edited)
    (out / missing).unlink()
    (out / "99_orphan.svg").write_text("<svg/>", encoding="utf-8")
    done = _check(out)
    assert done.returncode == 1 and "make figures" in done.stderr
    named = [line.strip() for line in done.stderr.splitlines() if line.startswith("  ")]
    assert named == [f"missing: {out / missing}", f"differs: {out / changed}",
                     f"not drawn by any code (delete it or add its function): "
                     f"{out / '99_orphan.svg'}"], done.stderr + "\n(run `make figures`)"


def test_every_referenced_figure_is_drawn_by_code():
    missing = [f"{path.name}: {ref}" for path in NOTEBOOKS for cell in markdown_cells(load(path))
               for ref in FIGURE_REF.findall(source(cell))
               if ref.removeprefix("figures/") not in FIGURES]
    assert not missing, f"figures referenced from markdown but drawn by no code: {missing}"
    assert FIGURE_REF.findall('![a](figures/03_x.svg) <img src="figures/04_y.svg"> [b](o/z.svg)') \
        == ["figures/03_x.svg", "figures/04_y.svg"]


_ALLOWED = {v.upper() for v in PALETTE.values()} | {"NONE"}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_svg_is_well_formed_accessible_and_laid_out(name):
    root = ET.parse(FIGURES_DIR / name).getroot()
    assert root.tag == SVG + "svg"
    view = [float(v) for v in root.attrib["viewBox"].split()]
    assert view == [0, 0, float(root.attrib["width"]), float(root.attrib["height"])]
    assert view[2] <= 1000, "wider than 1000 px: JupyterLab would shrink its text below 100 %"
    title = root.find(SVG + "title")
    assert list(root)[0] is title and title.text.strip(), "needs a <title> first"
    assert root.find(SVG + "desc").text.strip() and root.attrib["role"] == "img"
    colours, sizes = set(), []
    for el in root.iter():
        colours |= {el.attrib[a].upper() for a in ("fill", "stroke") if a in el.attrib}
        if "font-size" in el.attrib:
            sizes.append(float(el.attrib["font-size"]))
        assert "style" not in el.attrib, "styles go in attributes, where the colour check sees them"
    assert colours <= _ALLOWED, f"colours outside the palette: {sorted(colours - _ALLOWED)}"
    assert min(sizes) >= 10, f"text of {min(sizes)} px is too small to read at 100 %"
    function = FIGURES[name]
    assert function().problems() == []
    assert function.__doc__, "the docstring's first paragraph is the README's description"
    assert sys.modules[function.__module__].PLACES.get(function), "PLACES: where it goes"


# ---------------------------------------------------------------- the SVG builder
def test_markup_sub_and_superscripts_and_italics():
    assert parse_markup("W_x") == [Span("W", True), Span("x", True, (-1,))]
    assert parse_markup("s_{t−1}") == [Span("s", True), Span("t", True, (-1,)),
                                       Span("−1", False, (-1,))]
    assert parse_markup("K^⊤") == [Span("K", True), Span("⊤", False, (1,))]
    assert parse_markup("u_{w_i}")[2] == Span("i", True, (-1, -1))
    assert parse_markup("x_max") == [Span("x", True), Span("m", True, (-1,)), Span("ax")]
    assert parse_markup("x_{max}")[1] == Span("max", False, (-1,))
    assert parse_markup("∂L/∂h") == [Span("∂"), Span("L", True), Span("/∂"), Span("h", True)]
    assert [s.text for s in parse_markup("*QK*^⊤") if s.italic] == ["QK"]
    assert parse_markup("a weighted sum")[0] == Span("a weighted sum")   # the word "a"
    assert parse_markup("a_t")[0] == Span("a", True)                     # the variable a
    assert parse_markup("C̃_t")[0] == Span("C̃", True)                  # the accent stays on C
    assert parse_markup("a cow, x_t", plain=True) == [Span("a cow, x_t")]
    assert parse_markup(r"padding\_idx") == [Span("padding_idx")]


@pytest.mark.parametrize("label, problem", [
    ("x_", "nothing to attach"), ("x_{t", "never closed"), ("*x", "never closed"),
    ("a_{b_{c_d}}", "at most 2"), ("x\\", "lone backslash")])
def test_markup_errors_name_the_problem(label, problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_markup(label)


def test_text_is_escaped_and_scripts_return_to_the_baseline():
    d = Drawing(200, 60, title="a < b & c")
    d.text(100, 30, "p < 0.05 & q > 1", plain=True)
    d.text(100, 50, "W_x + b")
    svg = d.to_svg()
    assert "p &lt; 0.05 &amp; q &gt; 1" in svg and "<title id=\"title\">a &lt; b &amp; c<" in svg
    assert ('<tspan font-style="italic">W</tspan><tspan dy="3.8" font-size="11" '
            'font-style="italic">x</tspan><tspan dy="-3.8"> + </tspan>') in svg
    assert 'xml:space="preserve"' in svg           # spaces at tspan edges survive
    ET.fromstring(svg)


def test_arrows_boxes_and_colours():
    d = Drawing(200, 100, title="t")
    d.arrow((10, 50), (110, 50), head=10)
    line, head = d._items
    assert 'points="10,50 102,50"' in line          # 0.8 of the head short of the tip
    assert head.startswith('<polygon points="110,50 100,54.5 100,45.5"')
    d.arrow((50, 90), (50, 10), dashed=True, color="vermillion")
    assert 'stroke-dasharray="7 4"' in d._items[2] and "#D55E00" in d._items[3]
    with pytest.raises(ValueError, match="unknown colour 'red'"):
        d.rect(0, 0, 10, 10, fill="red")
    rect, circle = Box(0, 0, 100, 40), Box(0, 0, 20, 20, kind="circle")
    assert rect.toward((200, 20)) == (100, 20) and rect.toward((50, -100)) == (50, 0)
    assert circle.toward((10, 100)) == (10, 20)
    assert math.isclose(math.dist(circle.toward((30, 30)), circle.center), 10)


def test_problems_finds_clipped_and_overlapping_text():
    d = Drawing(100, 50, title="t")
    d.text(95, 25, "far too long a label", anchor="start", plain=True)
    d.text(20, 10, "one", plain=True)
    d.text(22, 12, "two", plain=True)
    found = d.problems()
    assert any("leaves the 100 × 50 canvas" in p for p in found)
    assert any("'one' overlaps text 'two'" in p for p in found)
    clean = Drawing(100, 50, title="t")
    clean.text(50, 25, "fits", plain=True)
    assert clean.problems() == []


def test_drawing_is_deterministic_and_rounded():
    def draw():
        d = Drawing(100.04, 50, title="t")
        d.curve((1 / 3, 2 / 3), (90.123456, 40.98765), bend=12.345)
        d.matrix(10, 10, 2, 3, 7.77, "A", shape="(2, 3)", grid=True)
        return d.to_svg()
    first = draw()
    assert first == draw()
    numbers = re.findall(r"\d+\.\d+", first.split("</desc>")[1])
    assert numbers and all(len(n.split(".")[1]) <= 2 for n in numbers)
    assert "-0" not in re.findall(r"-?\d+(?:\.\d+)?", first)


def test_fmt_uses_a_minus_sign_and_refuses_rounding_ties():
    assert fmt(-0.5178) == "−0.52" and fmt(0.5) == "0.50" and fmt(-0.0001) == "0.00"
    with pytest.raises(ValueError, match="rounding tie"):
        fmt(0.125, 2)
    assert fmt(3.0, 0, plus=True) == "+3"


def test_text_widths_are_matplotlibs_own_dejavu_sans():
    assert fonts.text_width("m", 1000) == 974         # DejaVu Sans 'm' is 974/1000 em
    assert fonts.text_width("m", 1000, bold=True) == 1042
    assert markup_width("W_x", 15) == pytest.approx(
        fonts.text_width("W", 15) + fonts.text_width("x", 11))
    assert fonts.char_width("\u0303") == 0            # a combining tilde takes no room
    assert fonts.char_width("中") == 1000              # not in the font: one em, on the wide side
    with pytest.raises(ValueError):
        fonts.char_width("ab")
    import matplotlib
    from fontTools.ttLib import TTFont  # installed with matplotlib: an independent reading
    for bold in (False, True):
        path = fonts.font_file(bold)
        assert path.is_file() and Path(matplotlib.get_data_path()) in path.parents
        font = TTFont(path)
        cmap, hmtx, upm = font.getBestCmap(), font["hmtx"], font["head"].unitsPerEm
        for char in "AWmil ,.−→⊙∂ΣαβθσℝĈ‖":
            expected = round(hmtx[cmap[ord(char)]][0] * 1000 / upm) if ord(char) in cmap else 1000
            assert fonts.char_width(char, bold) == expected, (path.name, char)


# ---------------------------------------------------------------- the figures' own numbers
def test_fasttext_buckets_are_the_ones_lesson_08_prints():
    from tools.diagrams.lesson08 import BUCKETS, char_ngrams, fnv1a_32
    grams = char_ngrams("where")
    assert [fnv1a_32(g) % BUCKETS for g in grams[:5]] == [167652, 420941, 1473420, 1529033,
                                                          867498]


def test_cooccurrence_counts_match_the_lesson():
    from tools.diagrams.lesson06 import SENTENCE, window_pairs
    pairs = [p for ps in window_pairs(SENTENCE, 2) for p in ps]
    assert len(pairs) == 18 and pairs.count(("sat", "the")) == 2
    assert sorted(pairs) == sorted((c, w) for w, c in pairs)          # symmetric
    assert ("the", "the") not in pairs                                 # 4 apart, outside ±2


def test_analogy_figure_claims_hold():
    from tools.diagrams.lesson09 import QUERY, TOY_ANGLES, analogy_scores
    s = analogy_scores()
    candidates = [w for w in s if w not in QUERY]
    by_add = sorted(candidates, key=lambda w: -s[w]["add"])
    by_mul = sorted(candidates, key=lambda w: -s[w]["mul"])
    assert by_add[0] == by_mul[0] == "queen"
    assert by_add[1:3] == ["princess", "throne"] and by_mul[1:3] == ["throne", "princess"]
    # for unit vectors 3CosAdd is the dot product with b − a + c
    unit = {w: np.array([math.cos(math.radians(t)), math.sin(math.radians(t))])
            for w, t in TOY_ANGLES.items()}
    target = unit["king"] - unit["man"] + unit["woman"]
    for w in s:
        assert math.isclose(s[w]["add"], unit[w] @ target)
