"""Lesson 05's checkers beyond test_hints.py: an SVD solver is refused however it is reached,
and the experiment measures on the lesson's kind of matrix."""

import numpy as np
import scipy.sparse as sp

from helpers.exercises import lesson05 as ex


def test_power_iteration_by_an_svd_solver_is_refused(capsys):
    def with_numpy(A, x0, n_steps):
        u, s, _ = np.linalg.svd(A.toarray() if sp.issparse(A) else A)
        return s[0], u[:, 0]

    def with_scipy(A, x0, n_steps):
        import scipy.sparse.linalg
        u, s, _ = scipy.sparse.linalg.svds(sp.csr_matrix(A, dtype=float), k=1)
        return s[0], u[:, 0]

    for answer in (with_numpy, with_scipy):
        assert ex.check_power_iteration(answer).status == "failed"
        assert "is refused" in capsys.readouterr().out
    assert ex.check_power_iteration.run_checks(with_numpy)  # the same answer, unwatched, is right


def test_the_first_direction_is_measured_not_trusted():
    context = ex._example_matrix()
    right = ex._u1_frequency(**context)
    assert right > 0.9  # the example's rows grow with counts
    shuffled = {**context, "word_counts": context["word_counts"][::-1]}
    assert ex.check_first_direction(round(right, 3), **context)
    assert ex.check_first_direction(round(right, 3), **shuffled).status == "failed"
