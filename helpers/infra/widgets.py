"""Widget explorers: thin ipywidgets layers over pure ``render(**values) -> (figure, summary)``,
with the first render kept as a static fallback."""
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


def slider(value, min, max, step, description: str, integer: bool | None = None,
           readout_format: str | None = None):
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
    """A slider over 10**min_exp .. 10**max_exp (learning rates, regularisation strengths)."""
    return widgets.FloatLogSlider(value=value, base=10, min=min_exp, max=max_exp, step=step,
                                  description=description, continuous_update=False,
                                  style={"description_width": "initial"})


def dropdown(options, value, description: str):
    """A drop-down list of ``options``."""
    return widgets.Dropdown(options=options, value=value, description=description,
                            style={"description_width": "initial"})


class Explorer:
    """Controls {keyword: widget} -> pure ``render(**values) -> (Figure, str)`` -> PNG + text."""


    def __init__(self, render: Callable[..., tuple], controls: dict, title: str = "",
                 run_button: str | None = None):
        self.render, self.controls = render, dict(controls)
        # natural size, like the fallback and inline figures (a flex column would stretch it)
        layout = widgets.Layout(max_width="100%", align_self="flex-start")
        self.image = widgets.Image(format="png", layout=layout)
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
        # hides this explorer's own fallback, and the empty output row around it
        hide = widgets.HTML(f"<style>.{FALLBACK_CLASS}.{self.fallback_key} "
                            "{display: none !important} "
                            ".jp-OutputArea-child:has(> .jp-OutputArea-output "
                            f".{self.fallback_key}) {{display: none !important}}</style>",
                            layout=widgets.Layout(display="none"))
        self.box.children = (*self.box.children, hide)

    def values(self) -> dict:
        """{keyword: the control's current value}."""
        return {name: w.value for name, w in self.controls.items()}

    def update(self) -> None:
        """Render the current values; an exception is shown in the summary line."""
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
        """The first render as ``text/html`` (PNG inline), ``image/png`` and ``text/plain``."""
        b64 = base64.b64encode(self.first_png).decode("ascii")
        title = f"<b>{html.escape(self.title)}</b><br>" if self.title else ""
        alt = html.escape(self.title or "explorer plot", quote=True)
        image = (f'<img src="data:image/png;base64,{b64}" alt="{alt}" style="max-width: 100%">'
                 if b64 else "")
        pre = "margin: 0; white-space: pre-wrap; word-break: normal; overflow-wrap: break-word"
        page = (f'<div class="{FALLBACK_CLASS} {self.fallback_key}">{title}{image}'
                f"<pre style='{pre}'>{html.escape(self.first_summary)}</pre></div>")
        text = (f"{self.title}\n" if self.title else "") + self.first_summary
        bundle = {"text/html": page, "image/png": b64, "text/plain": text}
        if not b64:  # the first render failed: its error is the summary, there is no image
            del bundle["image/png"]
        return bundle

    def widget_bundle(self) -> dict:
        """The live widget's display bundle, with :data:`WIDGET_NOTE` as its ``text/plain``."""
        bundle = dict(self.box._repr_mimebundle_())
        bundle["text/plain"] = WIDGET_NOTE
        return bundle

    def _ipython_display_(self):
        display(self.fallback_bundle(), raw=True)
        display(self.widget_bundle(), raw=True)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget_bundle()
