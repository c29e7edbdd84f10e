"""Checkers for lesson 10 (contextual representations)."""
from __future__ import annotations

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
from helpers.lib.contextual import nearest_sense
from helpers.lib.mlm import IGNORE, apply_80_10_10

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
    reference=lambda ids, chosen, u, random_ids, mask_id: apply_80_10_10(ids, chosen, u, random_ids, mask_id),
    step="warm-up",
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


def _sense_variant(query, support, senses, unit=True, centroid=True, cosine=True, label=True):
    senses = np.asarray(senses)
    S = support / np.linalg.norm(support, axis=1, keepdims=True) if unit else np.asarray(support, float)
    q = query / np.linalg.norm(query) if cosine else query
    labels = sorted(set(senses.tolist()))
    if not centroid:
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
    [_sense_returns_label, _sense_by_cosine, _sense_uses_centroids, _sense_unit_vectors_first],
    reference=_nearest_sense_reference, step="warm-up",
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
    explanation=("E is used twice — to look up the inputs and, transposed, to score the outputs — so its "
                 "gradient is the sum of both paths: the lookup's rows (added up for every position that "
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


# ----------------------------------------------------------------------------- experiment: the best layer for a word
def _best_layer(layer_table, word):
    """The layer with the highest nearest-sense accuracy for ``word`` (layer_table[word] = accuracies by layer)."""
    return int(np.argmax(layer_table[word]))


check_best_layer = ExperimentExercise(
    "the layer that separates the senses of 'light' best",
    lambda layer_table, word="light": _best_layer(layer_table, word),
    explanation=("Layer 0 is the embedding table plus the position: every occurrence of 'light' gets nearly the "
                 "same vector, so only its position can tell the senses apart. Each attention layer mixes in the "
                 "neighbours (*turn on the*, *a ... jacket*), which carry the sense. Which layer is best differs "
                 "from word to word, and with 24 sentences per word neighbouring layers are often within the "
                 "spread of the draws: look at the table of section 4 before reading much into one word."),
    mistakes=[
        Mistake("worst_layer", "that is the layer with the LOWEST accuracy for this word: pick the highest.",
                like=lambda layer_table, word="light": int(np.argmin(layer_table[word]))),
        Mistake("mean_over_words", "that is the best layer on average over the six words; the question is "
                "about 'light' alone (its own row or the explorer's accuracy line).",
                like=lambda layer_table, word="light": int(np.argmax(np.mean(list(layer_table.values()), 0)))
                if int(np.argmax(np.mean(list(layer_table.values()), 0))) != _best_layer(layer_table, word)
                else -99),
        Mistake("counted_from_one", "layers are numbered from 0 (the embeddings) to the last block: your answer "
                "is one too high.", like=lambda layer_table, word="light": _best_layer(layer_table, word) + 1),
    ],
    example_context={"layer_table": {"light": [0.52, 0.66, 0.74], "bank": [0.6, 0.80, 0.62],
                                     "star": [0.5, 0.85, 0.70]}},
)

EXERCISES = [check_80_10_10, check_nearest_sense, check_tied_mlm_backward, check_best_layer]
