"""Lesson 01's language-modelling data and its shipped feed-forward LM (``load_model("ffnn_lm")``).

The Wikipedia articles tokenised with punctuation, ``<eos>`` after each article, split 90/5/5 in
order; a vocabulary of the 2,000 most frequent training tokens plus ``<unk>``. The model is
trained by ``make models NAME=ffnn_lm`` (``training/ffnn_lm.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from helpers.course.data import load_wikipedia
from helpers.infra.artifacts import Artifact, arrays_to_curves, arrays_to_state_dict, unprefixed
from helpers.lib.batching import ngram_windows
from helpers.lib.language_models import FeedForwardLM
from helpers.lib.text import Vocab, tokenize


@dataclass
class LMWindows:
    """Lesson 01's data as windows: X (N, context) int64 contexts, y (N,) int64 next tokens."""

    vocab: Vocab
    X_train: np.ndarray
    y_train: np.ndarray
    X_valid: np.ndarray
    y_valid: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


@lru_cache(maxsize=2)
def lm_streams(vocab_size: int = 2000) -> tuple[Vocab, np.ndarray, np.ndarray, np.ndarray]:
    """(vocab, train_ids, valid_ids, test_ids): lesson 01's Wikipedia token streams (int64)."""
    tokens = [t for text in load_wikipedia().values()
              for t in tokenize(text, punctuation=True) + ["<eos>"]]
    a, b = int(0.9 * len(tokens)), int(0.95 * len(tokens))
    vocab = Vocab.build(tokens[:a], max_size=vocab_size, specials=("<unk>",))
    ids = vocab.encode(tokens)
    return vocab, ids[:a], ids[a:b], ids[b:]


@lru_cache(maxsize=2)
def ffnn_lm_data(vocab_size: int = 2000, context: int = 3) -> LMWindows:
    """Lesson 01's split as windows of ``context`` tokens and the token after each."""
    vocab, *parts = lm_streams(vocab_size)
    splits = [ngram_windows(part, context) for part in parts]
    return LMWindows(vocab, *(x for pair in splits for x in pair))


@dataclass
class ShippedFFNNLM:
    """The shipped feed-forward LM: ``model`` (eval mode), ``vocab``, ``settings``, ``metrics``,
    the validation ``curve`` {'step', 'valid_ppl', 'train_loss'} and the Kneser-Ney baseline on
    the same tokens, ``kn_baseline`` {order: {'D', 'valid_ppl', 'test_ppl', 'valid_by_D'}}."""

    model: FeedForwardLM
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    kn_baseline: dict


def load_ffnn_lm(artifact: Artifact) -> ShippedFFNNLM:
    """The shipped model from its checked artefact (the loader of ``load_model("ffnn_lm")``)."""
    s = artifact.meta["settings"]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    model = FeedForwardLM(len(vocab), s["context"], s["emb_dim"], s["hidden"], s["dropout"])
    model.load_state_dict(arrays_to_state_dict(artifact.arrays, "model/"))
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedFFNNLM(model.eval(), vocab, s, artifact.meta["metrics"], curve,
                         artifact.meta["kn_baseline"])
