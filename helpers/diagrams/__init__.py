"""The course's diagrams, drawn by code: one module per lesson (``lesson01`` … ``lesson10``).

Each lesson module lists its figure functions in ``FIGURES``; a figure function takes no
argument and returns a :class:`helpers.infra.svg.Drawing`. Figure ``name`` of lesson ``NN`` is
committed as ``notebooks/figures/NN_name.svg``; ``python -m helpers.diagrams`` (``make figures``)
rewrites every file, ``python -m helpers.diagrams --check`` reports stale ones.

Layering: this package imports only ``helpers.infra`` (and NumPy, to compute worked examples).
"""

from collections.abc import Callable

from helpers.diagrams import (
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
from helpers.infra.svg import Drawing

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
