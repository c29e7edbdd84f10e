"""Diagrams of lesson 03."""

LESSON = 3

FIGURES = ()
