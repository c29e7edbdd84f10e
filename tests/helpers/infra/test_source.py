"""show_source: the real code of a helper, with its file and line numbers, in the notebook."""
import inspect

import numpy as np
import pytest

from helpers.infra.source import NumberedCode, Source, show_source
from helpers.lib.layers import Linear
from helpers.lib.optim import clip_global_norm


def test_returns_the_exact_source_and_prints_it_numbered(capsys):
    src = show_source(clip_global_norm)
    assert src == inspect.getsource(clip_global_norm) and isinstance(src, str)
    shown = capsys.readouterr().out            # outside IPython, display() prints the plain text
    lines, first = inspect.getsourcelines(clip_global_norm)
    assert shown.splitlines()[0] == f"helpers/lib/optim.py, lines {first}-{first + len(lines) - 1}: clip_global_norm"
    assert shown.splitlines()[1].split()[:2] == [str(first), "def"]


def test_methods_and_classes():
    assert show_source(Linear.backward).lstrip().startswith("def backward")
    assert show_source(Linear).startswith("class Linear")


def test_html_has_the_line_numbers_and_the_relative_path():
    lines, first = inspect.getsourcelines(Linear.forward)
    html = NumberedCode("".join(lines), first, "helpers/lib/layers.py, lines ...")._repr_html_()
    assert "helpers/lib/layers.py" in html
    assert f">{first}<" in html.replace(" ", "")      # the first line number is in the markup
    assert "<style>" in html


def test_the_returned_string_is_not_displayed_twice():
    assert Source("x = 1")._ipython_display_() is None


def test_objects_without_source_are_a_clear_error():
    with pytest.raises(TypeError, match="cannot show the source of <built-in function len>"):
        show_source(len)
    with pytest.raises(TypeError, match="cannot show the source of <ufunc 'add'>"):
        show_source(np.add)
