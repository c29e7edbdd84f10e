"""Layer 1, the library the student builds: pure computation (layers, optimisers, gradient
checks, recurrent cells, attention, counting, word2vec, GloVe, fastText, BERT, metrics ...).

No data loading, no caching, no plotting. Imports only :mod:`helpers.infra` and other
modules of ``helpers.lib``. The first line of every public function's and class's docstring
names the lesson and section that teach it.
"""
