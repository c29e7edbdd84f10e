"""Checkers for lesson 10 (contextual representations).

The experiment (the best layer for *light*) measures its answer itself, on the shipped encoder
``data/models/mlm_bert`` and the word-sense sentences ``data/wsd_sentences.tsv``, read here through
:mod:`helpers.infra` (checksums verified) and rebuilt with :mod:`helpers.lib` alone: a checker never
imports the course layer (``tests/repo/test_layering.py``); ``tests/test_lesson10_checkers.py`` checks that
it reads the very files and model the lesson loads.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from helpers.exercises import (
    ExerciseFailed,
    ExperimentExercise,
    FunctionExercise,
    Mistake,
    expect_close,
    expect_equal,
    expect_gradients_match_numerical,
    expect_gradients_match_torch,
    expect_tuple,
)
from helpers.infra.artifacts import arrays_to_state_dict, load_artifact
from helpers.infra.checksums import verify_file
from helpers.infra.seeding import make_rng
from helpers.lib.bert import (
    BertConfig,
    NumpyMaskedLM,
    TinyBert,
    mlm_loss_numpy,
    numpy_mlm_torch_reference,
)
from helpers.lib.bpe import BPETokenizer
from helpers.lib.contextual import nearest_sense, nearest_sense_accuracy, word_vectors
from helpers.lib.mlm import IGNORE, apply_80_10_10, mask_tokens
from helpers.lib.optim import Adam, AdamW, clip_global_norm
from helpers.lib.text import tokenize

MASK_ID = 4


# ----------------------------------------------------------------------------- the 80/10/10 rule
def _call_rule(fn, ids, chosen, u, random_ids):
    before = ids.copy()
    out = fn(ids, chosen, u, random_ids, MASK_ID)
    if not np.array_equal(ids, before):
        raise ExerciseFailed(f"`ids` was changed in place: expected it unchanged after your call (its tokens are "
                             f"the labels), got {int(np.sum(ids != before))} positions changed")
    return np.asarray(out)


def _rule_worked_example(fn):
    ids = np.array([10, 11, 12, 13, 14, 15])
    chosen = np.array([True, True, True, False, True, True])
    u = np.array([0.30, 0.85, 0.95, 0.05, 0.80, 0.90])
    random_ids = np.array([50, 51, 52, 53, 54, 55])
    # u < 0.8 -> [MASK]; 0.8 <= u < 0.9 -> random; u >= 0.9 -> unchanged; unchosen -> unchanged
    expect_equal(_call_rule(fn, ids, chosen, u, random_ids), np.array([MASK_ID, 51, 12, 13, 54, 15]),
                 "tokens after the 80/10/10 rule for u = [0.30, 0.85, 0.95, 0.05 (not chosen), "
                 "0.80, 0.90]")


def _rule_unchosen_untouched(fn):
    ids = np.arange(20, 32).reshape(3, 4)
    chosen = np.zeros_like(ids, dtype=bool)
    u = np.full(ids.shape, 0.1)
    out = _call_rule(fn, ids, chosen, u, np.full(ids.shape, 99))
    expect_equal(out, ids, "with no position chosen (u = 0.1 everywhere) nothing may change")


def _rule_matches_reference(fn):
    rng = np.random.default_rng(9)
    ids = rng.integers(5, 1000, size=(8, 30))
    chosen = rng.random(ids.shape) < 0.15
    u = rng.random(ids.shape)
    random_ids = rng.integers(5, 1000, size=ids.shape)
    expect_equal(_call_rule(fn, ids, chosen, u, random_ids), apply_80_10_10(ids, chosen, u, random_ids, MASK_ID),
                 "tokens of a random (8, 30) batch")


def _in_place(ids, chosen, u, random_ids, mask_id):
    to_random = chosen & (u >= 0.8) & (u < 0.9)
    ids[chosen & (u < 0.8)] = mask_id
    ids[to_random] = random_ids[to_random]
    return ids


def _every_position(ids, chosen, u, random_ids, mask_id):
    return apply_80_10_10(ids, np.ones_like(chosen, dtype=bool), u, random_ids, mask_id)


def _last_tenths_swapped(ids, chosen, u, random_ids, mask_id):
    out = ids.copy()
    out[chosen & (u < 0.8)] = mask_id
    to_random = chosen & (u >= 0.9)
    out[to_random] = random_ids[to_random]
    return out


def _random_from_0_8_on(ids, chosen, u, random_ids, mask_id):
    out = ids.copy()
    out[chosen & (u < 0.8)] = mask_id
    to_random = chosen & (u >= 0.8)
    out[to_random] = random_ids[to_random]
    return out


check_80_10_10 = FunctionExercise(
    "80/10/10 replacement rule", [_rule_worked_example, _rule_unchosen_untouched, _rule_matches_reference],
    reference=apply_80_10_10,
    step="warm-up", forbidden=(apply_80_10_10, mask_tokens),
    mistakes=[
        Mistake("in_place", "you changed `ids` itself: the original tokens are the labels the model must "
                "predict, so start from a copy, out = ids.copy().", like=_in_place),
        Mistake("unchosen_replaced", "only the chosen positions (about 15 %) are replaced; combine every "
                "condition with `chosen &`.", like=_every_position),
        Mistake("last_tenths_swapped", "0.8 <= u < 0.9 gets a random token and u >= 0.9 keeps the original "
                "one; you swapped the last two tenths.", like=_last_tenths_swapped),
        Mistake("random_for_both_tenths", "from u = 0.9 on the token stays unchanged: the random token is "
                "only for 0.8 <= u < 0.9.", like=_random_from_0_8_on),
    ])


# ----------------------------------------------------------------------------- the nearest sense centroid
def _sense_returns_label(fn):
    rng = np.random.default_rng(3)
    support = np.concatenate([rng.normal([5, 0, 0], 0.3, (4, 3)), rng.normal([0, 5, 0], 0.3, (4, 3))])
    senses = np.array(["finance"] * 4 + ["river"] * 4)
    got = fn(np.array([0.2, 4.0, 0.1]), support, senses)
    if not isinstance(got, str):
        raise ExerciseFailed(f"type of the returned sense: expected a str label, got {type(got).__name__} {got!r}")
    expect_equal(got, "river", "sense of a query next to the 'river' examples")


def _sense_by_cosine(fn):
    # the 'money' vectors are long, the 'river' ones short: a dot product would pick 'money'
    support = np.array([[10.0, 1.0], [9.0, 2.0], [0.1, 1.0], [0.2, 0.9]])
    senses = ["money", "money", "river", "river"]
    expect_equal(fn(np.array([0.5, 3.0]), support, senses), "river",
                 "sense of the query [0.5, 3.0] (compare directions: cosine, not dot product)")


def _sense_uses_centroids(fn):
    support = np.array([[1.0, 0.0], [-0.2, 1.0], [0.9, 0.5], [0.9, 0.6]])
    senses = ["a", "a", "b", "b"]
    # the nearest single example is [1, 0] ('a'), but the 'b' centroid is nearer than the 'a' centroid
    expect_equal(fn(np.array([1.0, 0.1]), support, senses), "b",
                 "sense of [1.0, 0.1]: compare with each sense's centroid, not the nearest example")


def _sense_unit_vectors_first(fn):
    # 'a' = [10, 0] and [0, 1]: the mean of the unit vectors points at 45°, the raw mean at 6°
    support = np.array([[10.0, 0.0], [0.0, 1.0], [1.0, 0.3]])
    senses = ["a", "a", "b"]
    expect_equal(fn(np.array([0.7, 1.0]), support, senses), "a",
                 "sense of [0.7, 1.0] with 'a' = {[10, 0], [0, 1]}: average the unit-length support vectors")


def _sense_cosine_not_distance(fn):
    # unit vectors: 'a' at +60° and -60°, 'b' at 20°; the query at 0°. The 'a' centroid [0.5, 0] points
    # exactly at the query (cosine 1; 'b': cos 20° = 0.94), but it is short, so the query lies nearer to
    # the tip of the 'b' vector (distance 0.35) than to it (0.5): only the cosine picks 'a'
    deg = np.radians([60.0, -60.0, 20.0])
    support = np.stack([np.cos(deg), np.sin(deg)], axis=1)
    expect_equal(fn(np.array([1.0, 0.0]), support, ["a", "a", "b"]), "a",
                 "sense of [1, 0] with 'a' = {±60°} and 'b' = {20°} (the 'a' centroid points at the query but is "
                 "short: compare cosines, not distances)")


def _sense_variant(query, support, senses, unit=True, centroid=True, cosine=True, label=True, distance=False):
    senses = np.asarray(senses)
    S = support / np.linalg.norm(support, axis=1, keepdims=True) if unit else np.asarray(support, float)
    q = query / np.linalg.norm(query) if cosine else query
    labels = sorted(set(senses.tolist()))
    if distance:                                 # Euclidean distance to the unit-vector centroids
        best = int(np.argmin([np.linalg.norm(q - S[senses == s].mean(0)) for s in labels]))
    elif not centroid:
        best = labels.index(str(senses[int(np.argmax((S if cosine else support) @ q))]))
    else:
        scores = []
        for s in labels:
            c = S[senses == s].mean(0)
            scores.append(c @ q / np.linalg.norm(c) if cosine else c @ q)
        best = int(np.argmax(scores))
    return labels[best] if label else best


def _nearest_sense_reference(query, support, senses):
    return nearest_sense(query, support, senses)[0]


check_nearest_sense = FunctionExercise(
    "nearest sense centroid",
    [_sense_returns_label, _sense_by_cosine, _sense_uses_centroids, _sense_unit_vectors_first,
     _sense_cosine_not_distance],
    reference=_nearest_sense_reference, step="warm-up", forbidden=(nearest_sense, nearest_sense_accuracy),
    mistakes=[
        Mistake("dot_product", "compare directions with the cosine: a plain dot product favours the sense "
                "whose vectors are long.", like=lambda q, S, s: _sense_variant(q, S, s, unit=False, cosine=False)),
        Mistake("nearest_example", "compare the query with each sense's CENTROID (the mean of its support "
                "vectors), not with the single nearest example.",
                like=lambda q, S, s: _sense_variant(q, S, s, centroid=False)),
        Mistake("raw_centroid", "average the unit-length support vectors: the mean of the raw vectors is "
                "pulled towards the longest one.", like=lambda q, S, s: _sense_variant(q, S, s, unit=False)),
        Mistake("index_not_label", "return the sense label (a str such as 'river'), not its position.",
                like=lambda q, S, s: _sense_variant(q, S, s, label=False)),
        Mistake("distance_to_centroid", "the nearest centroid by cosine, not by distance: the mean of unit "
                "vectors is shorter than 1 (the more its vectors disagree, the shorter), so the distance to it "
                "mixes length into the comparison; divide by its norm, or compare c·q / |c|.",
                like=lambda q, S, s: _sense_variant(q, S, s, distance=True)),
    ])


# ----------------------------------------------------------------------------- core: the tied masked-LM loss, backward
TIED_NAMES = ("dE", "dW", "db_out")


def _tied_forward_torch(E, W, b_out, inputs, labels):
    """The exercise's model in PyTorch: X = E[inputs], H = tanh(X W), logits = H[M] E^T + b_out."""
    sel = labels != IGNORE
    H = torch.tanh(E[inputs] @ W)
    logits = H[sel] @ E.T + b_out
    return torch.nn.functional.cross_entropy(logits, labels[sel])


def _tied_loss_numpy(E, W, b_out, inputs, labels):
    sel = labels != IGNORE
    logits = np.tanh(E[inputs] @ W)[sel] @ E.T + b_out
    logits = logits - logits.max(1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    return float(-logp[np.arange(sel.sum()), labels[sel]].mean())


def _tied_variant(E, W, b_out, inputs, labels, lookup=True, output=True, accumulate=True, mean=True,
                  tanh_grad=True):
    """The reference backward (all switches on) and its typical mistakes (one switch off)."""
    sel = labels != IGNORE
    m = int(sel.sum())
    X = E[inputs]                                   # (n, d)
    H = np.tanh(X @ W)                              # (n, d)
    logits = H[sel] @ E.T + b_out                   # (m, V)
    P = np.exp(logits - logits.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    loss = float(-np.log(P[np.arange(m), labels[sel]]).mean())
    dlogits = P.copy()
    dlogits[np.arange(m), labels[sel]] -= 1
    dlogits /= m if mean else 1
    db_out = dlogits.sum(0)
    dE_out = dlogits.T @ H[sel]                     # the output projection's contribution (V, d)
    dH = np.zeros_like(H)
    dH[sel] = dlogits @ E
    dZ = dH * (1 - H ** 2) if tanh_grad else dH
    dW = X.T @ dZ
    dX = dZ @ W.T
    dE_in = np.zeros_like(E)                        # the lookup's contribution (V, d)
    if accumulate:
        np.add.at(dE_in, inputs, dX)
    else:
        dE_in[inputs] = dX
    dE = (dE_in if lookup else 0) + (dE_out if output else 0)
    return loss, dE, dW, db_out


def _tied_reference(E, W, b_out, inputs, labels):
    return _tied_variant(E, W, b_out, inputs, labels)


def _tied_case(seed: int, V: int, d: int, n: int, repeat: bool = True):
    rng = np.random.default_rng(seed)
    E, W, b_out = rng.normal(0, 0.5, (V, d)), rng.normal(0, 0.5, (d, d)), rng.normal(0, 0.1, V)
    inputs = rng.integers(5, V, n)
    if repeat:
        inputs[1] = inputs[0] = 5                   # the same id twice: the lookup gradients must add up
    labels = np.full(n, IGNORE)
    chosen = rng.permutation(n)[:max(2, n // 3)]
    labels[chosen] = rng.integers(5, V, len(chosen))
    inputs[chosen[:1]] = 4                          # a [MASK] input
    return E, W, b_out, inputs, labels


def _tied_check(seed, V, d, n, against):
    def check(f):
        E, W, b_out, inputs, labels = _tied_case(seed, V, d, n)
        got = f(E.copy(), W.copy(), b_out.copy(), inputs.copy(), labels.copy())
        expect_tuple(got, ("loss",) + TIED_NAMES)
        expect_close(got[0], _tied_loss_numpy(E, W, b_out, inputs, labels),
                     f"loss (V={V}, d={d}, {n} positions, {int(np.sum(labels != IGNORE))} masked)")
        names = [f"{k} (V={V}, d={d}, {n} positions)" for k in TIED_NAMES]
        if against == "torch":
            expect_gradients_match_torch(got[1:], lambda E, W, b: _tied_forward_torch(
                E, W, b, torch.as_tensor(inputs), torch.as_tensor(labels)), [E, W, b_out], names)
        else:
            expect_gradients_match_numerical(got[1:], lambda E, W, b: _tied_loss_numpy(E, W, b, inputs, labels),
                                             [E, W, b_out], names)
    return check


check_tied_mlm_backward = FunctionExercise(
    "tied masked-LM loss and backward",
    [_tied_check(0, 9, 4, 6, "torch"), _tied_check(1, 12, 5, 10, "numerical"), _tied_check(2, 30, 8, 25, "torch")],
    reference=_tied_reference, step="core",
    forbidden=(NumpyMaskedLM, NumpyMaskedLM.forward, NumpyMaskedLM.backward, numpy_mlm_torch_reference,
               mlm_loss_numpy, torch.autograd.grad, torch.autograd.backward),
    explanation=("E is used twice — to look up the inputs and, transposed, to score the outputs — so its\n"
                 "gradient is the sum of both paths: the lookup's rows (added up for every position that\n"
                 "reads the same id) plus dlogits^T H from the output projection."),
    mistakes=[
        Mistake("output_only", "dE misses the lookup path: X = E[inputs] also depends on E, so add dX to the "
                "rows of dE that were looked up (np.add.at(dE, inputs, dX)).",
                like=lambda *a: _tied_variant(*a, lookup=False)),
        Mistake("lookup_only", "dE misses the output path: the logits are H E^T, so E also gets dlogits^T @ H "
                "(masked positions only).", like=lambda *a: _tied_variant(*a, output=False)),
        Mistake("overwritten_rows", "an id that occurs twice must get both positions' gradients: dE[inputs] = dX "
                "keeps only the last; use np.add.at(dE, inputs, dX).",
                like=lambda *a: _tied_variant(*a, accumulate=False)),
        Mistake("sum_not_mean", "the loss is the MEAN over the masked positions: divide dlogits by their number "
                "|M|.", like=lambda *a: _tied_variant(*a, mean=False)),
        Mistake("no_tanh_derivative", "go back through tanh: dZ = dH * (1 - H**2) before dW = X^T dZ and "
                "dX = dZ W^T.", like=lambda *a: _tied_variant(*a, tanh_grad=False)),
    ])


# ----------------------------------------------------------------------------- core: the optimiser step
STEP_NAMES = ("params", "m", "v", "grad_norm")


def _adamw_variant(params, grads, m, v, t, lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01, max_norm=1.0,
                   decoupled=True, bias_correction=True, clip="global", eps_inside=False):
    """The reference step (every switch at its default) and its typical mistakes (one switch changed)."""
    b1, b2 = betas
    grads = [np.asarray(g, dtype=np.float64) for g in grads]
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
    if clip == "global" and norm > max_norm:
        grads = [g * (max_norm / (norm + 1e-6)) for g in grads]          # torch's clip_grad_norm_
    elif clip == "each":
        grads = [g * min(1.0, max_norm / (float(np.sqrt((g * g).sum())) + 1e-6)) for g in grads]
    elif clip == "always":
        grads = [g * (max_norm / (norm + 1e-6)) for g in grads]
    new_p, new_m, new_v = [], [], []
    for p, g, m_, v_ in zip(params, grads, m, v, strict=True):
        p = np.asarray(p, dtype=np.float64)
        if not decoupled:
            g = g + weight_decay * p                                      # Adam with an L2 term
        m_ = b1 * np.asarray(m_) + (1 - b1) * g
        v_ = b2 * np.asarray(v_) + (1 - b2) * g * g
        m_hat, v_hat = (m_ / (1 - b1 ** t), v_ / (1 - b2 ** t)) if bias_correction else (m_, v_)
        denom = np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps
        p = p * (1 - lr * weight_decay) if decoupled else p
        new_p.append(p - lr * m_hat / denom)
        new_m.append(m_)
        new_v.append(v_)
    return new_p, new_m, new_v, norm


def _adamw_reference(params, grads, m, v, t, lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01, max_norm=1.0):
    return _adamw_variant(params, grads, m, v, t, lr, betas, eps, weight_decay, max_norm)


def course_adamw_step(params, grads, m, v, t, lr, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01, max_norm=1.0):
    """The course's step (Exercise 3's reference): clip the global norm as torch's clip_grad_norm_ does,
    then AdamW. Returns (new params, new m, new v, the norm before clipping); lesson 10's live training
    goes on with it until the student's passes the checker."""
    return _adamw_variant(params, grads, m, v, t, lr, betas, eps, weight_decay, max_norm)


def _torch_steps(params, grad_list, lrs, betas, eps, weight_decay, max_norm):
    """torch.nn.utils.clip_grad_norm_ then torch.optim.AdamW, one step per gradient list: the
    parameters, exp_avg and exp_avg_sq after each step."""
    ps = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    opt = torch.optim.AdamW(ps, lr=lrs[0], betas=betas, eps=eps, weight_decay=weight_decay)
    out = []
    for grads, lr in zip(grad_list, lrs, strict=True):
        for p, g in zip(ps, grads, strict=True):
            p.grad = torch.tensor(g, dtype=torch.float64)
        norm = float(torch.nn.utils.clip_grad_norm_(ps, max_norm))
        opt.param_groups[0]["lr"] = lr
        opt.step()
        out.append(([p.detach().numpy().copy() for p in ps],
                    [opt.state[p]["exp_avg"].numpy().copy() for p in ps],
                    [opt.state[p]["exp_avg_sq"].numpy().copy() for p in ps], norm))
    return out


def _step_case(seed, shapes, scale, steps, lrs, max_norm=1.0, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01):
    def check(f):
        rng = np.random.default_rng(seed)
        params = [rng.normal(0, 1, s) for s in shapes]
        grad_list = [[rng.normal(0, scale, s) * (1 + k) for s in shapes] for k in range(steps)]
        expected = _torch_steps(params, grad_list, lrs, betas, eps, weight_decay, max_norm)
        p, m, v = [x.copy() for x in params], [np.zeros(s) for s in shapes], [np.zeros(s) for s in shapes]
        where = (f"{len(shapes)} arrays {', '.join(str(s) for s in shapes)}, gradients of norm about "
                 f"{np.sqrt(sum(np.prod(s) for s in shapes)) * scale:.2g}, max_norm={max_norm}")
        for t, (grads, lr, (tp, tm, tv, tn)) in enumerate(zip(grad_list, lrs, expected, strict=True), 1):
            got = f([x.copy() for x in p], [g.copy() for g in grads], [x.copy() for x in m], [x.copy() for x in v],
                    t, lr, betas=betas, eps=eps, weight_decay=weight_decay, max_norm=max_norm)
            expect_tuple(got, STEP_NAMES)
            new_p, m, v, norm = got
            expect_close(norm, tn, f"returned gradient norm (before clipping) at step {t} ({where})", rtol=1e-6)
            for k, (a, b) in enumerate(zip(list(new_p), tp, strict=True)):
                expect_close(a, b, f"parameter array {k} after step {t} (lr={lr:g}; {where}), "
                             "against torch's clip_grad_norm_ + AdamW", rtol=1e-6, atol=1e-10)
            for k, (a, b) in enumerate(zip(list(m), tm, strict=True)):
                expect_close(a, b, f"m (the first moment) of array {k} after step {t} ({where})", rtol=1e-6, atol=1e-12)
            for k, (a, b) in enumerate(zip(list(v), tv, strict=True)):
                expect_close(a, b, f"v (the second moment) of array {k} after step {t} ({where})", rtol=1e-6,
                             atol=1e-16)
            p = [np.asarray(x, dtype=np.float64) for x in new_p]
    return check


check_adamw_step = FunctionExercise(
    "one AdamW step with gradient clipping",
    [_step_case(0, [(3,), (2, 2)], 1.0, 3, [1e-3, 2e-3, 2e-3]),            # norm > 1: clipped
     _step_case(1, [(4,), (3, 2), (5,)], 1e-6, 3, [5e-3, 5e-3, 4e-3]),      # tiny gradients: never scaled up
     _step_case(2, [(6, 4), (4,)], 0.5, 4, [1e-2, 8e-3, 6e-3, 4e-3], max_norm=2.0, betas=(0.8, 0.9))],
    reference=_adamw_reference, step="core",
    forbidden=(course_adamw_step, _adamw_variant, AdamW, Adam, clip_global_norm, torch.optim.AdamW, torch.optim.Adam,
               torch.nn.utils.clip_grad_norm_),
    explanation=("This is the update that trained the shipped encoder (torch's clip_grad_norm_ then AdamW):\n"
                 "the clipping bounds a step when one batch gives a huge gradient, the bias correction makes\n"
                 "the first steps full-sized although m and v start at zero, and the decoupled decay shrinks\n"
                 "every weight by the same factor (1 - lr * weight_decay) whatever its gradient."),
    mistakes=[
        Mistake("l2_in_the_gradient", "the weight decay is decoupled: shrink the parameter, p * (1 - lr * "
                "weight_decay), instead of adding weight_decay * p to the gradient (that is Adam with L2, which "
                "divides the decay by sqrt(v_hat)).", like=lambda *a, **k: _adamw_variant(*a, **k, decoupled=False)),
        Mistake("no_bias_correction", "m and v start at zero, so early on they are too small: divide by "
                "(1 - beta1**t) and (1 - beta2**t) before the update (t counts from 1).",
                like=lambda *a, **k: _adamw_variant(*a, **k, bias_correction=False)),
        Mistake("clipped_each_array", "clip the GLOBAL norm: one norm over all the gradient arrays together, "
                "sqrt(sum of every squared entry), and one factor for all of them.",
                like=lambda *a, **k: _adamw_variant(*a, **k, clip="each")),
        Mistake("scaled_up_small_gradients", "clipping only ever shrinks: when the norm is already at most "
                "max_norm, leave the gradients as they are.", like=lambda *a, **k: _adamw_variant(*a, **k, clip="always")),
        Mistake("eps_inside_the_root", "eps goes outside the square root, sqrt(v_hat) + eps (as torch does): "
                "inside it dominates when the gradients are tiny.",
                like=lambda *a, **k: _adamw_variant(*a, **k, eps_inside=True)),
    ])


# ----------------------------------------------------------------------------- experiment: the best layer for a word
DATA_DIR = Path(os.environ.get("NLP_COURSE_DATA", Path(__file__).resolve().parents[2] / "data"))
WSD_FILE, WSD_SHA256 = "wsd_sentences.tsv", "ba3c4173666b9b1e86948a38fcb64a51f97261002862e6687f61868df15749d1"
N_SUPPORT, REPEATS, SEED = 3, 200, 0           # the lesson's protocol: 3 labelled per sense, 200 draws


@lru_cache(maxsize=1)
def _sense_sentences() -> tuple:
    """(word, sense, tokens, position) of the lesson's 144 labelled sentences, checksum verified."""
    path = verify_file(DATA_DIR / WSD_FILE, WSD_SHA256, f"Restore it with `git checkout -- data/{WSD_FILE}`.")
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            word, sense, sentence = line.split("\t")
            tokens = tuple(tokenize(sentence))
            out.append((word, sense, tokens, tokens.index(word)))
    return tuple(out)


@lru_cache(maxsize=1)
def _shipped_encoder() -> tuple:
    """The shipped encoder (eval mode) and its tokenizer, rebuilt from data/models/mlm_bert."""
    art = load_artifact(DATA_DIR / "models" / "mlm_bert")
    tok = BPETokenizer([str(a) for a in art.arrays["tok/alphabet"]],
                       [(str(a), str(b)) for a, b in art.arrays["tok/merges"]])
    with torch.random.fork_rng(devices=[]):
        model = TinyBert(BertConfig(**art.meta["config"]), tok.pad_id)
    model.load_state_dict({k: v.float() for k, v in arrays_to_state_dict(art.arrays, "model/").items()})
    return model.eval(), tok


@lru_cache(maxsize=8)
def layer_accuracies(word: str = "light") -> tuple:
    """Mean nearest-sense accuracy of ``word`` at every layer of the shipped encoder (layer 0 = the
    embeddings), measured as the lesson does: 3 labelled sentences per sense, the same 200 draws."""
    examples = [e for e in _sense_sentences() if e[0] == word]
    if not examples:
        words = sorted({e[0] for e in _sense_sentences()})
        raise ValueError(f"{word!r} is not one of the lesson's words ({', '.join(words)})")
    model, tok = _shipped_encoder()
    senses = [e[1] for e in examples]
    out = []
    for layer in range(model.cfg.n_layers + 1):
        X = word_vectors(model, tok, [e[2] for e in examples], [e[3] for e in examples], layer)
        out.append(nearest_sense_accuracy(X, senses, N_SUPPORT, make_rng(SEED), REPEATS)["accuracy"])
    return tuple(out)


def _best_layer(word: str = "light") -> int:
    """The layer with the highest nearest-sense accuracy for ``word``, measured here."""
    return int(np.argmax(layer_accuracies(word)))


check_best_layer = ExperimentExercise(
    "the layer that separates the senses of 'light' best", lambda: _best_layer("light"),
    explanation=("Layer 0 is the embedding table plus the position: every occurrence of 'light' gets nearly\n"
                 "the same vector, so only its position can tell the senses apart. Each attention layer mixes\n"
                 "in the neighbours (*turn on the*, *a ... jacket*), which carry the sense. Which layer is best\n"
                 "differs from word to word, and with 24 sentences per word neighbouring layers are often\n"
                 "close: look at the table of section 4 before reading much into one word."),
    mistakes=[
        Mistake("worst_layer", "that is the layer with the LOWEST accuracy for 'light': pick the highest.",
                like=lambda: int(np.argmin(layer_accuracies("light")))),
        Mistake("read_bank", "that is the best layer for 'bank', the explorer's first word: choose 'light' in "
                "the word menu and read its accuracy line.", like=lambda: _best_layer("bank")),
        Mistake("counted_from_one", "layers are numbered from 0 (the embeddings) to the last block: your answer "
                "is one too high.", like=lambda: _best_layer("light") + 1),
    ],
)

EXERCISES = [check_80_10_10, check_tied_mlm_backward, check_adamw_step, check_nearest_sense, check_best_layer]
