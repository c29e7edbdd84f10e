"""Move nbval's comment markers (``# NBVAL_CHECK_OUTPUT`` ...) out of the code a student reads
and into cell tags (``nbval-check-output`` ...), which nbval reads the same way.

Usage: ``python tools/nbval_tags.py notebooks/*.ipynb`` (``--check`` only reports). Only the
marker line is removed from the source; outputs and every other line stay as they are.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

MARKER = re.compile(
    r"^\s*#\s*(NBVAL_CHECK_OUTPUT|NBVAL_IGNORE_OUTPUT|NBVAL_SKIP|NBVAL_RAISES_EXCEPTION)\s*$"
)


def tag_for(marker: str) -> str:
    """'NBVAL_CHECK_OUTPUT' -> 'nbval-check-output' (the tag nbval maps to the same option)."""
    return marker.lower().replace("_", "-")


def move_markers(nb: dict) -> int:
    """Move every marker line of ``nb``'s code cells into the cell's tags; returns how many."""
    moved = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        lines, kept = src.split("\n"), []
        for line in lines:
            m = MARKER.match(line)
            if m:
                tags = cell.setdefault("metadata", {}).setdefault("tags", [])
                if tag_for(m.group(1)) not in tags:
                    tags.append(tag_for(m.group(1)))
                moved += 1
            else:
                kept.append(line)
        if len(kept) != len(lines):
            text = "\n".join(kept)
            cell["source"] = (
                text.splitlines(keepends=True) if isinstance(cell["source"], list) else text
            )
    return moved


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"]
    found = 0
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        n = move_markers(nb)
        found += n
        if n and not check:
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if n:
            print(f"{path}: {n} marker(s) {'found' if check else 'moved to tags'}")
    return 1 if (check and found) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
