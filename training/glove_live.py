"""What the live GloVe of lesson 08 can reach in about a minute of one core (lesson 08 §4).

    python -m training.glove_live    # writes data/models/logs/wv_glove_live.json

Each run is the lesson's NumPy trainer (:class:`helpers.lib.glove.PairwiseGloVe`) with the
shipped settings and one change, for as many epochs as fit in about 60 CPU-seconds. After every
epoch W + W~ is compared with two vectors that need no training, the raw and the PPMI rows of the
shipped harmonic counts over the same words: ρ(GloVe) − ρ(rows) on the validation pairs of
WordSim-353 and SimLex-999, and the mean of the two, each with a paired bootstrap interval. The
run and epoch with the largest validation difference from the raw rows is then scored once on
the report half.
"""
from __future__ import annotations

import json
import time

from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir
from helpers.course.word_vectors import glove_counts
from helpers.lessons.lesson08 import versus_count_rows
from helpers.lib.glove import PairwiseGloVe
from training.word_vector_models import GLOVE

FILE = "logs/wv_glove_live.json"
# (label, change of the shipped settings, words kept (None: all), smallest count kept, epochs)
RUNS = [("the shipped settings", {}, None, 0.0, 5),
        ("counts >= 1 only, x_max 10", {"x_max": 10.0}, None, 1.0, 8),
        ("the 3,000 most frequent words", {}, 3000, 0.0, 8)]


def interval(d) -> list[float]:
    """An interval as the record stores it: [estimate, low, high]."""
    return [d.estimate, d.low, d.high]


def timed_epoch(model: PairwiseGloVe, steps: int) -> float:
    """Run ``steps`` batches of ``model``; their CPU seconds."""
    t0 = time.process_time()
    for _ in range(steps):
        model.step()
    return time.process_time() - t0


def run(X, words, change: dict, at_least: float, epochs: int) -> tuple[dict, object]:
    """One run: after each epoch its CPU seconds and validation differences; the best vectors."""
    s = {k: GLOVE[k] for k in ("dim", "lr", "x_max", "alpha", "batch_size", "seed")}
    s.update(change)
    counts = X.copy()
    if at_least > 0:
        counts.data[counts.data < at_least] = 0.0
        counts.eliminate_zeros()
    model = PairwiseGloVe(counts, **s)
    steps = -(-model.P // s["batch_size"])
    out, best, cpu = {"epochs": [], "cpu_seconds": [], "valid": []}, (None, None), 0.0
    for epoch in range(1, epochs + 1):
        cpu += timed_epoch(model, steps)
        vectors = model.vectors()
        vs = versus_count_rows(vectors, X, words, "validation")
        out["epochs"].append(epoch)
        out["cpu_seconds"].append(round(cpu, 1))
        out["valid"].append({f"{name} {key}": interval(d) for name, ds in vs.items()
                             for key, d in ds.items()})
        score = vs["raw rows"]["both"].estimate
        if best[0] is None or score > best[0]:
            best = (score, vectors.copy())
        print(f"  epoch {epoch} ({cpu:.0f} CPU-s): minus the raw rows {vs['raw rows']['both']}",
              flush=True)
    out["best_epoch"] = out["epochs"][max(range(epochs), key=lambda e: out["valid"][e]
                                          ["raw rows both"][0])]
    return out, best[1]


def main() -> dict:
    vocab = course_corpus().vocab
    X_all = glove_counts(GLOVE["window"]).tocsr()
    record, best = {"runs": []}, (None, None, None, None)
    for label, change, n_words, at_least, epochs in RUNS:
        words = vocab.itos[:n_words] if n_words else vocab
        X = X_all[:n_words, :n_words] if n_words else X_all
        print(label, flush=True)
        r, vectors = run(X, words, change, at_least, epochs)
        record["runs"].append({"label": label, "change": change, "words": n_words,
                               "at_least": at_least, **r})
        score = r["valid"][r["best_epoch"] - 1]["raw rows both"][0]
        if best[0] is None or score > best[0]:
            best = (score, label, vectors, (X, words))
    _, label, vectors, (X, words) = best
    report = versus_count_rows(vectors, X, words, "report")
    record["chosen"] = {"label": label,
                        "report": {f"{name} {key}": interval(d) for name, ds in report.items()
                                   for key, d in ds.items()}}
    print(f"chosen: {label}; on the report half, minus the raw rows {report['raw rows']['both']}")
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


if __name__ == "__main__":
    main()
