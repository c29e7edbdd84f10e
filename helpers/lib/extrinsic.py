"""Extrinsic evaluation of word vectors: topic classification of documents from their averaged
word vectors, with scikit-learn classifiers of different kinds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from helpers.lib.metrics import document_vectors
from helpers.lib.near_duplicates import without_copies


def make_classifier(name: str, seed: int = 0):
    """A scikit-learn pipeline (standardise -> classifier): 'logreg', 'knn' or 'mlp'. Taught in lesson 09, section 4."""
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
    """Test accuracy of a classifier on averaged word vectors. Taught in lesson 09, section 4."""

    classifier: str
    accuracy: float
    n_train: int
    n_test: int
    unknown_token_share: float


def extrinsic_classification(vectors, vocab, documents: Sequence[Sequence[str]], labels: Sequence,
                             classifier: str = "logreg", test_fraction: float = 0.3, seed: int = 0,
                             groups: Sequence[int] | None = None) -> ClassificationResult:
    """Topic classification from averaged word vectors, scored on held-out documents. Taught in lesson 09, section 4.

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
