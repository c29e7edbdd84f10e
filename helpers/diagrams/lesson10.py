"""Diagrams of lesson 10."""

LESSON = 10

FIGURES = ()
