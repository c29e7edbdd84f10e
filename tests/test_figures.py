"""The course's diagrams: current, referenced correctly, well-formed, and drawn by a sound SVG
builder (``helpers/infra/svg.py``, ``helpers/diagrams/``, ``notebooks/figures/``)."""

import ast
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from helpers.diagrams import figures
from helpers.diagrams.__main__ import readme, render_all
from helpers.infra import font_metrics
from helpers.infra.svg import PALETTE, Box, Drawing, Span, fmt, markup_width, parse_markup

ROOT = Path(__file__).resolve().parents[1]
FIGURES_DIR = ROOT / "notebooks" / "figures"
SVG = "{http://www.w3.org/2000/svg}"
FIGURES = figures()
FIGURE_REF = re.compile(r"""(?:\]\(|src=["'])(figures/[^)"'\s]+)""")


def figure_references(markdown: str) -> list[str]:
    """Paths like ``figures/01_mlp_graph.svg`` referenced by markdown images or <img> tags."""
    return FIGURE_REF.findall(markdown)


# ---------------------------------------------------------------- (a) every figure is current
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_current(name):
    path = FIGURES_DIR / name
    assert path.exists(), f"{path} is missing: run `make figures` and commit it"
    drawn = FIGURES[name]().to_svg().encode("utf-8")
    assert path.read_bytes() == drawn, (
        f"{path} differs from what {FIGURES[name].__module__}.{FIGURES[name].__name__} draws: "
        "run `make figures` and commit the result")


def test_readme_is_current():
    path = FIGURES_DIR / "README.md"
    assert path.read_text(encoding="utf-8") == readme(FIGURES), (
        f"{path} is stale: run `make figures` and commit it")


def test_no_figure_without_code():
    orphans = sorted(p.name for p in FIGURES_DIR.glob("*.svg") if p.name not in FIGURES)
    assert not orphans, (f"{orphans} in {FIGURES_DIR} are not drawn by any function of "
                         "helpers.diagrams: add the function or delete the file")


def test_check_mode_reports_a_stale_file(tmp_path):
    """``python -m helpers.diagrams --check`` passes on a fresh copy and names a changed file."""
    out = tmp_path / "figures"
    run = [sys.executable, "-m", "helpers.diagrams", "--out", str(out)]
    assert subprocess.run(run, capture_output=True, cwd=ROOT).returncode == 0
    ok = subprocess.run(run + ["--check"], capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    victim = out / sorted(FIGURES)[0]
    victim.write_bytes(victim.read_bytes().replace(b"</svg>", b"<!-- edited --></svg>"))
    (out / sorted(FIGURES)[1]).unlink()
    bad = subprocess.run(run + ["--check"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1
    assert f"differs: {victim}" in bad.stderr and sorted(FIGURES)[1] in bad.stderr
    assert "make figures" in bad.stderr


def test_same_bytes_in_a_fresh_process():
    """No hidden state (hash seeds, dict order, time): another interpreter draws the same."""
    code = ("import hashlib; from helpers.diagrams.__main__ import render_all; "
            "files, _ = render_all(); "
            "print(hashlib.sha256(b''.join(files[k] for k in sorted(files))).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, env=env, check=True).stdout.strip()
    files, _ = render_all()
    import hashlib
    here = hashlib.sha256(b"".join(files[k] for k in sorted(files))).hexdigest()
    assert other == here


# ---------------------------------------------------------------- (b) notebook references
def test_reference_pattern():
    md = ("![The LSTM cell](figures/03_lstm_cell.svg) and "
          '<img src="figures/04_masks.svg" alt="masks"> but not [a link](other/x.svg)')
    assert figure_references(md) == ["figures/03_lstm_cell.svg", "figures/04_masks.svg"]


def test_every_referenced_figure_exists_and_is_drawn_by_code():
    missing = []
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        for k, cell in enumerate(cells):
            if cell["cell_type"] != "markdown":
                continue
            for ref in figure_references("".join(cell["source"])):
                name = ref.removeprefix("figures/")
                if not (FIGURES_DIR / name).exists() or name not in FIGURES:
                    missing.append(f"{notebook.name} cell {k}: {ref}")
    assert not missing, ("figures referenced from markdown but not drawn by helpers.diagrams "
                         f"(or not committed; run `make figures`): {missing}")


# ---------------------------------------------------------------- (c) every SVG is well-formed
_ALLOWED = {v.upper() for v in PALETTE.values()} | {"NONE"}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_svg_is_well_formed_and_accessible(name):
    root = ET.parse(FIGURES_DIR / name).getroot()
    assert root.tag == SVG + "svg"
    view = [float(v) for v in root.attrib["viewBox"].split()]
    assert view[:2] == [0, 0] and view[2] == float(root.attrib["width"])
    assert view[3] == float(root.attrib["height"])
    assert view[2] <= 1000, "wider than 1000 px: JupyterLab would shrink its text below 100 %"
    title = root.find(SVG + "title")
    assert list(root)[0] is title and title.text and title.text.strip(), "needs a <title> first"
    assert root.find(SVG + "desc").text.strip()
    assert root.attrib["role"] == "img"
    assert root.attrib["font-family"].startswith("DejaVu Sans")
    colours, sizes = set(), []
    for el in root.iter():
        for attr in ("fill", "stroke"):
            if attr in el.attrib:
                colours.add(el.attrib[attr].upper())
        if "font-size" in el.attrib:
            sizes.append(float(el.attrib["font-size"]))
        assert "style" not in el.attrib, "styles go in attributes, where the colour check sees them"
    assert colours <= _ALLOWED, f"colours outside the palette: {sorted(colours - _ALLOWED)}"
    assert min(sizes) >= 10, f"text of {min(sizes)} px is too small to read at 100 %"


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_layout_has_no_clipped_or_overlapping_text(name):
    drawing = FIGURES[name]()
    assert drawing.problems() == []
    assert FIGURES[name].__doc__, "the docstring's first paragraph is the README's description"
    places = sys.modules[FIGURES[name].__module__].PLACES
    assert places.get(FIGURES[name]), "PLACES says where the figure goes in its lesson (README)"


def test_palette_is_okabe_ito_with_tints():
    okabe_ito = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00",
                 "#CC79A7"}
    assert okabe_ito <= set(PALETTE.values())
    assert PALETTE["sky_light"] == "#CCE9F8"      # 30 % of #56B4E9 on white, exact integers


# ---------------------------------------------------------------- (d) the SVG builder
def test_markup_sub_and_superscripts():
    assert parse_markup("W_x") == [Span("W", True), Span("x", True, (-1,))]
    assert parse_markup("s_{t−1}") == [Span("s", True), Span("t", True, (-1,)),
                                       Span("−1", False, (-1,))]
    assert parse_markup("K^⊤") == [Span("K", True), Span("⊤", False, (1,))]
    assert parse_markup("u_{w_i}") == [Span("u", True), Span("w", True, (-1,)),
                                       Span("i", True, (-1, -1))]
    assert parse_markup("x_max") == [Span("x", True), Span("m", True, (-1,)), Span("ax")]
    assert parse_markup("x_{max}")[1] == Span("max", False, (-1,))


def test_markup_italics():
    assert parse_markup("∂L/∂h") == [Span("∂"), Span("L", True), Span("/∂"), Span("h", True)]
    spans = parse_markup("h_t = o_t ⊙ tanh(C_t)")
    assert [s.text for s in spans if s.italic] == ["h", "t", "o", "t", "C", "t"]
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


def test_text_escapes_markup_characters_of_xml():
    d = Drawing(200, 60, title="a < b & c")
    d.text(100, 30, "p < 0.05 & q > 1", plain=True)
    svg = d.to_svg()
    assert "p &lt; 0.05 &amp; q &gt; 1" in svg and "<title id=\"title\">a &lt; b &amp; c<" in svg
    ET.fromstring(svg)


def test_text_renders_scripts_with_tspans_that_return_to_the_baseline():
    d = Drawing(200, 60, title="t")
    d.text(100, 30, "W_x + b")
    svg = d.to_svg()
    assert ('<tspan font-style="italic">W</tspan><tspan dy="3.8" font-size="11" '
            'font-style="italic">x</tspan><tspan dy="-3.8"> + </tspan>') in svg
    assert 'xml:space="preserve"' in svg           # spaces at tspan edges survive


def test_arrowhead_tip_is_at_the_target_and_the_line_stops_short():
    d = Drawing(200, 100, title="t")
    d.arrow((10, 50), (110, 50), head=10)
    line, head = d._items
    assert 'points="10,50 102,50"' in line          # 0.8 of the head short of the tip
    assert head.startswith('<polygon points="110,50 100,54.5 100,45.5"')
    d.arrow((50, 90), (50, 10), dashed=True, color="vermillion")
    assert 'stroke-dasharray="7 4"' in d._items[2] and "#D55E00" in d._items[3]


def test_box_outline_points():
    rect, circle = Box(0, 0, 100, 40), Box(0, 0, 20, 20, kind="circle")
    assert rect.toward((200, 20)) == (100, 20) and rect.toward((50, -100)) == (50, 0)
    x, y = circle.toward((10, 100))
    assert (x, y) == (10, 20)
    assert math.isclose(math.dist(circle.toward((30, 30)), circle.center), 10)


def test_colours_must_come_from_the_palette():
    d = Drawing(100, 100, title="t")
    with pytest.raises(ValueError, match="unknown colour 'red'"):
        d.rect(0, 0, 10, 10, fill="red")


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


def test_text_widths_follow_dejavu_sans():
    assert font_metrics.text_width("m", 1000) == 974         # DejaVu Sans 'm' is 974/1000 em
    assert font_metrics.text_width("m", 1000, bold=True) == 1042
    assert font_metrics.text_width("il", 15) == pytest.approx(2 * 278 * 15 / 1000)
    assert markup_width("W_x", 15) == pytest.approx(
        font_metrics.text_width("W", 15) + font_metrics.text_width("x", 11))
    assert font_metrics.char_width("\u0303") == 0            # a combining tilde takes no room
    assert font_metrics.char_width("中") == 1000              # not in the font: one em, on the wide side
    with pytest.raises(ValueError):
        font_metrics.char_width("ab")


def test_widths_are_read_from_matplotlibs_own_dejavu_files():
    """The font files matplotlib ships (not the system's), measured again with fontTools."""
    ttlib = pytest.importorskip("fontTools.ttLib")
    import matplotlib

    for bold in (False, True):
        path = font_metrics.font_file(bold)
        assert path.is_file() and Path(matplotlib.get_data_path()) in path.parents
        font = ttlib.TTFont(path)
        cmap, hmtx, upm = font.getBestCmap(), font["hmtx"], font["head"].unitsPerEm
        for char in "AWmil ,.−→⊙∂ΣαβθσℝĈ‖":
            expected = round(hmtx[cmap[ord(char)]][0] * 1000 / upm) if ord(char) in cmap else 1000
            assert font_metrics.char_width(char, bold) == expected, (path.name, char)


# ---------------------------------------------------------------- the figures' numbers
def test_mlp_worked_example_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    from helpers.diagrams.lesson01 import mlp_worked_example
    v = mlp_worked_example()
    t = {k: torch.tensor(v[k], requires_grad=True) for k in ("x", "W1", "b1", "W2", "b2")}
    z2 = torch.tanh(t["x"] @ t["W1"] + t["b1"]) @ t["W2"] + t["b2"]
    loss = torch.nn.functional.cross_entropy(z2, torch.tensor([v["y"]]))
    loss.backward()
    assert np.isclose(loss.item(), v["L"])
    for k in ("x", "W1", "b1", "W2", "b2"):
        np.testing.assert_allclose(t[k].grad.numpy(), v["d" + k], rtol=1e-12, atol=1e-15)


def test_fasttext_buckets_match_gensim():
    gensim_ft = pytest.importorskip("gensim.models.fasttext")
    from helpers.diagrams.lesson08 import BUCKETS, char_ngrams, fnv1a_32
    grams = char_ngrams("where")
    assert len(grams) == 14 and grams[:5] == ["<wh", "whe", "her", "ere", "re>"]
    for g in grams + ["naïve"]:
        assert fnv1a_32(g) == gensim_ft.ft_hash_bytes(g.encode("utf-8"))
    # the buckets lesson 08 prints for the trigrams of "where"
    assert [fnv1a_32(g) % BUCKETS for g in grams[:5]] == [167652, 420941, 1473420, 1529033,
                                                          867498]


def test_cooccurrence_counts_match_the_lesson():
    from helpers.diagrams.lesson06 import SENTENCE, window_pairs
    pairs = [p for ps in window_pairs(SENTENCE, 2) for p in ps]
    assert len(pairs) == 18 and pairs.count(("sat", "the")) == 2
    assert sorted(pairs) == sorted((c, w) for w, c in pairs)          # symmetric
    assert ("the", "the") not in pairs                                 # 4 apart, outside ±2


def test_analogy_figure_claims_hold():
    from helpers.diagrams.lesson09 import QUERY, TOY_ANGLES, analogy_scores
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


# ---------------------------------------------------------------- layering
def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module)
    return found


def test_layers():
    """The SVG builder uses only the standard library, its font metrics matplotlib's font
    machinery; the diagrams use only helpers.infra."""
    svg_modules = [p for p in (ROOT / "helpers" / "infra").glob("svg*.py")] + [ROOT / "helpers" / "infra" / "font_metrics.py"]
    for path in svg_modules:
        for module in _imports(path):
            top = module.split(".")[0]
            assert top in sys.stdlib_module_names or module.startswith("helpers.infra") or (
                path.name == "font_metrics.py" and top == "matplotlib"), f"helpers/infra/{path.name} imports {module}"
    for path in (ROOT / "helpers" / "diagrams").glob("*.py"):
        for module in _imports(path):
            if module.startswith("helpers"):
                assert module.startswith(("helpers.infra", "helpers.diagrams")), (
                    f"{path.name} imports {module}: diagrams may use only helpers.infra")
