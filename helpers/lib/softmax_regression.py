"""Multinomial logistic regression (softmax regression) in NumPy: its loss and gradient, and a fit by
L-BFGS that takes the gradient function as an argument. Taught in lesson 09, section 5 (the downstream
classifier of the extrinsic evaluation; the student writes the gradient in Exercise 5).

The model: scores Z = X W + b, probabilities P = softmax(Z) row by row, and for n documents with
classes y the loss

    L(W, b) = (1/n) sum_i -log P[i, y_i]  +  (l2 / 2) ||W||^2          (the bias is not penalised)

whose gradient is dW = X^T (P - Y) / n + l2 W, db = sum_i (P - Y)[i] / n, with Y the one-hot rows of y.
scikit-learn's ``LogisticRegression(C=C)`` minimises C * n * (the mean term) + ||W||^2 / 2, the same
objective times 1 / l2 when C = 1 / (l2 n); its minimiser is the same.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.optimize import minimize


def _check(X, y, W, b):
    X, y, W, b = np.asarray(X, dtype=np.float64), np.asarray(y), np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if X.ndim != 2 or W.ndim != 2 or b.ndim != 1:
        raise ValueError(f"expected X (n, d), W (d, K), b (K,); got shapes {X.shape}, {W.shape}, {b.shape}")
    n, d = X.shape
    if W.shape[0] != d or W.shape[1] != b.shape[0]:
        raise ValueError(f"W must be (d={d}, K) and b (K,), got {W.shape} and {b.shape}")
    if y.shape != (n,) or n == 0:
        raise ValueError(f"y must hold one class per row of X, shape ({n},) with n >= 1; got {y.shape}")
    if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= W.shape[1]:
        raise ValueError(f"y must be integer classes in [0, {W.shape[1]}), got {y.dtype} in "
                         f"[{y.min()}, {y.max()}]")
    return X, y, W, b


def softmax_regression_loss_grad(X, y, W, b, l2: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Mean softmax cross-entropy of the scores X W + b plus (l2 / 2) ||W||^2, and its gradient.

    X (n, d) inputs, y (n,) int classes in 0..K-1, W (d, K), b (K,), l2 >= 0.
    Returns (loss, dW (d, K), db (K,)). Stable for scores in the thousands (each row's largest
    score is subtracted before exp; the softmax does not change)."""
    X, y, W, b = _check(X, y, W, b)
    n = len(y)
    Z = X @ W + b
    Z = Z - Z.max(axis=1, keepdims=True)
    P = np.exp(Z)
    P /= P.sum(axis=1, keepdims=True)
    loss = float(-np.log(P[np.arange(n), y]).mean() + 0.5 * l2 * np.sum(W * W))
    G = P
    G[np.arange(n), y] -= 1.0                  # P - Y
    G /= n                                     # dL/dZ, (n, K)
    return loss, X.T @ G + l2 * W, G.sum(axis=0)


def fit_softmax_regression(X, y, n_classes: int, l2: float,
                           loss_grad: Callable = softmax_regression_loss_grad,
                           max_iter: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """Minimise the loss above by L-BFGS from W = 0, b = 0, with the gradient that ``loss_grad(X, y, W,
    b, l2) -> (loss, dW, db)`` returns (the course's, or the student's). Returns (W (d, K), b (K,))."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]

    def objective(theta):
        loss, dW, db = loss_grad(X, y, theta[: d * n_classes].reshape(d, n_classes), theta[d * n_classes:], l2)
        return loss, np.concatenate([np.ravel(dW), np.ravel(db)])

    res = minimize(objective, np.zeros(d * n_classes + n_classes), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=max_iter, gtol=1e-8))
    return res.x[: d * n_classes].reshape(d, n_classes), res.x[d * n_classes:]
