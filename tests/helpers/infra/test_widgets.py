"""The explorers (helpers.infra.widgets): a thin layer over a render function, and the static
fallback (the first render as HTML and PNG) that a notebook keeps where no kernel runs."""
import base64

import numpy as np

from helpers.infra import widgets
from helpers.infra.plotting import new_figure
from helpers.infra.widgets import FALLBACK_CLASS, WIDGET_NOTE, Explorer, dropdown, slider


def _render(freq, kind="sin"):
    fig, ax = new_figure()
    x = np.linspace(0, 6, 100)
    ax.plot(x, np.sin(freq * x) if kind == "sin" else np.cos(freq * x))
    return fig, f"{kind} at frequency {freq}"


def test_explorer_redraws_when_a_slider_moves():
    ex = Explorer(_render, {"freq": slider(1.0, 0.5, 3.0, 0.5, "f"),
                            "kind": dropdown(["sin", "cos"], "sin", "k")})
    assert ex.renders == 1 and ex.summary == "sin at frequency 1.0"
    assert ex.png.startswith(b"\x89PNG")
    first = ex.png
    ex.controls["freq"].value = 2.0
    assert ex.renders == 2 and ex.summary == "sin at frequency 2.0" and ex.png != first
    ex.controls["kind"].value = "cos"
    assert ex.summary == "cos at frequency 2.0"
    assert "course-explorer" in ex.box._dom_classes


def test_explorer_with_button_waits_for_the_click_and_shows_errors():
    def render(x):
        if x > 2:
            raise ValueError("x too large")
        return _render(x)
    ex = Explorer(render, {"x": slider(1, 0, 5, 1, "x")}, run_button="Train")
    ex.controls["x"].value = 2
    assert ex.renders == 1 and ex.summary == "sin at frequency 1"
    ex.button.click()
    assert ex.renders == 2 and ex.summary == "sin at frequency 2"
    ex.controls["x"].value = 4
    ex.button.click()
    assert ex.summary == "error: ValueError: x too large"


def test_the_fallback_is_the_first_render_in_every_form():
    ex = Explorer(_render, {"freq": slider(1, 0, 3, 1, "f")}, title="Waves & <lines>")
    bundle = ex.fallback_bundle()
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    assert base64.b64decode(bundle["image/png"]) == ex.png
    page = bundle["text/html"]
    assert f'class="{FALLBACK_CLASS} {ex.fallback_key}"' in page
    assert f'src="data:image/png;base64,{bundle["image/png"]}"' in page
    assert "Waves &amp; &lt;lines&gt;" in page and "sin at frequency 1" in page  # escaped title
    assert bundle["text/plain"] == "Waves & <lines>\nsin at frequency 1"
    ex.controls["freq"].value = 3                         # the fallback stays the first view
    assert ex.summary == "sin at frequency 3" and ex.fallback_bundle() == bundle


def test_the_widget_hides_only_its_own_fallback():
    ex = Explorer(_render, {"freq": slider(1, 0, 3, 1, "f")})
    other = Explorer(_render, {"freq": slider(2, 0, 3, 1, "f")})
    assert ex.fallback_key != other.fallback_key
    again = Explorer(_render, {"freq": slider(1, 0, 3, 1, "f")})
    assert again.fallback_key == ex.fallback_key       # a re-run names the same fallback
    styles = [w.value for w in ex.box.children
              if isinstance(w, widgets.widgets.HTML) and "<style>" in w.value]
    assert len(styles) == 1 and "display: none" in styles[0]
    assert f".{FALLBACK_CLASS}.{ex.fallback_key} " in styles[0]
    assert other.fallback_key not in styles[0]


def test_displaying_an_explorer_writes_the_fallback_then_the_widget(monkeypatch):
    shown = []
    monkeypatch.setattr(widgets, "display", lambda obj, raw=False: shown.append((obj, raw)))
    ex = Explorer(_render, {"freq": slider(1, 0, 3, 1, "f")})
    ex._ipython_display_()
    assert [raw for _, raw in shown] == [True, True]
    assert shown[0][0] == ex.fallback_bundle()
    widget = shown[1][0]
    assert widget["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.box.model_id
    assert widget["text/plain"] == WIDGET_NOTE and "VBox" not in widget["text/plain"]


def test_a_failed_first_render_has_a_fallback_without_an_image():
    def broken(freq):
        raise ValueError("no data")

    bundle = Explorer(broken, {"freq": slider(1, 0, 3, 1, "f")}).fallback_bundle()
    assert "image/png" not in bundle and "<img" not in bundle["text/html"]
    assert "error: ValueError: no data" in bundle["text/plain"]
