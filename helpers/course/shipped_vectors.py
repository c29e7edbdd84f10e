"""The shipped word vectors of data/models/ as lessons 07-10 load them: checked against the
manifest, on the vocabulary of :func:`helpers.course.corpus.course_corpus`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.course.models import load_model
from helpers.infra.artifacts import Artifact
from helpers.lib.text import Vocab

NAMES = {"gensim-skipgram": "wv_gensim_skipgram", "gensim-cbow": "wv_gensim_cbow",
         "fasttext": "wv_gensim_fasttext", "torch-skipgram": "wv_torch_skipgram",
         "numpy-skipgram": "wv_numpy_skipgram", "glove": "wv_glove"}
SHIPPED_LABELS = {"gensim-skipgram": "gensim skip-gram", "gensim-cbow": "gensim CBOW",
                  "fasttext": "fastText", "torch-skipgram": "PyTorch skip-gram",
                  "numpy-skipgram": "NumPy skip-gram", "glove": "GloVe"}


@dataclass
class ShippedVectors:
    """Shipped word vectors: W (V, D), C (V, D) or None, the vocabulary and ``metadata``."""

    W: np.ndarray
    C: np.ndarray | None
    vocab: Vocab
    metadata: dict

    def __iter__(self):             # W, C, vocab, metadata = load_word_vectors(name)
        return iter((self.W, self.C, self.vocab, self.metadata))


def load_vectors_artifact(artifact: Artifact) -> ShippedVectors:
    """The vectors of a ``wv_*`` artefact (:func:`helpers.course.models.load_model` reads it)."""
    a = artifact.arrays
    itos = a["vocab/utf8"].tobytes().decode("utf-8").split("\n")
    meta = {**artifact.meta, "curve": {k[6:]: a[k].tolist() for k in a if k.startswith("curve/")}}
    if "ngram_vectors" in a:
        meta["ngram_vectors"] = a["ngram_vectors"]
    return ShippedVectors(a["W"], a.get("C"), Vocab(itos, a["vocab/counts"], ()), meta)


def load_word_vectors(name: str) -> ShippedVectors:
    """The shipped vectors ``name``, checked: ``W, C, vocab, metadata = load_word_vectors(name)``.
    """
    model = NAMES.get(name, name)
    if model not in NAMES.values():
        raise KeyError(f"no shipped word vectors named {name!r}; the course has {sorted(NAMES)}")
    return load_model(model)
