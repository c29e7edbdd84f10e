"""Lesson 07 (the embedding layer and word2vec): the full softmax against negative sampling
timed as the vocabulary grows, and the explorer of the vector dimension."""
from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np

from helpers.course.corpus import modern_english_sentences
from helpers.course.data import load_analogies, load_word_similarity
from helpers.course.word_vectors import COURSE_CONFIG
from helpers.infra.plotting import COLOURS, new_figure, set_labels
from helpers.lib.metrics import analogy_accuracy, nearest_neighbours, similarity_correlation
from helpers.lib.negative_sampling import NoiseSampler, SkipGramNS, full_softmax_step
from helpers.lib.word2vec import prepare_corpus, train_torch


def time_softmax_vs_negative_sampling(vocab_sizes: Sequence[int], dim: int = 100, batch: int = 256,
                                      k: int = 5, repeats: int = 3, seed: int = 0) -> list[dict]:
    """Seconds per batch of one forward+backward pass, full softmax vs negative sampling,
    for each vocabulary size (random weights and ids). Returns a list of dicts with keys
    vocab_size, softmax_s, negative_sampling_s (best of ``repeats``)."""
    rng = np.random.default_rng(seed)
    out = []
    for V in vocab_sizes:
        W_in = rng.standard_normal((V, dim)).astype(np.float32) * 0.1
        W_out = rng.standard_normal((V, dim)).astype(np.float32) * 0.1
        c, o = rng.integers(0, V, batch), rng.integers(0, V, batch)
        model = SkipGramNS(V, dim, NoiseSampler(np.ones(V), rng=rng), k=k, rng=rng, dtype=np.float32)
        model.params[0][...], model.params[1][...] = W_in, W_out
        t_sm, t_ns = math.inf, math.inf
        for _ in range(repeats):
            t = time.perf_counter()
            full_softmax_step(W_in, W_out, c, o)
            t_sm = min(t_sm, time.perf_counter() - t)
            t = time.perf_counter()
            model.forward(c, o)
            model.backward()
            t_ns = min(t_ns, time.perf_counter() - t)
        out.append({"vocab_size": int(V), "softmax_s": t_sm, "negative_sampling_s": t_ns})
    return out


def dimension_render(dim: int = 50, fraction: float = 0.5, epochs: int = 1, seed: int = 0):
    """Explorer: train the PyTorch skip-gram with ``dim`` dimensions on the first
    ``fraction`` of the course corpus for ``epochs`` epochs and plot its WordSim-353,
    SimLex-999 and analogy (3CosAdd) scores. Returns (figure, summary)."""
    sents = modern_english_sentences()
    corpus = prepare_corpus(sents[:max(1, int(len(sents) * fraction))], min_count=5)
    cfg = {**COURSE_CONFIG, "dim": int(dim), "epochs": int(epochs), "seed": seed}
    tv = train_torch(corpus, "skipgram", progress=False, **cfg)
    ws = similarity_correlation(tv.W, tv.vocab, load_word_similarity("wordsim353"), "WordSim-353")
    sl = similarity_correlation(tv.W, tv.vocab, load_word_similarity("simlex999"), "SimLex-999")
    an = analogy_accuracy(tv.W, tv.vocab, load_analogies(), "add")
    fig, ax = new_figure()
    names = ["WordSim-353 ρ", "SimLex-999 ρ", "analogy acc."]
    vals = [ws.rho or 0.0, sl.rho or 0.0, an.accuracy or 0.0]
    bars = ax.bar(names, vals, color=[COLOURS["blue"], COLOURS["orange"], COLOURS["green"]])
    for b, v in zip(bars, vals, strict=True):
        ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.3f}", ha="center", va="bottom")
    ax.set_ylim(min(0, min(vals)) - 0.02, 0.5)
    set_labels(ax, f"skip-gram, {dim} dims, {epochs} epoch(s), {corpus.n_raw_tokens:,} tokens", "evaluation",
               "score (ρ or accuracy)")
    nn = ", ".join(w for w, _ in nearest_neighbours(tv.W, tv.vocab, "money", k=5)) if "money" in tv.vocab else "-"
    summary = (f"dim={dim}: WS353 ρ={vals[0]:.3f}, SimLex ρ={vals[1]:.3f}, analogies {vals[2]:.1%} "
               f"({tv.seconds:.1f} s, {tv.words_per_second:,.0f} words/s); money → {nn}")
    return fig, summary
