"""Layer 3, lesson code: one module per lesson (``lesson01`` ... ``lesson10``) holding its
experiments and the render functions of its explorers. A lesson module imports the layers
below, never another lesson module."""
