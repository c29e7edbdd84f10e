"""Shared code for the course "Neural NLP from scratch", in four layers; each imports only
from the layers below it (``tests/repo/test_layering.py`` checks it):

- ``helpers.infra``   (0) seeding, plotting, widgets, live training, cache, checksums;
- ``helpers.lib``     (1) the library the student builds: pure computation;
- ``helpers.course``  (2) the course's data, trained models and vectors;
- ``helpers.lessons`` (3) one module per lesson: its experiments and explorer renders.

``helpers.exercises`` holds the exercise checkers (they use only ``infra`` and ``lib``).
Notebooks import what they need, e.g. ``from helpers.lib.layers import Linear``. Nothing is
imported here so that ``import helpers`` stays fast.
"""

__version__ = "0.1.0"
