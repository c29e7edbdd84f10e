"""GloVe with a loss on sampled unseen cells, as Swivel adds one (lesson 08 §5).

    python -m training.glove_unseen    # writes data/models/logs/wv_glove_unseen.json

GloVe's loss has a term only for the cells that occur (X_wc > 0): nothing pushes apart two words
that never occur together. Swivel (Shazeer et al. 2016, "Swivel: Improving Embeddings by Noticing
What's Missing") adds a one-sided loss on the cells that do not occur; ``PairwiseGloVe(...,
unseen=k)`` adds k such cells to every batch (:mod:`helpers.lib.glove` has the loss), through the
lesson's cell function and AdaGrad step. The first run is GloVe as published, for the lesson's two
epochs; every other run adds the unseen cells for one epoch, which takes about the CPU time of
GloVe's two. The floor t0 is independence (a predicted PMI above −margin is pushed down) or, in
one run, the smallest count the window records (1/window). After each epoch W + W~ is compared
with the raw and the PPMI rows on the validation pairs (``versus_count_rows``); the run with the
unseen cells and the largest validation difference from the raw rows is scored once on the report
half.
"""
from __future__ import annotations

import json

import numpy as np

from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir
from helpers.course.word_vectors import glove_counts
from helpers.lessons.lesson08 import versus_count_rows
from helpers.lib.glove import PairwiseGloVe
from training.glove_live import interval, timed_epoch
from training.word_vector_models import GLOVE

FILE = "logs/wv_glove_unseen.json"
# (label, unseen cells drawn per batch k, weight f0, margin, floor, epochs)
RUNS = [("GloVe", 0, 0.0, 0.0, "independence", 2),
        ("k 1024, f0 0.1", 1024, 0.1, 0.0, "independence", 1),
        ("k 1024, f0 0.3", 1024, 0.3, 0.0, "independence", 1),
        ("k 1024, f0 0.03", 1024, 0.03, 0.0, "independence", 1),
        ("k 512, f0 0.1", 512, 0.1, 0.0, "independence", 1),
        ("k 1024, f0 0.1, margin 1", 1024, 0.1, 1.0, "independence", 1),
        ("k 1024, f0 0.1, margin 2", 1024, 0.1, 2.0, "independence", 1),
        ("k 1024, f0 0.1, floor a count of 1/window", 1024, 0.1, 0.0, "count", 1)]


class CountFloorGloVe(PairwiseGloVe):
    """:class:`PairwiseGloVe` whose unseen cells' floor is the log of the smallest count the
    window records, 1/window, for every cell."""

    def unseen_floor(self, i, j) -> np.ndarray:
        return np.full(len(i), -np.log(GLOVE["window"]))


def run(X, vocab, k: int, f0: float, margin: float, floor: str, epochs: int):
    """One run: after each epoch its CPU seconds and validation differences; its last vectors
    (None if they diverged)."""
    s = {key: GLOVE[key] for key in ("dim", "lr", "x_max", "alpha", "batch_size", "seed")}
    trainer = CountFloorGloVe if floor == "count" else PairwiseGloVe
    model = trainer(X, **s, unseen=k, unseen_weight=f0 if k else 0.1, margin=margin)
    steps = -(-model.P // s["batch_size"])
    out, cpu = {"epochs": [], "cpu_seconds": [], "valid": [], "diverged": False}, 0.0
    for epoch in range(1, epochs + 1):
        cpu += timed_epoch(model, steps)
        vectors = model.vectors()
        if not np.isfinite(vectors).all():
            out["diverged"] = True
            print(f"  epoch {epoch}: diverged", flush=True)
            return out, None
        vs = versus_count_rows(vectors, X, vocab, "validation")
        out["epochs"].append(epoch)
        out["cpu_seconds"].append(round(cpu, 1))
        out["valid"].append({f"{name} {key}": interval(d) for name, ds in vs.items()
                             for key, d in ds.items()})
        print(f"  epoch {epoch} ({cpu:.0f} CPU-s): minus the raw rows {vs['raw rows']['both']}, "
              f"minus the PPMI rows {vs['PPMI rows']['both']}", flush=True)
    return out, vectors


def main() -> dict:
    vocab = course_corpus().vocab
    X = glove_counts(GLOVE["window"]).tocsr()
    record, best = {"shipped": {k: GLOVE[k] for k in ("lr", "x_max", "window")}, "runs": []}, None
    for label, k, f0, margin, floor, epochs in RUNS:
        print(label, flush=True)
        r, vectors = run(X, vocab, k, f0, margin, floor, epochs)
        record["runs"].append({"label": label, "k": k, "f0": f0, "margin": margin,
                               "floor": floor, **r})
        if k and vectors is not None:
            score = r["valid"][-1]["raw rows both"][0]
            if best is None or score > best[0]:
                best = (score, label, vectors)
    _, label, vectors = best
    report = versus_count_rows(vectors, X, vocab, "report")
    chosen = next(r for r in record["runs"] if r["label"] == label)
    record["chosen"] = {"label": label, **{key: chosen[key] for key in ("k", "f0", "margin")},
                        "report": {f"{name} {key}": interval(d) for name, ds in report.items()
                                   for key, d in ds.items()}}
    print(f"chosen: {label}; on the report half, minus the raw rows {report['raw rows']['both']}, "
          f"minus the PPMI rows {report['PPMI rows']['both']}")
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


if __name__ == "__main__":
    main()
