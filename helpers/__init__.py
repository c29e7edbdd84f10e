"""Shared code for the course "Neural NLP from scratch", in layers, each importing only from those
before it (``tests/repo/test_layering.py``): ``infra`` (plotting, widgets, cache, checksums),
``lib`` (the library the student builds), ``course`` (data, trained models), ``lessons`` (each
lesson's experiments and renders); ``exercises`` (the checkers) uses only ``infra`` and ``lib``.
"""

__version__ = "0.1.0"
