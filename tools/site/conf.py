"""Sphinx configuration of the course's static site (``make site``; tools/build_site.py).

Sphinx with myst-nb renders the committed notebooks as they are: nothing is executed
(``nb_execution_mode = "off"``). The Furo theme gives the page layout, the previous/next links
and the search box (Sphinx's own search index, no server needed). Formulas are turned into
MathML while the site is built (``mathml.py`` beside this file, with latex2mathml), so a page
shows its maths with no script and no network. The instructors' pages (solutions/) are linked
from the front page only: neither search nor a lesson's previous/next link leads to them.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the mathml extension beside this file

project = "Neural NLP from scratch"
author = "the course's authors"
copyright = "the course's authors; lesson text CC BY 4.0, code MIT"
language = "en"

extensions = ["myst_nb", "mathml"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "furo"
html_title = project
html_static_path = [str(Path(__file__).resolve().parent / "static")]
html_css_files = ["course.css"]
html_copy_source = False            # no _sources/ copies of every notebook
html_show_sourcelink = False
html_last_updated_fmt = None
html_math_renderer = "mathml"

# MyST: $...$ and $$...$$ maths, ids on headings (lessons link to
# "01_feedforward.ipynb#comparing-models")
myst_enable_extensions = ["dollarmath", "amsmath", "html_image"]
myst_heading_anchors = 4
myst_dmath_double_inline = True

# myst-nb: the committed outputs, never a kernel
nb_execution_mode = "off"
nb_merge_streams = True
# an explorer's live widget has no saved state: show its static fallback (the HTML and PNG
# output before it) and the widget's one-line text, and load no widget script from a CDN
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_ipywidgets_js = {}
nb_render_markdown_format = "myst"

suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]


def _apart_from_the_lessons(app, doctree):
    """The instructors' pages (solutions/) stay out of the search index, and out of the lessons'
    table of contents (so no previous/next link leads from a lesson into them); the front page
    links to them."""
    if app.env.docname.startswith("solutions/"):
        app.env.metadata[app.env.docname].update(nosearch=True, orphan=True)


def setup(app):
    app.connect("doctree-read", _apart_from_the_lessons, priority=900)
