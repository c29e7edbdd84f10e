"""The SVD without an SVD solver: power iteration, and a rank-k factorisation X ≈ U Vᵀ fitted by
its gradient (lesson 05 §3 and §7)."""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.optimize import minimize


def power_iteration(A, x0: np.ndarray, n_steps: int = 100) -> tuple[float, np.ndarray]:
    """σ₁ and u₁ of an (m, n) matrix (dense or sparse) by power iteration from ``x0`` (n,):
    v ← Aᵀ(A v) / ‖Aᵀ(A v)‖ ``n_steps`` times, then σ₁ = ‖A v‖ and u₁ = A v / σ₁ (lesson 05 §3)."""
    v = np.asarray(x0, np.float64) / np.linalg.norm(x0)
    for _ in range(n_steps):
        v = A.T @ (A @ v)
        v = v / np.linalg.norm(v)
    u = A @ v
    sigma = float(np.linalg.norm(u))
    return sigma, u / sigma


def lowrank_loss_grad(X: np.ndarray, U: np.ndarray, V: np.ndarray):
    """L = ½ ‖X − U Vᵀ‖_F² and its gradients: ``(L, dU (m, k), dV (n, k))`` for X (m, n),
    U (m, k), V (n, k) (lesson 05 §7)."""
    R = X - U @ V.T
    return float(0.5 * np.sum(R * R)), -R @ V, -R.T @ U


def fit_lowrank(X: np.ndarray, k: int, loss_grad: Callable = lowrank_loss_grad, seed: int = 0,
                max_iter: int = 500, scale: float = 0.1) -> dict:
    """U (m, k) and V (n, k) minimising the loss of ``loss_grad(X, U, V) -> (loss, dU, dV)`` by
    L-BFGS from a small random start (lesson 05 §7): {"U", "V", "losses", "loss", "iterations"}."""
    X = np.asarray(X, np.float64)
    if X.ndim != 2 or not np.all(np.isfinite(X)):       # nan: L-BFGS would stop at once, silently
        raise ValueError(f"fit_lowrank: X must be a finite (m, n) matrix, got shape {X.shape}")
    m, n = X.shape
    if not 1 <= k <= min(m, n):
        raise ValueError(f"fit_lowrank: k must be in [1, {min(m, n)}] for an {m}x{n} X, got {k}")
    theta0 = np.random.default_rng(seed).standard_normal(m * k + n * k) * scale

    def objective(theta):
        loss, dU, dV = loss_grad(X, theta[:m * k].reshape(m, k), theta[m * k:].reshape(n, k))
        return float(loss), np.concatenate([np.ravel(dU), np.ravel(dV)])

    losses = []
    res = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                   callback=lambda theta: losses.append(objective(theta)[0]),
                   options=dict(maxiter=max_iter, gtol=1e-9, ftol=1e-14))
    return {"U": res.x[:m * k].reshape(m, k), "V": res.x[m * k:].reshape(n, k), "losses": losses,
            "loss": float(res.fun), "iterations": int(res.nit)}
