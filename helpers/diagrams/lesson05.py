"""Diagrams of lesson 05."""

LESSON = 5

FIGURES = ()
