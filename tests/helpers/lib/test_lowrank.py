"""helpers.lib.lowrank: power iteration against NumPy's SVD, the rank-k gradient against finite
differences and PyTorch, and the fit reaching the truncated SVD (Eckart-Young)."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from helpers.exercises import expect_gradients_match_numerical, expect_gradients_match_torch
from helpers.lib.lowrank import fit_lowrank, lowrank_loss_grad, power_iteration
from tests.props import raises_naming


@pytest.mark.parametrize("sparse", [False, True])
def test_power_iteration_finds_the_first_singular_pair_at_the_predicted_rate(sparse):
    A = np.random.default_rng(0).normal(size=(9, 6))
    U, S, _ = np.linalg.svd(A)
    sigma, u = power_iteration(sp.csr_matrix(A) if sparse else A, np.ones(6), 300)
    assert sigma == pytest.approx(S[0]) and abs(u @ U[:, 0]) == pytest.approx(1.0)

    def error(t):
        u_t = power_iteration(A, np.ones(6), t)[1]
        return np.linalg.norm(u_t * np.sign(u_t @ U[:, 0]) - U[:, 0])

    assert error(21) / error(20) == pytest.approx(
        (S[1] / S[0]) ** 2, rel=0.05
    )  # the derivation's rate


def test_the_rank_k_gradient_matches_finite_differences_and_pytorch():
    rng = np.random.default_rng(2)
    X, U, V = rng.normal(size=(6, 5)), rng.normal(size=(6, 2)), rng.normal(size=(5, 2))
    loss, dU, dV = lowrank_loss_grad(X, U, V)
    assert loss == pytest.approx(0.5 * np.sum((X - U @ V.T) ** 2))
    expect_gradients_match_numerical([dU, dV], lambda U, V: lowrank_loss_grad(X, U, V)[0],
                                     [U, V], ["dU", "dV"], tol=1e-6)
    expect_gradients_match_torch([dU, dV],
                                 lambda U, V: ((torch.tensor(X) - U @ V.T) ** 2).sum() / 2,
                                 [U, V], ["dU", "dV"])


def test_the_fit_is_seeded_and_reaches_the_truncated_svd():
    X = np.random.default_rng(2).normal(size=(30, 20))
    fit = fit_lowrank(X, 4, seed=1)
    svd_loss = 0.5 * np.sum(np.linalg.svd(X, compute_uv=False)[4:] ** 2)
    assert fit["loss"] == pytest.approx(svd_loss, rel=1e-6)
    assert fit["iterations"] == len(fit["losses"])
    assert fit["losses"] == fit_lowrank(X, 4, seed=1)["losses"]
    assert all(b <= a + 1e-9 for a, b in zip(fit["losses"], fit["losses"][1:]))
    raises_naming(lambda: fit_lowrank(X, 21), "k")
    raises_naming(lambda: fit_lowrank(np.where(X > 2, np.nan, X), 2), "X")
