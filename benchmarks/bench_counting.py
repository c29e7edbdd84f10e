"""Benchmark for lessons 05-06: co-occurrence counting + PPMI, and dense vs truncated SVD.

Part 1 counts word-context pairs (window ±5, within sentences) and computes PPMI on about a
million tokens of the course corpus in three ways, checks that they agree, and prints CPU
times and ratios:
  - course:  helpers.lib.counting.cooccurrence_matrix + ppmi (vectorised per offset, SciPy sparse)
  - loop:    a plain Python loop over tokens into a dict, then PPMI over the dict
  - sklearn: CountVectorizer over one "context document" per token, E^T M, then PPMI with
             SciPy sparse operations
Part 2 times numpy's dense SVD against truncated SVD (randomised and ARPACK) of the PPMI
matrix as the vocabulary and k grow, with the error of the top-k singular values.

Run: python benchmarks/bench_counting.py   (about 2-4 minutes on a 2-core laptop)
CPU times (time.process_time, best of 2-3 runs for the fast routes) are reported because shared
machines inflate wall time; multi-threaded BLAS adds its threads' time, so small SVD timings are
noisy on a busy machine.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds
from sklearn.feature_extraction.text import CountVectorizer

from helpers.course.corpus import modern_english_sentences
from helpers.lib.counting import cooccurrence_matrix, flatten_sentences, ppmi
from helpers.lib.lsa import truncated_svd
from helpers.lib.text import Vocab

WINDOW = 5
TARGET_TOKENS = 1_000_000


def sorted_svds(m, k: int):
    """SciPy's ARPACK SVD (Lanczos, exact to machine precision), largest singular value first."""
    u, s, vt = svds(m, k=k, v0=np.random.default_rng(0).uniform(-1, 1, size=min(m.shape)))
    order = np.argsort(-s)
    return u[:, order], s[order], vt[order]


def timed(fn, repeat: int = 1):
    """(result, best CPU seconds, best wall seconds) over ``repeat`` runs (best = least
    disturbed by other processes on a shared machine)."""
    cpu, wall = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return out, min(cpu), min(wall)


def cooccurrence_countvectorizer(sentences_ids, vocab_size: int, window: int) -> sp.csr_matrix:
    """Uniform, symmetric, within-sentence counts through scikit-learn's CountVectorizer: every
    token becomes a small document made of its context words, CountVectorizer turns those into a
    (n_tokens, V) count matrix M, and with E the one-hot matrix of the centre words, E^T M is the
    co-occurrence matrix (the same as ``cooccurrence_matrix(sentences_ids, vocab_size, window)``).
    """
    ids, sentence = flatten_sentences(sentences_ids, vocab_size)
    centres, contexts = [], []
    for sent in np.split(ids, np.flatnonzero(np.diff(sentence)) + 1):
        toks = sent.tolist()
        for i, w in enumerate(toks):
            if w >= 0:
                centres.append(w)
                contexts.append(
                    [
                        str(c)
                        for c in toks[max(0, i - window) : i] + toks[i + 1 : i + 1 + window]
                        if c >= 0
                    ]
                )
    vec = CountVectorizer(
        analyzer=lambda ctx: ctx, vocabulary={str(i): i for i in range(vocab_size)}
    )
    m = vec.fit_transform(contexts).astype(np.float64)
    e = sp.csr_matrix((np.ones(len(centres)), (np.arange(len(centres)), centres)),
                      shape=(len(centres), vocab_size))
    return (e.T @ m).tocsr()


def ppmi_python(table: dict) -> dict:
    """Plain-Python PPMI (alpha = 1, bits) of a {(w, c): count} dict: {(w, c): ppmi > 0}."""
    row, col, n = defaultdict(float), defaultdict(float), 0.0
    for (w, c), x in table.items():
        row[w] += x
        col[c] += x
        n += x
    out = {}
    for (w, c), x in table.items():
        value = math.log2(x * n / (row[w] * col[c]))
        if value > 0:
            out[w, c] = value
    return out


def course_route(sents, v):
    counts = cooccurrence_matrix(sents, v, window=WINDOW)
    return counts, ppmi(counts, alpha=1.0)


def loop_route(sents, v):
    table = defaultdict(float)
    for sent in sents:
        toks = sent.tolist()
        n = len(toks)
        for i, w in enumerate(toks):
            if w < 0:
                continue
            for j in range(i + 1, min(n, i + WINDOW + 1)):
                c = toks[j]
                if c >= 0:
                    table[w, c] += 1.0
                    table[c, w] += 1.0
    return table, ppmi_python(table)


def sklearn_route(sents, v):
    counts = cooccurrence_countvectorizer(sents, v, window=WINDOW)
    # PPMI with SciPy sparse operations: P(w,c) / (P(w) P(c)) on the stored entries
    n = counts.sum()
    rw = np.asarray(counts.sum(axis=1)).ravel()
    rc = np.asarray(counts.sum(axis=0)).ravel()
    ratio = sp.diags(n / np.where(rw > 0, rw, 1)) @ counts @ sp.diags(1 / np.where(rc > 0, rc, 1))
    ratio = ratio.tocsr()
    ratio.data = np.log2(ratio.data)
    ratio.data[ratio.data < 0] = 0
    ratio.eliminate_zeros()
    return counts, ratio


def part1():
    sentences = modern_english_sentences()
    chosen, n_tok = [], 0
    for s in sentences:
        if n_tok >= TARGET_TOKENS:
            break
        chosen.append(s)
        n_tok += len(s)
    vocab = Vocab.build([w for s in chosen for w in s], min_count=5)
    unk = vocab.unk_id
    sents = [np.where(ids == unk, -1, ids) for ids in (vocab.encode(s) for s in chosen)]
    V = len(vocab)
    print(f"Part 1: co-occurrence (window ±{WINDOW}, within sentences) + PPMI on {n_tok:,} tokens, "
          f"{len(chosen):,} sentences, {V:,} word types (min count 5)\n")
    (c_counts, c_ppmi), c_cpu, c_wall = timed(lambda: course_route(sents, V), repeat=3)
    (s_counts, s_ppmi), s_cpu, s_wall = timed(lambda: sklearn_route(sents, V))
    (table, l_ppmi), l_cpu, l_wall = timed(lambda: loop_route(sents, V))

    # agreement
    assert abs(c_counts - s_counts).max() == 0, "sklearn route counts differ"
    keys = np.array(list(table.keys()))
    vals = np.fromiter(table.values(), float, len(table))
    assert len(table) == c_counts.nnz and np.array_equal(
        np.asarray(c_counts[keys[:, 0], keys[:, 1]]).ravel(), vals
    )
    pk = np.array(list(l_ppmi.keys()))
    pv = np.fromiter(l_ppmi.values(), float, len(l_ppmi))
    diff_loop = np.abs(np.asarray(c_ppmi[pk[:, 0], pk[:, 1]]).ravel() - pv).max()
    diff_sk = abs(c_ppmi - s_ppmi).max()
    print(
        f"all three give the same {c_counts.nnz:,} pair counts; PPMI max |diff|: loop "
        f"{diff_loop:.1e}, sklearn route {diff_sk:.1e}; {c_ppmi.nnz:,} positive PPMI cells\n"
    )
    print(f"{'route':42s} {'CPU s':>8s} {'wall s':>8s} {'CPU ratio vs course':>20s}")
    for name, cpu, wall in [("course (vectorised per offset, SciPy)", c_cpu, c_wall),
                            ("scikit-learn CountVectorizer route", s_cpu, s_wall),
                            ("plain Python loop", l_cpu, l_wall)]:
        print(f"{name:42s} {cpu:8.2f} {wall:8.2f} {cpu / c_cpu:19.1f}x")
    fastest = min([("course", c_cpu), ("sklearn", s_cpu), ("loop", l_cpu)], key=lambda t: t[1])[0]
    print(f"\nfastest: {fastest}")
    return c_counts, vocab


def part2(counts, vocab):
    print(
        "\n"
        "Part 2: dense vs truncated SVD of the PPMI matrix (rows and columns = the most frequent "
        "words)\n"
    )
    print(
        "(dense = numpy.linalg.svd, all singular values, independent of k; error = randomised vs "
        "ARPACK)"
    )
    print(
        f"{'V':>6s} {'k':>4s} {'dense CPU s':>12s} {'randomised CPU s':>17s} {'ARPACK CPU s':>13s} "
        f"{'rand. max rel err':>18s}"
    )
    start = len(vocab.specials)
    for V in (500, 1000, 2000, 4000):
        sub = counts[start:start + V][:, start:start + V]
        m = ppmi(sub, alpha=0.75)
        dense_s, dense_txt = None, "skipped"  # O(V^3): about 8x the V=2000 time, too slow here
        if V <= 2000:
            dense_s, dense_cpu, _ = timed(
                lambda m=m: np.linalg.svd(m.toarray(), compute_uv=False), repeat=2
            )
            dense_txt = f"{dense_cpu:.2f}"
        for k in (10, 50, 100, 200):
            (_, s_r, _), r_cpu, _ = timed(lambda m=m, k=k: truncated_svd(m, k, seed=0), repeat=2)
            (_, s_a, _), a_cpu, _ = timed(lambda m=m, k=k: sorted_svds(m, k), repeat=2)
            err = np.max(np.abs(s_r - s_a) / s_a)
            print(f"{V:6d} {k:4d} {dense_txt:>12s} {r_cpu:17.2f} {a_cpu:13.2f} {err:18.1e}")
            if dense_s is not None:
                assert np.allclose(s_a, dense_s[:k], rtol=1e-8)


if __name__ == "__main__":
    counts, vocab = part1()
    part2(counts, vocab)
