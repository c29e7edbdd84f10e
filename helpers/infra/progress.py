"""The course's progress bar: a text bar, live while it runs and saved as its last line.

A text bar rather than tqdm's widget, because a notebook saved after a headless run keeps a
widget bar as a dead placeholder, and a text bar as its final line::

    PyTorch skipgram: 100%|██████████| 1.29M/1.29M [00:14<00:00, 91.2kword/s]
"""
from __future__ import annotations

import sys

from tqdm.std import tqdm


def in_notebook() -> bool:
    """True when standard output is a Jupyter kernel's (a notebook or console is running us)."""
    return type(sys.stdout).__module__.startswith("ipykernel")


def progress_bar(iterable=None, *, desc: str | None = None, total: float | None = None,
                 unit: str = "it", disable: bool = False, **kwargs) -> tqdm:
    """A tqdm text bar (tqdm's arguments): in a notebook on standard output, redrawn at most
    every 0.5 s and left as its final line; elsewhere tqdm's defaults."""
    if in_notebook():
        kwargs = {"file": sys.stdout, "mininterval": 0.5, "leave": True, **kwargs}
    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=disable, **kwargs)
