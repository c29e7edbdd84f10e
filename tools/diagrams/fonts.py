"""Advance widths of the DejaVu Sans font, to lay out SVG text without a renderer.

Used by :mod:`tools.diagrams.markup` to size boxes around labels and to
centre them. The figures name DejaVu Sans first in their font stack; Helvetica and Arial, the
fallbacks, are slightly narrower, so a box sized with these widths still fits its label.

The widths are read with matplotlib's FreeType wrapper from the DejaVu Sans files that
matplotlib ships (``mpl-data/fonts/ttf/DejaVuSans.ttf`` and ``DejaVuSans-Bold.ttf``), never from
a font the system happens to have, so every machine lays a figure out the same way. A width is
rounded to a thousandth of an em, as a font's metrics table would list it. The oblique face has
the same widths as the regular one.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import matplotlib
from matplotlib.ft2font import FT2Font

try:                                    # matplotlib >= 3.10
    from matplotlib.ft2font import LoadFlags
    _NO_SCALE = LoadFlags.NO_SCALE
except ImportError:                     # matplotlib 3.8, 3.9 (requirements.txt allows them)
    from matplotlib.ft2font import LOAD_NO_SCALE as _NO_SCALE

__all__ = ["text_width", "char_width", "font_file"]

UNKNOWN = 1000  # a character the font lacks counts as one em wide (errs on the wide side)


def font_file(bold: bool = False) -> Path:
    """The DejaVu Sans file that matplotlib ships (regular, or bold)."""
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name


@lru_cache(maxsize=2)
def _font(bold: bool) -> FT2Font:
    return FT2Font(str(font_file(bold)))


@lru_cache(maxsize=4096)
def char_width(char: str, bold: bool = False) -> int:
    """Advance width of one character in thousandths of an em (1000 if the font lacks it)."""
    if not isinstance(char, str) or len(char) != 1:
        raise ValueError(f"char_width expects one character, got {char!r}")
    font = _font(bool(bold))
    if font.get_char_index(ord(char)) == 0:
        return UNKNOWN
    advance = font.load_char(ord(char), flags=_NO_SCALE).horiAdvance   # in font units
    return round(advance * 1000 / font.units_per_EM)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in px of ``text`` set in DejaVu Sans at ``size`` px (no kerning; float)."""
    return sum(char_width(c, bold) for c in text) * size / 1000
