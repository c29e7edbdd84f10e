"""Diagrams of lesson 08."""

LESSON = 8

FIGURES = ()
