"""Is the batched AdaGrad of training.glove_torch.train_torch the cause of GloVe's poor, jumping
curve? Compare it with train_pairwise (the reference code's per-pair AdaGrad, batched) on the
course corpus, scoring the validation half after every epoch; prints one JSON line per epoch.

    OMP_NUM_THREADS=1 python -m tools.check_glove_optimiser [epochs] [lr ...]

The pairwise runs use x_max 100 and each lr given (default 0.05, the reference code's).
"""
import json
import sys
import time

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.lib.glove import glove_cooccurrence, train_pairwise
from training.glove_torch import train_torch

epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
corpus = course_corpus()
sents = np.split(corpus.ids, np.flatnonzero(np.diff(corpus.sentence)) + 1)
counts = glove_cooccurrence(sents, len(corpus.vocab), window=10)


def show(run, epoch, vectors, t0):
    v = evaluate_vectors(vectors, corpus.vocab, "validation", analogies=False)
    print(json.dumps({"run": run, "epoch": epoch, "wordsim": round(v["wordsim"], 4), "simlex": round(v["simlex"], 4),
                      "seconds": round(time.perf_counter() - t0, 1)}), flush=True)


for lr in [float(a) for a in sys.argv[2:]] or [0.05]:
    t0 = time.perf_counter()
    train_pairwise(counts, dim=100, epochs=epochs, lr=lr, x_max=100.0, batch_size=4096, progress=False,
                   epoch_end=lambda e, v, lr=lr, t0=t0: show(f"pairwise x_max=100 lr={lr:g} batch=4096", e, v, t0))
t0 = time.perf_counter()
train_torch(counts, dim=100, epochs=epochs, lr=0.5, x_max=100.0, batch_size=65536, progress=False,
            evaluate=lambda v: show("train_torch x_max=100 lr=0.5 batch=65536 (summed AdaGrad)", 0, v, t0) or {})
