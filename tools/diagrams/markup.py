"""The tiny markup of diagram labels (``W_x``, ``s_{t−1}``, ``*QK*^⊤``) and the width it sets.

Uses :mod:`tools.diagrams.style` and
:mod:`tools.diagrams.fonts` (matplotlib's font machinery measures the widths). Labels read
as in the lessons: an isolated Latin letter is set in italics as LaTeX sets maths, sub- and
superscripts nest two levels deep. :meth:`tools.diagrams.svg.Drawing.text` writes the spans.
"""
from __future__ import annotations

from dataclasses import dataclass

from tools.diagrams.fonts import text_width
from tools.diagrams.style import FONT_SIZE, MIN_SCRIPT

__all__ = ["Span", "markup_width", "parse_markup", "placement"]

# --------------------------------------------------------------------------------------------
# label markup
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Span:
    """A run of label text in one style.

    ``script`` lists the sub/superscript levels from the outside in: ``()`` on the baseline,
    ``(-1,)`` a subscript, ``(1,)`` a superscript, ``(-1, -1)`` a subscript of a subscript
    (the ``i`` of ``u_{w_i}``).
    """

    text: str
    italic: bool = False
    script: tuple[int, ...] = ()


_MAX_SCRIPT_DEPTH = 2


def _is_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_combining(c: str) -> bool:
    return "\u0300" <= c <= "\u036f"


def _starts_word(chars, k: int) -> bool:
    """A space and then a lowercase letter or a digit at ``chars[k:]``: the letter before is a
    word ("a weighted average", "a 2-core laptop")."""
    return (k + 1 < len(chars) and chars[k][0] == " "
            and ("a" <= chars[k + 1][0] <= "z" or "0" <= chars[k + 1][0] <= "9")
            and chars[k][1] == chars[k + 1][1] == ())


def _letter_at(chars, j: int, step: int, script) -> bool:
    """Is the nearest non-accent character from ``j`` (moving by ``step``) a Latin letter at
    the same script level?"""
    while 0 <= j < len(chars) and _is_combining(chars[j][0]):
        j += step
    return (0 <= j < len(chars) and chars[j][1] == script and _is_letter(chars[j][0])
            and not chars[j][3])


def parse_markup(label: str, plain: bool = False) -> list[Span]:
    """Split a label into styled spans: the markup of every figure label.

    - ``_x`` or ``_{...}``: subscript; ``^x`` or ``^{...}``: superscript; scripts nest two
      levels deep (``u_{w_i}``);
    - ``*...*``: italics for a run, e.g. ``*QK*^⊤``;
    - ``\\c``: the character ``c`` literally (``\\_``, ``\\*``, ``\\^``, ``\\\\``);
    - an isolated Latin letter (no Latin letter right before or after it at the same level) is
      set in italics, as LaTeX sets maths: ``h_t = o_t ⊙ tanh(C_t)`` gives italic *h, t, o, C*
      and upright *tanh*; a combining accent (``C̃``, ``w̃``) keeps the style of its letter.
      Exception: "a", "A" and "I" followed by a space and a lowercase letter (or a digit) are
      words ("a weighted average") and stay upright; write ``*a*`` to force italics.

    With ``plain=True`` the label is taken literally (ordinary words: "a cow eats grass").
    Returns the spans in order; adjacent characters of the same style share a span.
    """
    if plain:
        return [Span(label)] if label else []
    chars: list[tuple[str, tuple[int, ...], bool, bool]] = []  # char, script, forced, literal
    frames: list[list] = []      # open scripts: [direction, "}" or "one character"]
    i, forced = 0, False

    def script():
        return tuple(f[0] for f in frames)

    def add(c, literal):
        chars.append((c, script(), forced, literal))
        while frames and frames[-1][1] == "one character":
            frames.pop()

    while i < len(label):
        c = label[i]
        if c == "\\":
            if i + 1 == len(label):
                raise ValueError(f"label {label!r} ends with a lone backslash")
            add(label[i + 1], True)
            i += 2
        elif c in "_^":
            if i + 1 == len(label):
                raise ValueError(f"label {label!r}: {c!r} at the end has nothing to attach to")
            if len(frames) == _MAX_SCRIPT_DEPTH:
                raise ValueError(f"label {label!r}: scripts nest at most {_MAX_SCRIPT_DEPTH} "
                                 f"levels deep (position {i})")
            braced = label[i + 1] == "{"
            frames.append([-1 if c == "_" else 1, "}" if braced else "one character"])
            i += 2 if braced else 1
        elif c == "}" and frames and frames[-1][1] == "}":
            frames.pop()
            while frames and frames[-1][1] == "one character":
                frames.pop()
            i += 1
        elif c == "*":
            forced = not forced
            i += 1
        else:
            add(c, False)
            i += 1
    if frames:
        raise ValueError(f"label {label!r}: a '{{' after _ or ^ is never closed")
    if forced:
        raise ValueError(f"label {label!r}: an italic run '*' is never closed")

    styled = []
    for k, (c, sc, force, literal) in enumerate(chars):
        if _is_combining(c) and styled:        # an accent (C̃) keeps its letter's style
            styled.append((c, styled[-1][1], styled[-1][2]))
            continue

        isolated = (_is_letter(c) and not literal and not _letter_at(chars, k - 1, -1, sc)
                    and not _letter_at(chars, k + 1, 1, sc))
        if isolated and c in "aAI" and _starts_word(chars, k + 1):
            isolated = False                   # the English words "a", "A", "I"
        styled.append((c, force or isolated, sc))
    spans: list[Span] = []
    for c, italic, sc in styled:
        if spans and spans[-1].italic == italic and spans[-1].script == sc:
            spans[-1] = Span(spans[-1].text + c, italic, sc)
        else:
            spans.append(Span(c, italic, sc))
    return spans


def _script_size(size: float) -> float:
    return max(MIN_SCRIPT, round(size * 0.72))


def placement(script: tuple[int, ...], size: float) -> tuple[float, float]:
    """(baseline offset in px, downward positive; font size) of a span at ``script`` levels."""
    offset = 0.0
    for direction in script:
        offset += 0.25 * size if direction < 0 else -0.4 * size
        size = _script_size(size)
    return offset, size


def markup_width(label: str, size: float = FONT_SIZE, bold: bool = False,
                 plain: bool = False) -> float:
    """Estimated width in px of a label after markup (DejaVu Sans metrics; float)."""
    return sum(text_width(s.text, placement(s.script, size)[1], bold)
               for s in parse_markup(label, plain))

