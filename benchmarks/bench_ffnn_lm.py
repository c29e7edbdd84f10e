"""Lesson 01 at a larger budget: the feed-forward LM trained for more epochs vs Kneser-Ney,
and the NumPy MLP's training speed vs scikit-learn's MLPClassifier on the same features.

    python benchmarks/bench_ffnn_lm.py [epochs]

Same data, vocabulary, model and seed as the notebook; prints validation/test perplexity per
epoch beside the count model's, and speed as a ratio measured in this run.
"""
import sys
import time
import warnings

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from helpers.course.bbc_topics import bbc_topic_data
from helpers.course.data import load_wikipedia
from helpers.lessons.lesson01 import evaluate, featurize, train_classifier
from helpers.lib.batching import minibatch_indices, ngram_windows
from helpers.lib.language_models import perplexity
from helpers.lib.ngram import KneserNeyLM
from helpers.lib.text import Vocab, tokenize
from training.ffnn_lm import FeedForwardLM, mean_nll, seeded_init


def language_models(epochs: int) -> None:
    tokens = [
        t
        for text in load_wikipedia().values()
        for t in tokenize(text, punctuation=True) + ["<eos>"]
    ]
    a, b = int(0.9 * len(tokens)), int(0.95 * len(tokens))
    vocab = Vocab.build(tokens[:a], max_size=2000, specials=("<unk>",))
    ids = vocab.encode(tokens)
    tr, va, te = ids[:a], ids[a:b], ids[b:]
    t0 = time.perf_counter()
    kn = KneserNeyLM(4, len(vocab)).fit(tr)
    kn_s = time.perf_counter() - t0
    print(
        f"Kneser-Ney 4-gram: valid ppl {perplexity(kn.mean_nll(va)):.1f}, test ppl "
        f"{perplexity(kn.mean_nll(te)):.1f}, fit {kn_s:.1f} s"
    )
    (Xtr, ytr), (Xva, yva), (Xte, yte) = (ngram_windows(s, 3) for s in (tr, va, te))
    lm = seeded_init(FeedForwardLM(len(vocab), 3, 32, 64), 0)
    opt = torch.optim.Adam(lm.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        for idx in minibatch_indices(len(ytr), 256, rng):
            loss = torch.nn.functional.cross_entropy(
                lm(torch.from_numpy(Xtr[idx])), torch.from_numpy(ytr[idx])
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(
            f"feed-forward LM epoch {epoch}: valid ppl {perplexity(mean_nll(lm, Xva, yva)):.1f}, "
            f"test ppl {perplexity(mean_nll(lm, Xte, yte)):.1f}, {time.perf_counter() - t0:.0f} s "
            "so far",
            flush=True,
        )


def classifier_speed() -> None:
    data = bbc_topic_data(0)
    Xtr, Xva, Xte = featurize(data, "counts", 5000)
    ytr, yva, yte = data.labels[data.train], data.labels[data.valid], data.labels[data.test]
    t0 = time.perf_counter()
    net, _ = train_classifier(Xtr, ytr, Xva, yva, epochs=4)
    ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sk = MLPClassifier(
            hidden_layer_sizes=(64,), activation="tanh", max_iter=4, random_state=0
        ).fit(Xtr, ytr)
    theirs = time.perf_counter() - t0
    print(
        f"BBC topic MLP, 4 epochs: ours {ours:.2f} s (test acc {evaluate(net, Xte, yte)[1]:.3f}), "
        f"scikit-learn {theirs:.2f} s (test acc {sk.score(Xte, yte):.3f}); ours/scikit-learn time "
        f"= {ours / theirs:.1f}x"
    )


if __name__ == "__main__":
    classifier_speed()
    language_models(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
