"""The look shared by every diagram: fonts, the colour palette, and how numbers are written.

Layer 0 (infrastructure): imports only the standard library. :mod:`helpers.infra.svg` (the
drawing) and :mod:`helpers.infra.svg_markup` (label markup) use these; diagrams import them
from :mod:`helpers.infra.svg`.

- colours are named, from :data:`PALETTE`: the Okabe–Ito palette (told apart with every common
  colour-vision deficiency), white, three greys and a light tint of each colour for fills;
- the forward computation is drawn with solid black lines and gradients with dashed vermilion
  lines (:data:`FORWARD`, :data:`BACKWARD`), so the two also differ in greyscale;
- text is set in :data:`FONT_FAMILY` at :data:`FONT_SIZE` px, readable at 100 % zoom;
- coordinates are written rounded to 0.1 px (:func:`coord`), so the bytes of a figure depend on
  the drawing code alone.
"""
from __future__ import annotations

import math

__all__ = ["BACKWARD", "DASH", "FONT_FAMILY", "FONT_SIZE", "FORWARD", "MIN_SCRIPT", "PALETTE",
           "SMALL_SIZE", "colour", "coord", "escape", "fmt"]

FONT_FAMILY = "DejaVu Sans, Helvetica, Arial, sans-serif"
FONT_SIZE = 15      # px, main labels
SMALL_SIZE = 13     # px, secondary labels (shapes, notes)
MIN_SCRIPT = 10     # px, the smallest sub- or superscript

_OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}


def _tint(hex_colour: str, share: int = 3) -> str:
    """``share`` tenths of the colour mixed with white (integer arithmetic: exact everywhere)."""
    rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{(c * share + 255 * (10 - share) + 5) // 10:02X}" for c in rgb)


#: name -> hex colour; the only colours a drawing may use
PALETTE = {
    **_OKABE_ITO,
    "white": "#FFFFFF",
    "grey_light": "#EEEEEE",
    "grey": "#999999",
    "grey_dark": "#555555",
    **{f"{name}_light": _tint(hex_colour) for name, hex_colour in _OKABE_ITO.items()
       if name != "black"},
}

FORWARD = "black"        # colour of the forward computation (solid lines)
BACKWARD = "vermillion"  # colour of gradients (dashed lines)
DASH = "7 4"        # the dash pattern of gradients and other dashed lines


def colour(name: str) -> str:
    """The hex colour of the palette name ``name`` (or ``"none"``); ValueError for any other name."""
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
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


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

