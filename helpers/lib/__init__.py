"""The library the student builds: pure computation (layers, optimisers, gradient checks,
recurrent cells, attention, counting, word2vec, GloVe, fastText, BERT, metrics ...). No data
loading, no caching, no plotting; every public docstring names the lesson that teaches it.
"""
