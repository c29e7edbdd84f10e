"""Checkers for lesson 01: the step back through the hidden layer, the MLP's forward and backward
passes, the initialisation of a deep ReLU stack, the Adam step, and the Kneser-Ney bigram."""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
import torch
from torch.nn.functional import cross_entropy

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.lib import gradcheck, layers
from helpers.lib.extrinsic import softmax_regression_loss_grad
from helpers.lib.ngram import KneserNeyLM, kneser_ney_nlls
from helpers.lib.optim import Adam, AdamW, Momentum, RMSProp, adam_update, clip_adam_step

# the network of the lesson's graph figure: 2 inputs, 2 tanh units, 3 classes, true class 0
GRAPH = {"X": np.array([[1.0, -0.5]]), "y": np.array([0]),
         "W1": np.array([[0.5, -0.3], [0.8, 0.2]]), "b1": np.array([0.1, -0.1]),
         "W2": np.array([[1.0, -0.5, 0.3], [-0.7, 0.6, 0.2]]), "b2": np.array([0.0, 0.1, -0.1])}
GRAD_NAMES = ("dX", "dW1", "db1", "dW2", "db2")


def _graph(*names):
    return [GRAPH[k] for k in names]


def _rows(e):
    return e / e.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------ the course's MLP
def _top(X, y, W1, b1, W2, b2):
    """The forward pass and the gradient at the scores: (loss, H, dZ2 = (P − onehot(y)) / N)."""
    H = np.tanh(X @ W1 + b1)
    Z = H @ W2 + b2
    Z = Z - Z.max(axis=1, keepdims=True)
    logP = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
    rows = np.arange(len(y))
    dZ2 = np.exp(logP)
    dZ2[rows, y] -= 1
    return float(-logP[rows, y].mean()), H, dZ2 / len(y)


def _hidden_backward_reference(dz2, W2, h):
    dh = dz2 @ W2.T
    return dh, dh * (1 - h ** 2)


def _grads(X, W1, H, dZ1, dZ2):
    """(dX, dW1, db1, dW2, db2) from the gradients at the two layers' outputs."""
    return dZ1 @ W1.T, X.T @ dZ1, dZ1.sum(axis=0), H.T @ dZ2, dZ2.sum(axis=0)


def _mlp_forward_reference(X, W1, b1, W2, b2):
    Z = np.tanh(X @ W1 + b1) @ W2 + b2
    return _rows(np.exp(Z - Z.max(axis=1, keepdims=True)))


def _mlp_backward_reference(X, y, W1, b1, W2, b2):
    loss, H, dZ2 = _top(X, y, W1, b1, W2, b2)
    return loss, _grads(X, W1, H, _hidden_backward_reference(dZ2, W2, H)[1], dZ2)


MLP_CODE = (layers.Linear, layers.Activation, layers.SoftmaxCrossEntropy, layers.Sequential,
            layers.mlp, gradcheck.check_layer, gradcheck.numerical_gradient,
            softmax_regression_loss_grad, _top, _grads, _hidden_backward_reference,
            _mlp_forward_reference)


def _random_mlp(seed, N=5, D=4, H=3, K=6):
    rng = np.random.default_rng(seed)
    normal = rng.standard_normal
    return (normal((N, D)), rng.integers(0, K, N), normal((D, H)) * 0.7, normal(H) * 0.1,
            normal((H, K)) * 0.7, normal(K) * 0.1)


def _hard_case(seed):
    """X a SciPy sparse matrix (the classifier's word counts) and scores in the thousands."""
    X, y, W1, b1, W2, b2 = _random_mlp(seed, N=6, D=7)
    return sp.csr_matrix(X * (X > 0.5)), y, W1, b1, W2 * 1000, b2


# ------------------------------------------------------------------ warm-up: the hidden layer
def _hidden_figure(f):
    _, h, dz2 = _top(*_graph("X", "y", "W1", "b1", "W2", "b2"))
    got = f(dz2, GRAPH["W2"], h)
    expect_tuple(got, ("dh", "dz1"))
    for name, g, e in zip(("dh", "dz1"), got, _hidden_backward_reference(dz2, GRAPH["W2"], h)):
        expect_close(g, e, f"{name} for the figure's numbers")


def _hidden_torch(f):
    rng = np.random.default_rng(1)
    z1, W2, dz2 = (rng.standard_normal(shape) for shape in ((4, 3), (3, 5), (4, 5)))
    dh, dz1 = f(dz2, W2, np.tanh(z1))
    expect_close(dh, dz2 @ W2.T, "dh for a random batch of 4, H = 3, K = 5")
    W2t = torch.from_numpy(W2)
    expect_gradients_match_torch([dz1], lambda z: torch.tanh(z) @ W2t, [z1], ["dz1"], dout=dz2)


check_hidden_backward = FunctionExercise(
    "the step back through the hidden layer", [_hidden_figure, _hidden_torch],
    reference=_hidden_backward_reference, step="warm-up", forbidden=MLP_CODE,
    mistakes=[
        Mistake("no_transpose", "dz2 is (N, K) and W2 is (H, K): the gradient flowing into h is "
                "dz2 @ W2.T, shape (N, H).",
                like=lambda dz2, W2, h: (dz2 @ W2, dz2 @ W2 * (1 - h ** 2))),
        Mistake("no_tanh_derivative", "the gradient goes through tanh too: dz1 = dh * (1 - h**2).",
                like=lambda dz2, W2, h: (dz2 @ W2.T, dz2 @ W2.T)),
        Mistake("tanh_applied_again", "h is already tanh(z1): tanh'(z1) = 1 - h**2, not "
                "1 - tanh(h)**2.",
                like=lambda dz2, W2, h: (dz2 @ W2.T, dz2 @ W2.T * (1 - np.tanh(h) ** 2))),
    ])


# ------------------------------------------------------------------ core: the forward pass
def _forward_case(what, case):
    """A check of the forward pass on ``case`` = (X, y, W1, b1, W2, b2)."""
    X, _, *params = case

    def check(f):
        with np.errstate(all="ignore"):
            got = np.asarray(f(X, *params), dtype=float)
        expect_close(got, _mlp_forward_reference(X, *params), f"P for {what}")
    return check


_FORWARD_CASES = [_forward_case("the figure's network", _graph(*GRAPH)),
                  _forward_case("a random batch of 5, K = 6", _random_mlp(0)),
                  _forward_case("X sparse and scores in the thousands", _hard_case(1))]


def _np_dot_forward(X, W1, b1, W2, b2):
    Z = np.tanh(np.dot(X, W1) + b1) @ W2 + b2
    return _rows(np.exp(Z - Z.max(axis=1, keepdims=True)))


check_mlp_forward = FunctionExercise(
    "the MLP's forward pass", _FORWARD_CASES, reference=_mlp_forward_reference, step="core",
    forbidden=MLP_CODE,
    mistakes=[
        Mistake("scores_not_probabilities", "return the probabilities P = softmax(Z2), each row "
                "summing to 1, not the scores Z2.",
                like=lambda X, W1, b1, W2, b2: np.tanh(X @ W1 + b1) @ W2 + b2),
        Mistake("np_dot_with_sparse", "np.dot does not understand SciPy's sparse matrices (the "
                "classifier's word counts): write X @ W1.",
                like=_np_dot_forward),
        Mistake("softmax_overflows", "scores in the thousands overflow np.exp: subtract each row's "
                "maximum first.", when=lambda out, *args: np.isnan(np.asarray(out, float)).any(),
                example=lambda X, W1, b1, W2, b2: _rows(np.exp(np.tanh(X @ W1 + b1) @ W2 + b2))),
    ])


# ------------------------------------------------------------------ core: the backward pass
def _backward_figure(f):
    got = f(*_graph("X", "y", "W1", "b1", "W2", "b2"))
    expect_tuple(got, ("loss", "grads"))
    expect_tuple(got[1], GRAD_NAMES)
    loss, grads = _mlp_backward_reference(*_graph("X", "y", "W1", "b1", "W2", "b2"))
    expect_close(got[0], loss, "the loss of the figure's network, -log p_y")
    for name, g, e in zip(GRAD_NAMES, got[1], grads):
        expect_close(g, e, f"{name} for the figure's network")


def _backward_torch_and_numerical(f):
    X, y, *params = _random_mlp(2)
    loss, grads = f(X, y, *params)

    def torch_loss(X, W1, b1, W2, b2):
        return cross_entropy(torch.tanh(X @ W1 + b1) @ W2 + b2, torch.from_numpy(y))

    expect_close(loss, torch_loss(*map(torch.from_numpy, (X, *params))).item(),
                 "the mean loss of a random batch of 5 (PyTorch's cross_entropy)")
    expect_gradients_match_torch(grads, torch_loss, [X, *params], GRAD_NAMES)
    X, y, *params = _random_mlp(3, N=3, D=3, H=4, K=3)
    expect_gradients_match_numerical(f(X, y, *params)[1], lambda X, *p: _top(X, y, *p)[0],
                                     [X, *params], GRAD_NAMES)


def _backward_hard(f):
    X, y, *params = _hard_case(4)
    with np.errstate(all="ignore"):
        loss, grads = f(X, y, *params)
    want_loss, want = _mlp_backward_reference(X, y, *params)
    expect_close(loss, want_loss, "the loss with X sparse and scores in the thousands")
    for name, g, e in zip(GRAD_NAMES, grads, want):
        expect_close(np.asarray(g, dtype=float), e, f"{name} with X sparse, huge scores")


def _no_tanh_derivative(X, y, W1, b1, W2, b2):
    loss, H, dZ2 = _top(X, y, W1, b1, W2, b2)
    return loss, _grads(X, W1, H, dZ2 @ W2.T, dZ2)


def _not_divided_by_n(X, y, W1, b1, W2, b2):
    loss, grads = _mlp_backward_reference(X, y, W1, b1, W2, b2)
    return loss, tuple(g * len(y) for g in grads)


def _bias_per_row(X, y, W1, b1, W2, b2):
    loss, (dX, dW1, db1, dW2, db2) = _mlp_backward_reference(X, y, W1, b1, W2, b2)
    per_row = (len(y), 1)
    return loss, (dX, dW1, np.tile(db1 / len(y), per_row), dW2, np.tile(db2 / len(y), per_row))


check_mlp_backward = FunctionExercise(
    "the MLP's backward pass", [_backward_figure, _backward_torch_and_numerical, _backward_hard],
    reference=_mlp_backward_reference, step="core", forbidden=MLP_CODE,
    mistakes=[
        Mistake("bias_kept_batch_axis", "a bias is added to every row, so its gradient is the sum "
                "over the batch: db1 = dz1.sum(axis=0), shape (H,), not (N, H).",
                when=lambda out, *args: np.ndim(out[1][2]) == 2, example=_bias_per_row),
        Mistake("no_tanh_derivative", "the gradient reaching the hidden layer goes through tanh: "
                "dz1 = (dz2 @ W2.T) * (1 - H**2).", like=_no_tanh_derivative),
        Mistake("gradient_not_divided_by_n", "the loss is the mean over the N examples, so every "
                "gradient carries a 1/N: dz2 = (P - onehot(y)) / N.", like=_not_divided_by_n),
    ])


# ------------------------------------------------------------------ experiment: initialisation
INIT_SCHEMES = {"N(0, 1)": lambda width: 1.0, "N(0, 0.01²)": lambda width: 0.01,   # the std of W
                "Xavier/Glorot": lambda width: np.sqrt(1 / width),
                "He": lambda width: np.sqrt(2 / width)}


@lru_cache(maxsize=16)
def relu_activation_stds(depth: int = 15, width: int = 128, n: int = 256, seed: int = 0) -> dict:
    """The checker's own measurement: scheme -> the std of each layer's activation through ``depth``
    layers x <- relu(x W), W ~ N(0, s²), for ``n`` standard-normal inputs."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 3 <= depth <= 50:
        raise ValueError(f"depth must be a whole number of layers from 3 to 50, got {depth!r}")
    out = {}
    for scheme, std in INIT_SCHEMES.items():
        rng = np.random.default_rng(seed)
        x, stds = rng.standard_normal((n, width)), []
        for _ in range(int(depth)):
            x = np.maximum(x @ (rng.standard_normal((width, width)) * std(width)), 0)
            stds.append(float(x.std()))
        out[scheme] = tuple(stds)
    return out


def _stable_relu_scheme(depth: int = 15) -> str:
    stds = relu_activation_stds(depth)
    steady = [s for s in stds if all(0.5 < x < 2 for x in stds[s])]
    if len(steady) != 1:
        raise ValueError(f"at depth {depth}, {len(steady)} schemes keep the activations steady")
    return steady[0]


check_init_choice = ExperimentExercise(
    "initialisation for a deep ReLU stack", _stable_relu_scheme, choices=list(INIT_SCHEMES),
    example_context={"depth": 15},
    explanation="He initialisation draws W with variance 2/fan_in: a ReLU zeroes half of its "
                "inputs, which halves the second moment of the signal, and the factor 2 gives it "
                "back, so the activations keep their scale through any depth (He et al. 2015). "
                "Xavier's 2/(fan_in + fan_out) = 1/width suits tanh; under ReLU it loses a factor "
                "√2 per layer.",
    mistakes=[
        Mistake("xavier", "look at the ReLU panel again: Xavier's variance 2/(fan_in + fan_out) "
                "was derived for tanh; ReLU zeroes half the units, so the std shrinks by about √2 "
                "per layer.", like="Xavier/Glorot"),
        Mistake("big_normal", "N(0, 1) weights multiply the std by about √(width/2) per layer: the "
                "activations explode.", like="N(0, 1)"),
        Mistake("small_normal", "N(0, 0.01²) weights shrink the signal at every layer: by layer 10 "
                "nothing is left of it (and of the gradient).", like="N(0, 0.01²)"),
    ])


# ------------------------------------------------------------------ core: the Adam step
def _adam_first_step(f):
    p, g = np.ones(4), np.array([0.5, -2.0, 1e-3, 40.0])
    got = f(p.copy(), g.copy(), np.zeros(4), np.zeros(4), 1, 0.1)
    expect_tuple(got, ("p", "m", "v"))
    expect_close(got[1], 0.1 * g, "m after the first step from m = 0 (0.1·g)")
    expect_close(got[2], 0.001 * g * g, "v after the first step from v = 0 (0.001·g²)")
    expect_close(got[0], p - 0.1 * g / (np.abs(g) + 1e-8), "p after the first step, lr = 0.1 "
                 "(every weight moves by about lr: p - 0.1·sign(g))", rtol=1e-7)


def _adam_against_torch(f, lr=0.1, betas=(0.9, 0.999), eps=1e-8, steps=20, shape=(5,)):
    theta = np.random.default_rng(steps).standard_normal(shape)
    theta_t = torch.tensor(theta.copy(), requires_grad=True)
    opt = torch.optim.Adam([theta_t], lr=lr, betas=betas, eps=eps)
    m, v = np.zeros(shape), np.zeros(shape)
    for t in range(1, steps + 1):           # minimise sum(theta^4): gradient 4 theta^3
        out = f(theta, 4 * theta ** 3, m, v, t, lr, *betas, eps)
        theta, m, v = (np.asarray(a, float) for a in out)
        opt.zero_grad()
        (theta_t ** 4).sum().backward()
        opt.step()
    expect_close(theta, theta_t.detach().numpy(), f"theta after {steps} steps on sum(theta^4) "
                 f"(lr {lr}, betas {betas}, eps {eps}) vs torch.optim.Adam", rtol=1e-7)


def _adam_other_settings(f):
    _adam_against_torch(f, lr=0.05, betas=(0.5, 0.9), eps=0.1, steps=10, shape=(3, 4))


def _adam_no_bias_correction(p, g, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    m, v = beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g
    return p - lr * m / (np.sqrt(v) + eps), m, v


check_adam_update = FunctionExercise(
    "Adam step", [_adam_first_step, _adam_against_torch, _adam_other_settings],
    reference=adam_update, step="core",
    forbidden=(Adam, AdamW, RMSProp, Momentum, clip_adam_step),
    mistakes=[
        Mistake("no_bias_correction", "m and v start at 0, so after one step they are only "
                "(1-β1)·g and (1-β2)·g²: divide by (1 - β1**t) and (1 - β2**t) before the step "
                "(the bias correction).", like=_adam_no_bias_correction),
        Mistake("uphill", "the step goes against the gradient: p - lr·m̂/(√v̂ + eps), a minus.",
                like=lambda p, *a: (2 * p - adam_update(p, *a)[0], *adam_update(p, *a)[1:])),
        Mistake("defaults_hard_coded", "use the beta1, beta2 and eps you are given: the checker "
                "also runs β1 = 0.5, β2 = 0.9, eps = 0.1.",
                like=lambda p, g, m, v, t, lr=1e-3, *args: adam_update(p, g, m, v, t, lr)),
    ])


# ------------------------------------------------------------------ warm-up: Kneser-Ney by hand
TOY = ("i live in san francisco . we love san francisco . they left san francisco . "
       "i love glasgow . you visit glasgow .").split()


def _kn_bigram_reference(tokens, prev, word, vocab_size, D=0.75):
    ids = {w: i for i, w in enumerate(dict.fromkeys(list(tokens) + [prev, word]))}
    return KneserNeyLM(2, vocab_size, D).fit([ids[t] for t in tokens]).prob([ids[prev]], ids[word])


def _kn_wrong(tokens, prev, word, V, D=0.75, lower="continuation", unseen="lower"):
    """A Kneser-Ney bigram with one part as students get it wrong."""
    tokens = list(tokens)
    pairs = Counter(zip(tokens[:-1], tokens[1:]))
    c_prev = sum(n for (a, _), n in pairs.items() if a == prev)
    followers = sum(1 for a, _ in pairs if a == prev)
    cont = sum(1 for _, b in pairs if b == word)
    types, cont_types = len(pairs), len({b for _, b in pairs})
    p_low = {"continuation": max(cont - D, 0) / types + D * cont_types / types / V,
             "no floor": cont / types, "raw": tokens.count(word) / len(tokens)}[lower]
    if c_prev == 0 and unseen != "divide":
        return 1 / V if unseen == "uniform" else p_low
    return max(pairs[(prev, word)] - D, 0) / c_prev + D * followers / c_prev * p_low


def _kn_worked_example(f):
    for word, want in (("glasgow", 0.75 * 2 / 18), ("francisco", 0.75 / 18),
                       ("san", 0.25 + 0.75 * 3 / 18)):
        expect_close(f(list(TOY), "left", word, 13, 0.75), want, f"P({word} | left) in the "
                     "lesson's worked example (D = 0.75, |V| = 13)", rtol=1e-9)


def _kn_unseen_history(f):
    vocab = sorted(set(TOY)) + ["zebra", "yak"]            # two words that are not in the text
    for prev in ("love", "zebra"):                           # a seen history and one never seen
        probs = [f(list(TOY), prev, w, len(vocab), 0.6) for w in vocab]
        expect_close(sum(probs), 1.0, f"the sum of P(w | {prev}) over the {len(vocab)} words of "
                     "the vocabulary (D = 0.6)", rtol=1e-9)
        if min(probs) <= 0:
            raise ExerciseFailed(f"P(w | {prev}): expected every word above 0 (the uniform 1/|V| "
                                 f"share), got {min(probs):g} for '{vocab[int(np.argmin(probs))]}'")
    expect_close(f(list(TOY), "zebra", "glasgow", len(vocab), 0.6),
                 _kn_bigram_reference(TOY, "zebra", "glasgow", len(vocab), 0.6),
                 "P(glasgow | zebra), a history never seen: glasgow's continuation probability",
                 rtol=1e-9)


def _kn_random_text(f):
    tokens = [f"w{i}" for i in np.random.default_rng(4).integers(0, 8, 120)]
    for prev, word in (("w1", "w2"), ("w3", "w3"), ("w0", "w7")):
        want = _kn_bigram_reference(tokens, prev, word, 10, 0.8)
        expect_close(f(tokens, prev, word, 10, 0.8), want,
                     f"P({word} | {prev}) on a random text of 120 tokens, |V| = 10, D = 0.8",
                     rtol=1e-9)


check_kn_bigram = FunctionExercise(
    "Kneser-Ney bigram", [_kn_worked_example, _kn_unseen_history, _kn_random_text],
    reference=_kn_bigram_reference, step="warm-up",
    forbidden=(KneserNeyLM, kneser_ney_nlls, _kn_wrong),
    mistakes=[
        Mistake("raw_unigram", "the lower order of Kneser-Ney is the continuation probability, "
                "from N1+(· w), the number of different words w follows, not w's share of the "
                "text.",
                like=lambda *args: _kn_wrong(*args, lower="raw")),
        Mistake("no_uniform_floor", "the continuation level is discounted too: "
                "max(N1+(· w) - D, 0) / N1+(· ·) + D · (words with a continuation) / N1+(· ·) "
                "· 1/|V|, so that a word that never occurs still gets a probability above 0.",
                like=lambda *args: _kn_wrong(*args, lower="no floor")),
        Mistake("unseen_history_divides_by_zero", "a history never seen has c(h ·) = 0: there is "
                "nothing to discount, so P(w | h) is the continuation probability alone (do not "
                "divide by 0).",
                like=lambda *args: _kn_wrong(*args, unseen="divide")),
        Mistake("uniform_for_unseen_history", "after a history never seen, back off to the "
                "continuation probability of w, not to 1/|V|: the lower order still knows that "
                "glasgow follows more words than francisco.",
                like=lambda *args: _kn_wrong(*args, unseen="uniform")),
    ])

EXERCISES = [check_hidden_backward, check_mlp_forward, check_mlp_backward, check_init_choice,
             check_adam_update, check_kn_bigram]
