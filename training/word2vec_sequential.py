"""Is a batch of summed gradients the cause of the skip-grams' rare neighbours? One pair at a time
against 1,024 at a time, on the same pairs, noise words and learning rates.

    python -m training.word2vec_sequential     # writes data/models/logs/wv_sequential.json

Lesson 07's live skip-gram (d = 100, k = 5, t = 1e-4, window 5, the learning rate 0.1 falling
linearly to zero over three passes) is trained twice from the same start: with the batched SGD step
of :func:`helpers.lib.sgns.sgd_step` (gradients from the values before the step, summed), and one
pair at a time as word2vec.c does (each pair sees the updates of the pairs before it). Every half
pass both are scored: validation WordSim-353 ρ and the share of rare words (seen fewer than 20
times) among the 10 nearest neighbours of 500 frequent words. gensim's skip-gram (one worker) is
trained for the same three epochs at the same settings, and for the shipped models' schedule (20
epochs, the rate 0.05), scored after each epoch. About 6 CPU-minutes.
"""

from __future__ import annotations

import json
import time

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir
from helpers.course.word_vectors import rare_neighbour_share
from helpers.lib import sgns
from helpers.lib.negative_sampling import unigram_table
from helpers.lib.word2vec import keep_probabilities, skipgram_pairs

FILE = "logs/wv_sequential.json"
SETTINGS = dict(dim=100, k=5, window=5, sample=1e-4, alpha=0.1, passes=3, batch=1024, seed=0)


def _pairs(corpus, s):
    """The pairs of ``passes`` passes (each subsampled and shuffled afresh), their noise words."""
    rng = np.random.default_rng(s["seed"] + 1)
    keep = keep_probabilities(corpus.vocab.counts, s["sample"])
    words, contexts = [], []
    for _ in range(s["passes"]):
        kept = rng.random(len(corpus.ids)) < keep[corpus.ids]
        w, c = skipgram_pairs(corpus.ids[kept], corpus.sentence[kept], s["window"], rng)
        order = rng.permutation(len(w))
        words.append(w[order])
        contexts.append(c[order])
    table = unigram_table(corpus.vocab.counts)
    negatives = table[
        np.random.default_rng(s["seed"] + 2).integers(0, len(table), (sum(map(len, words)), s["k"]))
    ]
    return np.concatenate(words), np.concatenate(contexts), negatives, len(words[0])


def _score(W, vocab) -> dict:
    return {
        "rho": round(evaluate_vectors(W, vocab, "validation", analogies=False)["wordsim"], 4),
        "rare": round(rare_neighbour_share(W, vocab.counts), 3),
    }


def course_run(batch: int, s: dict = SETTINGS) -> list[dict]:
    """The live skip-gram in batches of ``batch`` pairs (1: one at a time), scored per half pass."""
    corpus = course_corpus()
    V, d = len(corpus.vocab), s["dim"]
    rng = np.random.default_rng(s["seed"])
    W = ((rng.random((V, d)) - 0.5) / d).astype(np.float32)
    C = np.zeros((V, d), np.float32)
    words, contexts, negatives, per_pass = _pairs(corpus, s)
    total, every, out, t0 = len(words), per_pass // 2, [], time.process_time()
    labels = np.r_[1.0, np.zeros(s["k"])].astype(np.float32)
    for start in range(0, total, batch):
        lr = s["alpha"] * max(1e-4, 1 - start / total)
        if batch == 1:  # word2vec.c: the output rows move first, then the word's
            w, ids = words[start], np.r_[contexts[start], negatives[start]]
            v, U = W[w].copy(), C[ids]
            g = 1 / (1 + np.exp(-(U @ v))) - labels
            np.add.at(C, ids, -lr * np.outer(g, v))
            W[w] -= lr * (g @ U)
        else:
            sl = slice(start, start + batch)
            sgns.sgd_step(W, C, words[sl], contexts[sl], negatives[sl], lr)
        done = min(start + batch, total)
        half_passes = done // every           # every half pass before the last, then the end
        if done == total or (half_passes > start // every and half_passes < 2 * s["passes"]):
            out.append(
                {
                    "passes": round(done / per_pass, 2),
                    **_score(W, corpus.vocab),
                    "cpu_seconds": round(time.process_time() - t0, 1),
                }
            )
            print(batch, out[-1], flush=True)
    return out


def gensim_run(s: dict = SETTINGS) -> list[dict]:
    """gensim's skip-gram at the settings ``s`` for ``s['passes']`` epochs, scored after each."""
    from gensim.models import Word2Vec

    corpus = course_corpus()
    m = Word2Vec(
        vector_size=s["dim"],
        window=s["window"],
        negative=s["k"],
        sample=s["sample"],
        sg=1,
        hs=0,
        min_count=5,
        workers=1,
        seed=s["seed"],
    )
    m.build_vocab(corpus.sentences)
    out, t0 = [], time.process_time()
    for e in range(s["passes"]):
        a0, a1 = (s["alpha"] - (s["alpha"] - 1e-4) * x / s["passes"] for x in (e, e + 1))
        m.train(
            corpus.sentences, total_examples=m.corpus_count, epochs=1, start_alpha=a0, end_alpha=a1
        )
        W = np.stack([m.wv[w] for w in corpus.vocab.itos])
        out.append(
            {
                "passes": e + 1,
                **_score(W, corpus.vocab),
                "cpu_seconds": round(time.process_time() - t0, 1),
            }
        )
        print("gensim", out[-1], flush=True)
    return out


def main() -> None:
    record = {
        "what": __doc__.split("\n\n")[2].replace("\n", " "),
        "command": "python -m training.word2vec_sequential",
        "settings": SETTINGS,
        "batched": course_run(SETTINGS["batch"]),
        "one_pair_at_a_time": course_run(1),
        "gensim": gensim_run(),
        "gensim_shipped_schedule": gensim_run(dict(SETTINGS, passes=20, alpha=0.05)),
    }
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
