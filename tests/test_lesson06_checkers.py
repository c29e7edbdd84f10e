"""The defects of lesson 06's checkers that issue 30 found, each shown fixed: a PPMI built densely
and one that keeps explicit stored zeros are refused, the minimum-count experiment measures for
itself and gives a verdict on an empty matrix, and the SGNS exercise refuses the course's gradient."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from helpers.exercises import lesson06 as ex
from helpers.lib.negative_sampling import sgns_pair_gradients


def _dense_ppmi(counts, alpha):
    """The right numbers, computed on counts.toarray() (what the exercise forbids)."""
    c = counts.toarray()
    n = c.sum()
    p_w = c.sum(axis=1) / n
    c_alpha = c.sum(axis=0) ** alpha
    p_c = c_alpha / c_alpha.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.log2((c / n) / np.outer(p_w, p_c))
    m = np.where(np.isfinite(m), np.maximum(m, 0.0), 0.0)
    return sp.csr_matrix(m)


def test_a_ppmi_built_densely_is_refused(capsys):
    result = ex.check_sparse_ppmi(_dense_ppmi)
    out = capsys.readouterr().out
    assert result.status == "failed" and "the dense matrix was built" in out, out


def test_a_ppmi_that_keeps_explicit_zeros_is_refused(capsys):
    result = ex.check_sparse_ppmi(ex._zeros_kept)
    out = capsys.readouterr().out
    assert result.status == "failed" and "stored zeros" in out and result.mistake == "stored_zeros", out


def test_the_minimum_count_experiment_measures_for_itself(capsys):
    right = ex.check_min_count_ties.right_answer()           # no context: the checker's own example
    assert ex.check_min_count_ties(right)
    result = ex.check_min_count_ties(5, bigrams=sp.csr_matrix((3, 3)))
    out = capsys.readouterr().out
    assert result.status == "failed" and "could not measure" in out and "Traceback" not in out
    bigrams = ex._example_bigrams()
    assert ex.check_min_count_ties(ex._smallest_count_without_ties(bigrams), bigrams=bigrams)
    assert ex.check_min_count_ties(2, bigrams=np.ones((2, 3))).status == "failed"


def test_the_sgns_exercise_refuses_the_course_s_gradient(capsys):
    assert ex.check_sgns_pair_backward(sgns_pair_gradients).status == "failed"
    namespace = {"__name__": "__main__", "sgns_pair_gradients": sgns_pair_gradients}
    exec("def mine(w, c, n_pos, n_neg):\n    return sgns_pair_gradients(w, c, n_pos, n_neg)\n", namespace)
    assert ex.check_sgns_pair_backward(namespace["mine"]).status == "failed"
    assert "course's own" in capsys.readouterr().out
    assert ex.check_sgns_pair_backward.run_checks(ex.check_sgns_pair_backward.reference)
