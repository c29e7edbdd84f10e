"""Lesson 10 (contextual representations): the static word2vec baselines of the word-sense
comparison, and the sense explorer's render function."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from helpers.course.data import SenseExample
from helpers.infra.plotting import BLACK, COLOURS, new_figure, set_labels
from helpers.lib.bert import TinyBert
from helpers.lib.bpe import SPECIALS, BPETokenizer
from helpers.lib.contextual import nearest_sense, word_vectors
from helpers.lib.mlm import encode_sentence


# ---------------------------------------------------------------- static baselines
def train_static_vectors(sentences, dim: int = 100, window: int = 5, epochs: int = 5, min_count: int = 3,
                         seed: int = 0):
    """A static word2vec baseline (gensim skip-gram, negative sampling, one worker so the
    same seed gives the same vectors). Returns gensim KeyedVectors."""
    from gensim.models import Word2Vec  # heavy optional import: loaded only when gensim is used
    if len(sentences) == 0:
        raise ValueError("cannot train word vectors on an empty corpus")
    model = Word2Vec([list(s) for s in sentences], vector_size=dim, window=window, min_count=min_count,
                     sg=1, negative=5, epochs=epochs, workers=1, seed=seed)
    return model.wv


def static_vectors(kv, examples: Sequence[SenseExample], context: bool = False) -> np.ndarray:
    """Static vectors of the examples, (n, d) float64: the target word's own vector (the
    same for every sentence), or with ``context=True`` the mean vector of the other words
    of the sentence (words missing from ``kv`` are skipped)."""
    out = []
    for e in examples:
        if not context:
            if e.word not in kv:
                raise KeyError(f"{e.word!r} is not in the static vocabulary")
            out.append(kv[e.word])
        else:
            ctx = [kv[w] for i, w in enumerate(e.tokens) if i != e.position and w in kv]
            if not ctx:
                raise ValueError(f"no context word of {e.sentence!r} has a static vector")
            out.append(np.mean(ctx, axis=0))
    return np.asarray(out, dtype=np.float64)


# ---------------------------------------------------------------- contextual vectors of the examples
def example_vectors(model: TinyBert, tok: BPETokenizer, examples: Sequence[SenseExample], layer: int = -1,
                    device: str = "cpu") -> np.ndarray:
    """Contextual vectors (n, d) of the examples' target words at ``layer``."""
    return word_vectors(model, tok, [e.tokens for e in examples], [e.position for e in examples], layer, device)


# ---------------------------------------------------------------- the sense explorer
def pca_2d(X: np.ndarray) -> np.ndarray:
    """Project (n, d) onto its first two principal components, (n, 2); signs fixed so that
    the largest-magnitude loading of each component is positive (deterministic)."""
    Xc = np.asarray(X, np.float64) - np.mean(X, axis=0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    Vt = Vt[:2] * np.sign(Vt[:2][np.arange(2), np.argmax(np.abs(Vt[:2]), axis=1)])[:, None]
    return Xc @ Vt.T


def render_sense_explorer(model: TinyBert, tok: BPETokenizer, examples: Sequence[SenseExample],
                          sentence: int = 0, word: str = "bank", layer: int = -1):
    """Explorer: one sentence of ``word``, its attention and its nearest sense.

    Left: the attention of the word's first piece over the sentence at ``layer`` (mean of
    the heads). Right: all contextual vectors of ``word`` at that layer projected by PCA,
    coloured by sense, the chosen sentence starred. The nearest sense is computed from
    the *other* sentences (leave one out). Returns (figure, summary)."""

    exs = [e for e in examples if e.word == word]
    if not exs:
        raise ValueError(f"no examples for the word {word!r}")
    if not 0 <= sentence < len(exs):
        raise ValueError(f"sentence must be in [0, {len(exs)}), got {sentence}")
    L = model.cfg.n_layers
    layer = L if layer == -1 else layer
    if not 1 <= layer <= L:
        raise ValueError(f"layer must be in [1, {L}] (or -1 for the last), got {layer}")
    ex = exs[sentence]
    X = example_vectors(model, tok, exs, layer)
    senses = np.array([e.sense for e in exs])
    others = np.arange(len(exs)) != sentence
    pred, scores = nearest_sense(X[sentence], X[others], senses[others])

    ids, owner = tok.encode_words(list(ex.tokens))
    seq = encode_sentence(tok, ex.tokens, model.cfg.max_len)
    q = 1 + int(np.flatnonzero(owner == ex.position)[0])
    _, attn = model.layers_and_attention(torch.as_tensor(seq[None]))
    a = attn[layer - 1, 0].mean(0)[q].numpy()            # (L,) over keys
    # word-initial pieces without their marker, continuation pieces as '-ing', specials as they are
    pieces = [p if p in SPECIALS else p[1:] if p.startswith("▁") else "-" + p for p in tok.pieces(seq)]

    fig, (ax1, ax2) = new_figure(2, height=3.8)
    colors = [COLOURS["vermillion"] if k == q else COLOURS["blue"] for k in range(len(seq))]
    ax1.bar(np.arange(len(seq)), a, color=colors)
    ax1.set_xticks(np.arange(len(seq)), pieces, rotation=90, fontsize=8)
    set_labels(ax1, f"layer {layer}: where '{word}' (red) looks", "piece of the sentence",
               "attention weight (mean of heads)")
    P = pca_2d(X)
    for s, c, m in zip(sorted(set(senses)), [COLOURS["orange"], COLOURS["green"]], ["o", "s"], strict=False):
        ax2.scatter(*P[senses == s].T, color=c, marker=m, label=s, alpha=0.75)
    ax2.scatter(*P[sentence], marker="*", s=300, color=BLACK, label="this sentence")
    set_labels(ax2, f"contextual vectors of '{word}', layer {layer} (PCA)", "principal component 1",
               "principal component 2")
    ax2.legend()
    top = int(np.argmax(np.where(np.arange(len(seq)) == q, -1, a)))
    cos = ", ".join(f"{s} {v:.2f}" for s, v in scores.items())
    summary = (f"“{ex.sentence}” — labelled: {ex.sense}; nearest sense at layer {layer}: {pred} "
               f"(cosine to centroids: {cos}); '{word}' attends most to '{pieces[top]}' ({a[top]:.2f})")
    return fig, summary
