"""A small, deterministic SVG builder for the course's diagrams.

Made of two modules: :mod:`tools.diagrams.style` (fonts, palette, numbers) and
:mod:`tools.diagrams.markup` (the label markup and its widths); their public names are
importable from here too.

Every figure in ``notebooks/figures/`` is drawn by a function in ``tools.diagrams`` that places
shapes on a :class:`Drawing` and returns it; :meth:`Drawing.to_svg` writes the file. The bytes
depend on the drawing code alone: coordinates are rounded to 0.1 px, every element writes its
attributes in a fixed order, and nothing is random or dated, so ``make figures`` gives the same
files on every machine.

Conventions shared by every figure:

- colours are named, from :data:`PALETTE`: the Okabe–Ito palette (told apart with every common
  colour-vision deficiency), white, three greys and a light tint of each colour for fills;
- the forward computation is drawn with solid black lines and gradients with dashed vermilion
  lines (:data:`FORWARD`, :data:`BACKWARD`), so the two also differ in greyscale;
- text is set in :data:`FONT_FAMILY` at :data:`FONT_SIZE` px, readable at 100 % zoom;
- labels use a tiny markup (:func:`parse_markup`) so that they read as in the lessons:
  ``W_x``, ``s_{t−1}``, ``*QK*^⊤``, ``∂L/∂h``.

A short example::

    d = Drawing(200, 80, title="An affine layer")
    a = d.box(50, 40, 60, 36, "x", fill="green_light")
    b = d.box(150, 40, 60, 36, "xW + b", fill="sky_light")
    d.connect(a, b)
    svg_text = d.to_svg()
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from tools.diagrams.markup import Span, markup_width, parse_markup, placement
from tools.diagrams.style import (
    BACKWARD,
    DASH,
    FONT_FAMILY,
    FONT_SIZE,
    FORWARD,
    PALETTE,
    SMALL_SIZE,
    colour,
    coord,
    escape,
    fmt,
)

__all__ = [
    "BACKWARD", "FONT_FAMILY", "FONT_SIZE", "FORWARD", "PALETTE", "SMALL_SIZE", "Box", "Drawing",
    "Span", "fmt", "markup_width", "parse_markup",
]

# --------------------------------------------------------------------------------------------
# geometry
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Box:
    """The outline of a shape on the drawing, to attach arrows and labels to.

    ``x, y`` is the top-left corner, ``w, h`` the size (px); ``kind`` is ``"rect"`` or
    ``"circle"`` (then ``w == h`` is the diameter).
    """

    x: float
    y: float
    w: float
    h: float
    kind: str = "rect"

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2

    @property
    def center(self) -> tuple[float, float]:
        return (self.cx, self.cy)

    @property
    def left(self) -> tuple[float, float]:
        return (self.x, self.cy)

    @property
    def right(self) -> tuple[float, float]:
        return (self.x + self.w, self.cy)

    @property
    def top(self) -> tuple[float, float]:
        return (self.cx, self.y)

    @property
    def bottom(self) -> tuple[float, float]:
        return (self.cx, self.y + self.h)

    def at(self, side: str, t: float = 0.5) -> tuple[float, float]:
        """A point on one side (``left/right/top/bottom``), ``t`` of the way along it (0..1)."""
        if side == "left":
            return (self.x, self.y + t * self.h)
        if side == "right":
            return (self.x + self.w, self.y + t * self.h)
        if side == "top":
            return (self.x + t * self.w, self.y)
        if side == "bottom":
            return (self.x + t * self.w, self.y + self.h)
        raise ValueError(f"side must be left, right, top or bottom, got {side!r}")

    def toward(self, point: tuple[float, float]) -> tuple[float, float]:
        """Where the segment from the centre toward ``point`` leaves the outline."""
        dx, dy = point[0] - self.cx, point[1] - self.cy
        if dx == 0 and dy == 0:
            return self.center
        if self.kind == "circle":
            r = self.w / 2 / math.hypot(dx, dy)
            return (self.cx + dx * r, self.cy + dy * r)
        scale = min(
            self.w / 2 / abs(dx) if dx else math.inf, self.h / 2 / abs(dy) if dy else math.inf
        )
        return (self.cx + dx * scale, self.cy + dy * scale)


def _unit(p, q):
    dx, dy = q[0] - p[0], q[1] - p[1]
    n = math.hypot(dx, dy)
    if n == 0:
        raise ValueError(f"an arrow needs two different points, got {p} twice")
    return dx / n, dy / n

# --------------------------------------------------------------------------------------------
# the drawing
# --------------------------------------------------------------------------------------------

class Drawing:
    """An SVG canvas of ``width`` × ``height`` px with a title (read by screen readers).

    Shapes are added in painting order (later on top). Every method takes colour *names* from
    :data:`PALETTE` and returns the :class:`Box` of what it drew where that is useful.
    The drawing records the extent of every text label, so :meth:`problems` can report text
    that leaves the canvas or overlaps other text.
    """

    def __init__(self, width: float, height: float, title: str, desc: str = ""):
        if width <= 0 or height <= 0:
            raise ValueError(f"a drawing needs a positive size, got {width} × {height}")
        if not title.strip():
            raise ValueError("a drawing needs a title (it is the figure's accessible name)")
        self.width, self.height = width, height
        self.title, self.desc = title, desc
        self._items: list[str] = []
        self._texts: list[tuple[str, tuple[float, float, float, float]]] = []

    # ---- output ---------------------------------------------------------------------------
    def to_svg(self) -> str:
        """The SVG document as text (UTF-8 when written; ends with a newline)."""
        w, h = coord(self.width), coord(self.height)
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
                f'viewBox="0 0 {w} {h}" role="img" aria-labelledby="title desc" '
                f'font-family="{FONT_FAMILY}" font-size="{FONT_SIZE}">')
        lines = [head,
                 f'  <title id="title">{escape(self.title)}</title>',
                 f'  <desc id="desc">{escape(self.desc or self.title)}</desc>',
                 f'  <rect x="0" y="0" width="{w}" height="{h}" fill="{PALETTE["white"]}"/>']
        lines += ["  " + item for item in self._items]
        lines.append("</svg>")
        return "\n".join(lines) + "\n"

    def save(self, path) -> Path:
        """Write :meth:`to_svg` to ``path`` (UTF-8, ``\\n`` line ends); returns the path."""
        path = Path(path)
        path.write_bytes(self.to_svg().encode("utf-8"))
        return path

    def problems(self, margin: float = 2.0) -> list[str]:
        """Text that leaves the canvas, or two labels whose estimated extents overlap.

        Extents come from DejaVu Sans metrics; ``margin`` px is tolerated. Returns one message per
        problem (an empty list for a clean drawing).
        """
        found = []
        for label, (x0, y0, x1, y1) in self._texts:
            if (
                x0 < -margin
                or y0 < -margin
                or x1 > self.width + margin
                or y1 > self.height + margin
            ):
                found.append(f"text {label!r} at x {x0:.0f}..{x1:.0f}, y {y0:.0f}..{y1:.0f} "
                             f"leaves the {self.width} × {self.height} canvas")
        for i, (a, ra) in enumerate(self._texts):
            for b, rb in self._texts[i + 1:]:
                if (min(ra[2], rb[2]) - max(ra[0], rb[0]) > margin
                        and min(ra[3], rb[3]) - max(ra[1], rb[1]) > margin):
                    found.append(f"text {a!r} overlaps text {b!r}")
        return found

    def _add(self, tag: str, attrs: list[tuple[str, object]], content: str | None = None):
        parts = [tag] + [f'{k}="{v if isinstance(v, str) else coord(v)}"'
                         for k, v in attrs if v is not None]
        if content is None:
            self._items.append("<" + " ".join(parts) + "/>")
        else:
            self._items.append("<" + " ".join(parts) + ">" + content + f"</{tag}>")

    @staticmethod
    def _stroke_attrs(color: str, width: float, dashed: bool):
        return [("stroke", colour(color)), ("stroke-width", width),
                ("stroke-dasharray", DASH if dashed else None)]

    # ---- text -------------------------------------------------------------------------------
    def text(self, x: float, y: float, label: str, *, size: float = FONT_SIZE,
             anchor: str = "middle", color: str = "black", bold: bool = False,
             italic: bool = False, plain: bool = False) -> Box:
        """A one-line label whose *visual middle* is at height ``y`` (not its baseline).

        ``anchor`` is ``start``, ``middle`` or ``end`` (where ``x`` is). ``label`` uses the markup
        of :func:`parse_markup` unless ``plain``; ``italic`` sets the whole label in italics.
        Returns the label's estimated extent.
        """
        if anchor not in ("start", "middle", "end"):
            raise ValueError(f"anchor must be start, middle or end, got {anchor!r}")
        spans = parse_markup(label, plain)
        if italic:
            spans = [Span(s.text, True, s.script) for s in spans]
        width = markup_width(label, size, bold, plain)
        x0 = x - {"start": 0, "middle": width / 2, "end": width}[anchor]
        baseline = y + 0.35 * size
        content, current = [], 0.0
        for s in spans:
            offset, span_size = placement(s.script, size)
            attrs = []
            if offset != current:
                attrs.append(f'dy="{coord(offset - current)}"')
                current = offset
            if span_size != size:
                attrs.append(f'font-size="{coord(span_size)}"')
            if s.italic:
                attrs.append('font-style="italic"')
            body = escape(s.text)
            content.append(f"<tspan {' '.join(attrs)}>{body}</tspan>" if attrs else body)
        # xml:space="preserve": renderers otherwise drop spaces at the edges of a <tspan>
        self._add("text", [("x", x), ("y", baseline), ("xml:space", "preserve"),
                           ("text-anchor", anchor),
                           ("font-size", size if size != FONT_SIZE else None),
                           ("font-weight", "bold" if bold else None),
                           ("fill", colour(color))], "".join(content))
        offsets = [placement(s.script, size)[0] for s in spans] or [0.0]
        top = baseline - 0.78 * size + min(0.0, min(offsets))
        bottom = baseline + 0.22 * size + max(0.0, max(offsets))
        self._texts.append((label, (x0, top, x0 + width, bottom)))
        return Box(x0, top, width, bottom - top)

    def text_lines(self, x: float, y: float, lines: list[str], *, line_height: float | None = None,
                   **kwargs) -> Box:
        """Several :meth:`text` lines; the first is centred on height ``y``. Returns their extent.
        """
        step = line_height or 1.35 * kwargs.get("size", FONT_SIZE)
        boxes = [self.text(x, y + i * step, line, **kwargs) for i, line in enumerate(lines)]
        x0 = min(b.x for b in boxes)
        x1 = max(b.x + b.w for b in boxes)
        return Box(x0, boxes[0].y, x1 - x0, boxes[-1].y + boxes[-1].h - boxes[0].y)

    # ---- shapes -----------------------------------------------------------------------------
    def rect(self, x: float, y: float, w: float, h: float, *, fill: str = "white",
             stroke: str = "black", stroke_width: float = 1.5, rx: float = 0,
             dashed: bool = False, fill_opacity: float | None = None) -> Box:
        """A rectangle with its top-left corner at ``x, y`` (rounded corners of radius ``rx``).

        ``fill_opacity`` (0..1, written with 2 decimals) shades a cell by a value, e.g. an
        attention weight, while keeping to the palette's colours.
        """
        if fill_opacity is not None and not 0 <= fill_opacity <= 1:
            raise ValueError(f"fill_opacity must be in [0, 1], got {fill_opacity}")
        self._add("rect", [("x", x), ("y", y), ("width", w), ("height", h),
                           ("rx", rx or None), ("fill", colour(fill)),
                           ("fill-opacity", None if fill_opacity is None
                            else f"{round(fill_opacity, 2):.2f}"),
                           *self._stroke_attrs(stroke, stroke_width, dashed)])
        return Box(x, y, w, h)

    def box(self, cx: float, cy: float, w: float | None = None, h: float = 36,
            label: str = "", *, fill: str = "white", stroke: str = "black",
            stroke_width: float = 1.5, rx: float = 7, size: float = FONT_SIZE,
            bold: bool = False, dashed: bool = False, text_color: str = "black",
            plain: bool = False, pad: float = 12) -> Box:
        """A rounded box centred at ``cx, cy`` with a centred label.

        With ``w=None`` the box is as wide as its label plus ``pad`` px on each side.
        """
        if w is None:
            w = markup_width(label, size, bold, plain) + 2 * pad
        b = self.rect(cx - w / 2, cy - h / 2, w, h, fill=fill, stroke=stroke,
                      stroke_width=stroke_width, rx=rx, dashed=dashed)
        if label:
            self.text(cx, cy, label, size=size, bold=bold, color=text_color, plain=plain)
        return b

    def circle(self, cx: float, cy: float, r: float, label: str = "", *, fill: str = "white",
               stroke: str = "black", stroke_width: float = 1.5, size: float = FONT_SIZE,
               dashed: bool = False) -> Box:
        """A circle (an operation node such as ⊙ or +) with a centred label."""
        self._add("circle", [("cx", cx), ("cy", cy), ("r", r), ("fill", colour(fill)),
                             *self._stroke_attrs(stroke, stroke_width, dashed)])
        if label:
            self.text(cx, cy, label, size=size)
        return Box(cx - r, cy - r, 2 * r, 2 * r, kind="circle")

    def line(self, p, q, *, color: str = FORWARD, width: float = 1.5,
             dashed: bool = False) -> None:
        """A straight line from ``p`` to ``q`` (points are ``(x, y)`` pairs)."""
        self.polyline([p, q], color=color, width=width, dashed=dashed)

    def polyline(self, points, *, color: str = FORWARD, width: float = 1.5,
                 dashed: bool = False, fill: str = "none") -> None:
        """Straight segments through ``points`` (closed and filled when ``fill`` is a colour)."""
        if len(points) < 2:
            raise ValueError(f"a polyline needs at least two points, got {len(points)}")
        pts = " ".join(f"{coord(x)},{coord(y)}" for x, y in points)
        tag = "polyline" if fill == "none" else "polygon"
        self._add(tag, [("points", pts), ("fill", colour(fill)),
                        *self._stroke_attrs(color, width, dashed),
                        ("stroke-linejoin", "round"), ("stroke-linecap", "round")])

    def path(self, d: str, *, color: str = FORWARD, width: float = 1.5, dashed: bool = False,
             fill: str = "none") -> None:
        """A raw SVG path (``d`` must already be rounded; prefer the other methods)."""
        self._add("path", [("d", d), ("fill", colour(fill)),
                           *self._stroke_attrs(color, width, dashed),
                           ("stroke-linejoin", "round"), ("stroke-linecap", "round")])

    # ---- arrows -----------------------------------------------------------------------------
    def _head(self, tip, direction, color, size):
        ux, uy = direction
        bx, by = tip[0] - ux * size, tip[1] - uy * size
        hw = size * 0.45
        pts = [tip, (bx - uy * hw, by + ux * hw), (bx + uy * hw, by - ux * hw)]
        self._add("polygon", [("points", " ".join(f"{coord(x)},{coord(y)}" for x, y in pts)),
                              ("fill", colour(color)), ("stroke", "none")])

    def arrow_path(self, points, *, color: str = FORWARD, width: float = 1.5,
                   dashed: bool = False, head: float = 10, both: bool = False,
                   label: str = "", label_at: int = 0, label_dx: float = 0,
                   label_dy: float = -11, label_size: float = SMALL_SIZE,
                   label_color: str | None = None, label_anchor: str = "middle") -> None:
        """An arrow along straight segments through ``points``, its head at the last point.

        The line stops short of the tip so a thick or dashed line never pokes through the head.
        ``both=True`` puts a head at the first point too. ``label`` is written at the middle of
        segment ``label_at``, moved by ``label_dx, label_dy``.
        """
        pts = [tuple(p) for p in points]
        if len(pts) < 2:
            raise ValueError(f"an arrow needs at least two points, got {len(pts)}")
        u_end = _unit(pts[-2], pts[-1])
        line_pts = list(pts)
        line_pts[-1] = (pts[-1][0] - u_end[0] * head * 0.8, pts[-1][1] - u_end[1] * head * 0.8)
        if both:
            u_start = _unit(pts[1], pts[0])
            line_pts[0] = (pts[0][0] - u_start[0] * head * 0.8, pts[0][1] - u_start[1] * head * 0.8)
        self.polyline(line_pts, color=color, width=width, dashed=dashed)
        self._head(pts[-1], u_end, color, head)
        if both:
            self._head(pts[0], u_start, color, head)
        if label:
            (ax, ay), (bx, by) = pts[label_at], pts[label_at + 1]
            self.text((ax + bx) / 2 + label_dx, (ay + by) / 2 + label_dy, label, size=label_size,
                      color=label_color or color, anchor=label_anchor)

    def arrow(self, p, q, **kwargs) -> None:
        """A straight arrow from ``p`` to ``q``; keywords as :meth:`arrow_path`."""
        self.arrow_path([p, q], **kwargs)

    def elbow(self, p, q, first: str = "h", **kwargs) -> None:
        """An arrow with one right-angle bend: horizontal first (``"h"``) or vertical first."""
        if first not in ("h", "v"):
            raise ValueError(f"first must be 'h' or 'v', got {first!r}")
        corner = (q[0], p[1]) if first == "h" else (p[0], q[1])
        self.arrow_path([p, corner, q], **kwargs)

    def connect(self, a: Box, b: Box, **kwargs) -> None:
        """A straight arrow from the outline of ``a`` to the outline of ``b``, centre to centre."""
        self.arrow(a.toward(b.center), b.toward(a.center), **kwargs)

    def curve(self, p, q, bend: float = 30, *, color: str = FORWARD, width: float = 1.5,
              dashed: bool = False, head: float = 10, label: str = "", label_dx: float = 0,
              label_dy: float = 0, label_size: float = SMALL_SIZE,
              label_color: str | None = None) -> None:
        """A curved arrow from ``p`` to ``q``: a quadratic Bézier bulging ``bend`` px to the left
        of the direction of travel (negative: to the right). ``label`` sits at the bulge."""
        ux, uy = _unit(p, q)
        mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
        c = (mx + uy * bend * 2, my - ux * bend * 2)   # the curve reaches half-way to c
        u_end = _unit(c, q)
        end = (q[0] - u_end[0] * head * 0.8, q[1] - u_end[1] * head * 0.8)
        d = (f"M{coord(p[0])},{coord(p[1])} Q{coord(c[0])},{coord(c[1])} "
             f"{coord(end[0])},{coord(end[1])}")
        self.path(d, color=color, width=width, dashed=dashed)
        self._head(q, u_end, color, head)
        if label:
            self.text(mx + uy * bend + label_dx, my - ux * bend + label_dy, label, size=label_size,
                      color=label_color or color)

    # ---- blocks, braces, legends ------------------------------------------------------------
    def matrix(self, x: float, y: float, rows: float, cols: float, unit: float,
               name: str = "", *, shape: str = "", fill: str = "sky_light",
               stroke: str = "black", grid: bool = False, depth: int = 0,
               depth_step: float = 6, size: float = FONT_SIZE, shape_size: float = SMALL_SIZE,
               shape_side: str = "below") -> Box:
        """A matrix drawn to scale: ``rows`` × ``cols`` cells of ``unit`` px, top-left at ``x, y``.

        ``name`` is written in the middle, ``shape`` (e.g. ``"(|V|, k)"``) below, above, left or
        right of it (``shape_side``). ``grid`` draws the cell lines; ``depth`` draws that many
        sheets behind it, each ``depth_step`` px up and to the right (a batch of matrices).
        Returns the box of the front sheet.
        """
        w, h = cols * unit, rows * unit
        for k in range(depth, 0, -1):
            self.rect(x + k * depth_step, y - k * depth_step, w, h, fill=fill, stroke=stroke,
                      stroke_width=1)
        b = self.rect(x, y, w, h, fill=fill, stroke=stroke, stroke_width=1.5)
        if grid:
            for i in range(1, int(round(rows))):
                self.line((x, y + i * unit), (x + w, y + i * unit), color="grey", width=0.6)
            for j in range(1, int(round(cols))):
                self.line((x + j * unit, y), (x + j * unit, y + h), color="grey", width=0.6)
        if name:
            self.text(x + w / 2, y + h / 2, name, size=size)
        if shape:
            top_extra = depth * depth_step
            where = {"below": (x + w / 2, y + h + 0.9 * shape_size, "middle"),
                     "above": (x + w / 2, y - top_extra - 0.9 * shape_size, "middle"),
                     "left": (x - 6, y + h / 2, "end"),
                     "right": (x + w + 6 + top_extra, y + h / 2, "start")}
            if shape_side not in where:
                raise ValueError(f"shape_side must be one of {sorted(where)}, got {shape_side!r}")
            sx, sy, anchor = where[shape_side]
            self.text(sx, sy, shape, size=shape_size, anchor=anchor, color="grey_dark")
        return b

    def brace(self, p, q, label: str = "", *, depth: float = 10, color: str = "grey_dark",
              size: float = SMALL_SIZE, width: float = 1.3, label_gap: float = 6,
              anchor: str | None = None) -> None:
        """A curly brace from ``p`` to ``q``, its tip ``depth`` px to the *left* of the direction
        of travel (on screen: ``p`` left of ``q`` gives a tip pointing up, ``p`` right of ``q`` a
        tip pointing down); ``label`` is written beyond the tip."""
        ux, uy = _unit(p, q)
        nx, ny = uy, -ux                       # the left-hand normal (screen coordinates)
        length = math.hypot(q[0] - p[0], q[1] - p[1])
        r = min(depth, length / 4)

        def pt(s, t):                          # s along the brace, t toward the tip
            return f"{coord(p[0] + ux * s + nx * t)},{coord(p[1] + uy * s + ny * t)}"
        half, mid = depth / 2, length / 2
        d = (f"M{pt(0, 0)} Q{pt(0, half)} {pt(r, half)} L{pt(mid - r, half)} "
             f"Q{pt(mid, half)} {pt(mid, depth)} Q{pt(mid, half)} {pt(mid + r, half)} "
             f"L{pt(length - r, half)} Q{pt(length, half)} {pt(length, 0)}")
        self.path(d, color=color, width=width)
        if label:
            tx, ty = (
                p[0] + ux * mid + nx * (depth + label_gap),
                p[1] + uy * mid + ny * (depth + label_gap),
            )
            if anchor is None:
                anchor = "middle" if abs(nx) < 0.5 else ("start" if nx > 0 else "end")
            if anchor == "middle":
                ty += (0.5 * size) * (1 if ny > 0 else -1)
            self.text(tx, ty, label, size=size, color=color, anchor=anchor)

    def legend(self, x: float, y: float, entries, *, size: float = SMALL_SIZE,
               row: float = 22, swatch: float = 30) -> Box:
        """A legend with its top-left at ``x, y``; ``entries`` are tuples

        ``("line", label, colour, dashed)`` for a line style or ``("box", label, fill)`` for a
        fill colour. Returns its extent.
        """
        widest = 0.0
        for i, entry in enumerate(entries):
            kind, label = entry[0], entry[1]
            cy = y + row / 2 + i * row
            if kind == "line":
                color, dashed = entry[2], entry[3]
                self.arrow((x, cy), (x + swatch, cy), color=color, dashed=dashed, head=8)
            elif kind == "box":
                self.rect(x + 4, cy - 7, swatch - 8, 14, fill=entry[2], stroke="black",
                          stroke_width=1, rx=3)
            else:
                raise ValueError(f"legend entries are ('line', ...) or ('box', ...), got {kind!r}")
            b = self.text(x + swatch + 8, cy, label, size=size, anchor="start")
            widest = max(widest, b.w)
        return Box(x, y, swatch + 8 + widest, row * len(entries))
