"""tools/browser_check.py without a browser: blank images told from plots, and the explorer
pictures a saved notebook holds."""
import io
import json

import numpy as np
import pytest
from PIL import Image

from helpers.infra.plotting import figure_to_png, new_figure
from helpers.infra.widgets import Explorer, slider
from tools.browser_check import assert_not_blank, saved_fallbacks


def _png(array):
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format="PNG")
    return buf.getvalue()


def one_dot():
    img = np.full((200, 300, 3), 255, np.uint8)
    img[100, 150] = 0
    return img


@pytest.mark.parametrize("image", [np.full((200, 300, 3), 255, np.uint8),
                                   np.zeros((200, 300, 3), np.uint8), one_dot()],
                         ids=["white", "black", "one dot"])
def test_blank_images_are_rejected_and_a_real_plot_passes(image):
    with pytest.raises(AssertionError, match="looks blank"):
        assert_not_blank(_png(image), "blank")
    fig, ax = new_figure()
    ax.plot(np.arange(10), np.arange(10) ** 2)
    ax.set_title("a curve")
    assert_not_blank(figure_to_png(fig), "plot")


def test_saved_fallbacks_counts_the_explorer_pictures_of_a_notebook(tmp_path):
    def render(a):
        fig, ax = new_figure()
        ax.plot([0, 1], [0, a])
        return fig, f"a = {a}"

    ex = Explorer(render, {"a": slider(1, 0, 2, 1, "a")})
    outputs = [{"output_type": "display_data", "metadata": {}, "data": ex.fallback_bundle()},
               {"output_type": "display_data", "metadata": {}, "data": ex.widget_bundle()}]
    nb = {"cells": [
        {"cell_type": "code", "source": "Explorer(...)", "metadata": {}, "outputs": outputs},
        {"cell_type": "markdown", "source": "course-explorer-fallback", "metadata": {}}]}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert saved_fallbacks(path) == 1
    nb["cells"][0]["outputs"] = outputs[1:]
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert saved_fallbacks(path) == 0
