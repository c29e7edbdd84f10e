"""Lesson 01 (feed-forward networks): topic classification with a NumPy MLP, and the lesson's
explorers.

Data: BBC News (5 topics, :func:`helpers.course.bbc_topics.bbc_topic_data`) as bag-of-words
features from scikit-learn's vectorisers (fitted on the training split only). Model:
:func:`helpers.lib.layers.mlp` + SoftmaxCrossEntropy, trained with the NumPy optimisers of
:mod:`helpers.lib.optim`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from helpers.course.bbc_topics import TopicData, bbc_topic_data
from helpers.infra.plotting import GREY, new_figure, plot_curves, set_labels
from helpers.infra.training import History, train_loop
from helpers.lib.batching import minibatch_indices
from helpers.lib.layers import ACTIVATIONS, Sequential, SoftmaxCrossEntropy, mlp
from helpers.lib.optim import OPTIMIZERS, add_weight_penalty

FEATURES = {
    "counts": lambda m: CountVectorizer(max_features=m),
    "0/1 indicators": lambda m: CountVectorizer(max_features=m, binary=True),
    "TF-IDF": lambda m: TfidfVectorizer(max_features=m),
    "counts + bigrams": lambda m: CountVectorizer(max_features=m, ngram_range=(1, 2)),
}


def featurize(data: TopicData, kind: str = "counts", max_features: int = 5000):
    """Bag-of-words matrices for the three splits: (X_train, X_valid, X_test), each a
    float32 CSR matrix (n_docs_in_split, n_features). The vocabulary and IDF come from the
    training split only, so nothing leaks from the held-out documents."""
    if kind not in FEATURES:
        raise ValueError(f"unknown feature kind {kind!r}; choose one of {sorted(FEATURES)}")
    vec = FEATURES[kind](max_features)
    X_train = vec.fit_transform([data.docs[i] for i in data.train])
    X_valid = vec.transform([data.docs[i] for i in data.valid])
    X_test = vec.transform([data.docs[i] for i in data.test])
    return tuple(sp.csr_matrix(X, dtype=np.float32) for X in (X_train, X_valid, X_test))


def predict_proba(net: Sequential, X, batch_size: int = 512) -> np.ndarray:
    """Class probabilities (n, K) of a classifier network in inference mode."""
    net.eval()
    out = []
    for s in range(0, X.shape[0], batch_size):
        logits = net.forward(X[s:s + batch_size])
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        out.append(z / z.sum(axis=1, keepdims=True))
    net.train()
    return np.concatenate(out)


def evaluate(net: Sequential, X, y) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) of ``net`` on (X, y)."""
    p = predict_proba(net, X)
    loss = float(-np.log(p[np.arange(len(y)), y] + 1e-12).mean())
    return loss, float((p.argmax(axis=1) == y).mean())


def train_classifier(X_train, y_train, X_valid, y_valid, *, hidden: int = 64, activation: str = "tanh",
                     optimizer: str = "Adam", lr: float = 1e-3, epochs: int = 5, batch_size: int = 32,
                     l1: float = 0.0, l2: float = 0.0, dropout: float = 0.0, seed: int = 0,
                     progress: bool = True) -> tuple[Sequential, History]:
    """Train an MLP (one hidden layer) with mini-batch gradient descent.

    Returns the network and a History whose epochs hold train_loss (mean over the epoch's
    batches, without the penalty), valid_loss, valid_acc, train_acc.
    """
    if X_train.shape[0] == 0:
        raise ValueError("the training set is empty")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {sorted(OPTIMIZERS)}")
    rng = np.random.default_rng(seed)
    K = int(max(y_train.max(), y_valid.max())) + 1
    net = mlp([X_train.shape[1], hidden, K], rng, activation=activation, dropout=dropout, dtype=np.float32)
    loss_fn, opt = SoftmaxCrossEntropy(), OPTIMIZERS[optimizer](lr=lr)

    def step(idx):
        loss = loss_fn.forward(net.forward(X_train[idx]), y_train[idx])
        net.backward(loss_fn.backward())
        add_weight_penalty(net.weights(), net.weight_grads(), l1=l1, l2=l2)
        opt.step(net.params, net.grads)
        return loss

    def metrics():
        valid_loss, valid_acc = evaluate(net, X_valid, y_valid)
        _, train_acc = evaluate(net, X_train, y_train)
        return {"valid_loss": valid_loss, "valid_acc": valid_acc, "train_acc": train_acc}

    hist = train_loop(step, lambda epoch: minibatch_indices(X_train.shape[0], batch_size, rng), epochs,
                      evaluate=metrics, desc=f"MLP {optimizer}", progress=progress)
    return net, hist


# ---------------------------------------------------------------- explorers
def render_activation(z: float = 1.0, activation: str = "tanh"):
    """Plot an activation and its derivative over [-6, 6], marking the point ``z``.

    Returns (figure, summary); the summary gives f(z), f'(z) and whether the unit is
    saturated (derivative below 0.05) or dead (ReLU with z <= 0).
    """
    f, df = ACTIVATIONS[activation]
    zs = np.linspace(-6, 6, 400)
    fig, ax = new_figure()
    ax.plot(zs, f(zs), label=f"{activation}(z)")
    ax.plot(zs, df(zs), "--", label=f"{activation}'(z)")
    fz, dfz = float(f(np.array([z]))[0]), float(df(np.array([z]))[0])
    ax.plot([z], [fz], "o", color="C0")
    ax.plot([z], [dfz], "o", color="C1")
    ax.axvline(z, color=GREY, lw=0.8)
    set_labels(ax, f"{activation} and its derivative", "pre-activation z", "value")
    ax.legend(loc="upper left")
    state = "dead (no gradient)" if activation == "relu" and z <= 0 else \
        "saturated (gradient < 0.05)" if dfz < 0.05 else "active"
    return fig, f"{activation}({z:+.2f}) = {fz:.4f}, derivative = {dfz:.4f}: {state}"


def render_regularisation(l2: float = 0.0, dropout: float = 0.0, n_train: int = 100, epochs: int = 25,
                          hidden: int = 128, lr: float = 1e-2, seed: int = 0, _cache: dict = {}):  # noqa: B006
    """Train on a small training subset with the given L2 strength and dropout rate, and
    plot training vs validation loss per epoch (over-fitting shows as a rising validation
    curve). Returns (figure, summary with final losses and validation accuracy)."""
    key = ("features", seed)
    if key not in _cache:  # features once per process: the explorer retrains, it does not re-read
        data = bbc_topic_data(seed)
        _cache[key] = (data, featurize(data, "counts", 5000))
    data, (X_train, X_valid, _) = _cache[key]
    sub = np.random.default_rng(seed).permutation(X_train.shape[0])[:n_train]
    y_train, y_valid = data.labels[data.train][sub], data.labels[data.valid]
    _, hist = train_classifier(X_train[sub], y_train, X_valid, y_valid, hidden=hidden, lr=lr,
                               epochs=epochs, l2=l2, dropout=dropout, seed=seed, progress=False)
    fig, ax = new_figure()
    plot_curves(ax, {"training loss": hist.metric("train_loss"), "validation loss": hist.metric("valid_loss")},
                title=f"{n_train} training articles, L2 = {l2:g}, dropout = {dropout:g}",
                xlabel="epoch", ylabel="cross-entropy (nats)")
    v = hist.epochs[-1]
    best = int(np.argmin(hist.metric("valid_loss"))) + 1
    return fig, (f"final training loss {v['train_loss']:.3f}, validation loss {v['valid_loss']:.3f} "
                 f"(lowest at epoch {best}), validation accuracy {v['valid_acc']:.3f}")
