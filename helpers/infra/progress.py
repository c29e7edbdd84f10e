"""The course's progress bar: a tqdm text bar (a saved notebook keeps its last line, where a
widget bar would leave a dead placeholder)."""
from __future__ import annotations

import sys

from tqdm.std import tqdm


def in_notebook() -> bool:
    """True when standard output is a Jupyter kernel's (a notebook or console is running us)."""
    return type(sys.stdout).__module__.startswith("ipykernel")


def progress_bar(iterable=None, *, desc: str | None = None, total: float | None = None,
                 unit: str = "it", disable: bool = False, **kwargs) -> tqdm:
    """A tqdm text bar (tqdm's arguments), in a notebook redrawn at most every 0.5 s."""
    if in_notebook():
        kwargs = {"file": sys.stdout, "mininterval": 0.5, "leave": True, **kwargs}
    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=disable, **kwargs)
