"""GloVe's learning rate and x_max, chosen on the validation half: short runs, logged.

    python -m helpers.course.glove_tuning          # runs GRID, writes data/models/logs/wv_glove_tuning.json

Each run fits :func:`helpers.lib.glove.train_pairwise` to the course corpus's co-occurrence
matrix (:func:`helpers.course.word_vector_models.glove_counts`, window 10) for two or three
epochs with the shipped model's other settings, and scores W + W~ on the **validation half**
of the benchmarks after every epoch (:func:`helpers.course.benchmarks.evaluate_vectors`); a
run whose vectors become NaN is recorded as diverged. The shipped model
(``make models NAME=wv_glove``) takes the best setting and chooses its number of epochs by
early stopping. Short runs favour settings that learn fast: the record says so, and lesson 08
shows the curves. Deterministic (seeded, one thread): a rerun writes the same numbers.
"""
from __future__ import annotations

import json
import time

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir
from helpers.course.word_vector_models import GLOVE, glove_counts
from helpers.lib.glove import train_pairwise

EPOCHS = 3
# (lr 0.5 in batches of 256 pairs diverged in its first epoch too)
GRID = [dict(lr=0.05, x_max=100.0), dict(lr=0.2, x_max=100.0), dict(lr=0.2, x_max=25.0, epochs=2),
        dict(lr=0.2, x_max=10.0), dict(lr=0.2, x_max=5.0, epochs=2), dict(lr=0.3, x_max=10.0)]
FILE = "logs/wv_glove_tuning.json"
# three learning rates given up to 50 epochs at glove.c's x_max 100 (early stopping, patience 8): the
# record says how they were run; lesson 08 plots them beside the shipped run
LONG_FILE = "logs/wv_glove_long_runs.json"


def tuning_run(lr: float, x_max: float, epochs: int = EPOCHS, counts=None) -> dict:
    """One short run: {'lr', 'x_max', 'epochs', 'valid_wordsim' [per epoch], 'valid_simlex',
    'train_loss', 'diverged', 'cpu_seconds'}."""
    corpus = course_corpus()
    counts = glove_counts(GLOVE["window"]) if counts is None else counts
    out = {"lr": lr, "x_max": x_max, "epochs": epochs, "valid_wordsim": [], "valid_simlex": [], "train_loss": [],
           "diverged": False}

    def epoch_end(epoch, vectors, loss):
        if not np.isfinite(vectors).all():
            out["diverged"] = True
            return True
        v = evaluate_vectors(vectors, corpus.vocab, "validation", analogies=False)
        out["valid_wordsim"].append(v["wordsim"])
        out["valid_simlex"].append(v["simlex"])
        out["train_loss"].append(float(loss))
        return False

    t0 = time.process_time()
    train_pairwise(counts, dim=GLOVE["dim"], epochs=epochs, lr=lr, x_max=x_max, alpha=GLOVE["alpha"],
                   batch_size=GLOVE["batch_size"], seed=GLOVE["seed"], progress=False, epoch_end=epoch_end)
    out["cpu_seconds"] = time.process_time() - t0
    return out


def load_tuning() -> dict:
    """The record written by :func:`main` (``data/models/logs/wv_glove_tuning.json``)."""
    return json.loads((model_dir() / FILE).read_text(encoding="utf-8"))


def load_long_runs() -> dict:
    """The record of the 50-epoch learning-rate runs (``data/models/logs/wv_glove_long_runs.json``):
    {'what', 'command', 'fixed', 'runs': [{'settings', 'valid_wordsim' (per epoch), 'valid_simlex',
    'train_loss', 'best_epoch', 'best_valid_wordsim', 'epochs_run', 'stopped_by', 'cpu_seconds'}]}."""
    return json.loads((model_dir() / LONG_FILE).read_text(encoding="utf-8"))


def main() -> None:
    counts = glove_counts(GLOVE["window"])
    runs = []
    for g in GRID:
        runs.append(tuning_run(g["lr"], g["x_max"], g.get("epochs", EPOCHS), counts=counts))
        print(runs[-1], flush=True)
    record = {"what": f"GloVe tuning on the validation half: short runs (2 or 3 epochs) per setting, window "
                      f"{GLOVE['window']}, batches of {GLOVE['batch_size']} pairs, seed {GLOVE['seed']}",
              "command": "python -m helpers.course.glove_tuning", "runs": runs}
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
