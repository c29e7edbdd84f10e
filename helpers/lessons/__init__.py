"""Lesson code: one module per lesson, holding its experiments and its explorers' renders."""
