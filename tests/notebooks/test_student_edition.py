"""The published lessons are the student edition (CONTRIBUTING.md has the conventions): per lesson,
no reference solution (no ``solution`` tag, ``*_solution`` definition or stored "✓"); the solutions
in ``solutions/NN_topic_solutions.ipynb``, one asserted checker per exercise, stored "✓"; no
authoring history, and no processor or ``make models`` talk outside a folded "How this model was
trained" note; at most 3 evidence words per 1,000 words of open prose (``tests/lesson_text.py``);
no ``assert`` or ``# NBVAL_`` in a lesson's code; the first cell's **Time:** line, its working time
1–1.5× the estimate; every "Try this" prompt's ``metadata.try_this`` snippet safe to run beside its
target cell; lessons 02–10 link to lesson 01's section on comparing models.
"""
import ast
import importlib
import re
import warnings

import pytest

from tests.lesson_text import (
    HOW_WE_COMPARE,
    NOTEBOOKS,
    TRY_THIS,
    code_cells,
    estimated_working_minutes,
    evidence_density,
    load,
    markdown_cells,
    output_text,
    solutions_path,
    source,
    stated_times,
    tags,
    unfolded,
)

IDS = [p.stem for p in NOTEBOOKS]
TIME_LINE = re.compile(r"(?m)^\*\*Time:\*\* running it takes (?:about|under) [^;.\n]+; "
                       r"working through it, about [^.\n]+\.")
MAX_EVIDENCE_PER_1000 = 3.0
COMPARING_ANCHOR = "01_feedforward.ipynb#comparing-models"

# phrases of authoring history: never in a lesson
HISTORY = re.compile(
    r"\bthe (?:source |study )?notes\b|\bnotes'|\bearlier version|\bold version|\bold lesson\b|"
    r"\bprevious version|\bearlier lesson\b|\*\*met\*\*|\btarget\b[^.\n]{0,80}\bis met\b",
    re.I)
# training provenance: only inside a folded "How this model was trained" note
PROVENANCE = re.compile(r"\bprocessors?\b|\bAVX|\bdeterminis\w*|\bbit-identical\b|\bmake models\b|"
                        r"\bresearch run\b|\bbudget share\b", re.I)
TRAINED_NOTE = re.compile(
    r"<details\b[^>]*>\s*<summary>\s*(?:<b>)?\s*How this model was trained.*?</details\s*>",
    re.S | re.I)


def _comments(code: str) -> str:
    return "\n".join(m.group(1) for m in re.finditer(r"#\s?(.*)$", code, re.M))


# ----------------------------------------------------------------------------- no solution in the
# lesson
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_reference_solution_in_the_published_notebook(path):
    nb = load(path)
    problems = []
    for i, c in enumerate(nb["cells"]):
        text = source(c)
        if "solution" in tags(c):
            problems.append(f"cell {i} is tagged 'solution'")
        if c["cell_type"] == "code" and re.search(
                r"(?m)^\s*def \w+_solution\b|\b\w+_solution\s*=|(?i:reference solution)", text):
            problems.append(f"cell {i} holds a reference solution:\n{text[:200]}")
        if "exercise" in tags(c) or "check" in tags(c):
            out = output_text(c)
            if "✓" in out or "not attempted yet" not in out:
                problems.append(f"exercise cell {i}'s stored output is not the checker's 'not "
                                f"attempted yet': {out[:200]!r}")
    assert not problems, f"{path.name}:\n  - " + "\n  - ".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_exercise_has_a_solution_that_passes(path):
    sol = solutions_path(path)
    assert sol.exists(), f"{path.name}: its solutions notebook solutions/{sol.name} is missing"
    module = importlib.import_module(f"helpers.exercises.lesson{path.name[:2]}")
    from helpers.exercises import Exercise
    names = {id(obj): attr for attr, obj in vars(module).items() if isinstance(obj, Exercise)}
    cells = code_cells(load(sol))
    for ex in module.EXERCISES:
        name = names[id(ex)]
        asserting = [c for c in cells if re.search(rf"(?m)^assert {name}\(", source(c))]
        assert asserting, f"{sol.name}: no cell asserts {name}(...) on a solution"
        outs = "\n".join(output_text(c) for c in asserting)
        assert re.search(rf"(?m)^✓ {re.escape(ex.title)}\b", outs), (
            f"{sol.name}: the stored output of the cell asserting {name} does not show '✓ "
            f"{ex.title}': {outs[:300]!r}")


# ----------------------------------------------------------------------------- the prose
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_authoring_history(path):
    nb = load(path)
    found = []
    for i, c in enumerate(nb["cells"]):
        text = source(c) if c["cell_type"] == "markdown" else _comments(source(c))
        found += [f"cell {i}: {m.group(0)!r}" for m in HISTORY.finditer(text)]
        if c["cell_type"] == "markdown":
            outside = TRAINED_NOTE.sub(" ", text)
            found += [f"cell {i}: {m.group(0)!r} outside a folded 'How this model was trained' note"
                      for m in PROVENANCE.finditer(outside)]
    assert not found, f"{path.name}: authoring history in the lesson:\n  - " + "\n  - ".join(found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_evidence_is_folded_away(path):
    n, total, found = evidence_density(load(path))
    density = 1000 * n / max(total, 1)
    assert density <= MAX_EVIDENCE_PER_1000, (
        f"{path.name}: {n} evidence words in {total} words of unfolded prose = {density:.1f} per "
        f"1,000 (at most {MAX_EVIDENCE_PER_1000:g}): fold the protocol into <details> blocks; "
        f"found {found}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_checks_are_one_readable_line(path):
    problems = []
    for i, c in enumerate(code_cells(load(path))):
        text = source(c)
        if re.search(r"(?m)^\s*assert\b", text):
            problems.append(f"code cell {i} has an assert statement (use claim(...) from "
                            "helpers.infra.claims)")
        if re.search(r"(?m)^\s*#\s*NBVAL_", text):
            problems.append(f"code cell {i} has an nbval comment marker (tools/nbval_tags.py "
                            "moves it to a tag)")
    assert not problems, f"{path.name}:\n  - " + "\n  - ".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_lesson_states_its_run_time_and_an_honest_working_time(path):
    nb = load(path)
    first = source(nb["cells"][0])
    assert len(TIME_LINE.findall(first)) == 1, (
        f"{path.name}: the first cell needs one line '**Time:** running it takes about N "
        "minutes; working through it, about H hours.'")
    other = re.findall(r"(?i)\*\*(?:run time|time)\b[^*]*\*\*|^running it takes", first, re.M)
    assert other == ["**Time:**"], f"{path.name}: the times are stated in another form too: {other}"
    times = stated_times(first)
    assert {"run", "work"} <= set(times), f"{path.name}: run and working times, found {times}"
    estimate = estimated_working_minutes(nb)
    assert estimate <= times["work"] <= 1.5 * estimate, (
        f"{path.name}: the stated working time, {times['work']:.0f} min, is not within 1-1.5x the "
        f"estimate {estimate:.0f} min (prose and code at 100 words a minute, 20 min per graded "
        "exercise)")
    assert times["run"] <= 3, f"{path.name}: a lesson runs in about 2 minutes, not {times['run']:g}"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if not p.name.startswith("01")],
                         ids=[p.stem for p in NOTEBOOKS if not p.name.startswith("01")])
def test_later_lessons_link_to_how_the_course_compares_models(path):
    text = "\n".join(source(c) for c in markdown_cells(load(path)))
    assert COMPARING_ANCHOR in text, f"{path.name}: link to lesson 01's {COMPARING_ANCHOR}"


def test_lesson_01_teaches_how_the_course_compares_models():
    path = NOTEBOOKS[0]
    cells = [c for c in load(path)["cells"] if HOW_WE_COMPARE in tags(c)]
    text = "\n".join(source(c) for c in cells)
    assert '<a id="comparing-models"></a>' in text, "the anchor later lessons link to"
    for idea in ("validation", "test", "bootstrap", "paired", "tie"):
        assert idea in unfolded(text).lower(), f"the section explains {idea!r}"
    assert any("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", [])), \
        "the section has a small picture"


# ----------------------------------------------------------------------------- Try this
def _prompts():
    out = []
    for path in NOTEBOOKS:
        nb = load(path)
        ids = {c.get("id"): c for c in nb["cells"]}
        for c in markdown_cells(nb):
            n = len(TRY_THIS.findall(source(c)))
            if not n:
                continue
            specs = c.get("metadata", {}).get("try_this", [])
            for k in range(max(n, len(specs))):
                spec = specs[k] if k < len(specs) else None
                out.append(pytest.param(path, c.get("id"), spec, ids, n, len(specs),
                                        id=f"{path.stem}-{c.get('id')}-{k}"))
    return out


def _called_names(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            names.add(f.id if isinstance(f, ast.Name) else
                      f.attr if isinstance(f, ast.Attribute) else "")
    return names - {"", "print", "display", "len", "range", "list", "dict", "float", "int", "str",
                    "partial", "round", "sorted", "zip", "enumerate", "min", "max", "sum", "abs"}


@pytest.mark.parametrize("path,cell_id,spec,cells,n_prompts,n_specs", _prompts())
def test_every_try_this_is_safe_to_try(path, cell_id, spec, cells, n_prompts, n_specs):
    assert n_specs == n_prompts, \
        f"{path.name} cell {cell_id}: {n_prompts} prompt(s) but {n_specs} metadata.try_this entries"
    assert isinstance(spec, dict) and {"target", "code"} <= set(spec), (
        f"{path.name} cell {cell_id}: metadata.try_this entries are "
        "{'target': cell id, 'code': snippet}")
    target = cells.get(spec["target"])
    assert target is not None and target["cell_type"] == "code", (
        f"{path.name}: the prompt in cell {cell_id} points at {spec['target']!r}, not a code cell")
    text = source(target)
    assert not re.search(r"(?m)^\s*assert\b|\bclaim(?:_between|_close)?\(", text), (
        f"{path.name}: cell {spec['target']}, which a Try-this prompt sends the student to change, "
        "checks its result")
    assert _called_names(spec["code"]) & _called_names(text), (
        f"{path.name}: the snippet of cell {cell_id}'s prompt shares no call with its target cell")
    namespace = {"__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(spec["code"], f"<try this: {path.stem} {cell_id}>", "exec"), namespace)


# ----------------------------------------------------------------------------- the end state
