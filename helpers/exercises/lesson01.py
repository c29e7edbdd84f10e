"""Checkers for lesson 01 (feed-forward networks)."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

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
from helpers.lib import gradcheck as _gradcheck
from helpers.lib.layers import Activation, Linear, Sequential, SoftmaxCrossEntropy, log_softmax, mlp
from helpers.lib.layers import softmax as _softmax_reference
from helpers.lib.ngram import KneserNeyLM, kneser_ney_nlls
from helpers.lib.optim import Adam, AdamW, Momentum, RMSProp, adam_update

NOTES_PROBS = [[0.09003057, 0.24472847, 0.66524096]]     # softmax([1, 2, 3]), the lesson's worked example


# ----------------------------------------------------------------------------- softmax
def _worked_example(f):
    expect_close(f(np.array([[1.0, 2.0, 3.0]])), NOTES_PROBS, "softmax([[1, 2, 3]])")


def _rows_sum_to_one(f):
    z = np.random.default_rng(0).standard_normal((4, 5))
    p = np.asarray(f(z))
    expect_close(p.sum(axis=1) if p.ndim == 2 else p, np.ones(4), "row sums of softmax(z) for a (4, 5) batch")
    expect_close(p, _softmax_reference(z), "softmax(z) for a random (4, 5) batch")


def _no_overflow(f):
    with np.errstate(over="ignore", invalid="ignore"):
        p = f(np.array([[1000.0, 1001.0, 1002.0]]))
    expect_close(p, NOTES_PROBS, "softmax([[1000, 1001, 1002]]) (the same as softmax([[1, 2, 3]]))")


def _rows_at_different_scales(f):
    z = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -999.0, -998.0]])
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        p = f(z)
    expect_close(p, NOTES_PROBS * 2, "softmax of the rows [1000, 1001, 1002] and [-1000, -999, -998] "
                 "(each row is shifted by its own maximum)")


def _rows_spanning_800(f):
    z = np.array([[0.0, 800.0, 5.0], [-400.0, 400.0, 0.0], [800.0, 0.0, 799.0]])
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        p = f(z)
    expect_close(p, _softmax_reference(z), "softmax of rows whose scores span 800 ([0, 800, 5], "
                 "[-400, 400, 0], [800, 0, 799]): every exp must stay finite")


def _shift_invariance(f):
    z = np.array([[0.5, -1.0, 2.0], [3.0, 3.0, 3.0]])
    expect_close(f(z + 7.0), f(z), "softmax(z + 7) vs softmax(z) (adding a constant must not matter)")


def _naive_softmax(z):
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _min_shift_softmax(z):
    e = np.exp(z - z.min(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _global_max_softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum(axis=1, keepdims=True)


def _batch_normalised_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum()


def _column_softmax(z):
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


def _no_keepdims_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1)


check_softmax = FunctionExercise(
    "stable softmax",
    [_worked_example, _rows_sum_to_one, _no_overflow, _rows_at_different_scales, _rows_spanning_800,
     _shift_invariance],
    reference=_softmax_reference, step="warm-up", forbidden=(log_softmax, SoftmaxCrossEntropy),
    mistakes=[
        Mistake("no_max_shift", "np.exp(1000) overflows to inf, and inf / inf is nan: subtract each row's "
                "maximum before np.exp (softmax(z - c) = softmax(z) for any constant c).", like=_naive_softmax),
        Mistake("one_max_for_the_batch", "you subtract one maximum for the whole batch: the row "
                "[-1000, -999, -998] then underflows to exp(-2000) = 0 and 0 / 0 = nan. Shift each row by "
                "its own maximum: z.max(axis=1, keepdims=True).", like=_global_max_softmax),
        Mistake("normalised_over_the_batch", "you divide by the sum over the whole batch: each row must sum "
                "to 1 on its own — e.sum(axis=1, keepdims=True).", like=_batch_normalised_softmax),
        Mistake("shift_by_minimum", "you subtract each row's minimum: in the row [0, 800, 5] the largest "
                "score is still 800 after the shift and np.exp(800) overflows to inf. Subtract the row's "
                "maximum, so that every shifted score is <= 0 and every exp lies in (0, 1].",
                like=_min_shift_softmax),
        Mistake("over_columns", "axis=0 works down the columns, across the examples of the batch; softmax "
                "runs along each row (the K classes of one example): use axis=1.", like=_column_softmax),
        Mistake("no_keepdims", "e.sum(axis=1) has shape (N,), which NumPy lines up with the K columns, "
                "not with the rows: keep the summed axis with keepdims=True, shape (N, 1).",
                like=_no_keepdims_softmax),
    ])


# ----------------------------------------------------------------------------- cross-entropy
def _cross_entropy_reference(probs, targets):
    return float(-np.mean(np.log(probs[np.arange(len(targets)), targets])))


def _notes_example(f):
    got = f(np.array([[0.1, 0.6, 0.3]]), np.array([0]))
    expect_close(got, -math.log(0.1), "cross-entropy of [0.1, 0.6, 0.3] with true class C1 "
                 "(the lesson's worked example, -log 0.1)")


def _batch_mean(f):
    p = np.array([[0.1, 0.6, 0.3], [0.2, 0.1, 0.7]])
    expect_close(f(p, np.array([0, 2])), (-math.log(0.1) - math.log(0.7)) / 2,
                 "mean cross-entropy of a batch of two (-log 0.1 and -log 0.7)")


def _random_batch(f):
    rng = np.random.default_rng(3)
    p = _softmax_reference(rng.standard_normal((6, 4)))
    t = rng.integers(0, 4, 6)
    got = f(p, t)
    if np.ndim(got) != 0:
        raise ExerciseFailed(f"expected a scalar (the mean over the batch), got an array of shape {np.shape(got)}")
    expect_close(got, _cross_entropy_reference(p, t), "mean cross-entropy of a random batch of 6, K = 4")


check_cross_entropy = FunctionExercise(
    "cross-entropy", [_notes_example, _batch_mean, _random_batch],
    reference=_cross_entropy_reference, step="warm-up", forbidden=(SoftmaxCrossEntropy, log_softmax),
    mistakes=[
        Mistake("sum_not_mean", "you return the sum over the batch; the loss is the mean, so that it does not "
                "grow with the batch size: divide by N (or use .mean()).",
                like=lambda p, t: float(-np.log(p[np.arange(len(t)), t]).sum())),
        Mistake("column_indexing", "probs[:, targets] picks whole columns, an (N, N) block; pick one entry per "
                "row with probs[np.arange(N), targets].",
                like=lambda p, t: float(-np.log(p[:, t]).mean())),
        Mistake("no_minus_sign", "the log of a probability is negative: the loss is -log p, a positive number.",
                like=lambda p, t: float(np.log(p[np.arange(len(t)), t]).mean())),
        Mistake("log_base_10", "cross-entropy uses the natural logarithm (np.log), not np.log10.",
                like=lambda p, t: float(-np.log10(p[np.arange(len(t)), t]).mean())),
        Mistake("per_example", "you return one loss per example; average them into one number (.mean()).",
                like=lambda p, t: -np.log(p[np.arange(len(t)), t])),
    ])


# ----------------------------------------------------------------------------- core: a two-layer MLP's backward
GRAD_NAMES = ("dW1", "db1", "dW2", "db2")


def _mlp_backward_reference(X, y, W1, b1, W2, b2):
    N = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    dz2 = _softmax_reference(h @ W2 + b2)
    dz2[np.arange(N), y] -= 1
    dz2 /= N
    dz1 = (dz2 @ W2.T) * (1 - h ** 2)
    return X.T @ dz1, dz1.sum(axis=0), h.T @ dz2, dz2.sum(axis=0)


def _mlp_loss(X, y, W1, b1, W2, b2) -> float:
    z = np.tanh(X @ W1 + b1) @ W2 + b2
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(len(y)), y].mean())


def _mlp_torch(X, y, W1, b1, W2, b2):
    return torch.nn.functional.cross_entropy(torch.tanh(X @ W1 + b1) @ W2 + b2, y)


def _mlp_case(seed, N=5, D=4, H=3, K=6):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((N, D)), rng.integers(0, K, N), rng.standard_normal((D, H)) * 0.7,
            rng.standard_normal(H) * 0.1, rng.standard_normal((H, K)) * 0.7, rng.standard_normal(K) * 0.1)


def _mlp_shapes(f):
    args = _mlp_case(0)
    got = f(*args)
    expect_tuple(got, GRAD_NAMES)
    for name, g, p in zip(GRAD_NAMES, got, args[2:], strict=True):
        if np.shape(g) != np.shape(p):
            raise ExerciseFailed(f"{name}: expected the shape of its parameter, {np.shape(p)}, got {np.shape(g)}")


def _mlp_against_torch(f):
    X, y, *params = _mlp_case(1)
    got = f(X, y, *params)
    yt = torch.from_numpy(y)
    expect_gradients_match_torch(got, lambda *p: _mlp_torch(torch.from_numpy(X), yt, *p), params, GRAD_NAMES)


def _mlp_against_finite_differences(f):
    X, y, *params = _mlp_case(2, N=3, D=3, H=4, K=3)
    got = f(X, y, *params)
    expect_gradients_match_numerical(got, lambda *p: _mlp_loss(X, y, *p), params, GRAD_NAMES)


def _no_tanh_derivative(X, y, W1, b1, W2, b2):
    N = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    dz2 = _softmax_reference(h @ W2 + b2)
    dz2[np.arange(N), y] -= 1
    dz2 /= N
    dz1 = dz2 @ W2.T
    return X.T @ dz1, dz1.sum(axis=0), h.T @ dz2, dz2.sum(axis=0)


def _tanh_derivative_of_z(X, y, W1, b1, W2, b2):
    N = X.shape[0]
    z1 = X @ W1 + b1
    h = np.tanh(z1)
    dz2 = _softmax_reference(h @ W2 + b2)
    dz2[np.arange(N), y] -= 1
    dz2 /= N
    dz1 = (dz2 @ W2.T) * (1 - z1 ** 2)
    return X.T @ dz1, dz1.sum(axis=0), h.T @ dz2, dz2.sum(axis=0)


def _summed_not_averaged(X, y, W1, b1, W2, b2):
    return tuple(g * X.shape[0] for g in _mlp_backward_reference(X, y, W1, b1, W2, b2))


def _bias_kept_batch_axis(X, y, W1, b1, W2, b2):
    dW1, _, dW2, _ = _mlp_backward_reference(X, y, W1, b1, W2, b2)
    N = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    dz2 = _softmax_reference(h @ W2 + b2)
    dz2[np.arange(N), y] -= 1
    dz2 /= N
    return dW1, (dz2 @ W2.T) * (1 - h ** 2), dW2, dz2


def _transposed_dW2(X, y, W1, b1, W2, b2):
    dW1, db1, dW2, db2 = _mlp_backward_reference(X, y, W1, b1, W2, b2)
    return dW1, db1, dW2.T, db2


def _no_softmax(X, y, W1, b1, W2, b2):
    N = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    dz2 = -np.eye(W2.shape[1])[y] / N
    dz1 = (dz2 @ W2.T) * (1 - h ** 2)
    return X.T @ dz1, dz1.sum(axis=0), h.T @ dz2, dz2.sum(axis=0)


check_mlp_backward = FunctionExercise(
    "two-layer MLP backward", [_mlp_shapes, _mlp_against_torch, _mlp_against_finite_differences],
    reference=_mlp_backward_reference, step="core",
    forbidden=(Linear, Activation, SoftmaxCrossEntropy, Sequential, mlp, _gradcheck.check_layer,
               _gradcheck.numerical_gradient),
    mistakes=[
        Mistake("bias_kept_batch_axis", "a bias is added to every row, so its gradient is the sum over the "
                "batch of the gradients of those rows: db = dz.sum(axis=0), shape (H,) or (K,), not (N, H).",
                when=lambda out, *args: isinstance(out, tuple) and len(out) == 4 and np.ndim(out[1]) == 2,
                example=_bias_kept_batch_axis),
        Mistake("no_tanh_derivative", "the gradient reaching the hidden layer must go through tanh: "
                "dz1 = dh * (1 - h**2), where dh = dz2 @ W2.T.", like=_no_tanh_derivative),
        Mistake("tanh_derivative_of_z", "tanh'(z) = 1 - tanh(z)**2 = 1 - h**2: square the activation h, not the "
                "pre-activation z.", like=_tanh_derivative_of_z),
        Mistake("summed_not_averaged", "the loss is the mean over the N examples, so every gradient carries a "
                "1/N: divide dz2 = p - onehot(y) by N.", like=_summed_not_averaged),
        Mistake("transposed_weight_gradient", "dW2 must have W2's shape (H, K): it is h.T @ dz2 (H×N times "
                "N×K), not dz2.T @ h.", like=_transposed_dW2),
        Mistake("no_softmax", "the gradient of softmax + cross-entropy with respect to the scores is "
                "p - onehot(y), with p = softmax(h @ W2 + b2); you left out p.", like=_no_softmax),
    ])


# ----------------------------------------------------------------------------- core: the Adam step
def _adam_first_step(f):
    p, g = np.array([1.0, 1.0, 1.0, 1.0]), np.array([0.5, -2.0, 1e-3, 40.0])
    got = f(p.copy(), g.copy(), np.zeros(4), np.zeros(4), 1, 0.1)
    expect_tuple(got, ("p", "m", "v"))
    expect_close(got[1], 0.1 * g, "m after the first step from m = 0 (0.1·g)")
    expect_close(got[2], 0.001 * g * g, "v after the first step from v = 0 (0.001·g²)")
    expect_close(got[0], adam_update(p, g, np.zeros(4), np.zeros(4), 1, 0.1)[0],
                 "p after the first step, lr = 0.1 (bias-corrected, every weight moves by about lr: "
                 "p - 0.1·sign(g))", rtol=1e-7)


def _adam_shapes(f):
    rng = np.random.default_rng(0)
    p, g, m = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4)) * 0.1
    got = f(p, g, m, np.abs(m), 5, 1e-2)
    expect_tuple(got, ("p", "m", "v"))
    for name, x in zip(("p", "m", "v"), got, strict=True):
        if np.shape(x) != p.shape:
            raise ExerciseFailed(f"{name}: expected shape {p.shape} (the parameter's), got {np.shape(x)}")


def _run_against_torch(f, lr, beta1, beta2, eps, steps=20, seed=0):
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(5)
    theta_t = torch.tensor(theta.copy(), requires_grad=True)
    opt = torch.optim.Adam([theta_t], lr=lr, betas=(beta1, beta2), eps=eps)
    m, v = np.zeros(5), np.zeros(5)
    for t in range(1, steps + 1):           # minimise sum(theta^4): gradient 4 theta^3
        theta, m, v = f(theta, 4 * theta ** 3, m, v, t, lr, beta1, beta2, eps)
        theta, m, v = np.asarray(theta, float), np.asarray(m, float), np.asarray(v, float)
        opt.zero_grad()
        (theta_t ** 4).sum().backward()
        opt.step()
    return theta, theta_t.detach().numpy()


def _adam_against_torch(f):
    ours, theirs = _run_against_torch(f, 0.1, 0.9, 0.999, 1e-8)
    expect_close(ours, theirs, "theta after 20 steps on sum(theta^4), lr 0.1, vs torch.optim.Adam", rtol=1e-7)


def _adam_other_settings(f):
    ours, theirs = _run_against_torch(f, 0.05, 0.5, 0.9, 1e-1, steps=10, seed=1)
    expect_close(ours, theirs, "theta after 10 steps with beta1 = 0.5, beta2 = 0.9, eps = 0.1 vs "
                 "torch.optim.Adam (use the arguments, not the default values)", rtol=1e-7)


def _adam_no_bias_correction(p, g, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    return p - lr * m / (np.sqrt(v) + eps), m, v


def _adam_eps_inside(p, g, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    return p - lr * (m / (1 - beta1 ** t)) / np.sqrt(v / (1 - beta2 ** t) + eps), m, v


def _adam_v_of_g(p, g, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * np.abs(g)
    return p - lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps), m, v


def _adam_uphill(p, g, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    new_p, m, v = adam_update(p, g, m, v, t, lr, beta1, beta2, eps)
    return 2 * p - new_p, m, v


def _adam_defaults_hard_coded(p, g, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    return adam_update(p, g, m, v, t, lr)


def _adam_update_reference(p, g, m, v, t, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    return adam_update(p, g, m, v, t, lr, beta1, beta2, eps)


check_adam_update = FunctionExercise(
    "Adam step", [_adam_first_step, _adam_shapes, _adam_against_torch, _adam_other_settings],
    reference=_adam_update_reference, step="core",
    forbidden=(adam_update, Adam, AdamW, Adam.update, RMSProp, Momentum),
    mistakes=[
        Mistake("no_bias_correction", "m and v start at 0, so after one step they are only (1-β1)·g and "
                "(1-β2)·g²: divide by (1 - β1**t) and (1 - β2**t) before the step (the bias correction), "
                "so that the first steps have the size lr.", like=_adam_no_bias_correction),
        Mistake("eps_inside_the_root", "eps is added to √v̂, outside the square root: "
                "m̂ / (np.sqrt(v̂) + eps), as Kingma & Ba (and torch.optim.Adam) write it.", like=_adam_eps_inside),
        Mistake("v_not_squared", "v is the running mean of the *squared* gradient: "
                "v = β2·v + (1 - β2)·g**2 (g * g), not of |g| or g.", like=_adam_v_of_g),
        Mistake("uphill", "the step goes against the gradient: p - lr·m̂/(√v̂ + eps), a minus sign.",
                like=_adam_uphill),
        Mistake("defaults_hard_coded", "use the beta1, beta2 and eps you are given: the checker also runs "
                "β1 = 0.5, β2 = 0.9, eps = 0.1.", like=_adam_defaults_hard_coded),
    ])


# ----------------------------------------------------------------------------- warm-up: Kneser-Ney by hand
TOY = ("i live in san francisco . we love san francisco . they left san francisco . i love glasgow . "
       "you visit glasgow .").split()


def _kn_bigram_reference(tokens, prev, word, vocab_size, D=0.75):
    tokens = list(tokens)
    ids = {w: i for i, w in enumerate(dict.fromkeys(tokens))}
    extra = {prev, word} - set(ids)
    for w in sorted(extra):
        ids[w] = len(ids)
    if len(ids) > vocab_size:
        raise ValueError(f"the text and the query hold {len(ids)} different words, more than vocab_size={vocab_size}")
    lm = KneserNeyLM(order=2, vocab_size=vocab_size, discount=D).fit([ids[t] for t in tokens])
    return lm.prob((ids[prev],), ids[word])


def _bigram_counts(tokens):
    pairs = list(zip(tokens[:-1], tokens[1:], strict=True))
    return pairs, {p: pairs.count(p) for p in set(pairs)}


def _kn_parts(tokens, prev, word, D):
    pairs, c = _bigram_counts(list(tokens))
    types = set(pairs)
    c_prev = sum(n for (a, _), n in c.items() if a == prev)
    followers = len({b for a, b in types if a == prev})
    cont = len({a for a, b in types if b == word})
    cont_types = len({b for _, b in types})
    return c.get((prev, word), 0), c_prev, followers, cont, len(types), cont_types


def _kn_raw_unigram(tokens, prev, word, vocab_size, D=0.75):
    c_hw, c_h, followers, _, _, _ = _kn_parts(tokens, prev, word, D)
    p_low = list(tokens).count(word) / len(tokens)
    return p_low if c_h == 0 else max(c_hw - D, 0) / c_h + D * followers / c_h * p_low


def _kn_no_uniform(tokens, prev, word, vocab_size, D=0.75):
    c_hw, c_h, followers, cont, n_types, _ = _kn_parts(tokens, prev, word, D)
    p_low = cont / n_types
    return p_low if c_h == 0 else max(c_hw - D, 0) / c_h + D * followers / c_h * p_low


def _kn_lower(cont, n_types, cont_types, vocab_size, D):
    return max(cont - D, 0) / n_types + D * cont_types / n_types / vocab_size


def _kn_unseen_history_crashes(tokens, prev, word, vocab_size, D=0.75):
    c_hw, c_h, followers, cont, n_types, cont_types = _kn_parts(tokens, prev, word, D)
    return max(c_hw - D, 0) / c_h + D * followers / c_h * _kn_lower(cont, n_types, cont_types, vocab_size, D)


def _kn_weight_without_followers(tokens, prev, word, vocab_size, D=0.75):
    c_hw, c_h, followers, cont, n_types, cont_types = _kn_parts(tokens, prev, word, D)
    p_low = _kn_lower(cont, n_types, cont_types, vocab_size, D)
    return p_low if c_h == 0 else max(c_hw - D, 0) / c_h + D / c_h * p_low


def _kn_worked_example(f):
    for word, expected in (("glasgow", 0.75 * 2 / 18), ("francisco", 0.75 * 1 / 18)):
        expect_close(f(list(TOY), "left", word, 13, 0.75), expected,
                     f"P({word} | left) in the lesson's worked example (D = 0.75, |V| = 13)", rtol=1e-9)


def _kn_seen_bigram(f):
    expect_close(f(list(TOY), "san", "francisco", 13, 0.75), (3 - 0.75) / 3 + 0.75 * 1 / 3 * (1 / 18),
                 "P(francisco | san) in the worked example: a seen bigram", rtol=1e-9)


def _kn_sums_to_one_and_never_zero(f):
    vocab = sorted(set(TOY)) + ["zebra", "yak"]                # two words of the vocabulary that never occur
    for prev in ("love", "zebra"):                               # a seen history and one never seen
        probs = [f(list(TOY), prev, w, len(vocab), 0.6) for w in vocab]
        expect_close(sum(probs), 1.0, f"the sum of P(w | {prev}) over the {len(vocab)} words of the vocabulary "
                     "(D = 0.6)", rtol=1e-9)
        if min(probs) <= 0:
            raise ExerciseFailed(f"P(w | {prev}): expected every word above 0 (the uniform 1/|V| share), got "
                                 f"{min(probs):g} for '{vocab[int(np.argmin(probs))]}'")


def _kn_random_text(f):
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(8)]
    tokens = [words[i] for i in rng.integers(0, 8, 120)]
    for prev, word in (("w1", "w2"), ("w3", "w3"), ("w0", "w7")):
        expect_close(f(tokens, prev, word, 10, 0.8), _kn_bigram_reference(tokens, prev, word, 10, 0.8),
                     f"P({word} | {prev}) on a random text of 120 tokens, |V| = 10, D = 0.8", rtol=1e-9)


check_kn_bigram = FunctionExercise(
    "Kneser-Ney bigram", [_kn_worked_example, _kn_seen_bigram, _kn_sums_to_one_and_never_zero, _kn_random_text],
    reference=_kn_bigram_reference, step="warm-up", forbidden=(KneserNeyLM, KneserNeyLM.prob, kneser_ney_nlls),
    mistakes=[
        Mistake("raw_unigram", "the lower order of Kneser-Ney is the continuation probability — in how many "
                "different bigrams w is the second word, N1+(· w) — not w's share of the text (that is absolute "
                "discounting).", like=_kn_raw_unigram),
        Mistake("no_uniform_floor", "the continuation level is discounted too: max(N1+(· w) - D, 0) / N1+(· ·) "
                "plus D · (words with a continuation) / N1+(· ·) · 1/|V|, so that a word of the vocabulary "
                "that never occurs still gets a probability above 0.", like=_kn_no_uniform),
        Mistake("unseen_history", "a history never seen in the text has c(h ·) = 0: there is nothing to "
                "discount, so P(w | h) is the continuation probability alone (do not divide by 0).",
                like=_kn_unseen_history_crashes),
        Mistake("weight_without_followers", "the weight of the lower order is what the discounts freed: "
                "D · N1+(h ·) / c(h ·), one D for each different word seen after h.",
                like=_kn_weight_without_followers),
    ])


# ----------------------------------------------------------------------------- experiment: initialisation
INIT_SCHEMES = ("N(0, 1)", "N(0, 0.01²)", "Xavier/Glorot", "He")


def _init_std(scheme: str, width: int) -> float:
    return {"N(0, 1)": 1.0, "N(0, 0.01²)": 0.01, "Xavier/Glorot": math.sqrt(2.0 / (width + width)),
            "He": math.sqrt(2.0 / width)}[scheme]


@lru_cache(maxsize=16)
def relu_activation_stds(depth: int = 15, width: int = 128, n: int = 256, seed: int = 0) -> dict:
    """The checker's own measurement: the std of each layer's activation through ``depth`` layers
    x <- relu(x W), W ~ N(0, s²) of each scheme, for a batch of ``n`` standard-normal inputs.
    Returns scheme -> tuple of ``depth`` stds."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 3 <= depth <= 50:
        raise ValueError(f"depth must be a whole number of layers from 3 to 50, got {depth!r}")
    out = {}
    for scheme in INIT_SCHEMES:
        rng = np.random.default_rng(seed)
        x, stds = rng.standard_normal((n, width)), []
        for _ in range(int(depth)):
            x = np.maximum(x @ (rng.standard_normal((width, width)) * _init_std(scheme, width)), 0)
            stds.append(float(x.std()))
        out[scheme] = tuple(stds)
    return out


def _stable_relu_scheme(depth: int = 15) -> str:
    stds = relu_activation_stds(depth)
    steady = [s for s, std in stds.items() if all(0.5 < x < 2 for x in std)]
    if len(steady) != 1:
        raise ValueError(f"at depth {depth} the measurement finds {len(steady)} schemes with a steady "
                         f"activation std ({steady}), not one")
    return steady[0]


check_init_choice = ExperimentExercise(
    "initialisation for a deep ReLU stack", _stable_relu_scheme,
    choices=list(INIT_SCHEMES), example_context={"depth": 15},
    explanation="He initialisation draws W with variance 2/fan_in: a ReLU zeroes half of its inputs, "
                "which halves the second moment of the signal, and the factor 2 gives it back, so the "
                "activations keep their scale through any depth (He et al. 2015). Xavier's 2/(fan_in + "
                "fan_out) = 1/width was derived for a symmetric activation like tanh; under ReLU it loses a "
                "factor √2 per layer.",
    mistakes=[
        Mistake("xavier", "look at the ReLU panel again: Xavier's variance 2/(fan_in + fan_out) was derived "
                "for tanh; ReLU zeroes half the units, so the std shrinks by about √2 per layer.",
                like="Xavier/Glorot"),
        Mistake("big_normal", "N(0, 1) weights multiply the std by about √(width/2) per layer: the "
                "activations explode.", like="N(0, 1)"),
        Mistake("small_normal", "N(0, 0.01²) weights shrink the signal at every layer: by layer 10 nothing "
                "is left of it (and of the gradient).", like="N(0, 0.01²)"),
    ])

EXERCISES = [check_softmax, check_cross_entropy, check_mlp_backward, check_init_choice, check_adam_update,
             check_kn_bigram]
