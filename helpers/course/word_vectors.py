"""The count-based word vectors lessons 07-09 compare with the shipped ones (LSA and PPMI-SVD,
cached), GloVe's counts, lesson 09's table of every method, and the share of rare neighbours."""
from __future__ import annotations

import time

import numpy as np

from helpers.course.corpus import course_corpus
from helpers.course.models import read_manifest
from helpers.course.shipped_vectors import NAMES, SHIPPED_LABELS, load_word_vectors
from helpers.infra.artifacts import unprefixed
from helpers.infra.cache import cached, settings_version
from helpers.lib.counting import cooccurrence_matrix, ppmi
from helpers.lib.lsa import lsa_word_vectors, svd_vectors
from helpers.lib.text import Vocab


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
    """GloVe's harmonic co-occurrence counts (V, V) of the course corpus (lesson 08 §2)."""
    corpus = course_corpus()
    return cooccurrence_matrix(corpus.sentence_ids(), len(corpus.vocab), window=window,
                               weighting="harmonic")


# chosen on the validation half: PPMI-SVD from window x smoothing x k x p, LSA from sentences per
# document x tf x k x p (U_k Σ_k^p); ties within 0.05 of ρ go to the smaller k
VALIDATED_COUNT_SETTINGS = {
    "PPMI-SVD": dict(window=10, weighting="uniform", alpha=1.0, k=100, p=0.5),
    "LSA": dict(sentences_per_doc=10, tf_scheme="log1p", k=200, p=0.5),
}
_SVD_WEIGHTING = {1.0: "US", 0.5: "sqrtS", 0.0: "U"}


def validated_count_vectors() -> dict:
    """PPMI-SVD and LSA on the course corpus: {name: (vectors (V, k), vocab, seconds)}, cached."""

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
