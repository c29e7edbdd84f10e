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
"""
from __future__ import annotations

import html
import traceback
from typing import Callable

import ipywidgets as widgets

from helpers.infra.plotting import figure_to_png


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
    counts redraws; tests and the browser check read them.
    """

    def __init__(self, render: Callable[..., tuple], controls: dict, title: str = "",
                 run_button: str | None = None):
        self.render, self.controls = render, dict(controls)
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
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
        self.box = widgets.VBox(children)
        self.box.add_class("course-explorer")
        self.update()

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

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)
