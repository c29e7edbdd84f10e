"""Reading a lesson notebook as a student sees it (shared by the tests of ``tests/notebooks/``).

* **folded**: an HTML ``<details>…</details>`` block in a markdown cell, where evidence lives.
* **prose**: the words of markdown cells without folded blocks, code, LaTeX, HTML tags, link
  targets and the Further reading section; a word is a run of letters (inner ``'`` or ``-``).
* **evidence vocabulary**: tie(s), interval(s), bootstrap*, seed(s), paired, asserted, borderline,
  "validation half", "report half"; not counted in lesson 01's ``how-we-compare`` cells.
"""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = ROOT / "solutions"

FOLDED = re.compile(r"<details\b.*?</details\s*>", re.S | re.I)
_STRIP = [re.compile(p, re.S) for p in (
    r"```.*?```", r"\$\$.*?\$\$", r"\$[^$\n]+\$", r"`[^`\n]*`", r"<[^>\n]+>",
    r"\]\([^)\s]*\)", r"https?://\S+",
)]
FURTHER_READING = re.compile(r"(?ms)^#{1,3} [^\n]*Further reading.*?(?=^#{1,2} |\Z)")
WORD = re.compile(r"[A-Za-z][A-Za-z]*(?:['’-][A-Za-z]+)*")
EVIDENCE = re.compile(
    r"\b(?:ties|tied|tie|intervals?|bootstrap\w*|seeds?|paired|asserted|borderline|"
    r"validation half|report half)\b",
    re.I,
)
HOW_WE_COMPARE = "how-we-compare"
TRY_THIS = re.compile(r"(?m)^> \*\*Try this:\*\*")


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    s = cell.get("source", "")
    return s if isinstance(s, str) else "".join(s)


def tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def markdown_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "markdown"]


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def unfolded(text: str) -> str:
    """``text`` without its ``<details>`` blocks."""
    return FOLDED.sub(" ", text)


def prose(text: str) -> str:
    """The prose of one markdown text (see the module docstring), folded blocks removed."""
    text = FURTHER_READING.sub(" ", unfolded(text))
    for rx in _STRIP:
        text = rx.sub(" ", text)
    return text


def words(text: str) -> list[str]:
    return WORD.findall(text)


def evidence_density(nb: dict) -> tuple[int, int, list[str]]:
    """(evidence words, prose words, the evidence words found) over the story's prose: every
    markdown cell except the comparing-models section, unfolded parts only."""
    text = "\n".join(prose(source(c)) for c in markdown_cells(nb) if HOW_WE_COMPARE not in tags(c))
    found = [m.group(0) for m in EVIDENCE.finditer(text)]
    return len(found), len(words(text)), found


def output_text(cell: dict) -> str:
    parts = []
    for o in cell.get("outputs", []):
        if "text" in o:
            parts.append(source({"source": o["text"]}))
        for key, value in o.get("data", {}).items():
            if key.startswith("text/"):
                parts.append(source({"source": value}))
    return "\n".join(parts)


def solutions_path(lesson: Path) -> Path:
    """``solutions/NN_topic_solutions.ipynb`` for ``notebooks/NN_topic.ipynb``."""
    return SOLUTIONS / f"{Path(lesson).stem}_solutions.ipynb"


# ----------------------------------------------------------------------------- the time a lesson
# takes
TIME = re.compile(r"(\d+(?:[.,]\d+)?|½|\d+½)\s*(hours?|h\b|minutes?|min\b)", re.I)
EXERCISE_MINUTES = 20          # per graded exercise
EXERCISE = re.compile(r"(?m)^#{2,4} Exercise \d+ · (warm-up|core|experiment)\b")
CHALLENGE = re.compile(r"(?m)^#{2,4} [^\n]*Challenge\b")
CHALLENGE_MINUTES = 30
TRY_THIS_MINUTES = 5
READING_WPM = 100              # technical prose read with its code and outputs
MAX_OPEN_WORDS = 4000          # open prose per lesson
MAX_VISIBLE_CLAIMS = 12        # "✓" lines a lesson's outputs show


def _minutes(number: str, unit: str) -> float:
    n = number.replace(",", ".")
    value = 0.5 if n == "½" else float(n[:-1]) + 0.5 if n.endswith("½") else float(n)
    return value * 60 if unit.lower().startswith("h") else value


def stated_times(first_cell: str) -> dict[str, float]:
    """The run time and working time (minutes) a lesson's first cell states, as
    ``{"run": ..., "work": ...}``: the sentence holding "run" and the one holding "work"."""
    found = {}
    for sentence in re.split(r"(?<=[.;])\s+|\n", first_cell):
        m = TIME.search(sentence)
        if not m:
            continue
        low = sentence.lower()
        if "work" in low and "work" not in found:
            found["work"] = _minutes(*m.groups())
        elif "run" in low and "run" not in found:
            found["run"] = _minutes(*m.groups())
    return found


def open_prose_words(nb: dict) -> int:
    """Words of prose outside folded blocks (the story a student reads)."""
    return len(words(prose("\n".join(source(c) for c in markdown_cells(nb)))))


def visible_claims(nb: dict) -> list[str]:
    """The "✓" lines in the lesson's committed outputs (claims a student sees)."""
    return [line for c in code_cells(nb) for line in output_text(c).splitlines()
            if line.startswith("✓ ")]


def estimated_working_minutes(nb: dict) -> float:
    """Reading the open prose and the code at 100 words a minute (code at one word per three
    tokens), plus 20 minutes per graded exercise, 30 for a challenge and 5 for each "Try this"
    prompt (change, run, look)."""
    text = "\n".join(source(c) for c in markdown_cells(nb))
    code_words = sum(len(words(source(c))) for c in code_cells(nb)) // 3
    minutes = (open_prose_words(nb) + code_words) / READING_WPM
    minutes += EXERCISE_MINUTES * len(EXERCISE.findall(text))
    minutes += CHALLENGE_MINUTES * len(CHALLENGE.findall(text))
    minutes += TRY_THIS_MINUTES * len(TRY_THIS.findall(text))
    return minutes
