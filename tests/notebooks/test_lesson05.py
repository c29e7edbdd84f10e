"""Lesson 05's worked example against the table it comes from, and the search engine running on
the student's functions."""

import numpy as np
import scipy.sparse as sp

from helpers.lib.lsa import tfidf
from tests.lesson_text import NOTEBOOKS, code_cells, load, source


def test_the_worked_example_is_exact_where_its_source_rounded():
    """The lesson prints the exact weights. Its source prints 26.0, 6.2, 5.2 and 18.6: the counts
    times the IDFs rounded to one decimal first (5.2 and 6.2), so 25.7921 became 26.0."""
    tf = sp.csr_matrix(np.array([[43, 5, 1], [24, 1, 0], [37, 0, 3]], float))
    w, idf = tfidf(tf, smooth=False, norm=None, base=2, n_documents=500, df=[500, 14, 7])
    assert idf.round(4).tolist() == [0.0, 5.1584, 6.1584]
    exact = {(0, 1): 25.7921, (0, 2): 6.1584, (1, 1): 5.1584, (2, 2): 18.4753}
    source_table = {(0, 1): 26.0, (0, 2): 6.2, (1, 1): 5.2, (2, 2): 18.6}
    for cell, value in exact.items():
        assert round(w[cell], 4) == value
        assert round(tf[cell] * round(idf[cell[1]], 1), 1) == source_table[cell]


def test_the_search_engine_ranks_with_the_student_s_tf_idf_and_lsa_cosines():
    nb = load(next(p for p in NOTEBOOKS if p.name.startswith("05")))
    rankers = next(source(c) for c in code_cells(nb) if "headline_scores = {" in source(c))
    assert "tfidf_fn = your_or_reference(tfidf_result" in rankers
    assert "lsa_fn = your_or_reference(lsa_result" in rankers
    assert rankers.count("lsa_fn(X_bodies") == 2 and "tfidf_fn(" in rankers
