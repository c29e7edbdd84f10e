"""word2vec speed and quality: NumPy and PyTorch skip-gram against gensim, one process.

Same corpus (helpers.course.corpus, 1.29M tokens), same hyperparameters (helpers.course.word_vectors.COURSE_CONFIG:
100 dims, window 5, 5 negatives, subsampling 1e-3, 5 epochs; gensim with 2 workers). Prints
words/second (wall clock) and words per CPU-second, their ratios to gensim, and the quality
gaps (WordSim-353 rho, analogy accuracy). Targets (issue 6): PyTorch >= 0.5x gensim's
throughput, NumPy >= 0.1x; PyTorch's WordSim-353 rho and analogy accuracy no more than 0.03
below gensim's. Exit status 1 if a target is missed.

Run: python benchmarks/bench_word2vec.py [--epochs N]  (about 2-3 minutes on an idle 2-core CPU)
"""
from __future__ import annotations

import argparse
import sys
import time

from helpers.course.data import load_analogies, load_word_similarity
from helpers.course.word_vectors import COURSE_CONFIG, course_corpus
from helpers.lib.metrics import analogy_accuracy, similarity_correlation
from helpers.lib.word2vec import train_gensim, train_numpy, train_torch


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=COURSE_CONFIG["epochs"])
    args = ap.parse_args()
    cfg = {**COURSE_CONFIG, "epochs": args.epochs}
    corpus = course_corpus()
    ws, an = load_word_similarity("wordsim353"), load_analogies()
    print(f"corpus: {corpus.n_raw_tokens:,} tokens, vocabulary {len(corpus.vocab):,}; config {cfg}")
    runs = {}
    for name, fn in (("gensim", lambda: train_gensim(corpus, "skipgram", workers=2, **cfg)),
                     ("torch", lambda: train_torch(corpus, "skipgram", progress=False, **cfg)),
                     ("torch-2w", lambda: train_torch(corpus, "skipgram", progress=False, workers=2, **cfg)),
                     ("numpy", lambda: train_numpy(corpus, "skipgram", progress=False, **cfg))):
        cpu0 = time.process_time()
        tv = fn()
        cpu = time.process_time() - cpu0
        rho = similarity_correlation(tv.W, tv.vocab, ws, "WordSim-353").rho
        acc = analogy_accuracy(tv.W, tv.vocab, an, "add").accuracy
        runs[name] = dict(wps=tv.words_per_second, cpu_wps=corpus.n_raw_tokens * cfg["epochs"] / cpu,
                          seconds=tv.seconds, cpu=cpu, rho=rho, acc=acc)
        print(f"  {name:<8} {tv.seconds:6.1f} s wall, {cpu:6.1f} s CPU, {tv.words_per_second:>9,.0f} words/s, "
              f"WS353 rho {rho:.3f}, analogy {acc:.1%}", flush=True)
    g = runs["gensim"]
    print(f"\n{'skip-gram':<9}{'words/s':>10}{'ratio':>7}{'words/CPU-s':>13}{'ratio':>7}{'WS353 ρ':>9}{'Δ':>7}{'analogy':>9}{'Δ':>7}")
    for name, r in runs.items():
        print(f"{name:<9}{r['wps']:>10,.0f}{r['wps'] / g['wps']:>7.2f}{r['cpu_wps']:>13,.0f}{r['cpu_wps'] / g['cpu_wps']:>7.2f}"
              f"{r['rho']:>9.3f}{r['rho'] - g['rho']:>+7.3f}{r['acc']:>9.1%}{r['acc'] - g['acc']:>+7.3f}")
    checks = {
        "PyTorch throughput >= 0.5x gensim (best of 1 and 2 workers)":
            max(runs["torch"]["wps"], runs["torch-2w"]["wps"]) / g["wps"] >= 0.5,
        "NumPy throughput >= 0.1x gensim": runs["numpy"]["wps"] / g["wps"] >= 0.1,
        "PyTorch WS353 rho >= gensim - 0.03": runs["torch"]["rho"] >= g["rho"] - 0.03,
        "PyTorch analogy accuracy >= gensim - 0.03": runs["torch"]["acc"] >= g["acc"] - 0.03,
    }
    print()
    for what, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {what}")
    print("torch-2w: two Python threads updating the same tensors without locks, like gensim's workers")
    print("(wall-clock ratios on a shared machine move with the load; the words per CPU-second column "
          "compares work done per core, gensim's two threads counted together)")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
