"""GloVe (the course's PyTorch trainer) against gensim's Word2Vec and FastText, one process.

Same corpus (helpers.course.corpus.modern_english_sentences, 1.29M tokens), 100 dimensions,
min_count 5 for all three, with the settings below (a speed comparison at fixed budgets, not the
shipped vectors' validated settings, which are in training.word_vector_models). GloVe: GLOVE_CONFIG
(harmonic co-occurrence counts within ±10 words, x_max 100, α 0.75, AdaGrad on batches of 65,536
pairs with the PyTorch trainer); word2vec: skip-gram with WORD2VEC_CONFIG (window 5, 5 negatives, 5
epochs, 2 workers); fastText: FASTTEXT_CONFIG (the same skip-gram settings plus character 3-6-grams
in 200,000 buckets).

Prints, per method: training time (wall and CPU; GloVe's co-occurrence counting shown
separately), the ratio to word2vec's wall time, WordSim-353 and SimLex-999 Spearman ρ on the
pairs it can score, the share of pairs it cannot score (out of vocabulary), and for fastText
also ρ on *all* pairs (unseen words get vectors from their n-grams). Everything is trained
fresh (no cache), so the times are real.

Run: python benchmarks/bench_glove.py [--glove-epochs N]   (about 3-4 CPU-minutes)
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import spearmanr

from helpers.course.corpus import course_corpus, modern_english_sentences
from helpers.course.data import load_word_similarity
from helpers.lib.counting import cooccurrence_matrix
from helpers.lib.metrics import similarity_correlation
from training.glove_torch import train_torch
from training.word2vec_trainers import train_fasttext, train_gensim

WORD2VEC_CONFIG = dict(dim=100, window=5, negative=5, sample=1e-3, epochs=5, alpha=0.025,
                       min_alpha=1e-4, seed=0)
GLOVE_CONFIG = dict(window=10, dim=100, epochs=10, lr=0.5, x_max=100.0, alpha=0.75,
                    batch_size=65536, seed=0)
FASTTEXT_CONFIG = dict(dim=100, window=5, min_count=5, epochs=5, min_n=3, max_n=6, buckets=200_000,
                       sg=True, negative=5, sample=1e-3, seed=0, workers=2)


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _all_pairs_rho(vector_of, pairs) -> float:
    sims = []
    for a, b, _ in pairs:
        u, v = vector_of(a), vector_of(b)
        sims.append(float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v) or 1.0)))
    return float(spearmanr(sims, [s for _, _, s in pairs]).statistic)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--glove-epochs", type=int, default=GLOVE_CONFIG["epochs"])
    args = ap.parse_args()
    corpus = course_corpus()
    sets = {"WS353": load_word_similarity("wordsim353"),
            "SimLex": load_word_similarity("simlex999")}
    print(f"corpus: {corpus.n_raw_tokens:,} tokens, {len(corpus.sentences):,} sentences, "
          f"vocabulary {len(corpus.vocab):,} (min_count 5)", flush=True)
    rows = []

    # --- GloVe: count, then fit
    gcfg = {**GLOVE_CONFIG, "epochs": args.glove_epochs}
    sents = np.split(corpus.ids, np.flatnonzero(np.diff(corpus.sentence)) + 1)
    counts, cw, cc = _timed(lambda: cooccurrence_matrix(sents, len(corpus.vocab),
                                                         window=gcfg["window"],
                                                         weighting="harmonic"))
    print(f"GloVe co-occurrence: {counts.nnz:,} non-zero pairs (window {gcfg['window']}), "
          f"{cw:.1f} s wall, {cc:.1f} s CPU", flush=True)
    kw = {k: v for k, v in gcfg.items() if k != "window"}
    gv, w, c = _timed(lambda: train_torch(counts, vocab=corpus.vocab, progress=False, **kw))
    print(f"GloVe loss per epoch: {', '.join(f'{x:.4f}' for x in gv.epoch_loss)}", flush=True)
    for which in ("W+W~", "W"):
        rows.append(dict(method=f"GloVe PyTorch ({which})", wall=w, cpu=c, extra=cw,
                         vectors=gv.vectors(which), vocab=corpus.vocab))

    # --- gensim word2vec skip-gram
    tv, w, c = _timed(lambda: train_gensim(corpus, "skipgram", workers=2, **WORD2VEC_CONFIG))
    rows.append(dict(method="gensim Word2Vec (SG)", wall=w, cpu=c, extra=0.0, vectors=tv.W,
                     vocab=corpus.vocab))
    print(f"gensim Word2Vec: {w:.1f} s wall", flush=True)

    # --- gensim FastText skip-gram
    ft, w, c = _timed(lambda: train_fasttext(modern_english_sentences(), **FASTTEXT_CONFIG))
    rows.append(dict(method="gensim FastText (SG)", wall=w, cpu=c, extra=0.0, vectors=ft.W,
                     vocab=ft.itos, ft=ft))
    print(f"gensim FastText: {w:.1f} s wall", flush=True)

    base = next(r for r in rows if r["method"].startswith("gensim Word2Vec"))["wall"]
    head = (f"{'method':<24}{'train s':>8}{'CPU s':>8}{'×w2v':>6}" + "".join(
        f"{k + ' ρ':>10}{'OOV':>7}" for k in sets) + f"{'WS353 ρ all':>13}{'SimLex ρ all':>14}")
    print("\n" + head + "\n" + "-" * len(head))
    for r in rows:
        line = f"{r['method']:<24}{r['wall']:>8.1f}{r['cpu']:>8.1f}{r['wall'] / base:>6.2f}"
        for name, pairs in sets.items():
            res = similarity_correlation(r["vectors"], r["vocab"], pairs, name)
            line += f"{res.rho:>10.3f}{res.n_oov / res.n_pairs:>7.1%}"
        if "ft" in r:
            line += "".join(
                f"{_all_pairs_rho(r['ft'].vector, p):>{wd}.3f}"
                for p, wd in zip(sets.values(), (13, 14), strict=False)
            )
        else:
            line += f"{'(no OOV vectors)':>27}"
        print(line)
    print(
        "\n"
        "train s = wall-clock training time; GloVe's co-occurrence counting ("
        f"{rows[0]['extra']:.1f} s) is not included. ×w2v = wall time / gensim Word2Vec's. OOV = "
        "share of pairs with a word that has no vector (fastText: not in its training vocabulary); "
        "ρ on the other pairs. 'ρ all': fastText on every pair, unseen words built from their "
        "n-grams."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
