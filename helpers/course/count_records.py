"""The records of the count-based vectors (LSA, PPMI-SVD) for lesson 09's table, computed once
by the pipeline: ``make models NAME=wv_count_records``.

The shipped word2vec / fastText models carry their records (report-half scores with bootstrap
intervals, queen's rank, BBC topic accuracy of two classifiers over three splits:
:func:`helpers.course.word_vector_models.records`), computed at training time. LSA and PPMI-SVD
are rebuilt in seconds from the corpus (:func:`helpers.course.word_vectors.validated_count_vectors`,
at their settings chosen on the validation half), but scoring them the same way takes about a
minute (the 12 classifier fits and the bootstrap); this entry computes the same records for them
once and stores them (a results file, no vectors). The test recomputes one number from the
rebuilt vectors (LSA's report-half WordSim-353 ρ) and compares.

The builder of those vectors lives here too (:func:`validated_count_vectors`, re-exported by
:mod:`helpers.course.word_vectors`), so that this registry entry needs no module that imports
the registry.
"""
from __future__ import annotations

import time

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.word_vector_models import records
from helpers.infra.artifacts import prefixed, unprefixed
from helpers.infra.cache import cached, settings_version
from helpers.lib.counting import cooccurrence_matrix, ppmi
from helpers.lib.lsa import lsa_word_vectors, svd_vectors
from helpers.lib.text import Vocab

# Chosen on the validation half by tools/sweep_count_vectors.py (its output: tools/results/*.jsonl):
# PPMI-SVD window 2/5/10 x context smoothing 0.75/1 x k 50/100/200(/300) x p 0/0.5/1 (U_k Σ_k^p);
# LSA 1/10/50 sentences per document x tf raw/log1p x k x p. Best validation WordSim ρ:
# PPMI-SVD 0.443 (k 200: 0.437, a tie, so the smaller k), LSA 0.468 (k 100: 0.383).
# Differences inside ~0.05 of ρ are treated as ties (a 95 % interval on ~140 pairs is ±0.1 or more).
VALIDATED_COUNT_SETTINGS = {
    "PPMI-SVD": dict(window=10, weighting="uniform", alpha=1.0, k=100, p=0.5),
    "LSA": dict(sentences_per_doc=10, tf_scheme="log1p", k=200, p=0.5),
}
_SVD_WEIGHTING = {1.0: "US", 0.5: "sqrtS", 0.0: "U"}


def validated_count_vectors() -> dict:
    """PPMI-SVD and LSA with the settings chosen on the validation half (VALIDATED_COUNT_SETTINGS),
    on the course corpus and vocabulary: {name: (vectors (V, k) float32, vocab, seconds)}.
    Built in seconds at first use and cached (:mod:`helpers.infra.cache`) — not shipped."""

    def build():
        corpus = course_corpus()
        out = {}
        ps, ls = VALIDATED_COUNT_SETTINGS["PPMI-SVD"], VALIDATED_COUNT_SETTINGS["LSA"]
        t = time.perf_counter()
        counts = cooccurrence_matrix(corpus.sentence_ids(), len(corpus.vocab), window=ps["window"],
                                     weighting=ps["weighting"])
        vec = svd_vectors(ppmi(counts, alpha=ps["alpha"]), ps["k"], weighting=_SVD_WEIGHTING[ps["p"]])
        out["PPMI-SVD"] = (vec.astype(np.float32), corpus.vocab, time.perf_counter() - t)
        t = time.perf_counter()
        lsa = lsa_word_vectors(corpus.sentences, corpus.vocab, ls["k"], sentences_per_doc=ls["sentences_per_doc"],
                               tf_scheme=ls["tf_scheme"], weighting=_SVD_WEIGHTING[ls["p"]])
        out["LSA"] = (lsa.astype(np.float32), corpus.vocab, time.perf_counter() - t)
        return out

    return cached(*validated_count_key(), build, codec=CountVectorsCodec)


def validated_count_key() -> tuple[str, str]:
    """The cache entry (name, version) of :func:`validated_count_vectors`."""
    return "count-vectors-validated", settings_version(
        {f"{m}-{k}": v for m, cfg in VALIDATED_COUNT_SETTINGS.items() for k, v in cfg.items()})


class CountVectorsCodec:
    """How :func:`count_based_vectors`'s {name: (vectors, vocab, seconds)} is stored in the
    cache: each method's vectors and seconds, and the vocabulary they share, once."""

    @staticmethod
    def to_arrays(value: dict) -> tuple[dict, dict]:
        (vocab,) = {id(v): v for _, v, _ in value.values()}.values()   # one shared vocabulary
        vocab_arrays, vocab_meta = vocab.to_arrays()
        arrays = {**prefixed(vocab_arrays, "vocab/"), **{f"vectors/{name}": vec for name, (vec, _, _) in value.items()}}
        return arrays, {"vocab": vocab_meta, "methods": list(value), "seconds": [s for _, _, s in value.values()]}

    @staticmethod
    def from_arrays(arrays: dict, meta: dict) -> dict:
        vocab = Vocab.from_arrays(unprefixed(arrays, "vocab/"), meta["vocab"])
        return {name: (arrays[f"vectors/{name}"], vocab, s) for name, s in zip(meta["methods"], meta["seconds"], strict=True)}


METHODS = ("LSA", "PPMI-SVD")
SETTINGS = dict(methods=list(METHODS), source="helpers.course.word_vectors.validated_count_vectors")


def _vectors():
    return validated_count_vectors(), VALIDATED_COUNT_SETTINGS


def train_count_records(settings: dict, log, max_steps: int | None = None, progress: bool = True):
    """{method: records} for the count-based methods (a step = one method; its value is the
    method's report-half WordSim-353 ρ). Returns (arrays, meta, metrics)."""
    vectors, count_settings = _vectors()
    out = {}
    for name in settings["methods"][:max_steps]:
        W, vocab, seconds = vectors[name]
        rec = records(W, vocab)
        rec["build_seconds"] = float(seconds)
        rec["settings"] = dict(count_settings[name])
        log.step(float(rec["report"]["wordsim"]))
        log.event("eval", method=name, report_wordsim=rec["report"]["wordsim"], report_simlex=rec["report"]["simlex"],
                  report_analogy=rec["report"]["analogy"], bbc_topic_accuracy=rec["bbc_topic_accuracy"])
        if progress:
            print(f"{name}: report WordSim-353 {rec['report']['wordsim']:.3f}", flush=True)
        out[name] = rec
    log.event("stop", reason="every method scored (nothing is trained: the vectors are rebuilt by "
              "validated_count_vectors)", steps=len(out))
    # the arrays hold only what a rebuild reproduces bit for bit; the build times (which vary
    # from run to run) are in the records, in the metadata
    arrays = {"report_wordsim": np.array([out[n]["report"]["wordsim"] for n in out], dtype=np.float64)}
    meta = {"settings": dict(settings), "records": out}
    metrics = {f"report_wordsim_{n}": r["report"]["wordsim"] for n, r in out.items()}
    return arrays, meta, metrics


def load_count_records(artifact) -> dict:
    """{method: records} as stored by :func:`train_count_records`."""
    return artifact.meta["records"]


def count_subset_metric(recs: dict) -> tuple[str, float]:
    """LSA's report-half WordSim-353 ρ recomputed from the rebuilt vectors."""
    W, vocab, _ = _vectors()[0]["LSA"]
    return "lsa_report_wordsim_rho", float(evaluate_vectors(W, vocab, "report", analogies=False)["wordsim"])
