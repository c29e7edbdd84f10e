"""``show_source``: the real code of a helper, shown in the notebook."""
from __future__ import annotations

import html
import inspect
from pathlib import Path

from IPython.display import Code, display
from pygments import highlight  # pygments comes with IPython
from pygments.formatters import HtmlFormatter

REPO = Path(__file__).resolve().parents[2]


class NumberedCode(Code):
    """``IPython.display.Code`` with the file's line numbers (HTML in a notebook, else text)."""

    def __init__(self, data: str, first_line: int = 1, title: str = ""):
        super().__init__(data=data, language="python")
        self.first_line, self.title = first_line, title

    def _repr_html_(self) -> str:
        fmt = HtmlFormatter(linenos="inline", linenostart=self.first_line)
        style = f"<style>{fmt.get_style_defs('.output_html')}</style>"
        head = f"<div style='font-family:monospace;color:#666'>{html.escape(self.title)}</div>"
        return style + head + highlight(self.data, self._get_lexer(), fmt)

    def __repr__(self) -> str:
        width = len(str(self.first_line + self.data.count("\n")))
        lines = [f"{n:>{width}}  {line}"
                 for n, line in enumerate(self.data.splitlines(), self.first_line)]
        return "\n".join([self.title] + lines)


class Source(str):
    """The source code as a string that displays nothing (:func:`show_source` showed it)."""

    def _ipython_display_(self) -> None:
        pass


def show_source(obj) -> Source:
    """Display the source of ``obj`` with its file path and line numbers, and return it."""
    target = inspect.unwrap(obj)
    try:
        lines, first = inspect.getsourcelines(target)
        path = Path(inspect.getsourcefile(target)).resolve()
    except (OSError, TypeError) as e:
        raise TypeError(f"cannot show the source of {obj!r}: it has no Python source file "
                        f"({e})") from None
    source = "".join(lines)
    try:
        where = path.relative_to(REPO).as_posix()
    except ValueError:
        where = str(path)
    first = max(first, 1)
    name = getattr(obj, "__qualname__", getattr(obj, "__name__", type(obj).__name__))
    display(NumberedCode(source, first, f"{where}, lines {first}-{first + len(lines) - 1}: {name}"))
    return Source(source)
