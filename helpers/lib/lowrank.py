"""A rank-k factorisation X ≈ U Vᵀ by gradient descent: the loss, its gradient and the fit.

Lesson 05, after Exercise 5. The truncated SVD is the minimum of the same loss (Eckart and Young
1936); fitting U and V by gradient shows it without an SVD solver.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.optimize import minimize

__all__ = ["lowrank_loss_grad", "fit_lowrank"]


def lowrank_loss_grad(X: np.ndarray, U: np.ndarray, V: np.ndarray):
    """The loss of a rank-k factorisation and its gradients. Taught in lesson 05, section 6.

    ``L = ½ ‖X − U Vᵀ‖_F²`` and its gradients: ``(L, dU (m, k), dV (n, k))``.

    X (m, n), U (m, k), V (n, k). Taught in lesson 05, Exercise 5: with the residual
    R = X − U Vᵀ, dU = −R V and dV = −Rᵀ U."""
    X, U, V = (np.asarray(a, np.float64) for a in (X, U, V))
    m, n = X.shape if X.ndim == 2 else (-1, -1)
    if U.ndim != 2 or V.ndim != 2 or (U.shape[0], V.shape[0], U.shape[1]) != (m, n, V.shape[1]):
        shapes = f"{X.shape}, {U.shape}, {V.shape}"
        raise ValueError(f"expected X (m, n), U (m, k), V (n, k); got {shapes}")
    R = X - U @ V.T
    return float(0.5 * np.sum(R * R)), -R @ V, -R.T @ U


def fit_lowrank(X: np.ndarray, k: int, loss_grad: Callable = lowrank_loss_grad, seed: int = 0,
                max_iter: int = 500, scale: float = 0.1) -> dict:
    """A rank-k factorisation fitted by L-BFGS. Taught in lesson 05, section 6.

    Minimise ``loss_grad``'s loss over U (m, k) and V (n, k) with L-BFGS from a small random start.

    ``loss_grad(X, U, V) -> (loss, dU, dV)`` — the course's :func:`lowrank_loss_grad` or the
    student's. Returns {"U", "V", "losses": the loss after each iteration (a list), "loss": the
    final loss, "iterations"}."""
    X = np.asarray(X, np.float64)
    if X.ndim != 2 or not np.all(np.isfinite(X)):      # nan: L-BFGS would stop at once, silently
        raise ValueError(f"fit_lowrank: X must be a finite (m, n) matrix, got shape {X.shape}"
                         + ("" if X.ndim != 2 else " holding nan or inf"))
    m, n = X.shape
    if not 1 <= k <= min(m, n):
        raise ValueError(f"k must be in [1, {min(m, n)}] for a {m}x{n} matrix, got {k}")
    rng = np.random.default_rng(seed)
    theta0 = rng.standard_normal(m * k + n * k) * scale

    def objective(theta):
        loss, dU, dV = loss_grad(X, theta[:m * k].reshape(m, k), theta[m * k:].reshape(n, k))
        return float(loss), np.concatenate([np.ravel(dU), np.ravel(dV)])

    losses = []
    res = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                   callback=lambda theta: losses.append(objective(theta)[0]),
                   options=dict(maxiter=max_iter, gtol=1e-9, ftol=1e-14))
    return {"U": res.x[:m * k].reshape(m, k), "V": res.x[m * k:].reshape(n, k), "losses": losses,
            "loss": float(res.fun), "iterations": int(res.nit)}
