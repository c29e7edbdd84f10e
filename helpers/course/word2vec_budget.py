"""Is 20 epochs enough for gensim's skip-gram and fastText? And fastText's bucket count: measured
on the validation half, logged.

    python -m helpers.course.word2vec_budget      # runs RUNS, writes data/models/logs/wv_budget.json

Why it is needed: the shipped gensim skip-gram and fastText (``make models``) are trained on a
learning rate that falls linearly to almost zero over ``max_epochs`` = 20 epochs, and early
stopping keeps their best epoch. On such a schedule the last epoch is nearly always the best
(the rate is smallest there), so "best epoch 20 of 20" cannot say whether a longer schedule
would be better: only a run on a longer schedule can. Each run here trains the shipped settings
with one thing changed (``max_epochs``, or fastText's ``buckets``), one worker, seed 0
(deterministic), scores the vectors on the **validation half** after every epoch, and keeps the
best epoch; its best vectors are compared with the shipped model's by a paired bootstrap over the
validation WordSim-353 pairs (:func:`paired_wordsim_difference`). The report half is never read.
Lessons 07 and 08 print the record (:func:`load_budget`).
"""
from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from helpers.course.benchmarks import benchmark_halves
from helpers.course.models import model_dir
from helpers.course.word_vector_models import SETTINGS, train_gensim_vectors
from helpers.course.word_vectors import load_word_vectors
from helpers.infra.runlog import RunLog
from helpers.lib.metrics import paired_similarity_difference

FILE = "logs/wv_budget.json"
# (model, what changes): the shipped run is max_epochs 20 and, for fastText, 20,000 buckets
RUNS = [("wv_gensim_skipgram", dict(max_epochs=10)), ("wv_gensim_skipgram", dict(max_epochs=30)),
        ("wv_gensim_skipgram", dict(max_epochs=40)), ("wv_gensim_fasttext", dict(max_epochs=30)),
        ("wv_gensim_fasttext", dict(buckets=5_000)), ("wv_gensim_fasttext", dict(buckets=100_000))]
SHIPPED_NAME = {"wv_gensim_skipgram": "gensim-skipgram", "wv_gensim_fasttext": "fasttext"}


def paired_wordsim_difference(A: np.ndarray, B: np.ndarray, vocab, n_boot: int = 2000, seed: int = 0) -> list[float]:
    """Validation-half WordSim-353 ρ of A minus that of B (V, D, same vocabulary), with a 95 % paired
    bootstrap interval over the pairs (:func:`helpers.lib.metrics.paired_similarity_difference`):
    [estimate, low, high]."""
    iv = paired_similarity_difference(A, B, vocab, benchmark_halves()["validation"].wordsim, n_boot=n_boot, seed=seed)
    return [iv.estimate, iv.low, iv.high]


def budget_run(name: str, change: dict) -> dict:
    """One run: the shipped settings of ``name`` with ``change``; returns {'model', 'change',
    'settings', 'epoch', 'valid_wordsim', 'valid_simlex' (per epoch), 'best_epoch',
    'best_valid_wordsim', 'vs_shipped' [difference, low, high], 'cpu_seconds'}."""
    if name not in SHIPPED_NAME:
        raise ValueError(f"budget runs are for {sorted(SHIPPED_NAME)}, got {name!r}")
    unknown = set(change) - {"max_epochs", "buckets"}
    if unknown:
        raise ValueError(f"a budget run changes max_epochs or buckets, got {sorted(unknown)}")
    s = dict(SETTINGS[name], **change)
    s["patience"] = s["max_epochs"]          # no early stop: the whole schedule, best epoch kept
    t0 = time.process_time()
    arrays, _meta, _metrics = train_gensim_vectors(s, RunLog(), max_steps=s["max_epochs"], progress=False)
    cpu = time.process_time() - t0
    shipped = load_word_vectors(SHIPPED_NAME[name])
    curve = {k: [float(x) for x in arrays[f"curve/{k}"]] for k in ("epoch", "valid_wordsim", "valid_simlex")}
    best = int(np.argmax(curve["valid_wordsim"]))
    return {"model": name, "change": change, "settings": s, **curve, "best_epoch": int(curve["epoch"][best]),
            "best_valid_wordsim": curve["valid_wordsim"][best],
            "vs_shipped": paired_wordsim_difference(arrays["W"], shipped.W.astype(np.float32), shipped.vocab),
            "cpu_seconds": cpu}


def load_budget() -> dict:
    """The record written by :func:`main` (``data/models/logs/wv_budget.json``)."""
    return json.loads((model_dir() / FILE).read_text(encoding="utf-8"))


def main() -> None:
    jobs = int(os.environ.get("NLP_COURSE_WORKERS", os.cpu_count() or 1))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        runs = list(pool.map(budget_run, *zip(*RUNS, strict=True)))
    for r in runs:
        print(r["model"], r["change"], f"best epoch {r['best_epoch']}, validation WordSim {r['best_valid_wordsim']:.3f},"
              f" minus shipped {r['vs_shipped']}", flush=True)
    record = {"what": "gensim skip-gram and fastText with one setting changed from the shipped run (20 epochs, "
                      "20,000 buckets): validation-half scores per epoch, one worker, seed 0; vs_shipped is the "
                      "validation WordSim-353 rho minus the shipped model's, 95 % paired bootstrap over pairs",
              "command": "python -m helpers.course.word2vec_budget", "runs": runs}
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
