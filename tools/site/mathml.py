"""A Sphinx extension that writes every formula as MathML while the site is built.

``html_math_renderer = "mathml"`` in conf.py selects it. The TeX of ``$...$`` (inline) and
``$$...$$`` (display) is converted by latex2mathml; browsers draw MathML themselves (Chromium
and Edge since 2023, Firefox, Safari), so a page needs no MathJax, no script and no network to
show its maths. A formula that latex2mathml cannot convert stops the build with the formula and
the page named, rather than leaving raw TeX on the page.
"""
from __future__ import annotations

import re

from docutils import nodes
from latex2mathml.converter import convert

# TeX operators latex2mathml does not know, written the way it does know
_OPERATORS = {r"\arg": r"\operatorname{arg}"}
_RAW_COMMAND = re.compile(r">\\[A-Za-z]+<")
# an operator followed by "=" (``+=``, ``\mathrel{+}=``): latex2mathml writes two operators, which
# browsers space apart ("+ ="); one <mo> reads as the compound operator of the code
_COMPOUND = re.compile(
    r"<mo>(?:<mrow><mo>)?(&#x0002B;|&#x02212;|&#x0002D;|&#x0002A;)(?:</mo></mrow>)?</mo>"
    r"<mo>&#x0003D;</mo>"
)


class MathMLError(ValueError):
    """A formula that cannot be converted to MathML (its TeX and the reason are in the message)."""


def to_mathml(tex: str, display: bool = False) -> str:
    """``tex`` (one formula, without its dollar signs) as a ``<math>`` element (str).

    Raises MathMLError when latex2mathml fails, or leaves a TeX command it does not know in
    the output (it would then show as raw text such as ``\\arg``)."""
    source = tex.strip()
    if not source:
        raise MathMLError("an empty formula ($$ with nothing between)")
    for command, replacement in _OPERATORS.items():
        source = re.sub(re.escape(command) + r"(?![A-Za-z])", lambda _, r=replacement: r, source)
    try:
        mathml = convert(source, display="block" if display else "inline")
    except (
        Exception
    ) as e:  # latex2mathml raises its own exception types, and IndexError on bad input
        raise MathMLError(
            f"cannot convert the formula {tex!r} to MathML: {type(e).__name__}: {e}"
        ) from None
    mathml = _COMPOUND.sub(lambda m: f"<mo>{m.group(1)}=</mo>", mathml)
    raw = _RAW_COMMAND.search(mathml)
    if raw:
        raise MathMLError(
            f"the formula {tex!r} would show the TeX command {raw.group(0)[1:-1]!r} as text "
            "(latex2mathml does not know it): write it another way, or add it to "
            "tools/site/mathml.py's _OPERATORS"
        )
    return mathml


def _fail(translator, node, error: MathMLError):
    where = f"{node.source or translator.builder.current_docname}:{node.line or '?'}"
    raise MathMLError(f"{where}: {error}") from None


def visit_math(translator, node) -> None:
    try:
        translator.body.append(to_mathml(node.astext(), display=False))
    except MathMLError as e:
        _fail(translator, node, e)
    raise nodes.SkipNode


def visit_displaymath(translator, node) -> None:
    try:
        mathml = to_mathml(node.astext(), display=True)
    except MathMLError as e:
        _fail(translator, node, e)
    translator.body.append(translator.starttag(node, "div", CLASS="math-display"))
    translator.body.append(mathml + "</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", inline_renderers=(visit_math, None),
                               block_renderers=(visit_displaymath, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
