"""Shared code for the course "Neural NLP from scratch": ``infra``, ``lib`` (the library the
student builds), ``course`` (data, shipped models), ``lessons`` and ``exercises`` (checkers)."""

__version__ = "0.1.0"
