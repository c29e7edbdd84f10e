"""Widget explorers: thin ipywidgets layers over pure functions.

An :class:`Explorer` shows controls, a plot and a one-line summary. Its ``render``
function is pure — ``render(**control_values) -> (figure, summary_text)`` — and lives in
``helpers`` where tests call it directly.

Why the plot is an ``ipywidgets.Image`` holding PNG bytes and not an ``interact`` output:
with JupyterLab 4.6 and ipykernel 7, widget messages are handled on a kernel subshell and
race matplotlib's inline backend, so an ``interact`` plot can come up blank on first
display. Rendering the figure to PNG ourselves and setting the image widget's value does
not depend on the inline backend at all; the first render happens before the widget is
displayed, so it is never blank.

A static fallback for where widgets cannot run. A saved notebook holds no widget state, so
GitHub, nbviewer, ``jupyter nbconvert --to html`` and a printout show nothing for a widget
(or a widget's ``text/plain``, ``VBox(children=...)``). Displaying an
explorer therefore writes two outputs:

1. the fallback: the first render's image and summary as ``text/html`` (a
   ``<div class="course-explorer-fallback ...">`` with the PNG inline as a data URI), with
   ``image/png`` and ``text/plain`` copies in the same bundle, so that every front end finds a
   form it shows (HTML viewers the div, LaTeX/PDF the PNG, a terminal the text);
2. the live widget, whose ``text/plain`` is a one-line note (:data:`WIDGET_NOTE`) instead of
   ``VBox(children=...)``: nbconvert 7 shows the ``text/plain`` of a widget that has no saved
   state, so an HTML export reads "(above: the explorer's first view; run the notebook ...)".

The widget carries a ``<style>`` rule (inside an ``ipywidgets.HTML`` child, so it exists only
where the widget really rendered) that hides *its own* fallback: the rule names a class made
from a hash of the first render, so a fallback left over from an earlier run, whose widget is
gone, stays visible. JupyterLab therefore shows only the live widget, and everything else
shows the picture. (A ``<style>`` in an HTML *output* would not do: JupyterLab 4.6 strips it
from the outputs of an untrusted notebook, which a cloned notebook is, whereas an
``ipywidgets.HTML`` value reaches the page as written. Measured in Chromium; see
``tools/browser_check.py``, which checks both views.)
"""
from __future__ import annotations

import base64
import hashlib
import html
import traceback
from typing import Callable

import ipywidgets as widgets
from IPython.display import display

from helpers.infra.plotting import figure_to_png

FALLBACK_CLASS = "course-explorer-fallback"
WIDGET_NOTE = "(above: the explorer's first view; run the notebook to move its controls)"


def slider(value, min, max, step, description: str, integer: bool | None = None, readout_format: str | None = None):
    """An Int/Float slider that updates on release (``continuous_update=False``)."""
    if integer is None:
        integer = all(isinstance(v, int) for v in (value, min, max, step))
    cls = widgets.IntSlider if integer else widgets.FloatSlider
    kw = dict(value=value, min=min, max=max, step=step, description=description,
              continuous_update=False, style={"description_width": "initial"})
    if readout_format and not integer:
        kw["readout_format"] = readout_format
    return cls(**kw)


def log_slider(value: float, min_exp: float, max_exp: float, description: str, step: float = 0.25):
    """A slider over 10**min_exp .. 10**max_exp, for learning rates and regularisation strengths."""
    return widgets.FloatLogSlider(value=value, base=10, min=min_exp, max=max_exp, step=step,
                                  description=description, continuous_update=False,
                                  style={"description_width": "initial"})


def dropdown(options, value, description: str):
    return widgets.Dropdown(options=options, value=value, description=description,
                            style={"description_width": "initial"})


class Explorer:
    """Controls -> pure ``render`` function -> PNG plot + summary text.

    Parameters
    ----------
    render : callable(**values) -> (matplotlib Figure, str)
    controls : {keyword: widget} — each widget's ``value`` is passed to ``render`` under
        that keyword
    title : heading shown above the controls
    run_button : if given, the label of a button that triggers the redraw (for widgets
        that train: nothing runs until the reader clicks); otherwise any change redraws.

    ``summary`` holds the last summary text, ``png`` the last image bytes, ``renders``
    counts redraws; tests and the browser check read them. ``fallback_bundle()`` is the static
    first render that displaying the explorer writes before the live widget (see the module
    docstring).
    """

    def __init__(self, render: Callable[..., tuple], controls: dict, title: str = "",
                 run_button: str | None = None):
        self.render, self.controls = render, dict(controls)
        # natural size, like the fallback and inline figures (the flex column would stretch and blur it)
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%", align_self="flex-start"))
        self.image.add_class("course-explorer-plot")
        self.text = widgets.HTML()
        self.text.add_class("course-explorer-text")
        self.renders, self.summary, self.png = 0, "", b""
        children = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        children.append(widgets.HBox(list(self.controls.values()),
                                     layout=widgets.Layout(flex_flow="row wrap")))
        if run_button:
            self.button = widgets.Button(description=run_button, button_style="primary")
            self.button.on_click(lambda _: self.update())
            children.append(self.button)
        else:
            self.button = None
            for w in self.controls.values():
                w.observe(lambda _change: self.update(), names="value")
        children += [self.image, self.text]
        self.title = title
        self.box = widgets.VBox(children)
        self.box.add_class("course-explorer")
        self.update()
        self.first_png, self.first_summary = self.png, self.summary
        key = hashlib.sha256(self.first_png + self.first_summary.encode("utf-8")).hexdigest()[:16]
        self.fallback_key = f"course-explorer-{key}"
        # hides this explorer's own fallback wherever the widget renders (see the module docstring);
        # the second rule also collapses the empty output row around it (browsers with :has())
        hide = widgets.HTML(f"<style>.{FALLBACK_CLASS}.{self.fallback_key} {{display: none !important}} "
                            f".jp-OutputArea-child:has(> .jp-OutputArea-output .{self.fallback_key}) "
                            f"{{display: none !important}}</style>",
                            layout=widgets.Layout(display="none"))
        self.box.children = (*self.box.children, hide)

    def values(self) -> dict:
        return {name: w.value for name, w in self.controls.items()}

    def update(self) -> None:
        """Call ``render`` with the current values and show its figure and summary.
        An exception is shown in the summary line instead of vanishing in a log."""
        try:
            fig, summary = self.render(**self.values())
            self.png = figure_to_png(fig)
            self.image.value = self.png
        except Exception as e:  # show the reader what went wrong, in the widget
            summary = f"error: {type(e).__name__}: {e}"
            traceback.print_exc()
        self.summary = summary
        self.renders += 1
        self.text.value = f"<pre style='margin:0'>{html.escape(summary)}</pre>"

    def fallback_bundle(self) -> dict:
        """The first render as a display bundle: ``text/html`` (title, image as a data URI,
        summary), ``image/png`` (base64) and ``text/plain`` (title and summary)."""
        b64 = base64.b64encode(self.first_png).decode("ascii")
        title = f"<b>{html.escape(self.title)}</b><br>" if self.title else ""
        alt = html.escape(self.title or "explorer plot", quote=True)
        image = f'<img src="data:image/png;base64,{b64}" alt="{alt}" style="max-width: 100%">' if b64 else ""
        page = (f'<div class="{FALLBACK_CLASS} {self.fallback_key}">{title}{image}'
                f"<pre style='margin: 0; white-space: pre-wrap; word-break: normal; overflow-wrap: break-word'>{html.escape(self.first_summary)}</pre></div>")
        text = (f"{self.title}\n" if self.title else "") + self.first_summary
        bundle = {"text/html": page, "image/png": b64, "text/plain": text}
        if not b64:  # the first render failed: its error is the summary, there is no image
            del bundle["image/png"]
        return bundle

    def widget_bundle(self) -> dict:
        """The live widget's display bundle, with a ``text/plain`` note in place of
        ``VBox(children=...)``: nbconvert's HTML, a PDF and a terminal show it under the
        fallback, where the widget cannot render."""
        bundle = dict(self.box._repr_mimebundle_())
        bundle["text/plain"] = WIDGET_NOTE
        return bundle

    def _ipython_display_(self):
        display(self.fallback_bundle(), raw=True)
        display(self.widget_bundle(), raw=True)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget_bundle()
