"""Checkers for lesson 09: Spearman's rho with out-of-vocabulary pairs, 3CosAdd and 3CosMul for a
batch of questions, one entry of the classifier's gradient by hand, and the whole gradient."""
from __future__ import annotations

import numpy as np
import scipy.special
import torch
from scipy.stats import pearsonr, spearmanr

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    as_array,
    expect_close,
    expect_equal,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
    numerical_gradients,
)
from helpers.lib import layers, metrics, stats
from helpers.lib.extrinsic import fit_softmax_regression, softmax_regression_loss_grad

# ----------------------------------------------------------------------------- Spearman with OOV
PAIRS = [("a", "b", 9.0), ("a", "c", 5.0), ("b", "c", 7.0), ("a", "z", 3.0), ("c", "d", 1.0)]
SIMS = {("a", "b"): 0.8, ("a", "c"): 0.1, ("b", "c"): 0.5, ("c", "d"): 0.2}


def _spearman(sims, pairs, correlate=spearmanr, oov_as_zero=False, nan=False, count_known=False):
    """(rho, n_oov) over the known pairs, right or with one of the typical mistakes."""
    found = [(a, b) in sims for a, b, _ in pairs]
    known = [(sims.get((a, b), 0.0), s) for (a, b, s), ok in zip(pairs, found) if ok or oov_as_zero]
    n_oov = found.count(True) if count_known else found.count(False)
    if sum(found) < 2:
        return (float("nan") if nan else None), n_oov
    return float(correlate(*zip(*known)).statistic), n_oov


def _spearman_reference(sims, pairs):
    return _spearman(sims, pairs)


def _values(f):
    rho, n_oov = f(SIMS, PAIRS)
    expect_equal(int(n_oov), 1, "number of out-of-vocabulary pairs")
    expect_close(rho, spearmanr([0.8, 0.1, 0.5, 0.2], [9.0, 5.0, 7.0, 1.0]).statistic,
                 "Spearman rho over the 4 known pairs")


def _ranks_only(f):
    rho, _ = f({**SIMS, ("a", "b"): 100.0}, PAIRS)       # a monotone change: rho must not move
    expect_close(rho, f(SIMS, PAIRS)[0], "rho after making the top cosine much larger (ranks "
                 "unchanged)")


def _all_oov(f):
    rho, n_oov = f({}, PAIRS)
    if rho is not None:
        raise ExerciseFailed(f"with no known pair: expected rho None (as the task says), got "
                             f"{rho!r}")
    expect_equal(int(n_oov), 5, "number of OOV pairs when none is known")


check_spearman_with_oov = FunctionExercise(
    "Spearman with OOV", [_values, _ranks_only, _all_oov], reference=_spearman_reference,
    step="warm-up",
    forbidden=(metrics.similarity_correlation, metrics.similarity_interval,
               metrics.paired_similarity_difference,
               stats.spearman, stats.spearman_rows, stats.spearman_interval,
               stats.paired_spearman_difference),
    mistakes=[
        Mistake("pearson", "Spearman's rho correlates the RANKS (scipy.stats.spearmanr); Pearson's "
                "r correlates the values and moves when one cosine grows.",
                like=lambda *args: _spearman(*args, correlate=pearsonr)),
        Mistake("oov_scored_zero", "leave the out-of-vocabulary pairs out of the correlation and "
                "count them; scoring them 0 invents a similarity.",
                like=lambda *args: _spearman(*args, oov_as_zero=True)),
        Mistake("nan_for_none", "with fewer than two known pairs return None for rho, as the task "
                "says: a NaN would slip silently into an average.",
                like=lambda *args: _spearman(*args, nan=True)),
        Mistake("known_counted", "n_oov counts the pairs NOT found in sims; you returned the "
                "number found.", like=lambda *args: _spearman(*args, count_known=True)),
    ])


# ----------------------------------------------------------------------------- 3CosAdd and 3CosMul
# a toy space: dimensions "female", "royal", "fruit"
WORDS = ["man", "woman", "king", "queen", "lord", "apple", "banana"]
VECTORS = np.array([[-1.0, 0.0, 0.1], [1.0, 0.0, 0.1], [-1.0, 1.0, 0.0], [1.0, 1.0, 0.0],
                    [-2.0, 1.0, 0.1], [0.0, -0.2, 1.0], [0.1, -0.3, 1.0]])
# three questions at once; each one's answer is another one's query word
TOY = [("man", "woman", "king"), ("woman", "man", "queen"), ("king", "man", "queen")]


def _scores(vectors, a, b, c, rule="add", normalise=True, exclude="abc", across=False, sign=1,
            shift=True, eps=1e-3, additive=False):
    """3CosAdd or 3CosMul scores (Q, V), right or with one of the typical mistakes."""
    E = np.asarray(vectors, dtype=np.float64)
    E = E / np.linalg.norm(E, axis=1, keepdims=True) if normalise else E
    a, b, c = (np.atleast_1d(np.asarray(x)) for x in (a, b, c))
    if rule == "add":
        scores = (sign * (E[b] - E[a]) + E[c]) @ E.T
    else:
        sa, sb, sc = (E[x] @ E.T for x in (a, b, c))
        if shift:
            sa, sb, sc = (sa + 1) / 2, (sb + 1) / 2, (sc + 1) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = sb - sa + sc if additive else sb * sc / (sa + eps)
    rows = slice(None) if across else np.arange(len(a))
    for key, x in zip("abc", (a, b, c), strict=True):
        if key in exclude:
            scores[rows, x] = -np.inf
    return scores


def _add_reference(vectors, a, b, c):
    return metrics.analogy_scores(vectors, a, b, c, "add")


def _mul_reference(vectors, a, b, c):
    return metrics.analogy_scores(vectors, a, b, c, "mul")


def _expect_scores(f, vectors, questions, rule, what):
    """Fail unless f's scores for ``questions`` [(a, b, c) rows] are the rule's, -inf included."""
    a, b, c = (np.array(x) for x in zip(*questions, strict=True))
    got = as_array(f(vectors, a, b, c)).astype(float)
    want = _scores(vectors, a, b, c, rule)
    expect_equal(got.shape, want.shape, f"{what}: the shape of the scores (questions, words)")
    wrong = ~np.isclose(got, want, rtol=1e-6, atol=1e-9)
    if wrong.any():
        q, d = np.argwhere(wrong)[0]
        role = "query word of its question" if np.isinf(want[q, d]) else "candidate"
        raise ExerciseFailed(f"{what}: question {q}, word {d} (a {role}): expected score "
                             f"{want[q, d]:.6g}, got {got[q, d]:.6g}")


def random_space(seed: int = 3) -> np.ndarray:
    """24 random vectors of random lengths, rows 1 and 2 near row 0 (b or c near a)."""
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(24, 6)) * rng.uniform(0.3, 3.0, size=(24, 1))
    E[1:3] = E[0] + 0.02 * np.linalg.norm(E[0]) * rng.normal(size=(2, 6))
    return E


def _questions(rule):
    """The checks: the toy space's three questions, then six on random vectors."""
    def toy(f):
        _expect_scores(f, VECTORS, [[WORDS.index(w) for w in q] for q in TOY], rule,
                       "man : woman :: king : ?, woman : man :: queen : ? and king : man :: "
                       "queen : ? together on the toy space")

    def random(f):
        _expect_scores(f, random_space(), [(0, 1, 5), (0, 7, 2), (0, 1, 2), (3, 9, 11), (12, 4, 20),
                                           (8, 23, 6)], rule, "six questions on 24 random vectors "
                       "of random lengths, three of them with b or c near a")
    return [toy, random]


def _some_query_words_kept(out, vectors, a, b, c):
    """True when a question has some, not all, of its query words at -inf."""
    rows, out = np.arange(len(np.atleast_1d(a))), np.asarray(out, dtype=float)
    gone = np.stack([np.isneginf(out[rows, np.asarray(x)]) for x in (a, b, c)])
    return bool(np.any(gone.any(axis=0) & ~gone.all(axis=0)))


ANALOGY_SHORTCUTS = (metrics.analogy_scores, metrics.analogy, metrics.analogy_rank,
                     metrics.analogy_accuracy, metrics.analogy_hits, metrics.nearest_neighbours)
ACROSS = ("you excluded every question's query words from every row: scores[:, a] = -inf "
          "blanks those columns for all questions. Exclude each question's own words only, "
          "scores[np.arange(Q), a] = -inf (the same for b and c).")

check_three_cos_add = FunctionExercise(
    "3CosAdd", _questions("add"), reference=_add_reference,
    forbidden=ANALOGY_SHORTCUTS,
    mistakes=[
        Mistake("query_words_kept", "give the three query words of each question the score -inf: "
                "b - a + c is often closest to c itself.",
                like=lambda *args: _scores(*args, exclude="")),
        Mistake("excluded_across_questions", ACROSS,
                like=lambda *args: _scores(*args, across=True)),
        Mistake("not_normalised", "normalise every vector to unit length first: with raw dot "
                "products a long vector (a frequent word) wins by its length, not its direction.",
                like=lambda *args: _scores(*args, normalise=False)),
        Mistake("wrong_direction", "a : b :: c : ? looks for b - a + c (woman - man + king), "
                "not a - b + c.", like=lambda *args: _scores(*args, sign=-1)),
        Mistake("some_query_words_kept", "exclude all three query words, not only some: b - a + c "
                "is closest to c when b is near a, to b when c is near a, and to a when both are.",
                when=_some_query_words_kept,
                example=lambda *args: _scores(*args, exclude="ab")),
    ])

check_three_cos_mul = FunctionExercise(
    "3CosMul", _questions("mul"), reference=_mul_reference,
    forbidden=ANALOGY_SHORTCUTS,
    mistakes=[
        Mistake("no_shift", "shift each cosine to [0, 1] first, cos' = (cos + 1) / 2: with raw "
                "cosines two negative ones multiply to a large positive score.",
                like=lambda *args: _scores(*args, "mul", shift=False)),
        Mistake("additive", "that is 3CosAdd on shifted cosines; 3CosMul MULTIPLIES the shifted "
                "cosines with b and c and DIVIDES by the one with a (plus 0.001).",
                like=lambda *args: _scores(*args, "mul", additive=True)),
        Mistake("query_words_kept", "give the three query words of each question the score -inf.",
                like=lambda *args: _scores(*args, "mul", exclude="")),
        Mistake("excluded_across_questions", ACROSS,
                like=lambda *args: _scores(*args, "mul", across=True)),
        Mistake("not_normalised", "cosines need unit-length rows: divide every vector by its norm "
                "first (raw dot products are not in [-1, 1], and the shift no longer maps them to "
                "[0, 1]).", like=lambda *args: _scores(*args, "mul", normalise=False)),
        Mistake("no_epsilon", "add epsilon = 0.001 to cos'(d, a): it keeps the division from "
                "exploding for a word opposite to a, and its size decides between such words.",
                like=lambda *args: _scores(*args, "mul", eps=0.0)),
        Mistake("some_query_words_kept", "exclude all three query words, not only some: with b "
                "and c both near a, a itself scores highest.", when=_some_query_words_kept,
                example=lambda *args: _scores(*args, "mul", exclude="bc")),
    ])


# ----------------------------------------------------------------------------- the classifier
def _logreg(X, y, W, b, l2, mean=True, onehot=True, penalise_bias=False, shift=True,
            log_first=True, penalty_in_grad=True):
    """Softmax regression's (loss, dW, db), right or with one of the typical mistakes."""
    n, rows = len(y), np.arange(len(y))
    Z = X @ W + b
    Z = Z - Z.max(axis=1, keepdims=True) if shift else Z
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        E = np.exp(Z)
        S = E.sum(axis=1)
        P = E / S[:, None]
        log_p = Z[rows, y] - np.log(S) if log_first else np.log(P[rows, y])
    G = P.copy()
    if onehot:
        G[rows, y] -= 1.0
    scale = 1 / n if mean else 1.0
    loss = -log_p.sum() * scale + 0.5 * l2 * (np.sum(W * W) + penalise_bias * np.sum(b * b))
    dW = X.T @ (scale * G) + (l2 * W if penalty_in_grad else 0)
    return float(loss), dW, scale * G.sum(axis=0) + (l2 * b if penalise_bias else 0)


def _random_problem(seed, n=6, d=4, K=3, scale=1.0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) * scale, rng.integers(0, K, n), rng.normal(size=(d, K)) * 0.5,
            rng.normal(size=K) * 0.5)


def _unpack(out):
    expect_tuple(out, ("loss", "dW", "db"))
    return out


def _hand_example(f):
    X, y = np.array([[1.0], [2.0]]), np.array([0, 0])
    loss, dW, db = _unpack(f(X, y, np.zeros((1, 2)), np.zeros(2), 0.0))
    expect_close(loss, np.log(2), "loss with W = 0, b = 0 (both classes 1/2): ln 2")
    expect_close(dW, [[-0.75, 0.75]], "dW with P = 1/2 everywhere, both documents in class 0")
    expect_close(db, [-0.5, 0.5], "db = mean of P - Y over the documents")


def _like_the_library(f):
    # a random problem with l2 = 0.1, then scores in the thousands, then documents whose own topic
    # scores 2000 and 1500 below the best (p_y underflows to 0; the loss is a finite 1750)
    problems = [(*_random_problem(1), 0.1, "a random problem, l2 = 0.1"),
                (*_random_problem(2, scale=2000.0), 0.0, "scores X W + b in the thousands"),
                (np.eye(2), np.array([1, 0]), np.diag([2000.0, 1500.0]), np.zeros(2), 0.0,
                 "documents whose own topic scores 2000 and 1500 below the best")]
    for X, y, W, b, l2, what in problems:
        got = _unpack(f(X, y, W, b, l2))
        want = softmax_regression_loss_grad(X, y, W, b, l2)
        for g, e, name in zip(got, want, ("loss", "dW", "db"), strict=True):
            expect_close(g, e, f"{name} for {what}", rtol=1e-6, atol=1e-8)


def _loss(X, y, l2):
    return lambda W, b: softmax_regression_loss_grad(X, y, W, b, l2)[0]


def _finite_differences(f):
    X, y, W, b = _random_problem(3)
    _, dW, db = _unpack(f(X, y, W, b, 0.1))
    expect_gradients_match_numerical([dW, db], _loss(X, y, 0.1), [W, b], ["dW (l2 = 0.1)", "db"])


def _matches_pytorch(f):
    X, y, W, b = _random_problem(4, n=40, d=7, K=5)
    loss, dW, db = _unpack(f(X, y, W, b, 0.05))

    def forward(Wt, bt):
        Z = torch.tensor(X) @ Wt + bt
        return torch.nn.functional.cross_entropy(Z, torch.tensor(y)) + 0.025 * (Wt ** 2).sum()

    expect_close(loss, forward(torch.tensor(W), torch.tensor(b)).item(), "the loss against PyTorch")
    expect_gradients_match_torch([dW, db], forward, [W, b], ["dW", "db"])


# Exercise 4: one entry of dW by hand, on two documents of one feature and two topics
HAND = dict(X=np.array([[1.0], [3.0]]), y=np.array([0, 1]), W=np.array([[1.0, -1.0]]),
            b=np.zeros(2), l2=0.1)


def _hand_entry(**mistake) -> float:
    return float(_logreg(**HAND, **mistake)[1][0, 0])


check_gradient_entry = ExperimentExercise(
    "one entry of dW", lambda: float(numerical_gradients(_loss(HAND["X"], HAND["y"], HAND["l2"]),
                                                        [HAND["W"], HAND["b"]])[0][0, 0]),
    atol=2e-3,
    explanation=("dL/dW[j, k] = sum_i X[i, j] (P[i, k] - Y[i, k]) / n + l2 W[j, k], so the "
                 "whole matrix is dW = X^T (P - Y) / n + l2 W, and db = the column sums of "
                 "(P - Y) / n. That is the function to write next."),
    mistakes=[
        Mistake("summed", "divide by n: the loss is the MEAN over the documents, so each "
                "document's term carries 1/n (the l2 term does not).",
                like=_hand_entry(mean=False)),
        Mistake("probabilities_only", "the gradient with respect to the scores is P - Y, not P: "
                "subtract 1 where k is the document's topic.", like=_hand_entry(onehot=False)),
        Mistake("penalty_forgotten", "the penalty (l2 / 2) ||W||^2 adds l2 W[0, 0] = 0.1 to this "
                "entry.", like=_hand_entry(penalty_in_grad=False)),
    ])


def _variant(**mistake):
    return lambda X, y, W, b, l2: _logreg(X, y, W, b, l2, **mistake)


check_logreg_gradient = FunctionExercise(
    "classifier gradient",
    [_hand_example, _like_the_library, _finite_differences, _matches_pytorch],
    reference=softmax_regression_loss_grad,
    forbidden=(fit_softmax_regression, layers.softmax, layers.log_softmax, torch.logsumexp,
               layers.SoftmaxCrossEntropy, torch.softmax, torch.log_softmax,
               scipy.special.softmax, scipy.special.log_softmax, scipy.special.logsumexp,
               torch.nn.functional.cross_entropy, torch.nn.functional.log_softmax,
               torch.nn.functional.softmax),
    mistakes=[
        Mistake("summed", "the loss is the MEAN cross-entropy over the n documents: divide the "
                "summed loss, and P - Y, by n (the l2 term is not divided).",
                like=_variant(mean=False)),
        Mistake("probabilities_only", "the gradient of the cross-entropy with respect to the "
                "scores is P - Y, not P: subtract 1 from each document's probability of its own "
                "class.", like=_variant(onehot=False)),
        Mistake("bias_penalised", "the penalty is on W only, as in scikit-learn's "
                "LogisticRegression: the bias is neither in (l2 / 2) ||W||^2 nor in db.",
                like=_variant(penalise_bias=True)),
        Mistake("unstable", "exp of scores in the thousands overflows to inf (then inf / inf = "
                "nan): subtract each row's largest score before exp; the softmax does not change.",
                like=_variant(shift=False, log_first=False)),
        Mistake("log_of_underflow", "the softmax is stable, but its log is not: when a document's "
                "own topic scores thousands below the best, p_y underflows to 0 and -log p_y is "
                "inf. Take the log before the exp: log p_y = (z_y - m) - log sum_k exp(z_k - m).",
                like=_variant(log_first=False)),
        Mistake("penalty_not_in_gradient", "the loss has (l2 / 2) ||W||^2, so dW has l2 * W added "
                "to X^T (P - Y) / n.", like=_variant(penalty_in_grad=False)),
    ],
    explanation="Section 5's classifier is this model; scikit-learn minimises the same objective "
                "(C = 1 / (l2 n)) on standardised document vectors.",
)

EXERCISES = [check_spearman_with_oov, check_three_cos_add, check_three_cos_mul,
             check_gradient_entry, check_logreg_gradient]
