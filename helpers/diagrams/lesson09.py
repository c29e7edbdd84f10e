"""Diagrams of lesson 09."""

LESSON = 9

FIGURES = ()
