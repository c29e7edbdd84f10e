"""Diagrams of lesson 07."""

LESSON = 7

FIGURES = ()
