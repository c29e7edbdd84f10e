"""Layer 0, infrastructure: seeding, plotting, widgets, the on-disk cache, the training loop,
data checksums, thread limits and ``show_source``. Imports nothing else from ``helpers``."""
