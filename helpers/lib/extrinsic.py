"""Extrinsic evaluation of word vectors: topic classification of documents from their averaged
word vectors, with scikit-learn classifiers of different kinds; and the linear one, multinomial
logistic regression (softmax regression), written in NumPy — its loss and gradient, and a fit by
L-BFGS that takes the gradient function as an argument (lesson 09's Exercise 5 writes the gradient).

The model: scores Z = X W + b, probabilities P = softmax(Z) row by row, and for n documents with
classes y the loss

    L(W, b) = (1/n) sum_i -log P[i, y_i]  +  (l2 / 2) ||W||^2          (the bias is not penalised)

whose gradient is dW = X^T (P - Y) / n + l2 W, db = sum_i (P - Y)[i] / n, with Y the one-hot rows of y.
scikit-learn's ``LogisticRegression(C=C)`` minimises C * n * (the mean term) + ||W||^2 / 2, the same
objective times 1 / l2 when C = 1 / (l2 n); its minimiser is the same.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from helpers.lib.checks import check_class_ids, check_finite, check_whole
from helpers.lib.metrics import document_vectors
from helpers.lib.near_duplicates import without_copies


def make_classifier(name: str, seed: int = 0):
    """A scikit-learn pipeline (standardise -> classifier): 'logreg', 'knn' or 'mlp'. Taught in lesson 09, section 5."""
    models = {
        "logreg": lambda: LogisticRegression(max_iter=2000, C=1.0),
        "knn": lambda: KNeighborsClassifier(n_neighbors=10, metric="cosine"),
        "mlp": lambda: MLPClassifier(hidden_layer_sizes=(64,), max_iter=300, random_state=seed),
    }
    if name not in models:
        raise ValueError(f"unknown classifier {name!r}; choose one of {sorted(models)}")
    return make_pipeline(StandardScaler(), models[name]())


@dataclass
class ClassificationResult:
    """Test accuracy of a classifier on averaged word vectors. Taught in lesson 09, section 5."""

    classifier: str
    accuracy: float
    n_train: int
    n_test: int
    unknown_token_share: float


def extrinsic_classification(vectors, vocab, documents: Sequence[Sequence[str]], labels: Sequence,
                             classifier: str = "logreg", test_fraction: float = 0.3, seed: int = 0,
                             groups: Sequence[int] | None = None) -> ClassificationResult:
    """Topic classification from averaged word vectors, scored on held-out documents. Taught in lesson 09, section 5.

    Topic classification from averaged word vectors: a stratified, seeded train/test
    split, ``make_classifier(classifier)``, test accuracy. ``groups`` (one id per document, e.g.
    :func:`helpers.lib.near_duplicates.near_duplicate_groups`): test documents whose group has a
    member in the training part are not scored (a copy of a training document is no test).
    Returns a ClassificationResult."""
    if len(documents) != len(labels):
        raise ValueError(f"{len(documents)} documents but {len(labels)} labels")
    if groups is not None and len(groups) != len(documents):
        raise ValueError(f"{len(documents)} documents but {len(groups)} group ids")
    if len(set(labels)) < 2:
        raise ValueError("classification needs at least two different labels")
    X, unk = document_vectors(vectors, vocab, documents)
    itr, ite = train_test_split(np.arange(len(labels)), test_size=test_fraction, random_state=seed,
                                stratify=np.asarray(labels))
    if groups is not None:
        ite = without_copies(ite, itr, groups)
    y = np.asarray(labels)
    Xtr, Xte, ytr, yte = X[itr], X[ite], y[itr], y[ite]
    clf = make_classifier(classifier, seed).fit(Xtr, ytr)
    return ClassificationResult(classifier, float((clf.predict(Xte) == yte).mean()), len(ytr), len(yte), unk)


# ----------------------------------------------------------------------------- softmax regression in NumPy
def _check_softmax_regression(X, y, W, b, l2):
    where = "softmax_regression_loss_grad"
    X, W, b = (np.asarray(v, dtype=np.float64) for v in (X, W, b))
    if X.ndim != 2 or W.ndim != 2 or b.ndim != 1:
        raise ValueError(f"{where}: expected X (n, d), W (d, K), b (K,); got shapes X {X.shape}, W {W.shape}, "
                         f"b {b.shape}")
    n, d = X.shape
    if W.shape[0] != d or W.shape[1] != b.shape[0]:
        raise ValueError(f"{where}: W must be (d={d}, K) and b (K,), got W {W.shape} and b {b.shape}")
    y = np.asarray(check_class_ids(y, W.shape[1], where, "y"))
    if y.shape != (n,) or n == 0:
        raise ValueError(f"{where}: y must hold one class per row of X, shape ({n},) with n >= 1; got {y.shape}")
    for name, v in (("X", X), ("W", W), ("b", b)):
        check_finite(v, name, where, hint="check the document vectors and the optimiser's step")
    if isinstance(l2, (bool, np.bool_)) or not np.isscalar(l2) or not np.isfinite(l2) or l2 < 0:
        raise ValueError(f"{where}: l2 must be a finite number >= 0, got {l2!r}")
    return X, y, W, b


def softmax_regression_loss_grad(X, y, W, b, l2: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Mean softmax cross-entropy of X W + b plus (l2 / 2) ||W||^2, and its gradient. Taught in lesson 09, section 5.

    X (n, d) inputs, y (n,) int classes in 0..K-1, W (d, K), b (K,), l2 >= 0.
    Returns (loss, dW (d, K), db (K,)). Stable for scores in the thousands: each row's largest
    score is subtracted before exp (the softmax does not change), and log p_y is taken as
    (z_y - max) - log sum exp(z - max), finite even where p_y itself underflows to 0."""
    X, y, W, b = _check_softmax_regression(X, y, W, b, l2)
    n = len(y)
    Z = X @ W + b
    Z = Z - Z.max(axis=1, keepdims=True)      # the same softmax, no overflow
    E = np.exp(Z)
    S = E.sum(axis=1)
    log_p = Z[np.arange(n), y] - np.log(S)     # log-sum-exp: finite even where p_y underflows to 0
    loss = float(-log_p.mean() + 0.5 * l2 * np.sum(W * W))
    G = E / S[:, None]                         # P
    G[np.arange(n), y] -= 1.0                  # P - Y
    G /= n                                     # dL/dZ, (n, K)
    return loss, X.T @ G + l2 * W, G.sum(axis=0)


def fit_softmax_regression(X, y, n_classes: int, l2: float,
                           loss_grad: Callable = softmax_regression_loss_grad,
                           max_iter: int = 1000) -> tuple[np.ndarray, np.ndarray]:
    """Softmax regression fitted by L-BFGS with the gradient ``loss_grad`` returns. Taught in lesson 09, section 5.

    Minimises the loss of :func:`softmax_regression_loss_grad` from W = 0, b = 0, with the gradient
    that ``loss_grad(X, y, W, b, l2) -> (loss, dW, db)`` returns (the course's, or the student's).
    Returns (W (d, K), b (K,))."""
    n_classes = check_whole(n_classes, "n_classes", "fit_softmax_regression", minimum=1)
    max_iter = check_whole(max_iter, "max_iter", "fit_softmax_regression", minimum=1)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"fit_softmax_regression: X must be (n, d), got shape {X.shape}")
    check_finite(X, "X", "fit_softmax_regression", hint="check the document vectors")
    y = np.asarray(check_class_ids(y, n_classes, "fit_softmax_regression", "y"))
    if y.shape != (len(X),):
        raise ValueError(f"fit_softmax_regression: y must hold one class per row of X, shape ({len(X)},); got {y.shape}")
    d = X.shape[1]

    def objective(theta):
        loss, dW, db = loss_grad(X, y, theta[: d * n_classes].reshape(d, n_classes), theta[d * n_classes:], l2)
        return loss, np.concatenate([np.ravel(dW), np.ravel(db)])

    res = minimize(objective, np.zeros(d * n_classes + n_classes), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=max_iter, gtol=1e-8))
    return res.x[: d * n_classes].reshape(d, n_classes), res.x[d * n_classes:]
