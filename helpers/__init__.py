"""Shared code for the course "Neural NLP from scratch".

Each module holds one concern; notebooks import what they need, e.g.
``from helpers.layers import Linear``. Nothing is imported here so that
``import helpers`` stays fast.
"""

__version__ = "0.1.0"
