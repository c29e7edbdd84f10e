"""Lesson 06's checkers beyond test_hints.py: a PPMI computed on the dense matrix
is refused even when it returns a sparse one, and the counter must stay sparse."""

import numpy as np
import scipy.sparse as sp

from helpers.exercises import lesson06 as ex


def test_a_ppmi_built_densely_is_refused(capsys):
    def dense_inside(counts, alpha):
        c = counts.toarray()
        n = c.sum()
        p_c = c.sum(axis=0) ** alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.log2((c / n) / np.outer(c.sum(axis=1) / n, p_c / p_c.sum()))
        return sp.csr_matrix(np.where(np.isfinite(m), np.maximum(m, 0.0), 0.0))

    assert ex.check_sparse_ppmi(dense_inside).status == "failed"
    assert "the dense matrix was built" in capsys.readouterr().out


def test_a_dense_count_matrix_is_refused(capsys):
    def dense_counts(sentences_ids, vocab_size, window):
        return ex._counter_reference(sentences_ids, vocab_size, window).toarray()

    assert ex.check_cooccurrence.run_checks(dense_counts).status == "failed"
    assert "expected a scipy.sparse matrix" in capsys.readouterr().out
