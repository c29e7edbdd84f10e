"""show_source: the real code of a helper, with its file and line numbers, in the notebook."""
import inspect

import numpy as np
import pytest

from helpers.infra.source import NumberedCode, Source, show_source
from helpers.lib.layers import Linear
from helpers.lib.optim import clip_global_norm


def test_returns_the_exact_source_and_prints_it_numbered(capsys):
    src = show_source(clip_global_norm)
    assert src == inspect.getsource(clip_global_norm) and isinstance(src, Source)
    assert src._ipython_display_() is None                  # shown once, not again as a value
    shown = capsys.readouterr().out.splitlines()         # outside IPython: the plain text
    lines, first = inspect.getsourcelines(clip_global_norm)
    last = first + len(lines) - 1
    assert shown[0] == f"helpers/lib/optim.py, lines {first}-{last}: clip_global_norm"
    assert shown[1].split()[:2] == [str(first), "def"]
    assert show_source(Linear.backward).lstrip().startswith("def backward")
    assert show_source(Linear).startswith("class Linear")


def test_html_has_the_line_numbers_and_the_relative_path():
    lines, first = inspect.getsourcelines(Linear.forward)
    html = NumberedCode("".join(lines), first, "helpers/lib/layers.py, lines ...")._repr_html_()
    assert "helpers/lib/layers.py" in html and "<style>" in html
    assert f">{first}<" in html.replace(" ", "")      # the first line number is in the markup


@pytest.mark.parametrize("obj, name", [(len, "<built-in function len>"), (np.add, "<ufunc 'add'>")])
def test_objects_without_source_are_a_clear_error(obj, name):
    with pytest.raises(TypeError, match=f"cannot show the source of {name}"):
        show_source(obj)
