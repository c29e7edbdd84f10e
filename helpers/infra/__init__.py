"""Layer 0 of ``helpers``: infrastructure that every other layer may use.

Nothing here knows about a lesson. ``svg`` draws the course's diagrams (with the text widths
of ``font_metrics``).
"""
