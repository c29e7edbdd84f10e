"""Checks that a matplotlib figure follows the course's plot style (:mod:`helpers.infra.plotting`).

:func:`figure_problems` draws the figure and returns what is wrong, one sentence each (an
empty list for a good figure). Tests call it on every plotting function of ``helpers``;
lesson authors can call it on a figure of their own (``from tools.figure_checks import
figure_problems``, from the repository root).

What it checks, per panel (colour bars apart):
- a title, an x label and a y label (an axis with no ticks needs no label);
- no raw TeX in any text (mathtext between ``$...$`` must parse);
- colours from the palette (:data:`ALLOWED_COLOURS`): lines, bars, filled areas, markers,
  text; images and colour-mapped points use a perceptually uniform colour map and have a
  colour bar;
- no two tick labels of one axis overlap, and no title or axis label overlaps another panel's;
- a log axis labels its major ticks only (no minor tick labels, the usual garbled ones).
"""
from __future__ import annotations

import matplotlib as mpl
from matplotlib.collections import Collection
from matplotlib.colors import to_hex, to_rgba
from matplotlib.image import AxesImage
from matplotlib.patches import Patch

from helpers.infra.plotting import PALETTE, tex_problem

#: every colour a course figure may use (hex, upper case)
ALLOWED_COLOURS = frozenset(v.upper() for v in PALETTE.values())
#: the perceptually uniform colour maps a heat map may use
UNIFORM_CMAPS = frozenset({"viridis", "cividis", "magma", "inferno", "plasma", "berlin", "managua",
                           "vanimo"})


def _hex(colour) -> str | None:
    """Upper-case '#RRGGBB' of a colour, or None when it is fully transparent or 'none'."""
    if colour is None or (isinstance(colour, str) and colour.lower() == "none"):
        return None
    rgba = to_rgba(colour)
    return None if rgba[3] == 0 else to_hex(rgba[:3]).upper()


def _is_colour_bar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _overlap(a, b, tolerance: float = 1.0) -> bool:
    """Whether two display-space boxes overlap by more than ``tolerance`` pixels both ways."""
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance) and (
        min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance
    )


def _colour_problems(ax, name: str) -> list[str]:
    problems, seen = [], set()

    def check(colour, what):
        h = _hex(colour)
        if h is not None and h not in ALLOWED_COLOURS and (what, h) not in seen:
            seen.add((what, h))
            problems.append(f"{name}: {what} colour {h} is not in the course palette "
                            "(use plotting.COLOURS / GREY / BLACK)")

    for line in ax.get_lines():
        check(line.get_color(), "line")
        if line.get_marker() not in (None, "None", "", " "):
            check(line.get_markerfacecolor(), "marker")
    for patch in ax.patches:
        if isinstance(patch, Patch):
            check(patch.get_facecolor(), "bar/patch fill")
            check(patch.get_edgecolor(), "bar/patch edge")
    for coll in ax.collections:
        if isinstance(coll, Collection) and coll.get_array() is not None:
            cmap = coll.get_cmap().name.removesuffix("_r")
            if cmap not in UNIFORM_CMAPS:
                problems.append(
                    f"{name}: colour-mapped points use {cmap!r}, not a perceptually uniform map"
                )
            continue
        for c in list(coll.get_facecolors()) + list(coll.get_edgecolors()):
            check(c, "point/area")
    for text in ax.texts:
        check(text.get_color(), "text")
    return problems


def figure_problems(fig) -> list[str]:
    """Everything in ``fig`` that breaks the course's plot style, one sentence each (empty
    when the figure is fine). Draws the figure (with the Agg renderer) to measure its text."""
    problems = []
    if mpl.rcParams["text.usetex"]:
        problems.append("text.usetex is on: the course uses mathtext only")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_visible() and not _is_colour_bar(ax)]
    bars = [ax for ax in fig.axes if _is_colour_bar(ax)]
    if not panels:
        return ["the figure has no panels"]
    furniture = []   # (panel index, text) of titles and axis labels, for overlaps between panels
    for i, ax in enumerate(panels):
        name = f"panel {i + 1}" + (f" ({ax.get_title()!r})" if ax.get_title() else "")
        if not ax.get_title() and not (fig._suptitle and len(panels) == 1):
            problems.append(f"{name}: no title")
        for axis, letter in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            if labels and not axis.get_label_text():
                problems.append(f"{name}: no {letter} label")
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            for j in range(len(boxes)):
                for k in range(j + 1, len(boxes)):
                    if _overlap(boxes[j][1], boxes[k][1]):
                        problems.append(
                            f"{name}: {letter} tick labels {boxes[j][0]!r} and {boxes[k][0]!r} "
                            "overlap"
                        )
            if axis.get_scale() == "log":
                minor = [
                    t.get_text()
                    for t in axis.get_minorticklabels()
                    if t.get_visible() and t.get_text()
                ]
                if minor:
                    problems.append(f"{name}: the log {letter} axis labels minor ticks {minor[:4]} "
                                    "(use plotting.log_axis)")
                if len(labels) < 2:
                    problems.append(
                        f"{name}: the log {letter} axis has {len(labels)} labelled tick(s); "
                        "it needs at least two to be read"
                    )
        texts = [ax.title, ax.xaxis.label, ax.yaxis.label] + list(ax.texts)
        texts += list(ax.get_xticklabels()) + list(ax.get_yticklabels())
        legend = ax.get_legend()
        if legend is not None:
            texts += list(legend.get_texts())
        for t in texts:
            problem = tex_problem(t.get_text())
            if problem:
                problems.append(f"{name}: {problem}")
        problems += _colour_problems(ax, name)
        for im in ax.images:
            if isinstance(im, AxesImage):
                cmap = im.get_cmap().name.removesuffix("_r")
                if cmap not in UNIFORM_CMAPS:
                    problems.append(
                        f"{name}: heat map colour map {cmap!r} is not perceptually uniform "
                        "(use plotting.heatmap)"
                    )
                shared = [cb._colorbar.mappable for cb in bars
                          if cb._colorbar.mappable.get_cmap().name == im.get_cmap().name
                          and cb._colorbar.mappable.get_clim() == im.get_clim()]
                if im.colorbar is None and not shared:  # a bar shared by panels of one scale counts
                    problems.append(f"{name}: heat map without a colour bar")
        furniture += [
            (i, t)
            for t in (ax.title, ax.xaxis.label, ax.yaxis.label)
            if t.get_text() and t.get_visible()
        ]
    for cb_ax in bars:
        if not (cb_ax.get_ylabel() or cb_ax.get_xlabel()):
            problems.append("a colour bar has no label")
    boxes = [(i, t.get_text(), t.get_window_extent(renderer)) for i, t in furniture]
    for i, (pa, ta, ba) in enumerate(boxes):
        for pb, tb, bb in boxes[i + 1:]:
            if pa != pb and _overlap(ba, bb):
                problems.append(f"{ta!r} (panel {pa + 1}) overlaps {tb!r} (panel {pb + 1})")
    return problems
