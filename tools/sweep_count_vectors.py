"""Choose the settings of the course's count-based vectors (PPMI-SVD, LSA) on the validation
half of the benchmarks (helpers.course.benchmarks); prints one JSON line per cell.

    OMP_NUM_THREADS=1 python tools/sweep_count_vectors.py ppmi > ppmi.jsonl
    OMP_NUM_THREADS=1 python tools/sweep_count_vectors.py lsa > lsa.jsonl

One truncated SVD with the largest k per cell; smaller k take its leading columns; p is the
power of the singular values (U_k Σ_k^p). Only the validation half is scored.
"""
import json
import sys
import time

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.lib.counting import cooccurrence_matrix, ppmi
from helpers.lib.lsa import document_term_matrix, group_sentences, tfidf, truncated_svd

KS, PS = (50, 100, 200), (0.0, 0.5, 1.0)


def score(u, s, cell, vocab):
    """Print the validation scores of U_k Σ_k^p for every k and p of the sweep."""
    for k in KS:
        for p in PS:
            W = (u[:, :k] * s[:k] ** p).astype(np.float32)
            r = evaluate_vectors(W, vocab, "validation", analogies=k >= 100 and p > 0)
            out = {
                **cell,
                "k": k,
                "p": p,
                "wordsim": r["wordsim"],
                "simlex": r["simlex"],
                "analogy": r.get("analogy"),
            }
            print(json.dumps(out), flush=True)


def main(kind: str) -> None:
    """Score every cell of the ``kind`` sweep ("ppmi" or "lsa"), one JSON line each."""
    if kind not in ("ppmi", "lsa"):
        raise SystemExit(f"usage: python tools/sweep_count_vectors.py ppmi|lsa (got {kind!r})")
    corpus = course_corpus()
    V = len(corpus.vocab)
    sents = np.split(corpus.ids, np.flatnonzero(np.diff(corpus.sentence)) + 1)
    if kind == "ppmi":
        for window in (5, 10):          # window 2 was worse on every measure (first run, k <= 300)
            for weighting in ("uniform",):
                counts = cooccurrence_matrix(sents, V, window=window, weighting=weighting)
                for alpha in (0.75, 1.0):
                    t = time.perf_counter()
                    u, s, _ = truncated_svd(ppmi(counts, alpha=alpha), max(KS), seed=0)
                    cell = dict(method="ppmi-svd", window=window, weighting=weighting,
                                alpha=alpha, svd_seconds=round(time.perf_counter() - t, 1))
                    score(u, s, cell, corpus.vocab)
    else:
        for per_doc in (1, 10, 50):
            docs = group_sentences(corpus.sentences, per_doc)
            for tf_scheme in ("raw", "log1p"):
                t = time.perf_counter()
                w, _ = tfidf(
                    document_term_matrix(docs, corpus.vocab), tf_scheme, smooth=True, norm=None
                )
                u, s, _ = truncated_svd(w.T.tocsr(), max(KS), seed=0)
                score(u, s, dict(method="lsa", sentences_per_doc=per_doc, tf_scheme=tf_scheme,
                                 svd_seconds=round(time.perf_counter() - t, 1)), corpus.vocab)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
