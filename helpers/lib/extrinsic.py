"""Extrinsic evaluation of word vectors: topic classifiers on averaged word vectors, and softmax
regression in NumPy (lesson 09 §5)."""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from helpers.lib.checks import check_class_ids, check_finite, check_whole
from helpers.lib.near_duplicates import without_copies


def make_classifier(name: str):
    """scikit-learn's standardise-then-classify pipeline: 'logreg' or 'knn' (lesson 09 §5)."""
    models = {"logreg": lambda: LogisticRegression(max_iter=2000, C=1.0),
              "knn": lambda: KNeighborsClassifier(n_neighbors=10, metric="cosine")}
    if name not in models:
        raise ValueError(f"unknown classifier {name!r}; choose one of {sorted(models)}")
    return make_pipeline(StandardScaler(), models[name]())


def held_out_split(labels, seed: int, groups=None) -> tuple[np.ndarray, np.ndarray]:
    """(train ids, test ids): a stratified 70/30 split by ``seed``, without the test documents
    whose group (one id per document) has a member among the training ones (lesson 09 §5)."""
    y = np.asarray(labels)
    if groups is not None and len(groups) != len(y):
        raise ValueError(f"{len(y)} labels but {len(groups)} group ids")
    train, test = train_test_split(np.arange(len(y)), test_size=0.3, random_state=seed, stratify=y)
    test = test if groups is None else without_copies(test, train, groups)
    if not len(test):
        raise ValueError("every test document has a copy among the training ones (groups)")
    return train, test


def softmax_regression_loss_grad(X, y, W, b, l2: float) -> tuple[float, np.ndarray, np.ndarray]:
    """The loss of softmax regression, (1/n) Σ_i −log softmax(X W + b)[i, y_i] + (l2/2) ‖W‖², and
    its gradient (loss, dW (d, K), db (K,)), for X (n, d), y (n,) (lesson 09 §5)."""
    where = "softmax_regression_loss_grad"
    X, W, b = (np.asarray(v, dtype=np.float64) for v in (X, W, b))
    if X.ndim != 2 or W.ndim != 2 or b.ndim != 1 or W.shape != (X.shape[1], len(b)):
        raise ValueError(f"{where}: expected X (n, d), W (d, K), b (K,); got shapes X {X.shape}, "
                         f"W {W.shape}, b {b.shape}")
    y = np.asarray(check_class_ids(y, W.shape[1], where, "y"))
    if y.shape != (len(X),) or len(X) == 0:
        raise ValueError(f"{where}: y must hold one class per row of X, shape ({len(X)},) with "
                         f"n >= 1; got {y.shape}")
    for name, v in (("X", X), ("W", W), ("b", b)):
        check_finite(v, name, where, hint="check the document vectors and the optimiser's step")
    if isinstance(l2, (bool, np.bool_)) or not np.isscalar(l2) or not np.isfinite(l2) or l2 < 0:
        raise ValueError(f"{where}: l2 must be a finite number >= 0, got {l2!r}")
    n = len(y)
    Z = X @ W + b
    Z = Z - Z.max(axis=1, keepdims=True)       # the same softmax, no overflow
    E = np.exp(Z)
    S = E.sum(axis=1)
    log_p = Z[np.arange(n), y] - np.log(S)     # finite even where p_y underflows to 0
    G = E / S[:, None]                         # P
    G[np.arange(n), y] -= 1.0                  # P - Y
    G /= n                                     # dL/dZ
    return float(-log_p.mean() + 0.5 * l2 * np.sum(W * W)), X.T @ G + l2 * W, G.sum(axis=0)


def fit_softmax_regression(X, y, n_classes: int, l2: float,
                           loss_grad: Callable = softmax_regression_loss_grad
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Softmax regression (W (d, K), b (K,)) fitted by L-BFGS from zeros with the gradient
    ``loss_grad(X, y, W, b, l2) -> (loss, dW, db)`` returns (lesson 09 §5)."""
    n_classes = check_whole(n_classes, "n_classes", "fit_softmax_regression", minimum=1)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"fit_softmax_regression: X must be (n, d), got shape {X.shape}")
    check_finite(X, "X", "fit_softmax_regression", hint="check the document vectors")
    y = np.asarray(check_class_ids(y, n_classes, "fit_softmax_regression", "y"))
    if y.shape != (len(X),):
        raise ValueError(f"fit_softmax_regression: y must hold one class per row of X, shape "
                         f"({len(X)},); got {y.shape}")
    d, K = X.shape[1], n_classes

    def objective(theta):
        loss, dW, db = loss_grad(X, y, theta[:d * K].reshape(d, K), theta[d * K:], l2)
        return loss, np.concatenate([np.ravel(dW), np.ravel(db)])

    theta = minimize(objective, np.zeros(d * K + K), jac=True, method="L-BFGS-B",
                     options=dict(maxiter=1000, gtol=1e-8)).x
    return theta[:d * K].reshape(d, K), theta[d * K:]
