"""The look shared by every diagram: fonts, colours and their roles, how numbers are written.

:mod:`tools.diagrams.svg` (the drawing) and :mod:`tools.diagrams.markup` (label markup) use
these; the lesson modules import them from :mod:`tools.diagrams.svg`.

- colours are named, from :data:`PALETTE`: the Okabe–Ito palette (told apart with every common
  colour-vision deficiency), white, three greys and a light tint of each colour for fills; it is
  the palette of the lessons' plots (:mod:`helpers.infra.plotting`), defined there once;
- one meaning per colour across the course (:data:`DATA`, :data:`PARAM`, :data:`OP`, ...), so a
  student learns it once;
- the forward computation is drawn with solid black lines and gradients with dashed vermilion
  lines (:data:`FORWARD`, :data:`BACKWARD`), so the two also differ in greyscale;
- text is set in :data:`FONT_FAMILY` at :data:`FONT_SIZE` px, readable at 100 % zoom;
- coordinates are written rounded to 0.1 px (:func:`coord`), so the bytes of a figure depend on
  the drawing code alone.
"""
from __future__ import annotations

import math

from helpers.infra.plotting import PALETTE

__all__ = ["BACKWARD", "DASH", "FONT_FAMILY", "FONT_SIZE", "FORWARD", "MIN_SCRIPT", "PALETTE",
           "SMALL_SIZE", "colour", "coord", "escape", "fmt"]

FONT_FAMILY = "DejaVu Sans, Helvetica, Arial, sans-serif"
FONT_SIZE = 15      # px, main labels
SMALL_SIZE = 13     # px, secondary labels (shapes, notes)
MIN_SCRIPT = 10     # px, the smallest sub- or superscript

FORWARD = "black"        # colour of the forward computation (solid lines)
BACKWARD = "vermillion"  # colour of gradients (dashed lines)
DASH = "7 4"        # the dash pattern of gradients and other dashed lines

# the roles of the fill colours, the same in every diagram
DATA = "green_light"        # inputs, tokens, targets
PARAM = "orange_light"      # learned parameters (W, b, embedding tables)
OP = "sky_light"            # operations and layers
LOSS = "purple_light"       # losses
STATE = "yellow_light"      # recurrent states, memory cells
NEUTRAL = "grey_light"      # masked, excluded or inactive parts
GRAD = BACKWARD             # gradients: dashed lines and their labels


def colour(name: str) -> str:
    """The hex colour of the palette name ``name`` (or ``"none"``); ValueError for any other name.
    """
    if name == "none":
        return "none"
    if name not in PALETTE:
        raise ValueError(f"unknown colour {name!r}: expected 'none' or one of {sorted(PALETTE)}")
    return PALETTE[name]


def coord(value: float) -> str:
    """A coordinate rounded to 0.1 px, without trailing zeros (``12``, ``12.5``, never ``-0``)."""
    text = f"{round(float(value), 1):.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def escape(text: str) -> str:
    """``text`` with the characters XML reserves written as entities."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def fmt(value: float, digits: int = 2, plus: bool = False) -> str:
    """A number for a label: ``digits`` decimals and a real minus sign (``−0.52``).

    Raises ``ValueError`` when ``value`` is within 1e-6 (in units of the last digit) of a
    rounding tie, because the last printed digit could then differ between machines whose
    maths libraries differ in the last bit; move the worked example's numbers instead.
    """
    scaled = abs(float(value)) * 10 ** digits
    if abs(scaled - math.floor(scaled) - 0.5) < 1e-6:
        raise ValueError(f"{value!r} is too close to a rounding tie at {digits} decimals; "
                         "its printed digits could differ between machines")
    text = f"{value:.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    if text.startswith("-"):
        return "−" + text[1:]
    return ("+" + text) if plus else text

