"""The course's progress bar: a text bar that is live while it runs and a record once saved.

Every long loop in ``helpers`` shows its progress through :func:`progress_bar` (lessons use it
too, in place of ``tqdm.auto.tqdm``). In a notebook the bar is plain text on standard output,
redrawn in place with carriage returns, and its last state stays as one line, for example::

    PyTorch skipgram: 100%|██████████| 1.29M/1.29M [00:14<00:00, 91.2kword/s]

Why text and not tqdm's widget bar: a widget is live only in a front end with the widget
manager. In a notebook executed headless (``make execute``, CI) and then opened on GitHub, in
nbviewer or as an HTML export, the widget bar is saved as a dead ``0step [00:00, ?step/s]``
placeholder; a text bar is saved as its final line, which records how much work ran at what
speed. JupyterLab (and the notebook's saved file, after ``make execute``, which cleans the
saved outputs with ``tests/clean_notebooks.py``) keep only the last state of a line redrawn
with ``\\r``. Outside a notebook (scripts, ``make models``, tests) the bar goes to standard
error, as tqdm's does.

Timings in these lines differ from run to run: nbval's sanitizer (``tests/nbval_sanitize.cfg``)
replaces the bracketed part ``[elapsed<remaining, rate]``.
"""
from __future__ import annotations

import sys

from tqdm.std import tqdm


def in_notebook() -> bool:
    """True when standard output is a Jupyter kernel's (a notebook or console is running us)."""
    return type(sys.stdout).__module__.startswith("ipykernel")


def progress_bar(iterable=None, *, desc: str | None = None, total: float | None = None, unit: str = "it",
             disable: bool = False, **kwargs) -> tqdm:
    """A tqdm text bar in the course's settings: in a notebook, on standard output, redrawn at
    most every 0.5 s and left as its final line; elsewhere tqdm's defaults (standard error).

    Takes tqdm's arguments (``iterable``, ``desc``, ``total``, ``unit``, ``unit_scale``,
    ``disable``, ``postfix`` ...), and returns the bar: iterate over it, or call
    ``bar.update(n)``, ``bar.set_postfix(...)`` and ``bar.close()`` (or use ``with``).
    """
    if in_notebook():
        kwargs = {"file": sys.stdout, "mininterval": 0.5, "leave": True, **kwargs}
    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=disable, **kwargs)
