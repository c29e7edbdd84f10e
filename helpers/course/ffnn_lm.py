"""Lesson 01's language-modelling data and its shipped feed-forward LM (``load_model("ffnn_lm")``):
Wikipedia tokenised with punctuation, ``<eos>`` after each article, split 90/5/5 in order."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from helpers.course.data import load_wikipedia
from helpers.infra.artifacts import Artifact, arrays_to_curves, unprefixed
from helpers.lib.batching import ngram_windows
from helpers.lib.text import Vocab, tokenize


@lru_cache(maxsize=2)
def lm_streams(vocab_size: int = 2000) -> tuple[Vocab, np.ndarray, np.ndarray, np.ndarray]:
    """(vocab, train_ids, valid_ids, test_ids): the Wikipedia token streams, int64."""
    tokens = [t for text in load_wikipedia().values()
              for t in tokenize(text, punctuation=True) + ["<eos>"]]
    a, b = int(0.9 * len(tokens)), int(0.95 * len(tokens))
    vocab = Vocab.build(tokens[:a], max_size=vocab_size, specials=("<unk>",))
    ids = vocab.encode(tokens)
    return vocab, ids[:a], ids[a:b], ids[b:]


class LMWindows(NamedTuple):
    """The split as windows: X (N, context) int64 histories, y (N,) int64 next tokens."""

    vocab: Vocab
    X_train: np.ndarray
    y_train: np.ndarray
    X_valid: np.ndarray
    y_valid: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


@lru_cache(maxsize=2)
def ffnn_lm_data(vocab_size: int = 2000, context: int = 3) -> LMWindows:
    """The split as windows of ``context`` tokens and the token after each."""
    vocab, *streams = lm_streams(vocab_size)
    return LMWindows(vocab, *(a for ids in streams for a in ngram_windows(ids, context)))


@dataclass
class ShippedFFNNLM:
    """The shipped model: ``weights`` E (V, d), W1 (n·d, h), b1, W2 (h, V), b2 for x W, its
    vocab, settings, metrics, ``curve`` and ``kn_baseline``."""


    weights: dict
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    kn_baseline: dict


def load_ffnn_lm(artifact: Artifact) -> ShippedFFNNLM:
    """The shipped model from its checked artefact (the loader of ``load_model("ffnn_lm")``)."""
    m = unprefixed(artifact.arrays, "model/")
    weights = {"E": m["embed.weight"], "W1": m["hidden.weight"].T, "b1": m["hidden.bias"],
               "W2": m["out.weight"].T, "b2": m["out.bias"]}
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    return ShippedFFNNLM({k: np.ascontiguousarray(v) for k, v in weights.items()}, vocab,
                         artifact.meta["settings"], artifact.meta["metrics"], curve,
                         artifact.meta["kn_baseline"])
