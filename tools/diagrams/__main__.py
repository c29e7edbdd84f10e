"""Write every course diagram to ``notebooks/figures/``, or check that the committed ones are
current.

    python -m tools.diagrams            # (re)write every figure and the folder's README.md
    python -m tools.diagrams --check    # exit 1 naming every file that is missing or differs

``make figures`` runs the first form. The output depends only on the drawing code, so a second
run changes nothing, on any machine.
"""

import argparse
import inspect
import sys
from pathlib import Path

from tools.diagrams import figures

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "notebooks" / "figures"

_README_HEAD = """\
# Figures

The lessons' diagrams, drawn by code in `tools/diagrams/` (one module per lesson, with the
SVG primitives of `tools/diagrams/svg.py`) and committed as SVG. **Do not edit these files by
hand**: change the drawing function and regenerate them all with

    make figures                          # = python -m tools.diagrams

`python -m tools.diagrams --check` (and `tests/tools/test_diagrams.py`) fails when a committed file
differs from what the code draws. This README is generated too.

Conventions: forward computation in solid black, gradients in dashed vermilion; inputs and
data green, learned parameters orange, operations blue, losses purple, states yellow; the
Okabe–Ito colour-blind-safe palette; each lesson's own notation (e.g. row vectors `x W + b`).

| file | lesson | what it shows | drawn by |
|---|---|---|---|
"""


def _summary(function) -> str:
    doc = inspect.getdoc(function) or ""
    return " ".join(doc.split("\n\n")[0].split())


def readme(found) -> str:
    """The text of ``notebooks/figures/README.md`` for the figures ``found`` ({file: function})."""
    rows, lines = [], []
    for name, function in found.items():
        lesson = name[:2]
        where = f"`{function.__module__}.{function.__name__}`"
        what = _summary(function).replace("|", "\\|")        # a bare | would split the cell
        rows.append(f"| [{name}]({name}) | {lesson} | {what} | {where} |")
        title = function().title
        place = sys.modules[function.__module__].PLACES.get(function, "")
        lines.append(f"- lesson {lesson}, {place}:\n  `![{title}](figures/{name})`")
    return (_README_HEAD + "\n".join(rows) + "\n\n## Suggested markdown, with alt text\n\n"
            "A lesson shows a figure with one markdown line (the path is relative to "
            "`notebooks/`):\n\n" + "\n".join(lines) + "\n")


def render_all() -> tuple[dict[str, bytes], list[str]]:
    """Every figure file and the README as ``{file name: bytes}`` (drawn in memory), and the
    layout problems found: text outside its canvas or overlapping other text
    (:meth:`tools.diagrams.svg.Drawing.problems`), one message per problem naming the figure.
    """
    found = figures()
    out, problems = {}, []
    for name, function in found.items():
        drawing = function()
        problems += [f"{name}: {p}" for p in drawing.problems()]
        out[name] = drawing.to_svg().encode("utf-8")
    out["README.md"] = readme(found).encode("utf-8")
    return out, problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.diagrams", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a file is missing, differs or is unknown")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"the figures folder (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    files, problems = render_all()
    if problems:
        print("layout problems (the files are written so you can look at them):\n  "
              + "\n  ".join(problems), file=sys.stderr)
    unknown = sorted(p.name for p in args.out.glob("*.svg") if p.name not in files)
    if args.check:
        bad = [f"missing: {args.out / n}" for n in files if not (args.out / n).exists()]
        bad += [f"differs: {args.out / n}" for n in files
                if (args.out / n).exists() and (args.out / n).read_bytes() != files[n]]
        bad += [f"not drawn by any code (delete it or add its function): {args.out / n}"
                for n in unknown]
        if bad:
            print("stale figures; run `make figures` (python -m tools.diagrams):\n  "
                  + "\n  ".join(bad), file=sys.stderr)
        if bad or problems:
            return 1
        print(f"{len(files) - 1} figures and README.md are current in {args.out}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    changed = 0
    for name, data in files.items():
        path = args.out / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
            changed += 1
    print(f"wrote {len(files) - 1} figures and README.md to {args.out} ({changed} changed)")
    for name in unknown:
        print(f"warning: {args.out / name} is not drawn by any code", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
