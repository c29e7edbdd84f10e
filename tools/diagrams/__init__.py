"""The course's diagrams, drawn by code: one module per lesson (``lesson01`` … ``lesson10``).

Each lesson module lists its figure functions in ``FIGURES``; a figure function takes no
argument and returns a :class:`tools.diagrams.svg.Drawing`. Figure ``name`` of lesson ``NN`` is
committed as ``notebooks/figures/NN_name.svg``; ``python -m tools.diagrams`` (``make figures``)
rewrites every file, ``python -m tools.diagrams --check`` reports stale ones.

A tool, not part of the course's package: it imports ``helpers`` (the plots' palette, lesson
01's worked example), never the other way round.
"""

from collections.abc import Callable

from tools.diagrams import (
    lesson01,
    lesson02,
    lesson03,
    lesson04,
    lesson05,
    lesson06,
    lesson07,
    lesson08,
    lesson09,
    lesson10,
)
from tools.diagrams.svg import Drawing

__all__ = ["LESSON_MODULES", "figures"]

LESSON_MODULES = (lesson01, lesson02, lesson03, lesson04, lesson05, lesson06, lesson07, lesson08,
                  lesson09, lesson10)


def figures() -> dict[str, Callable[[], Drawing]]:
    """Every figure the code defines: ``{file name: figure function}``, in lesson order.

    File names are ``f"{lesson:02d}_{function name}.svg"``, e.g. ``01_mlp_graph.svg``.
    """
    found: dict[str, Callable[[], Drawing]] = {}
    for module in LESSON_MODULES:
        for function in module.FIGURES:
            name = f"{module.LESSON:02d}_{function.__name__}.svg"
            if name in found:
                raise ValueError(f"two figure functions would both write {name}")
            found[name] = function
    return found
