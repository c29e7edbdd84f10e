"""Layer 2, the course's data and artefacts: the corpora and benchmark loaders, the lessons'
trained models and vectors, their settings and cache keys. Imports :mod:`helpers.infra`,
:mod:`helpers.lib` and other modules of ``helpers.course``."""
