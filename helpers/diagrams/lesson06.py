"""Diagrams of lesson 06."""

LESSON = 6

FIGURES = ()
