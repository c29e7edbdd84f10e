"""Lesson 01 (feed-forward networks): the BBC classifier's studies, the initialisation study, an
explorer, and the test of the language model's embeddings."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from helpers.course.bbc_topics import TopicData
from helpers.infra.plotting import GREY, new_figure, set_labels
from helpers.infra.training import History, train_loop
from helpers.lib.batching import minibatch_indices
from helpers.lib.layers import (
    ACTIVATIONS,
    Activation,
    Linear,
    Sequential,
    SoftmaxCrossEntropy,
    mlp,
    softmax,
)
from helpers.lib.optim import SGD, Adam, AdamW, Momentum, RMSProp, add_weight_penalty
from helpers.lib.stats import spearman

FEATURES = {
    "counts": lambda m: CountVectorizer(max_features=m),
    "0/1 indicators": lambda m: CountVectorizer(max_features=m, binary=True),
    "TF-IDF": lambda m: TfidfVectorizer(max_features=m),
    "counts + bigrams": lambda m: CountVectorizer(max_features=m, ngram_range=(1, 2)),
}
OPTIMIZERS = {"SGD": SGD, "Momentum": Momentum, "RMSProp": RMSProp, "Adam": Adam, "AdamW": AdamW}


def featurize(data: TopicData, kind: str = "counts", max_features: int = 5000):
    """(X_train, X_valid, X_test): bag-of-words float32 CSR matrices, vocabulary from training."""
    if kind not in FEATURES:
        raise ValueError(f"unknown feature kind {kind!r}; choose one of {sorted(FEATURES)}")
    vec = FEATURES[kind](max_features)
    X = [vec.fit_transform([data.docs[i] for i in data.train])]
    X += [vec.transform([data.docs[i] for i in split]) for split in (data.valid, data.test)]
    return tuple(sp.csr_matrix(x, dtype=np.float32) for x in X)


def evaluate(net: Sequential, X, y) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) of ``net`` on (X, y), in inference mode."""
    net.eval()
    P = np.concatenate([softmax(net.forward(X[s:s + 512])) for s in range(0, X.shape[0], 512)])
    net.train()
    loss = float(-np.log(P[np.arange(len(y)), y] + 1e-12).mean())
    return loss, float((P.argmax(axis=1) == y).mean())


def train_classifier(X_train, y_train, X_valid, y_valid, *, hidden: int = 64,
                     optimizer: str = "Adam", lr: float = 1e-3, epochs: int = 5,
                     batch_size: int = 32, l1: float = 0.0, l1_proximal: bool = False,
                     seed: int = 0) -> tuple[Sequential, History]:
    """A one-hidden-layer tanh MLP trained with mini-batches, and its History. ``l1``: λ·Σ|w| as a
    subgradient or (``l1_proximal``) w ← sign(w) max(|w| − lr·λ, 0) after each step."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {sorted(OPTIMIZERS)}")
    rng = np.random.default_rng(seed)
    net = mlp([X_train.shape[1], hidden, int(y_train.max()) + 1], rng, dtype=np.float32)
    loss_fn, opt = SoftmaxCrossEntropy(), OPTIMIZERS[optimizer](lr=lr)

    def step(idx):
        loss = loss_fn.forward(net.forward(X_train[idx]), y_train[idx])
        net.backward(loss_fn.backward())
        add_weight_penalty(net.weights(), net.weight_grads(), l1=0.0 if l1_proximal else l1)
        opt.step(net.params, net.grads)
        for w in net.weights() if l1_proximal else ():
            np.copyto(w, np.sign(w) * np.maximum(np.abs(w) - lr * l1, 0))
        return loss

    def metrics():
        return dict(zip(("valid_loss", "valid_acc"), evaluate(net, X_valid, y_valid)))

    hist = train_loop(step, lambda epoch: minibatch_indices(X_train.shape[0], batch_size, rng),
                      epochs, evaluate=metrics, desc=f"MLP {optimizer}", progress=False)
    return net, hist


def init_statistics(scheme_std: float, activation: str, depth: int = 15, width: int = 128,
                    n: int = 256, seed: int = 0) -> dict[str, np.ndarray]:
    """A batch up and a gradient down ``depth`` Linear + activation layers, weights N(0, std²):
    per layer ``act_std``, ``grad_std`` (of ∂L/∂h) and ``saturated``."""
    rng = np.random.default_rng(seed)
    layers = []
    for _ in range(depth):
        lin = Linear(width, width, rng)
        lin.params[0][...] = rng.standard_normal((width, width)) * scheme_std
        layers += [lin, Activation(activation)]
    dout = rng.standard_normal(Sequential(*layers).forward(rng.standard_normal((n, width))).shape)
    grad_std = []
    for layer in reversed(layers):                 # backward by hand, to see each layer's ∂L/∂h
        if isinstance(layer, Activation):
            grad_std.append(dout.std())
        dout = layer.backward(dout)
    acts = [layer.out for layer in layers[1::2]]
    sat = [np.mean(a == 0) if activation == "relu" else np.mean(np.abs(a) > 0.99) for a in acts]
    return {"act_std": np.array([a.std() for a in acts]), "grad_std": np.array(grad_std[::-1]),
            "saturated": np.array(sat)}


def render_activation(z: float = 1.0, activation: str = "tanh"):
    """An activation and its derivative over [-6, 6] with ``z`` marked: (figure, summary)."""
    f, df = ACTIVATIONS[activation]
    zs = np.linspace(-6, 6, 400)
    fz, dfz = float(f(np.array([z]))[0]), float(df(np.array([z]))[0])
    fig, ax = new_figure()
    ax.plot(zs, f(zs), label=f"{activation}(z)")
    ax.plot(zs, df(zs), "--", label=f"{activation}'(z)")
    ax.plot([z, z], [fz, dfz], "o", color="C3")
    ax.axvline(z, color=GREY, lw=0.8)
    set_labels(ax, f"{activation} and its derivative", "pre-activation z", "value")
    ax.legend(loc="upper left")
    state = "dead (no gradient)" if activation == "relu" and z <= 0 else \
        "saturated (gradient < 0.05)" if dfz < 0.05 else "active"
    return fig, f"{activation}({z:+.2f}) = {fz:.4f}, derivative = {dfz:.4f}: {state}"


def lm_token_nll(forward, weights, X: np.ndarray, y: np.ndarray, batch: int = 4096) -> np.ndarray:
    """−log P(y[i] | X[i]) (nats) of every window, for an MLP ``forward(x, W1, b1, W2, b2) -> P``
    behind the table E: ``weights`` = (E, W1, b1, W2, b2), x the window's vectors side by side."""
    E, *mlp_weights = weights
    out = []
    for s in range(0, len(y), batch):
        P = forward(E[X[s:s + batch]].reshape(len(X[s:s + batch]), -1), *mlp_weights)
        out.append(-np.log(P[np.arange(len(P)), y[s:s + batch]]))
    return np.concatenate(out).astype(np.float64)


def embedding_agreement(E: np.ndarray, train_ids: np.ndarray, words: np.ndarray) -> float:
    """Spearman's ρ between ``words``' embedding cosines and next-word distribution cosines."""
    row = np.full(len(E), -1)
    row[words] = np.arange(len(words))
    follows = row[train_ids[:-1]] >= 0
    profiles = np.zeros((len(words), len(E)))
    np.add.at(profiles, (row[train_ids[:-1]][follows], train_ids[1:][follows]), 1)
    U = E[words] / np.linalg.norm(E[words], axis=1, keepdims=True)
    P = profiles / np.linalg.norm(profiles, axis=1, keepdims=True)
    upper = np.triu_indices(len(words), 1)
    return spearman((U @ U.T)[upper], (P @ P.T)[upper])
