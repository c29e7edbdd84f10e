"""The course's word vectors as lessons 06-10 read them: the shipped vectors of
``data/models/`` and LSA and PPMI-SVD at their validated settings (built in seconds, cached),
all on the vocabulary of :func:`helpers.course.corpus.course_corpus`.

The count-based builders import the counting and LSA code when they are called, so that a lesson
reading only the shipped vectors (lesson 10) does not load them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from helpers.course.corpus import course_corpus
from helpers.course.models import load_model, read_manifest
from helpers.infra.artifacts import Artifact, unprefixed
from helpers.infra.cache import cached, settings_version
from helpers.lib.text import Vocab

NAMES = {"gensim-skipgram": "wv_gensim_skipgram", "gensim-cbow": "wv_gensim_cbow",
         "fasttext": "wv_gensim_fasttext", "torch-skipgram": "wv_torch_skipgram",
         "numpy-skipgram": "wv_numpy_skipgram", "glove": "wv_glove"}
SHIPPED_LABELS = {"gensim-skipgram": "gensim skip-gram", "gensim-cbow": "gensim CBOW",
                  "fasttext": "fastText", "torch-skipgram": "PyTorch skip-gram",
                  "numpy-skipgram": "NumPy skip-gram", "glove": "GloVe"}


# ---------------------------------------------------------------- the shipped vectors
@dataclass
class ShippedVectors:
    """Shipped word vectors: W (V, D) float32, C (V, D) context vectors or None, the vocabulary,
    and ``metadata`` (settings, metrics, 'records', 'curve', training time)."""

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
    """The shipped vectors ``name`` (e.g. 'gensim-skipgram' or 'wv_gensim_skipgram'), checked
    against the manifest: ``W, C, vocab, metadata = load_word_vectors(name)``."""
    model = NAMES.get(name, name)
    if model not in NAMES.values():
        raise KeyError(f"no shipped word vectors named {name!r}; the course has {sorted(NAMES)}")
    return load_model(model)




def shipped_embeddings(count_based: bool = True) -> dict:
    """{label: (W, vocab, training seconds)} of every shipped method and, with ``count_based``,
    PPMI-SVD and LSA (:func:`validated_count_vectors`): lesson 09's table."""
    shipped = read_manifest()["models"]
    out = dict(validated_count_vectors()) if count_based else {}
    for name, label in SHIPPED_LABELS.items():
        if NAMES[name] in shipped:
            W, _, vocab, meta = load_word_vectors(name)
            out[label] = (W, vocab, meta["train_seconds"])
    return out


# ---------------------------------------------------------------- what lessons measure on them
def rare_neighbour_share(W: np.ndarray, counts: np.ndarray, k: int = 10, rare_below: int = 20,
                         probe: tuple[int, int] = (50, 550)) -> float:
    """The share of rare words (count < ``rare_below``) among the ``k`` cosine neighbours of the
    words of frequency ranks ``probe`` (lesson 07 §7). W (V, D); counts (V,)."""
    counts = np.asarray(counts)
    ranks = np.argsort(-counts, kind="stable")[probe[0]:probe[1]]
    E = np.asarray(W, dtype=np.float64)
    E = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    sims = E[ranks] @ E.T
    sims[np.arange(len(ranks)), ranks] = -np.inf              # a word is not its own neighbour
    top = np.argpartition(-sims, k, axis=1)[:, :k]
    return float(np.mean(counts[top] < rare_below))


def glove_counts(window: int):
    """GloVe's co-occurrence matrix (V, V) of the course corpus: harmonic counts within
    ±``window`` words (lesson 08 §2). Imports the counting code when called."""
    from helpers.lib.counting import cooccurrence_matrix

    corpus = course_corpus()
    return cooccurrence_matrix(corpus.sentence_ids(), len(corpus.vocab), window=window,
                               weighting="harmonic")


# ---------------------------------------------------------------- LSA and PPMI-SVD
# chosen on the validation half: PPMI-SVD from window x smoothing x k x p, LSA from sentences per
# document x tf x k x p (U_k Σ_k^p); ties within 0.05 of ρ go to the smaller k
VALIDATED_COUNT_SETTINGS = {
    "PPMI-SVD": dict(window=10, weighting="uniform", alpha=1.0, k=100, p=0.5),
    "LSA": dict(sentences_per_doc=10, tf_scheme="log1p", k=200, p=0.5),
}
_SVD_WEIGHTING = {1.0: "US", 0.5: "sqrtS", 0.0: "U"}


def validated_count_vectors() -> dict:
    """PPMI-SVD and LSA at VALIDATED_COUNT_SETTINGS on the course corpus: {name: (vectors (V, k)
    float32, vocab, seconds)}. Built in seconds at first use, then read from the cache; imports
    the counting and LSA code when called."""
    from helpers.lib.counting import cooccurrence_matrix, ppmi
    from helpers.lib.lsa import lsa_word_vectors, svd_vectors

    def build():
        corpus = course_corpus()
        ps, ls = VALIDATED_COUNT_SETTINGS["PPMI-SVD"], VALIDATED_COUNT_SETTINGS["LSA"]
        t = time.perf_counter()
        counts = cooccurrence_matrix(corpus.sentence_ids(), len(corpus.vocab), window=ps["window"],
                                     weighting=ps["weighting"])
        vec = svd_vectors(ppmi(counts, alpha=ps["alpha"]), ps["k"],
                          weighting=_SVD_WEIGHTING[ps["p"]])
        out = {"PPMI-SVD": (vec.astype(np.float32), corpus.vocab, time.perf_counter() - t)}
        t = time.perf_counter()
        lsa = lsa_word_vectors(corpus.sentences, corpus.vocab, ls["k"],
                               sentences_per_doc=ls["sentences_per_doc"],
                               tf_scheme=ls["tf_scheme"], weighting=_SVD_WEIGHTING[ls["p"]])
        out["LSA"] = (lsa.astype(np.float32), corpus.vocab, time.perf_counter() - t)
        return out

    return cached(*validated_count_key(), build, codec=CountVectorsCodec)


def validated_count_key() -> tuple[str, str]:
    """The cache entry (name, version) of :func:`validated_count_vectors`."""
    return "count-vectors-validated", settings_version(
        {f"{m}-{k}": v for m, cfg in VALIDATED_COUNT_SETTINGS.items() for k, v in cfg.items()})


class CountVectorsCodec:
    """How {name: (vectors, vocab, seconds)} is stored in the cache: the vocabulary once."""

    @staticmethod
    def to_arrays(value: dict) -> tuple[dict, dict]:
        (vocab,) = {id(v): v for _, v, _ in value.values()}.values()   # one shared vocabulary
        vocab_arrays, vocab_meta = vocab.to_arrays()
        arrays = {**{f"vocab/{k}": a for k, a in vocab_arrays.items()},
                  **{f"vectors/{name}": vec for name, (vec, _, _) in value.items()}}
        return arrays, {"vocab": vocab_meta, "methods": list(value),
                        "seconds": [s for _, _, s in value.values()]}

    @staticmethod
    def from_arrays(arrays: dict, meta: dict) -> dict:
        vocab = Vocab.from_arrays(unprefixed(arrays, "vocab/"), meta["vocab"])
        return {name: (arrays[f"vectors/{name}"], vocab, s)
                for name, s in zip(meta["methods"], meta["seconds"], strict=True)}
