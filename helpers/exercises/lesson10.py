"""Checkers for lesson 10 (contextual representations)."""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np
import torch

from helpers.course.data import load_wsd_sentences
from helpers.course.models import load_model
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
from helpers.infra.seeding import make_rng
from helpers.lib.bpe import SPECIALS, WORD_START, BPETokenizer
from helpers.lib.contextual import nearest_sense, nearest_sense_accuracy, word_vectors
from helpers.lib.encoder_numpy import NumpyEncoder
from helpers.lib.mlm import IGNORE, apply_80_10_10, mask_tokens

MASK_ID = 4


# ----------------------------------------------------------------------------- BPE: the merge loop
TOY_WORDS = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def _bpe_variant(word_counts, n_merges, weighted=True, alphabetical=True, every=True, marker=True):
    """The merge loop (all switches on) and its typical mistakes (one switch off)."""
    words = {w: ([WORD_START + w[0]] if marker else [w[0]]) + list(w[1:]) for w in word_counts}
    merges = []
    while len(merges) < n_merges:
        counts = Counter()
        for w, syms in words.items():
            for pair in zip(syms[:-1], syms[1:]):
                counts[pair] += word_counts[w] if weighted else 1
        if not counts:
            break
        top = max(counts.values())
        tied = [p for p, c in counts.items() if c == top]
        pair = min(tied) if alphabetical else tied[0]
        merges.append(pair)
        for w, syms in words.items():
            out, i, done = [], 0, False
            while i < len(syms):
                if i + 1 < len(syms) and (syms[i], syms[i + 1]) == pair and (every or not done):
                    out.append(syms[i] + syms[i + 1])
                    i, done = i + 2, True
                else:
                    out.append(syms[i])
                    i += 1
            words[w] = out
    return merges


def course_merges(word_counts, n_merges):
    """The course's BPE merge loop (the answer to lesson 10's exercise 1)."""
    return _bpe_variant(word_counts, n_merges)


def _bpe_call(fn, word_counts, n_merges):
    got = fn(dict(word_counts), n_merges)
    if not isinstance(got, list | tuple):
        raise ExerciseFailed("expected a list of merges, pairs of strings; got "
                             f"{type(got).__name__}")
    return [tuple(p) for p in got]


def _bpe_toy(fn):
    expect_equal(_bpe_call(fn, TOY_WORDS, 10), course_merges(TOY_WORDS, 10),
                 f"the 10 merges of {TOY_WORDS}")


def _bpe_repeats_and_stops(fn):
    words = {"xabab": 3, "ab": 1}          # (a, b) twice in a word; 4 merges leave one piece a word
    expect_equal(_bpe_call(fn, words, 10), course_merges(words, 10),
                 f"the merges of {words} (asked for 10: it stops when every word is one piece)")


def _bpe_matches_library(fn):
    rng = np.random.default_rng(3)
    letters = list("abcdehlnorst")
    words = {"".join(rng.choice(letters, int(rng.integers(2, 7)))): int(rng.integers(1, 30))
             for _ in range(300)}
    alphabet = {WORD_START + w[0] for w in words} | {c for w in words for c in w[1:]}
    library = BPETokenizer.train(words, len(SPECIALS) + len(alphabet) + 40, min_frequency=1).merges
    expect_equal(_bpe_call(fn, words, 40), library, "the first 40 merges of 300 random words")


check_bpe_merges = FunctionExercise(
    "BPE merge loop", [_bpe_toy, _bpe_repeats_and_stops, _bpe_matches_library],
    reference=course_merges, step="core", forbidden=(BPETokenizer.train, BPETokenizer),
    mistakes=[
        Mistake("unweighted", "a pair inside a word that occurs 6 times counts 6 times: add the "
                "word's count, not 1, for each of its pairs.",
                like=lambda w, n: _bpe_variant(w, n, weighted=False)),
        Mistake("ties_by_order", "when pairs tie, take the alphabetically smallest (min of the "
                "tied pairs), so the same counts always give the same merges.",
                like=lambda w, n: _bpe_variant(w, n, alphabetical=False)),
        Mistake("first_only", "merge every occurrence of the pair in a word, not only the first: "
                "scan the whole word and skip past each pair you merged.",
                like=lambda w, n: _bpe_variant(w, n, every=False)),
        Mistake("no_word_start", "a word starts with the marker: split low as "
                "['\u2581l', 'o', 'w'] (WORD_START + first letter), so that pieces at a word's "
                "start differ from inner ones.",
                like=lambda w, n: _bpe_variant(w, n, marker=False)),
    ])


# ----------------------------------------------------------------------------- the 80/10/10 rule
def _call_rule(fn, ids, chosen, u, random_ids):
    before = ids.copy()
    out = fn(ids, chosen, u, random_ids, MASK_ID)
    if not np.array_equal(ids, before):
        raise ExerciseFailed("ids was changed in place: expected it unchanged after your call (its "
                             f"tokens are the labels), got {int(np.sum(ids != before))} positions "
                             "changed")
    return np.asarray(out)


def _rule_worked_example(fn):
    ids = np.array([10, 11, 12, 13, 14, 15])
    chosen = np.array([True, True, True, False, True, True])
    u = np.array([0.30, 0.85, 0.95, 0.05, 0.80, 0.90])
    random_ids = np.array([50, 51, 52, 53, 54, 55])
    # u < 0.8 -> [MASK]; 0.8 <= u < 0.9 -> random; u >= 0.9 -> unchanged; unchosen -> unchanged
    expect_equal(_call_rule(fn, ids, chosen, u, random_ids),
                 np.array([MASK_ID, 51, 12, 13, 54, 15]),
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
    expect_equal(_call_rule(fn, ids, chosen, u, random_ids),
                 apply_80_10_10(ids, chosen, u, random_ids, MASK_ID),
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
    "80/10/10 replacement rule",
    [_rule_worked_example, _rule_unchosen_untouched, _rule_matches_reference],
    reference=apply_80_10_10,
    step="warm-up", forbidden=(apply_80_10_10, mask_tokens),
    mistakes=[
        Mistake("in_place", "you changed ids itself: the original tokens are the labels the model "
                "must predict, so start from a copy, out = ids.copy().", like=_in_place),
        Mistake("unchosen_replaced", "only the chosen positions (about 15 %) are replaced; combine "
                "every condition with chosen &.", like=_every_position),
        Mistake("last_tenths_swapped", "0.8 <= u < 0.9 gets a random token and u >= 0.9 keeps the "
                "original one; you swapped the last two tenths.", like=_last_tenths_swapped),
        Mistake("random_for_both_tenths", "from u = 0.9 on the token stays unchanged: the random "
                "token is only for 0.8 <= u < 0.9.", like=_random_from_0_8_on),
    ])


# ----------------------------------------------------------------------------- nearest sense
def _sense_returns_label(fn):
    rng = np.random.default_rng(3)
    support = np.concatenate([rng.normal([5, 0, 0], 0.3, (4, 3)),
                              rng.normal([0, 5, 0], 0.3, (4, 3))])
    senses = np.array(["finance"] * 4 + ["river"] * 4)
    got = fn(np.array([0.2, 4.0, 0.1]), support, senses)
    if not isinstance(got, str):
        raise ExerciseFailed("type of the returned sense: expected a str label, got "
                             f"{type(got).__name__} {got!r}")
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
    # the nearest single example is [1, 0] ('a'), but the 'b' centroid is nearer than the 'a' one
    expect_equal(fn(np.array([1.0, 0.1]), support, senses), "b",
                 "sense of [1.0, 0.1]: compare with each sense's centroid, not the nearest example")


def _sense_unit_vectors_first(fn):
    # 'a' = [10, 0] and [0, 1]: the mean of the unit vectors points at 45°, the raw mean at 6°
    support = np.array([[10.0, 0.0], [0.0, 1.0], [1.0, 0.3]])
    senses = ["a", "a", "b"]
    expect_equal(fn(np.array([0.7, 1.0]), support, senses), "a",
                 "sense of [0.7, 1.0] with 'a' = {[10, 0], [0, 1]}: average the unit-length "
                 "support vectors")


def _sense_cosine_not_distance(fn):
    # unit vectors: 'a' at ±60°, 'b' at 20°; the query at 0°. The 'a' centroid [0.5, 0] points at
    # the query (cosine 1; 'b': cos 20° = 0.94), but it is short, so the query lies nearer to the
    # tip of the 'b' vector (distance 0.35) than to it (0.5): only the cosine picks 'a'
    deg = np.radians([60.0, -60.0, 20.0])
    support = np.stack([np.cos(deg), np.sin(deg)], axis=1)
    expect_equal(fn(np.array([1.0, 0.0]), support, ["a", "a", "b"]), "a",
                 "sense of [1, 0] with 'a' = {±60°} and 'b' = {20°} (the 'a' centroid points at "
                 "the query but is short: compare cosines, not distances)")


def _sense_variant(query, support, senses, unit=True, centroid=True, cosine=True, label=True,
                   distance=False):
    senses = np.asarray(senses)
    if unit:
        S = support / np.linalg.norm(support, axis=1, keepdims=True)
    else:
        S = np.asarray(support, float)
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


def course_classify(query, support, senses):
    """The course's nearest-sense rule (the answer to lesson 10's exercise 4)."""
    return nearest_sense(query, support, senses)[0]


check_nearest_sense = FunctionExercise(
    "nearest sense centroid",
    [_sense_returns_label, _sense_by_cosine, _sense_uses_centroids, _sense_unit_vectors_first,
     _sense_cosine_not_distance],
    reference=course_classify, step="warm-up", forbidden=(nearest_sense, nearest_sense_accuracy),
    mistakes=[
        Mistake("dot_product", "compare directions with the cosine: a plain dot product favours "
                "the sense whose vectors are long.",
                like=lambda q, S, s: _sense_variant(q, S, s, unit=False, cosine=False)),
        Mistake("nearest_example", "compare the query with each sense's CENTROID (the mean of its "
                "support vectors), not with the single nearest example.",
                like=lambda q, S, s: _sense_variant(q, S, s, centroid=False)),
        Mistake("raw_centroid", "average the unit-length support vectors: the mean of the raw "
                "vectors is pulled towards the longest one.",
                like=lambda q, S, s: _sense_variant(q, S, s, unit=False)),
        Mistake("index_not_label", "return the sense label (a str such as 'river'), not its "
                "position.", like=lambda q, S, s: _sense_variant(q, S, s, label=False)),
        Mistake("distance_to_centroid", "the nearest centroid by cosine, not by distance: the mean "
                "of unit vectors is shorter than 1 (the more its vectors disagree, the shorter), "
                "so the distance to it mixes length into the comparison; divide by its norm, or "
                "compare c·q / |c|.", like=lambda q, S, s: _sense_variant(q, S, s, distance=True)),
    ])


# ----------------------------------------------------------------------------- tied MLM backward
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


def _tied_variant(E, W, b_out, inputs, labels, lookup=True, output=True, accumulate=True,
                  mean=True, tanh_grad=True):
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
        inputs[1] = inputs[0] = 5                   # the same id twice: the lookup gradients add up
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
            expect_gradients_match_numerical(
                got[1:], lambda E, W, b: _tied_loss_numpy(E, W, b, inputs, labels),
                [E, W, b_out], names)
    return check


check_tied_mlm_backward = FunctionExercise(
    "tied masked-LM loss and backward",
    [_tied_check(0, 9, 4, 6, "torch"), _tied_check(1, 12, 5, 10, "numerical"),
     _tied_check(2, 30, 8, 25, "torch")],
    reference=_tied_reference, step="core",
    forbidden=(NumpyEncoder.masked_lm_step, NumpyEncoder.masked_lm_loss, torch.autograd.grad,
               torch.autograd.backward),
    explanation=("E is used twice — to look up the inputs and, transposed, to score the "
                 "outputs — so its\ngradient is the sum of both paths: the lookup's rows (added up "
                 "for every position that\nreads the same id) plus dlogits^T H from the output "
                 "projection."),
    mistakes=[
        Mistake("output_only", "dE misses the lookup path: X = E[inputs] also depends on E, so add "
                "dX to the rows of dE that were looked up (np.add.at(dE, inputs, dX)).",
                like=lambda *a: _tied_variant(*a, lookup=False)),
        Mistake("lookup_only", "dE misses the output path: the logits are H E^T, so E also gets "
                "dlogits^T @ H (masked positions only).",
                like=lambda *a: _tied_variant(*a, output=False)),
        Mistake("overwritten_rows", "an id that occurs twice must get both positions' gradients: "
                "dE[inputs] = dX keeps only the last; use np.add.at(dE, inputs, dX).",
                like=lambda *a: _tied_variant(*a, accumulate=False)),
        Mistake("sum_not_mean", "the loss is the MEAN over the masked positions: divide dlogits by "
                "their number |M|.", like=lambda *a: _tied_variant(*a, mean=False)),
        Mistake("no_tanh_derivative", "go back through tanh: dZ = dH * (1 - H**2) before "
                "dW = X^T dZ and dX = dZ W^T.", like=lambda *a: _tied_variant(*a, tanh_grad=False)),
    ])


# ----------------------------------------------------------------------------- the best layer
N_SUPPORT, REPEATS, SEED = 3, 200, 0           # 3 labelled sentences per sense, 200 draws


@lru_cache(maxsize=1)
def _shipped_encoder() -> tuple:
    """The shipped encoder (eval mode) and its tokenizer, loaded as the lesson loads them (the
    global torch random state left as it was)."""
    with torch.random.fork_rng(devices=[]):
        shipped = load_model("mlm_bert")
    return shipped.model, shipped.tok


@lru_cache(maxsize=8)
def layer_accuracies(word: str = "light") -> tuple:
    """Mean nearest-sense accuracy of ``word`` at every layer of the shipped encoder (layer 0 = the
    embeddings), measured as the lesson does: 3 labelled sentences per sense, the same 200 draws."""
    examples = [e for e in load_wsd_sentences() if e.word == word]
    if not examples:
        words = sorted({e.word for e in load_wsd_sentences()})
        raise ValueError(f"{word!r} is not one of the lesson's words ({', '.join(words)})")
    model, tok = _shipped_encoder()
    senses = [e.sense for e in examples]
    out = []
    for layer in range(model.cfg.n_layers + 1):
        X = word_vectors(model, tok, [e.tokens for e in examples], [e.position for e in examples],
                         layer)
        result = nearest_sense_accuracy(X, senses, N_SUPPORT, make_rng(SEED), REPEATS)
        out.append(result["accuracy"])
    return tuple(out)


def _best_layer(word: str = "light") -> int:
    """The layer with the highest nearest-sense accuracy for ``word``, measured here."""
    return int(np.argmax(layer_accuracies(word)))


check_best_layer = ExperimentExercise(
    "the layer that separates the senses of 'light' best", lambda: _best_layer("light"),
    explanation=("Layer 0 is the embedding table plus the position: every occurrence of 'light' "
                 "gets nearly\nthe same vector, so only its position can tell the senses apart. "
                 "Each attention layer mixes\nin the neighbours (*turn on the*, *a ... jacket*), "
                 "which carry the sense. Which layer is best\ndiffers from word to word, and with "
                 "24 sentences per word neighbouring layers are often\nclose: look at the table of "
                 "section 4 before reading much into one word."),
    mistakes=[
        Mistake("worst_layer", "that is the layer with the LOWEST accuracy for 'light': pick the "
                "highest.", like=lambda: int(np.argmin(layer_accuracies("light")))),
        Mistake("layer_count", "that is how many layers of vectors there are; the answer is "
                "the number of the best one (0 for the embeddings, up to the last block).",
                like=lambda: len(layer_accuracies("light"))),
        Mistake("counted_from_one", "layers are numbered from 0 (the embeddings) to the last "
                "block: your answer is one too high.", like=lambda: _best_layer("light") + 1),
    ],
)

EXERCISES = [check_bpe_merges, check_80_10_10, check_tied_mlm_backward, check_nearest_sense,
             check_best_layer]
