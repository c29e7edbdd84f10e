"""The explorers (helpers.infra.widgets): a thin layer over a render function."""
import numpy as np

from helpers.infra.plotting import new_figure
from helpers.infra.widgets import Explorer, dropdown, slider


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
