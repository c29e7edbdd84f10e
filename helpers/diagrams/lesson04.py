"""Diagrams of lesson 04."""

LESSON = 4

FIGURES = ()
