"""The records of LSA and PPMI-SVD for lesson 09's table (``make models NAME=wv_count_records``).

The shipped word2vec, fastText and GloVe models carry their records
(:func:`training.word_vector_models.records`). LSA and PPMI-SVD are rebuilt in seconds
(:func:`helpers.course.word_vectors.validated_count_vectors`), but scoring them the same way
takes about a minute (12 classifier fits and the bootstraps), so this entry computes those
records once and stores them: a results file, no vectors.
"""
from __future__ import annotations

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.word_vectors import VALIDATED_COUNT_SETTINGS, validated_count_vectors
from training.word_vector_models import records

SETTINGS = dict(methods=["LSA", "PPMI-SVD"],
                source="helpers.course.word_vectors.validated_count_vectors")


def train_count_records(settings: dict, log, max_steps: int | None = None, progress: bool = True):
    """{method: records} of the count-based methods; a step is one method, its value the
    method's report-half WordSim-353 ρ. Returns (arrays, meta, metrics)."""
    vectors = validated_count_vectors()
    out = {}
    for name in settings["methods"][:max_steps]:
        W, vocab, seconds = vectors[name]
        rec = records(W, vocab)
        rec["build_seconds"] = float(seconds)
        rec["settings"] = dict(VALIDATED_COUNT_SETTINGS[name])
        log.step(float(rec["report"]["wordsim"]))
        log.event("eval", method=name, report_wordsim=rec["report"]["wordsim"],
                  report_simlex=rec["report"]["simlex"], report_analogy=rec["report"]["analogy"],
                  bbc_topic_accuracy=rec["bbc_topic_accuracy"])
        if progress:
            print(f"{name}: report WordSim-353 {rec['report']['wordsim']:.3f}", flush=True)
        out[name] = rec
    log.event("stop", reason="every method scored (nothing is trained: the vectors are rebuilt "
              "by validated_count_vectors)", steps=len(out))
    # only what a rebuild reproduces bit for bit; the build times are in the records
    arrays = {"report_wordsim": np.array([out[n]["report"]["wordsim"] for n in out],
                                         dtype=np.float64)}
    meta = {"settings": dict(settings), "records": out}
    metrics = {f"report_wordsim_{n}": r["report"]["wordsim"] for n, r in out.items()}
    return arrays, meta, metrics


def count_subset_metric(recs: dict) -> tuple[str, float]:
    """LSA's report-half WordSim-353 ρ recomputed from the rebuilt vectors."""
    W, vocab, _ = validated_count_vectors()["LSA"]
    return "lsa_report_wordsim_rho", float(evaluate_vectors(W, vocab, "report",
                                                            analogies=False)["wordsim"])
