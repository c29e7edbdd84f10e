"""Build the course as a static website from the committed notebooks: ``make site``, ``make html``.

Nothing is executed: the pages show the outputs committed in ``notebooks/`` (the student edition)
and ``solutions/``. The site is made by Sphinx with myst-nb and the Furo theme (configured in
``tools/site/conf.py``); formulas become MathML at build time (``tools/site/mathml.py``), so
every page reads offline, from a web server or straight from the disk.

What goes in:
- ``index``: what the course is and the lesson table (each lesson's title, run time and
  working time, read from its first cell);
- one page per lesson, in order, with previous/next links; a cell tagged ``solution`` is left
  out, so a lesson not yet converted to the student edition shows none either;
- ``For instructors``: the solutions notebooks of ``solutions/``, a separate part of the site.

Usage::

    python tools/build_site.py                         # the whole course -> build/site/
    # one lesson -> build/html/05_tfidf_svd/
    python tools/build_site.py --lesson notebooks/05_tfidf_svd.ipynb

The whole course is built strictly: a warning (a broken link, a missing image, a formula that
cannot be converted) fails the build. One lesson alone links to lessons that are not in its
export, so there warnings are printed but do not fail.
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = ROOT / "solutions"
CONF = ROOT / "tools" / "site"
SITE = ROOT / "build" / "site"
ONE_LESSON = ROOT / "build" / "html"
LESSON_NAME = re.compile(r"^(\d\d)_[a-z0-9_]+$")
#: the line of a lesson's first cell that states its times (tests/notebooks/test_structure.py)
TIMES = re.compile(r"(?m)^\*\*Time:\*\* running it takes (about [^;.]+?|under [^;.]+?); "
                   r"working through it, (about [^.]+?)\.")
NOT_STATED = "not stated yet"
LESSON_LINK = re.compile(
    r"\[([^\]]+)\]\((?:\.\./notebooks/|\./)?(\d\d_[a-z0-9_]+)\.ipynb(?:#[\w-]+)?\)"
)
ANCHOR = re.compile(r'(?m)^[ \t]*<a (?:id|name)="([A-Za-z][\w-]*)">\s*</a>[ \t]*$')


class SiteError(ValueError):
    """A notebook that the site cannot show as it is (the message names the file and the fix)."""


@dataclass(frozen=True)
class Lesson:
    """One lesson as the index lists it: ``number`` "05", ``stem`` "05_tfidf_svd", ``title``
    without its number, ``run`` and ``work`` as the first cell states them ("about 1 minute")."""

    number: str
    stem: str
    title: str
    run: str
    work: str


def _source(cell: dict) -> str:
    s = cell.get("source", "")
    return s if isinstance(s, str) else "".join(s)


def load(path: Path) -> dict:
    """The notebook at ``path`` as a dict; SiteError when it is not a readable notebook."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SiteError(f"{path}: not a readable notebook ({e})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SiteError(f"{path}: not a notebook (no list of cells)")
    return nb


def lesson_info(path: Path, nb: dict | None = None) -> Lesson:
    """Title and times of the lesson at ``path`` (``notebooks/NN_topic.ipynb``), from its first
    cell: the ``# NN · Title`` heading and the line "**Time:** running it takes about N minutes;
    working through it, about M hours." A lesson that does not state them shows "not stated
    yet". SiteError for a first cell without the heading."""
    path = Path(path)
    match = LESSON_NAME.match(path.stem)
    if not match:
        raise SiteError(f"{path}: a lesson is named NN_topic.ipynb (two digits, lower case)")
    nb = load(path) if nb is None else nb
    first = (
        _source(nb["cells"][0])
        if nb["cells"] and nb["cells"][0].get("cell_type") == "markdown"
        else ""
    )
    heading = re.search(r"(?m)^# (.+)$", first)
    if not heading:
        raise SiteError(
            f"{path}: its first cell must be markdown starting with '# {match.group(1)} · Title'"
        )
    title = re.sub(rf"^{match.group(1)}\s*·\s*", "", heading.group(1).strip())
    times = TIMES.search(first)
    run, work = (times.group(1), times.group(2)) if times else (NOT_STATED, NOT_STATED)
    return Lesson(match.group(1), path.stem, title, run, work)


def with_targets(nb: dict) -> dict:
    """A copy of ``nb`` whose HTML anchors on a line of their own (``<a
    id="comparing-models"></a>``) are MyST targets (``(comparing-models)=``), so that links to them
    resolve on the site."""
    page = copy.deepcopy(nb)
    for cell in page["cells"]:
        if cell.get("cell_type") == "markdown":
            cell["source"] = ANCHOR.sub(r"(\1)=", _source(cell))
    return page


def unlink_absent(nb: dict, present: set[str]) -> dict:
    """``nb`` with each markdown link to a lesson that is not in this site
    (``[text](01_feedforward.ipynb#x)`` when ``present`` lacks ``01_feedforward``) written as ``text
    (lesson 01)``: an export of one lesson has no page to send it to."""
    def replace(m):
        return m.group(0) if m.group(2) in present else f"{m.group(1)} (lesson {m.group(2)[:2]})"
    for cell in nb["cells"]:
        if cell.get("cell_type") == "markdown":
            cell["source"] = LESSON_LINK.sub(replace, _source(cell))
    return nb


def student_page(nb: dict, present: set[str] | None = None) -> dict:
    """Lesson ``nb`` as the site shows it: without its cells tagged ``solution``, its anchors as
    targets, and (when ``present`` names the lessons of the site) no link to an absent lesson."""
    page = with_targets(nb)
    page["cells"] = [
        c for c in page["cells"] if "solution" not in c.get("metadata", {}).get("tags", [])
    ]
    return page if present is None else unlink_absent(page, present)


def lesson_table(lessons: list[Lesson], link: bool = True) -> str:
    """The markdown table of lessons: number, title (a link to its page), run and working time."""
    rows = ["| # | lesson | run time | working time |", "|---|---|---|---|"]
    for le in lessons:
        title = f"[{le.title}](notebooks/{le.stem}.ipynb)" if link else le.title
        rows.append(f"| {le.number} | {title} | {le.run} | {le.work} |")
    return "\n".join(rows)


def index_page(lessons: list[Lesson]) -> str:
    """The site's front page: the intro of ``tools/site/index.md``, lesson table and toctree."""
    intro = (CONF / "index.md").read_text(encoding="utf-8")
    if "{lesson_table}" not in intro:
        raise SiteError(f"{CONF / 'index.md'} must hold the placeholder {{lesson_table}}")
    toc = ["", "```{toctree}", ":caption: Lessons", ":hidden:", ""]
    toc += [f"notebooks/{le.stem}" for le in lessons] + ["```"]
    # the instructors' pages are linked from the intro, not listed here: no "next" link leads to
    # them
    return intro.replace("{lesson_table}", lesson_table(lessons)) + "\n".join(toc) + "\n"


def instructors_page(solutions: list[Path]) -> str:
    """``solutions/index``: what the solutions are (solutions/README.md) and their toctree."""
    readme = SOLUTIONS / "README.md"
    text = (
        readme.read_text(encoding="utf-8") if readme.exists() else "# Solutions (for instructors)\n"
    )
    toc = ["", "```{toctree}", ":maxdepth: 1", ""] + [p.stem for p in solutions] + ["```", ""]
    return text.rstrip() + "\n" + "\n".join(toc)


def write_source(dest: Path, lessons: list[Path], solutions: list[Path]) -> list[Lesson]:
    """Lay out the site's source in ``dest`` (emptied first): index.md, notebooks/ (student pages,
    and the figures/ folder beside the lessons), solutions/ (index.md and the solutions
    notebooks). Returns the lessons. SiteError when there is no lesson."""
    if not lessons:
        raise SiteError("no lesson to build: notebooks/ holds no NN_topic.ipynb")
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "notebooks").mkdir(parents=True)
    infos, present = [], {Path(p).stem for p in lessons}
    for path in lessons:
        nb = load(path)
        infos.append(lesson_info(path, nb))
        (dest / "notebooks" / path.name).write_text(
            json.dumps(student_page(nb, present), ensure_ascii=False), encoding="utf-8"
        )
    figures = Path(lessons[0]).parent / "figures" if lessons else NOTEBOOKS / "figures"
    if figures.is_dir():  # the diagrams the lessons' markdown shows (figures/NN_name.svg)
        shutil.copytree(
            figures, dest / "notebooks" / "figures", ignore=shutil.ignore_patterns("README.md")
        )
    if solutions:
        (dest / "solutions").mkdir()
        for path in solutions:
            (dest / "solutions" / path.name).write_text(
                json.dumps(with_targets(load(path)), ensure_ascii=False), encoding="utf-8"
            )
        (dest / "solutions" / "index.md").write_text(instructors_page(solutions), encoding="utf-8")
    (dest / "index.md").write_text(index_page(infos), encoding="utf-8")
    return infos


def sphinx(source: Path, out: Path, strict: bool) -> None:
    """Run sphinx-build (html) from ``source`` into ``out`` with the course's configuration."""
    missing = [
        m
        for m in ("sphinx", "myst_nb", "furo", "latex2mathml")
        if importlib.util.find_spec(m) is None
    ]
    if missing:
        raise SiteError(
            f"the packages that build the site are missing ({', '.join(missing)}): run `make "
            "setup` (or `python -m pip install -r requirements.txt` in the course's environment)"
        )
    if out.exists():
        shutil.rmtree(out)
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-q",
        "-c",
        str(CONF),
        "-d",
        str(source / ".doctrees"),
    ]
    if strict:
        cmd += ["-W", "--keep-going"]
    done = subprocess.run(cmd + [str(source), str(out)])
    if done.returncode != 0:
        raise SiteError(f"sphinx-build failed (exit {done.returncode}); its messages are above")


def course_notebooks() -> tuple[list[Path], list[Path]]:
    """(the lessons of notebooks/, the solutions notebooks of solutions/), in order."""
    lessons = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if LESSON_NAME.match(p.stem))
    return lessons, sorted(SOLUTIONS.glob("*_solutions.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--lesson", type=Path, help="export only this lesson (notebooks/NN_topic.ipynb)"
    )
    parser.add_argument(
        "--out", type=Path, help="output folder (default build/site, or build/html/NN_topic)"
    )
    args = parser.parse_args(argv)
    start = time.time()
    try:
        if args.lesson:
            lesson = args.lesson.resolve()
            if not lesson.is_file():
                raise SiteError(
                    f"{args.lesson}: no such notebook (give e.g. NB=notebooks/05_tfidf_svd.ipynb)"
                )
            lessons, solutions, strict = [lesson], [], False
            out = args.out or ONE_LESSON / lesson.stem
        else:
            (lessons, solutions), strict = course_notebooks(), True
            out = args.out or SITE
        source = out.parent / f"{out.name}-source"
        infos = write_source(source, lessons, solutions)
        sphinx(source, out, strict)
    except SiteError as e:
        print(f"site: {e}", file=sys.stderr)
        return 1
    page = out / "notebooks" / f"{infos[0].stem}.html" if args.lesson else out / "index.html"
    print(
        f"site: {len(infos)} lesson(s), {len(solutions)} solutions notebook(s) -> "
        f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page} ("
        f"{time.time() - start:.0f} s; open it in a browser, no server needed)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
