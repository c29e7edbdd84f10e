"""word2vec speed and quality: NumPy and PyTorch skip-gram against gensim, ratios measured in one
run.

Same corpus (helpers.course.corpus), same hyperparameters (BENCH_CONFIG below:
100 dims, window 5, 5 negatives, subsampling 1e-3; 5 epochs unless ``--epochs``) for five runs:
gensim with 1 worker (the fair one-thread reference), gensim with 2 workers, PyTorch on one
thread, PyTorch with 2 workers (Hogwild threads, like gensim's), and NumPy. Each is repeated
``--repeats`` times (seed = repeat number, the five runs interleaved so that a change of load hits
them alike) and the median is reported: training words per wall-clock second (every trainer times
its training only, not the vocabulary), words per CPU-second (all threads counted), and quality
at these epochs, WordSim-353 rho and analogy accuracy (median, with min-max over the seeds).

Targets, each a ratio of medians against gensim with the *same* number of threads:
PyTorch on one thread >= 0.5x gensim with one worker, NumPy >= 0.25x gensim with one worker;
and PyTorch's and NumPy's WordSim-353 rho and analogy accuracy no more than 0.03 below gensim's.
The targets were set on a 2-core AMD EPYC virtual machine; the ratios move between machines (CPU,
BLAS, memory bandwidth) and with the load of a shared machine, which is why they are measured
against gensim in the same run and the load average is printed. Exit status 1 if a target is missed.

Run: python benchmarks/bench_word2vec.py [--epochs N] [--repeats R]
(5 epochs x 3 repeats: about 15 minutes on an idle 2-core CPU; --epochs 1 about 3 minutes)
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from helpers.course.corpus import course_corpus
from helpers.course.data import load_analogies, load_word_similarity
from helpers.lib.metrics import analogy_accuracy, similarity_correlation
from training.word2vec_trainers import train_gensim, train_numpy, train_torch

# word2vec's defaults, 5 epochs: a speed benchmark, not the shipped vectors' validated settings
# (those are training.word_vector_models.WORD2VEC)
BENCH_CONFIG = dict(
    dim=100, window=5, negative=5, sample=1e-3, epochs=5, alpha=0.025, min_alpha=1e-4, seed=0
)

RUNS = {  # name: (threads, trainer)
    "gensim-1w": (1, lambda corpus, cfg: train_gensim(corpus, "skipgram", workers=1, **cfg)),
    "gensim-2w": (2, lambda corpus, cfg: train_gensim(corpus, "skipgram", workers=2, **cfg)),
    "torch-1t": (
        1,
        lambda corpus, cfg: train_torch(corpus, "skipgram", progress=False, workers=1, **cfg),
    ),
    "torch-2w": (
        2,
        lambda corpus, cfg: train_torch(corpus, "skipgram", progress=False, workers=2, **cfg),
    ),
    "numpy": (1, lambda corpus, cfg: train_numpy(corpus, "skipgram", progress=False, **cfg)),
}
REFERENCE = {1: "gensim-1w", 2: "gensim-2w"}   # the reference for a run with that many threads


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next(
                line.split(":", 1)[1].strip() for line in f if line.startswith("model name")
            )
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=BENCH_CONFIG["epochs"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.epochs < 1 or args.repeats < 1:
        ap.error(f"--epochs and --repeats must be at least 1, got {args.epochs} and {args.repeats}")
    corpus = course_corpus()
    ws, an = load_word_similarity("wordsim353"), load_analogies()
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} logical CPUs; load average (1, 5, 15 min) "
        f"{load()}"
    )
    shown = {k: v for k, v in BENCH_CONFIG.items() if k not in ("epochs", "seed")}
    print(f"corpus: {corpus.n_raw_tokens:,} tokens, vocabulary {len(corpus.vocab):,}; "
          f"{args.repeats} repeats (seed = repeat - 1) of {args.epochs} epochs; config {shown}")
    results = {name: [] for name in RUNS}
    loads = [load()]
    for rep in range(args.repeats):
        cfg = {**BENCH_CONFIG, "epochs": args.epochs, "seed": rep}
        for name, (_, trainer) in RUNS.items():
            cpu0 = time.process_time()
            tv = trainer(corpus, cfg)
            cpu = time.process_time() - cpu0
            r = dict(wps=tv.words_per_second, cpu_wps=corpus.n_raw_tokens * args.epochs / cpu,
                     rho=similarity_correlation(tv.W, tv.vocab, ws, "WordSim-353").rho,
                     acc=analogy_accuracy(tv.W, tv.vocab, an, "add").accuracy)
            results[name].append(r)
            print(
                f"  repeat {rep + 1}  {name:<10}{tv.seconds:7.1f} s wall {cpu:7.1f} s CPU "
                f"{r['wps']:>9,.0f} words/s  WS353 rho {r['rho']:.3f}  analogy {r['acc']:.1%}  "
                f"(load {load()})",
                flush=True,
            )
        loads.append(load())

    med = {
        name: {key: statistics.median(r[key] for r in rs) for key in rs[0]}
        for name, rs in results.items()
    }

    def spread(name, key, fmt):
        values = [r[key] for r in results[name]]
        return f"{fmt.format(min(values))}-{fmt.format(max(values))}"

    print(
        "\n"
        f"medians of {args.repeats} repeats; ratio = against gensim with the same number of threads"
    )
    print(f"{'skip-gram':<10}{'words/s':>10}{'ratio':>7}{'words/CPU-s':>13}{'ratio':>7}"
          f"{'WS353 ρ':>9}{'(min-max)':>13}{'analogy':>9}{'(min-max)':>13}")
    ratio = {}
    for name, (threads, _) in RUNS.items():
        m, g = med[name], med[REFERENCE[threads]]
        ratio[name] = m["wps"] / g["wps"]
        print(
            f"{name:<10}{m['wps']:>10,.0f}{ratio[name]:>7.2f}{m['cpu_wps']:>13,.0f}"
            f"{m['cpu_wps'] / g['cpu_wps']:>7.2f}{m['rho']:>9.3f}"
            f"{spread(name, 'rho', '{:.3f}'):>13}{m['acc']:>9.1%}"
            f"{spread(name, 'acc', '{:.1%}'):>13}"
        )
    g1 = med["gensim-1w"]
    checks = {
        f"PyTorch one thread >= 0.5x gensim one worker (words/s): {ratio['torch-1t']:.2f}x": ratio[
            "torch-1t"
        ]
        >= 0.5,
        f"NumPy >= 0.25x gensim one worker (words/s): {ratio['numpy']:.2f}x": ratio["numpy"]
        >= 0.25,
    }
    for name in ("torch-1t", "numpy"):
        m = med[name]
        checks[f"{name} WS353 rho >= gensim-1w - 0.03: {m['rho']:.3f} vs {g1['rho']:.3f}"] = (
            m["rho"] >= g1["rho"] - 0.03
        )
        checks[
            f"{name} analogy accuracy >= gensim-1w - 0.03: {m['acc']:.3f} vs {g1['acc']:.3f}"
        ] = m["acc"] >= g1["acc"] - 0.03
    print()
    for what, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {what}")
    cpu_ratio = {
        name: med[name]["cpu_wps"] / med[REFERENCE[threads]]["cpu_wps"]
        for name, (threads, _) in RUNS.items()
    }
    print(
        f"(for information: PyTorch with 2 workers is {ratio['torch-2w']:.2f}x gensim with 2 "
        "workers; in words per CPU-second, which a busy machine disturbs less, PyTorch one thread "
        f"is {cpu_ratio['torch-1t']:.2f}x and NumPy {cpu_ratio['numpy']:.2f}x gensim one worker)"
    )
    print(f"load average before and after each repeat: {' | '.join(loads)}")
    print(
        "torch-2w: two Python threads updating the same tensors without locks, like gensim's "
        "workers (not bit-for-bit reproducible). Wall-clock ratios on a shared machine move with "
        "the load; the words per CPU-second column compares work per core, a run's threads counted "
        "together."
    )
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
