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
import torch
from scipy.stats import spearmanr
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from helpers.course.bbc_topics import TopicData, bbc_topic_data
from helpers.infra.plotting import GREY, new_figure, plot_curves, set_labels
from helpers.infra.training import History, train_loop
from helpers.lib.batching import minibatch_indices
from helpers.lib.layers import ACTIVATIONS, Activation, Linear, Sequential, SoftmaxCrossEntropy, mlp
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


def mlp_worked_example() -> dict[str, np.ndarray]:
    """The tiny network of the MLP graph figure (``figures/01_mlp_graph.svg``), forward and
    backward, in float64 NumPy.

    x (1, 2) → z₁ = x W₁ + b₁ (1, 2) → h = tanh z₁ → z₂ = h W₂ + b₂ (1, 3) → p = softmax z₂
    → L = −log p_y with true class y = 0. Returns every value and every gradient ``d<name>``
    (= ∂L/∂name, same shape as ``name``).
    """
    v = {
        "x": np.array([[1.0, -0.5]]),
        "W1": np.array([[0.5, -0.3], [0.8, 0.2]]),
        "b1": np.array([0.1, -0.1]),
        "W2": np.array([[1.0, -0.5, 0.3], [-0.7, 0.6, 0.2]]),
        "b2": np.array([0.0, 0.1, -0.1]),
        "y": 0,
    }
    v["z1"] = v["x"] @ v["W1"] + v["b1"]
    v["h"] = np.tanh(v["z1"])
    v["z2"] = v["h"] @ v["W2"] + v["b2"]
    e = np.exp(v["z2"] - v["z2"].max())
    v["p"] = e / e.sum()
    v["L"] = -np.log(v["p"][0, v["y"]])
    onehot = np.eye(3)[[v["y"]]]
    v["dp"] = -onehot / v["p"]                       # ∂L/∂p: −1/p_y at the true class, else 0
    v["dz2"] = v["p"] - onehot                       # softmax + cross-entropy together
    v["dW2"] = v["h"].T @ v["dz2"]
    v["db2"] = v["dz2"].sum(axis=0)
    v["dh"] = v["dz2"] @ v["W2"].T
    v["dz1"] = v["dh"] * (1 - v["h"] ** 2)
    v["dW1"] = v["x"].T @ v["dz1"]
    v["db1"] = v["dz1"].sum(axis=0)
    v["dx"] = v["dz1"] @ v["W1"].T
    return v


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
                     l1: float = 0.0, l2: float = 0.0, dropout: float = 0.0, weight_decay: float = 0.0,
                     l1_proximal: bool = False, seed: int = 0,
                     progress: bool = True) -> tuple[Sequential, History]:
    """Train an MLP (one hidden layer) with mini-batch gradient descent.

    ``l1``/``l2`` add penalties to the loss (their gradients go through the optimiser);
    ``weight_decay`` is AdamW's decoupled decay (``optimizer="AdamW"`` only). ``l1_proximal``
    applies L1 as a proximal step instead of a subgradient: after each optimiser step every
    weight is soft-thresholded, w <- sign(w) max(|w| - lr*l1, 0), which sets small weights to
    exactly 0 (exact for plain SGD; with an adaptive optimiser it is the same shrinkage, not
    its exact proximal step).

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
    if weight_decay and optimizer != "AdamW":
        raise ValueError(f"weight_decay is AdamW's decoupled decay; with {optimizer!r} use l2= (a penalty) instead")
    opt_kw = {"weight_decay": weight_decay} if optimizer == "AdamW" else {}
    loss_fn, opt = SoftmaxCrossEntropy(), OPTIMIZERS[optimizer](lr=lr, **opt_kw)

    def step(idx):
        loss = loss_fn.forward(net.forward(X_train[idx]), y_train[idx])
        net.backward(loss_fn.backward())
        add_weight_penalty(net.weights(), net.weight_grads(), l1=0.0 if l1_proximal else l1, l2=l2)
        opt.step(net.params, net.grads)
        if l1_proximal and l1:
            for w in net.weights():
                np.copyto(w, np.sign(w) * np.maximum(np.abs(w) - lr * l1, 0))
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


# ---------------------------------------------------------------- regularisation, with seeds
def regularisation_runs(X_train, y_train, X_valid, y_valid, settings: dict[str, dict], seeds=(0, 1, 2),
                        n_train: int = 100, item_losses: dict | None = None, **common) -> dict[str, list[History]]:
    """Train the small-data classifier of section 7 once per seed for every setting.

    ``settings`` maps a label to keyword arguments of :func:`train_classifier` (e.g.
    ``{"L2 λ=1e-3": {"l2": 1e-3}}``); ``common`` holds the ones all runs share. The training subset
    (``n_train`` articles, drawn with seed 0) is the same for every run; the seed changes the
    initial weights, the mini-batch order and the dropout masks. Returns label -> one History per seed.
    ``item_losses``: a dict to fill with label -> (len(seeds), n_valid) array, the cross-entropy of
    every validation article under each seed's final network (for paired comparisons).
    """
    sub = small_subset(X_train.shape[0], n_train)
    out = {}
    for label, kw in settings.items():
        runs = [train_classifier(X_train[sub], y_train[sub], X_valid, y_valid, seed=seed, progress=False,
                                 **{**common, **kw}) for seed in seeds]
        out[label] = [hist for _, hist in runs]
        if item_losses is not None:
            item_losses[label] = np.array([article_losses(net, X_valid, y_valid) for net, _ in runs])
    return out


def article_losses(net: Sequential, X, y) -> np.ndarray:
    """Cross-entropy (nats) of each example under ``net`` in inference mode, shape (n,)."""
    p = predict_proba(net, X)
    return -np.log(p[np.arange(len(y)), y] + 1e-12)


# ---------------------------------------------------------------- initialisation through a deep stack
INIT_SCHEMES = {
    "N(0, 1)": lambda d_in, d_out: 1.0,
    "N(0, 0.01²)": lambda d_in, d_out: 0.01,
    "Xavier/Glorot": lambda d_in, d_out: float(np.sqrt(2.0 / (d_in + d_out))),
    "He": lambda d_in, d_out: float(np.sqrt(2.0 / d_in)),
}


def init_statistics(scheme: str, activation: str, depth: int = 15, width: int = 128, n: int = 256,
                    seed: int = 0, gain: float = 1.0) -> dict[str, np.ndarray]:
    """Push a batch through ``depth`` Linear + activation layers initialised by ``scheme``, then a
    gradient back; return per-layer statistics (each an array of length ``depth``).

    Weights W_l ~ N(0, s²) with s = gain · INIT_SCHEMES[scheme](width, width), biases 0 (``gain``: the
    factor ``torch.nn.init.calculate_gain`` gives an activation, 5/3 for tanh). The input x is
    (n, width) N(0, 1); the gradient arriving at the top is N(0, 1) of the output's shape (as if a
    loss sat there). Returns ``act_std`` (std of each layer's activation), ``saturated`` (fraction
    with |h| > 0.99 for tanh/sigmoid, fraction exactly 0 for ReLU) and ``grad_std`` (std of the
    gradient ∂L/∂h_l arriving at each layer's activation on the way back), built from the lesson's own :class:`Linear` and :class:`Activation` layers.
    """
    if scheme not in INIT_SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose one of {sorted(INIT_SCHEMES)}")
    rng = np.random.default_rng(seed)
    layers = []
    for _ in range(depth):
        lin = Linear(width, width, rng)
        lin.params[0][...] = rng.standard_normal((width, width)) * gain * INIT_SCHEMES[scheme](width, width)
        layers += [lin, Activation(activation)]
    net = Sequential(*layers)
    dout = rng.standard_normal(net.forward(rng.standard_normal((n, width))).shape)
    grad_std = []
    for layer in reversed(layers):                 # backward by hand, to see each layer's ∂L/∂h
        if isinstance(layer, Activation):
            grad_std.append(dout.std())
        dout = layer.backward(dout)
    acts = [layer.out for layer in layers[1::2]]
    sat = [np.mean(a == 0) if activation == "relu" else np.mean(np.abs(a) > 0.99) for a in acts]
    return {"act_std": np.array([a.std() for a in acts]), "saturated": np.array(sat),
            "grad_std": np.array(grad_std[::-1])}


def plot_init_study(depth: int = 15, width: int = 128):
    """Figure: activation std (top) and weight-gradient std (bottom) per layer, for tanh and ReLU,
    one line per initialisation scheme (log scale). Returns (figure, {(act, scheme): stats})."""
    stats = {(a, s): init_statistics(s, a, depth, width) for a in ("tanh", "relu") for s in INIT_SCHEMES}
    fig, axes = new_figure(nrows=2, ncols=2, width=5.0, height=3.2)
    styles = ["-", "--", ":", "-."]
    layers = np.arange(1, depth + 1)
    for j, act in enumerate(("tanh", "relu")):
        for k, scheme in enumerate(INIT_SCHEMES):
            st = stats[(act, scheme)]
            axes[j].plot(layers, np.maximum(st["act_std"], 1e-30), styles[k], marker="o", ms=3, label=scheme)
            axes[2 + j].plot(layers, np.maximum(st["grad_std"], 1e-30), styles[k], marker="o", ms=3, label=scheme)
        set_labels(axes[j], f"{act}: activations", "layer", "std of the activation")
        set_labels(axes[2 + j], f"{act}: gradients", "layer", "std of ∂L/∂h")
        for ax in (axes[j], axes[2 + j]):
            ax.set_yscale("log")
    axes[0].legend(fontsize=8)
    return fig, stats


# ---------------------------------------------------------------- what the penalties do to the weights
def small_subset(n_rows: int, n_train: int = 100) -> np.ndarray:
    """The row indices of section 6's small training set: the first ``n_train`` of a permutation
    drawn with seed 0 (the same articles for every run)."""
    return np.random.default_rng(0).permutation(n_rows)[:n_train]


def first_layer_weights(X_train, y_train, X_valid, y_valid, settings: dict[str, dict], n_train: int = 100,
                        seed: int = 0, **common) -> dict[str, np.ndarray]:
    """Train on the small subset once per setting (label -> keyword arguments of
    :func:`train_classifier`, plus ``common``); return label -> the first layer's weight matrix
    (n_features, hidden)."""
    sub = small_subset(X_train.shape[0], n_train)
    return {label: train_classifier(X_train[sub], y_train[sub], X_valid, y_valid, seed=seed, progress=False,
                                    **{**common, **kw})[0].weights()[0].copy()
            for label, kw in settings.items()}


def l1_weight_study(X_train, y_train, X_valid, y_valid, l1: float = 1e-3, n_train: int = 100, seed: int = 0,
                    **common) -> dict[str, np.ndarray]:
    """First-layer weights (flattened) after training with no penalty, with L1 as a subgradient
    (λ·sign(w) added to the gradient, then Adam) and with L1 as a proximal step (Adam, then
    soft-thresholding by lr·λ). Returns label -> weights."""
    w = first_layer_weights(X_train, y_train, X_valid, y_valid,
                            {"no penalty": {}, "L1 subgradient": {"l1": l1},
                             "L1 proximal": {"l1": l1, "l1_proximal": True}}, n_train, seed, **common)
    return {k: v.ravel() for k, v in w.items()}


# ---------------------------------------------------------------- the feed-forward LM against Kneser-Ney
def lm_token_nll(model: torch.nn.Module, X: np.ndarray, y: np.ndarray, batch_size: int = 4096) -> np.ndarray:
    """Negative log-likelihood (nats, float64) of every target ``y[i]`` given ``X[i]``, shape (N,)."""
    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, len(y), batch_size):
            logits = model(torch.from_numpy(X[s:s + batch_size]))
            out.append(torch.nn.functional.cross_entropy(logits, torch.from_numpy(y[s:s + batch_size]),
                                                         reduction="none").double().numpy())
    return np.concatenate(out)


def paired_block_bootstrap(a: np.ndarray, b: np.ndarray, block: int = 100, n_boot: int = 2000,
                           seed: int = 0) -> tuple[float, float, float]:
    """Mean of a - b and its 95 % bootstrap interval, resampling contiguous blocks of ``block``
    tokens (neighbouring tokens are not independent). ``a``, ``b``: per-token losses of two models
    on the same tokens, shape (N,). Returns (mean difference, low, high)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"need two per-token loss arrays of the same length, got {a.shape} and {b.shape}")
    d = a - b
    n_blocks = len(d) // block
    means = d[:n_blocks * block].reshape(n_blocks, block).mean(axis=1)
    rng = np.random.default_rng(seed)
    boots = means[rng.integers(0, n_blocks, (n_boot, n_blocks))].mean(axis=1)
    return float(d.mean()), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))


def plot_lm_curves(ax, shipped_curve: dict, kn: dict, best_step: int | None = None, live: dict | None = None):
    """Validation perplexity per step of the shipped training (and of a live one), with the
    Kneser-Ney models' validation perplexities as horizontal lines and the early-stopping point."""
    ax.plot(shipped_curve["step"], shipped_curve["valid_ppl"], "o-", ms=3, label="feed-forward LM (shipped run)")
    if best_step is not None:
        i = shipped_curve["step"].index(best_step)
        ax.plot([best_step], [shipped_curve["valid_ppl"][i]], "*", ms=14, color="C3", label="kept (early stopping)")
    if live is not None:
        ax.plot(live["step"], live["valid_ppl"], "s--", ms=4, color="C4", label="your live run")
    for k, (n, r) in enumerate(sorted(kn.items())):
        ax.axhline(r["valid_ppl"], color=f"C{k + 1}", ls=(0, (4, 2 + k)), lw=1,
                   label=f"Kneser-Ney {n}-gram (D={r['D']:g})")
    ax.set_ylim(top=min(max(shipped_curve["valid_ppl"][0], 120), 200))
    set_labels(ax, "Validation perplexity", "training step (mini-batches of 256 windows)", "perplexity")
    ax.legend(fontsize=8, ncols=2)


# ---------------------------------------------------------------- do learned embeddings mean anything?
def next_word_profiles(train_ids: np.ndarray, words: np.ndarray, vocab_size: int) -> np.ndarray:
    """Row i: the distribution of the token following ``words[i]`` in the training stream,
    shape (len(words), vocab_size), rows summing to 1."""
    pos = {int(w): i for i, w in enumerate(words)}
    prof = np.zeros((len(words), vocab_size))
    for a, b in zip(train_ids[:-1], train_ids[1:], strict=True):
        i = pos.get(int(a))
        if i is not None:
            prof[i, b] += 1
    return prof / prof.sum(axis=1, keepdims=True)


def embedding_agreement(E: np.ndarray, profiles: np.ndarray, words: np.ndarray) -> float:
    """Spearman correlation, over all pairs of ``words``, between the cosine similarity of their
    embeddings (rows of ``E``) and the cosine similarity of their next-word profiles. Near 0 for
    random vectors; positive when words that predict alike get similar vectors."""
    U = E[words] / np.linalg.norm(E[words], axis=1, keepdims=True)
    P = profiles / np.linalg.norm(profiles, axis=1, keepdims=True)
    iu = np.triu_indices(len(words), 1)
    return float(spearmanr((U @ U.T)[iu], (P @ P.T)[iu]).statistic)
