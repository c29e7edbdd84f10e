"""The real-browser check's judgements (tools/browser_check.py) that need no browser: the blank-plot
detector tells a plot from a blank image; the explorer pictures a saved notebook holds."""
import io

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from helpers.infra.plotting import figure_to_png, new_figure  # noqa: E402
from tools.browser_check import assert_not_blank, saved_fallbacks  # noqa: E402


def _png(array):
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format="PNG")
    return buf.getvalue()


def test_blank_images_are_rejected():
    with pytest.raises(AssertionError, match="looks blank"):
        assert_not_blank(_png(np.full((200, 300, 3), 255, np.uint8)), "white")
    with pytest.raises(AssertionError, match="looks blank"):
        assert_not_blank(_png(np.zeros((200, 300, 3), np.uint8)), "black")
    # an empty axes frame is not blank as an image, but a white canvas with one dot is
    img = np.full((200, 300, 3), 255, np.uint8)
    img[100, 150] = 0
    with pytest.raises(AssertionError, match="looks blank"):
        assert_not_blank(_png(img), "one dot")


def test_a_real_plot_passes():
    fig, ax = new_figure()
    ax.plot(np.arange(10), np.arange(10) ** 2)
    ax.set_title("a curve")
    assert_not_blank(figure_to_png(fig), "plot")


def test_saved_fallbacks_counts_the_explorer_pictures_of_a_notebook(tmp_path):
    import json

    from helpers.infra.widgets import Explorer, slider

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
