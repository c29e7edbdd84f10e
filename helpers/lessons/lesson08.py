"""Lesson 08 (GloVe and fastText): neighbours of unseen and misspelled words, and the
explorers' render functions."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from helpers.lib.fasttext import FastTextVectors
from helpers.lib.metrics import nearest_neighbours, vocab_maps


def oov_neighbours(words: Sequence[str], fasttext: FastTextVectors, vectors: np.ndarray, vocab,
                   k: int = 5) -> list[dict]:
    """For each word: is it in the word2vec-style vocabulary, its ``k`` fastText neighbours,
    and its ``k`` neighbours from ``vectors``/``vocab`` (None when it has no vector there).

    Returns [{'word', 'in_fasttext_vocab', 'in_vocab', 'fasttext', 'other'}] with neighbour
    lists of (word, cosine). Shows what subwords buy: unseen and misspelled words get
    neighbours from fastText and none from a word-level model.
    """
    stoi, _ = vocab_maps(vocab)
    out = []
    for w in words:
        out.append({"word": w, "in_fasttext_vocab": w in fasttext, "in_vocab": w in stoi,
                    "fasttext": fasttext.neighbours(w, k),
                    "other": nearest_neighbours(vectors, vocab, w, k=k) if w in stoi else None})
    return out
