"""Why the shipped GloVe is weak: the test of the rare-cell explanation (lesson 08 §5).

    python -m training.glove_diagnosis    # writes data/models/logs/wv_glove_diagnosis.json

Most of GloVe's harmonic counts are below 1. If those cells were noise that the fit learns at
the expense of the similarities, dropping them, or counting whole co-occurrences instead of 1/d,
would help. Each run here is the shipped trainer (:func:`training.glove_torch.train_pairwise`)
with the shipped settings and one change, scored on the validation half of WordSim-353 after
every epoch for EPOCHS epochs; beside each set of counts, the scores of its raw and PPMI rows.
"""
from __future__ import annotations

import json
import time

import numpy as np

from helpers.course.benchmarks import benchmark_halves, count_rows_rho, evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir
from helpers.lib.counting import cooccurrence_matrix, ppmi
from training.glove_torch import train_pairwise
from training.word_vector_models import GLOVE

FILE = "logs/wv_glove_diagnosis.json"
EPOCHS = 12
# (counts, change of the shipped settings); counts: (weighting, smallest count kept)
RUNS = [(("harmonic", 0.0), {}),
        (("harmonic", 0.0), {"lr": 0.05}),
        (("harmonic", 1.0), {}),
        (("harmonic", 1.0), {"x_max": 10.0}),
        (("uniform", 0.0), {"x_max": 10.0}),
        (("uniform", 0.0), {"x_max": 100.0})]


def counts_of(weighting: str, at_least: float):
    """The shipped window's counts with ``weighting``, the cells below ``at_least`` dropped."""
    corpus = course_corpus()
    X = cooccurrence_matrix(corpus.sentence_ids(), len(corpus.vocab), window=GLOVE["window"],
                            weighting=weighting)
    if at_least > 0:
        X.data[X.data < at_least] = 0.0
        X.eliminate_zeros()
    return X


def run(X, change: dict) -> dict:
    """One training run: validation WordSim-353 ρ and loss after each epoch, CPU seconds."""
    s = dict(GLOVE, **change)
    vocab = course_corpus().vocab
    scores = []

    def epoch_end(epoch, vectors, loss):
        scores.append(evaluate_vectors(vectors, vocab, "validation", analogies=False)["wordsim"])
        return not np.isfinite(loss)

    t0 = time.process_time()
    g = train_pairwise(X, dim=s["dim"], epochs=EPOCHS, lr=s["lr"], x_max=s["x_max"],
                       alpha=s["alpha"], batch_size=s["batch_size"], seed=s["seed"],
                       progress=False, epoch_end=epoch_end)
    return {"change": change, "valid_wordsim": scores, "train_loss": g.epoch_loss,
            "best_valid_wordsim": max(scores), "best_epoch": int(np.argmax(scores)) + 1,
            "cpu_seconds": time.process_time() - t0}


def main() -> dict:
    pairs = benchmark_halves()["validation"].wordsim
    vocab = course_corpus().vocab
    out, counts = {"epochs": EPOCHS, "shipped": {k: GLOVE[k] for k in ("lr", "x_max", "window")},
                   "counts": [], "runs": []}, {}
    for key, change in RUNS:
        if key not in counts:
            counts[key] = X = counts_of(*key)
            out["counts"].append({"weighting": key[0], "at_least": key[1], "cells": int(X.nnz),
                                  "raw_rows": count_rows_rho(X, vocab, pairs),
                                  "ppmi_rows": count_rows_rho(ppmi(X), vocab, pairs)})
        r = run(counts[key], change)
        out["runs"].append({"weighting": key[0], "at_least": key[1], **r})
        print(f"{key} {change}: best {r['best_valid_wordsim']:.3f} at epoch {r['best_epoch']}",
              flush=True)
    path = model_dir() / FILE
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
