"""Write constraints.txt: the exact versions installed in this (freshly set-up) environment.

``make constraints`` runs it with the Python of a new virtual environment that ``make setup``
has just filled, so the file records what a clean install gets today; after ``make test``
passes, commit it. Usage: ``<venv>/bin/python tools/freeze_constraints.py constraints.txt``.

A local version label is dropped (``torch==2.13.0+cpu`` -> ``torch==2.13.0``): a constraint
without one matches every build of that version (PEP 440), the CPU build that
tools/install_torch.py installs and PyPI's CUDA build alike. Only the standard library is used.
"""
from __future__ import annotations

import datetime
import platform
import subprocess
import sys
from pathlib import Path

HEADER = """\
# Exact versions of a known-good set-up: `pip freeze --all` (less pip) of a fresh `make setup`
# environment, made by `make constraints` on {date} with Python {python} on {system} {machine},
# and committed only after `make test` passed with it. requirements.txt keeps the ranges; this
# file pins one set inside them that worked.
#
# Use it when a new release of a dependency breaks the course:
#     make setup CONSTRAINTS=1
#     (plain pip: pip install -r requirements.txt -c constraints.txt)
# The pins are for Python {python_minor}; on another Python some of them may not install.
# Packages only another platform needs (nvidia-* for a GPU, pywin32, appnope) are not listed,
# and pip installs them unpinned. torch is pinned without its "+cpu" label, so the pin fits
# both its CPU and CUDA builds.
"""


def frozen_lines() -> list[str]:
    """``name==version`` lines of this environment, less pip and editable installs (the course)."""
    out = subprocess.run([sys.executable, "-m", "pip", "freeze", "--all", "--exclude-editable"],
                         capture_output=True, text=True, check=True).stdout
    lines = []
    for line in out.splitlines():
        if "==" not in line or line.startswith(("-e ", "#")) or " @ " in line:
            continue
        name, version = line.split("==", 1)
        if name.lower() == "pip":   # set-up upgrades pip itself first
            continue
        lines.append(f"{name}=={version.split('+', 1)[0]}")
    return sorted(lines, key=str.lower)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    header = HEADER.format(date=datetime.date.today().isoformat(), python=platform.python_version(),
                           python_minor=".".join(platform.python_version_tuple()[:2]),
                           system=platform.system(), machine=platform.machine())
    lines = frozen_lines()
    Path(argv[0]).write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"freeze_constraints: wrote {len(lines)} pins to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
