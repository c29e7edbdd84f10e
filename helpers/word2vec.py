"""word2vec with negative sampling: NumPy layers, a fast PyTorch trainer, and gensim.

Three implementations of the same algorithm (Mikolov et al. 2013) with the same
hyperparameters, so their speed and quality can be compared in one table:

- NumPy layers of the course protocol (``params``, ``grads``, ``forward``, ``backward``):
  :class:`EmbeddingDot`, :class:`SkipGramNS`, :class:`CBOWNS`, trained by :func:`train_numpy`.
- :func:`train_torch`: PyTorch tensors, large batches, gradients written in closed form
  (``sigmoid(s) - t``) and applied with ``index_add_`` to the rows that were used only.
- :func:`train_gensim`: gensim's ``Word2Vec`` (the reference).

Data preparation shared by all three: :func:`prepare_corpus` (vocabulary, ids),
:func:`keep_probabilities` (frequent-word subsampling), :func:`skipgram_pairs` and
:func:`cbow_examples` (dynamic windows, vectorised), :class:`NoiseSampler` (P(w)^0.75).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from helpers.layers import Embedding, Layer, SigmoidCrossEntropy
from helpers.text import Vocab


# ---------------------------------------------------------------- noise distribution
def unigram_noise(counts: Sequence[float], power: float = 0.75) -> np.ndarray:
    """The negative-sampling noise distribution P(w)^power / sum_j P(w_j)^power.

    counts: (V,) non-negative word counts (or probabilities). Returns (V,) float64 summing
    to 1. ``power`` < 1 flattens the distribution: rare words are drawn a little more often.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"counts must be a non-empty 1-D array, got shape {c.shape}")
    if np.any(c < 0) or c.sum() <= 0:
        raise ValueError("counts must be non-negative with a positive total")
    if not 0 <= power <= 1:
        raise ValueError(f"power must lie in [0, 1], got {power}")
    p = (c / c.sum()) ** power
    p[c == 0] = 0.0          # a word never seen is never drawn (0**0 would give 1)
    return p / p.sum()


class NoiseSampler:
    """Draws negative word ids from ``unigram_noise(counts, power)``.

    ``sample(shape)`` -> int64 array of ``shape``; inverse-CDF sampling with the caller's
    ``np.random.Generator`` (pass ``rng`` or reset ``sampler.rng`` to repeat a draw).
    """

    def __init__(self, counts: Sequence[float], power: float = 0.75, rng: np.random.Generator | None = None):
        self.probs = unigram_noise(counts, power)
        self.cdf = np.cumsum(self.probs)
        self.cdf[-1] = 1.0
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def sample(self, shape, rng: np.random.Generator | None = None) -> np.ndarray:
        u = (rng or self.rng).random(shape)
        return np.searchsorted(self.cdf, u, side="right").astype(np.int64)


# ---------------------------------------------------------------- NumPy layers
class EmbeddingDot(Layer):
    """Score of hidden vectors against selected rows of an output matrix.

    W: (V, D). forward(h (N, D), ids (N,) or (N, K) int) -> scores (N,) or (N, K), where
    scores[n, j] = W[ids[n, j]] . h[n]. backward(dscores) fills ``grads`` (accumulating
    repeated ids through :class:`helpers.layers.Embedding`) and returns dh (N, D).
    """

    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator, dtype=np.float64, scale: float = 0.01,
                 scatter: str = "add.at"):
        super().__init__()
        self.embed = Embedding(vocab_size, dim, rng, dtype=dtype, scale=scale, scatter=scatter)
        self.params, self.grads = self.embed.params, self.embed.grads

    def forward(self, h, ids):
        h = np.asarray(h)
        ids = np.asarray(ids)
        if h.ndim != 2 or h.shape[1] != self.params[0].shape[1]:
            raise ValueError(f"h must be (N, {self.params[0].shape[1]}), got shape {h.shape}")
        if ids.shape[0] != h.shape[0] or ids.ndim not in (1, 2):
            raise ValueError(f"ids must be (N,) or (N, K) with N={h.shape[0]}, got shape {ids.shape}")
        rows = self.embed.forward(ids)                       # (N, D) or (N, K, D)
        self.h, self.rows, self.squeeze = h, rows, ids.ndim == 1
        if self.squeeze:
            return np.sum(rows * h, axis=1)
        return np.einsum("nkd,nd->nk", rows, h)

    def backward(self, dout):
        if self.squeeze:
            self.embed.backward(dout[:, None] * self.h)
            return dout[:, None] * self.rows
        self.embed.backward(dout[:, :, None] * self.h[:, None, :])
        return np.einsum("nk,nkd->nd", dout, self.rows)


class _NegativeSamplingLoss(Layer):
    """Shared by skip-gram and CBOW: scores of the true word and k noise words against
    h, sigmoid + binary cross-entropy, summed over the 1 + k terms, averaged over N."""

    def __init__(self, vocab_size, dim, sampler: NoiseSampler, k, rng, dtype, scatter):
        super().__init__()
        if k < 1:
            raise ValueError(f"k (negatives per positive) must be at least 1, got {k}")
        self.sampler, self.k = sampler, k
        self.dot = EmbeddingDot(vocab_size, dim, rng, dtype=dtype, scatter=scatter)
        self.dot.params[0][...] = 0           # word2vec starts the output vectors at zero
        self.loss = SigmoidCrossEntropy()

    def forward(self, h, targets, negatives=None):
        n = len(targets)
        if negatives is None:
            negatives = self.sampler.sample((n, self.k))
        ids = np.concatenate([np.asarray(targets)[:, None], negatives], axis=1)   # (N, 1+k)
        scores = self.dot.forward(h, ids)
        labels = np.zeros_like(scores)
        labels[:, 0] = 1
        # SigmoidCrossEntropy averages over N(1+k) terms; we want the sum over 1+k, mean over N
        return self.loss.forward(scores, labels) * (1 + self.k)

    def backward(self, dout=1.0):
        return self.dot.backward(self.loss.backward(dout * (1 + self.k)))


def _init_tables(model, vocab_size, dim, sampler, k, rng, dtype, scatter) -> None:
    """Give a skip-gram/CBOW model its input table (uniform in +-0.5/D) and its
    negative-sampling output table, and expose both as params/grads."""
    rng = rng if rng is not None else np.random.default_rng(0)
    model.embed = Embedding(vocab_size, dim, rng, dtype=dtype, scatter=scatter)
    model.embed.params[0][...] = (rng.random((vocab_size, dim)) - 0.5) / dim
    model.ns = _NegativeSamplingLoss(vocab_size, dim, sampler, k, rng, dtype, scatter)
    model.params = [model.embed.params[0], model.ns.dot.params[0]]
    model.grads = [model.embed.grads[0], model.ns.dot.grads[0]]


class SkipGramNS(Layer):
    """Skip-gram with negative sampling, NumPy.

    params = [W_in (V, D), W_out (V, D)]. forward(centers (N,) int, contexts (N,) int,
    negatives (N, k) int or None) -> mean over pairs of
    -log s(u_o . v_c) - sum_k log s(-u_k . v_c). Negatives are drawn from ``sampler``
    when not given. backward(dout=1.0) fills ``grads``; ids have no gradient (returns None).
    W_in starts uniform in +-0.5/D, W_out at zero (as in word2vec.c and gensim).
    ``scatter`` is passed to :class:`helpers.layers.Embedding` ('sparse' is faster).
    """

    def __init__(self, vocab_size: int, dim: int, sampler: NoiseSampler, k: int = 5,
                 rng: np.random.Generator | None = None, dtype=np.float64, scatter: str = "add.at"):
        super().__init__()
        _init_tables(self, vocab_size, dim, sampler, k, rng, dtype, scatter)

    def forward(self, centers, contexts, negatives=None):
        centers, contexts = np.asarray(centers), np.asarray(contexts)
        if centers.ndim != 1 or centers.shape != contexts.shape:
            raise ValueError(f"centers and contexts must be 1-D of equal length, got {centers.shape} and {contexts.shape}")
        h = self.embed.forward(centers)                     # (N, D)
        return self.ns.forward(h, contexts, negatives)

    def backward(self, dout=1.0):
        self.embed.backward(self.ns.backward(dout))
        return None


class CBOWNS(Layer):
    """CBOW with negative sampling, NumPy: the mean of the context vectors predicts the centre.

    params = [W_in (V, D), W_out (V, D)]. forward(contexts (N, C) int, centers (N,) int,
    mask (N, C) 0/1 or None, negatives (N, k) or None) -> mean loss over examples.
    ``mask`` marks real context words (rows may have fewer than C, e.g. at sentence ends);
    masked-out ids must still be valid (any id, e.g. 0). backward(dout=1.0) fills grads.

    ``word2vec_update=True`` makes backward follow word2vec.c and gensim instead of the exact
    gradient: every context word receives the *full* error of the mean vector h, i.e. the
    true gradient times the number of context words (used for training, never gradient-checked).
    """

    def __init__(self, vocab_size: int, dim: int, sampler: NoiseSampler, k: int = 5,
                 rng: np.random.Generator | None = None, dtype=np.float64, scatter: str = "add.at",
                 word2vec_update: bool = False):
        super().__init__()
        _init_tables(self, vocab_size, dim, sampler, k, rng, dtype, scatter)
        self.word2vec_update = word2vec_update

    def forward(self, contexts, centers, mask=None, negatives=None):
        contexts = np.asarray(contexts)
        if contexts.ndim != 2 or contexts.shape[0] != len(centers):
            raise ValueError(f"contexts must be (N, C) with N={len(centers)}, got shape {contexts.shape}")
        mask = np.ones(contexts.shape) if mask is None else np.asarray(mask, dtype=np.float64)
        if mask.shape != contexts.shape:
            raise ValueError(f"mask shape {mask.shape} != contexts shape {contexts.shape}")
        count = mask.sum(axis=1, keepdims=True)
        if np.any(count == 0):
            raise ValueError("every CBOW example needs at least one context word (a mask row is all zero)")
        self.w = (mask / count)[:, :, None].astype(self.params[0].dtype)   # (N, C, 1) averaging weights
        self.mask = mask[:, :, None].astype(self.params[0].dtype)
        h = np.sum(self.embed.forward(contexts) * self.w, axis=1)          # (N, D)
        return self.ns.forward(h, centers, negatives)

    def backward(self, dout=1.0):
        dh = self.ns.backward(dout)
        self.embed.backward(dh[:, None, :] * (self.mask if self.word2vec_update else self.w))
        return None


# ---------------------------------------------------------------- the full softmax, for timing
def full_softmax_step(W_in: np.ndarray, W_out: np.ndarray, centers: np.ndarray, contexts: np.ndarray) -> float:
    """One forward+backward of the full-softmax skip-gram (no update); returns the loss.
    Cost O(N V D): every word's output vector takes part. Used to time it against NS."""
    from helpers.layers import SoftmaxCrossEntropy
    h = W_in[centers]
    logits = h @ W_out.T                               # (N, V): the bottleneck
    loss_layer = SoftmaxCrossEntropy()
    loss = loss_layer.forward(logits, contexts)
    d = loss_layer.backward()
    _ = d.T @ h, d @ W_out                              # dW_out, dh
    return loss


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


# ---------------------------------------------------------------- data
@dataclass
class Corpus:
    """A tokenised corpus as one id stream.

    vocab : Vocab without special tokens (words with count >= min_count)
    ids : (T,) int64 ids of the in-vocabulary tokens, sentences concatenated
    sentence : (T,) int64 sentence number of every token (windows never cross sentences)
    n_raw_tokens : tokens before dropping rare words (the numerator of words/second)
    """

    vocab: Vocab
    ids: np.ndarray
    sentence: np.ndarray
    n_raw_tokens: int
    sentences: tuple = field(repr=False, default=())


def prepare_corpus(sentences: Sequence[Sequence[str]], min_count: int = 5) -> Corpus:
    """Build the vocabulary (count >= ``min_count``, no specials) and the id stream."""
    if not sentences or not any(len(s) for s in sentences):
        raise ValueError("cannot train word vectors on an empty corpus (no tokens)")
    vocab = Vocab.build((t for s in sentences for t in s), min_count=min_count, specials=())
    ids, sid, n_raw = [], [], 0
    stoi = vocab.stoi
    for i, s in enumerate(sentences):
        n_raw += len(s)
        kept = [stoi[t] for t in s if t in stoi]
        ids.extend(kept)
        sid.extend([i] * len(kept))
    return Corpus(vocab, np.array(ids, np.int64), np.array(sid, np.int64), n_raw, tuple(sentences))


def keep_probabilities(counts: np.ndarray, sample: float = 1e-3) -> np.ndarray:
    """Probability of keeping each occurrence of a word when subsampling frequent words,
    gensim's formula: (sqrt(c / t) + 1) t / c with t = sample * total, capped at 1.
    ``sample=0`` keeps everything. Returns (V,) float64."""
    counts = np.asarray(counts, dtype=np.float64)
    if sample <= 0:
        return np.ones_like(counts)
    t = sample * counts.sum()
    with np.errstate(divide="ignore"):
        p = (np.sqrt(counts / t) + 1) * t / counts
    return np.minimum(p, 1.0)


def _subsample(corpus: Corpus, sample: float, rng: np.random.Generator):
    keep = rng.random(len(corpus.ids)) < keep_probabilities(corpus.vocab.counts, sample)[corpus.ids]
    return corpus.ids[keep], corpus.sentence[keep]


def skipgram_pairs(ids: np.ndarray, sentence: np.ndarray, window: int, rng: np.random.Generator):
    """All (centre, context) pairs with word2vec's dynamic window: each centre draws
    b ~ U{1..window} and pairs with the words at distance <= b in the same sentence.
    Returns (centers (P,), contexts (P,)) int64, grouped by offset (shuffle before SGD)."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    b = rng.integers(1, window + 1, size=len(ids))
    cs, os_ = [], []
    for o in range(1, window + 1):
        same = sentence[o:] == sentence[:-o]
        right = same & (b[:-o] >= o)            # centre i, context i + o
        left = same & (b[o:] >= o)              # centre i + o, context i
        cs += [ids[:-o][right], ids[o:][left]]
        os_ += [ids[o:][right], ids[:-o][left]]
    return np.concatenate(cs), np.concatenate(os_)


def cbow_examples(ids: np.ndarray, sentence: np.ndarray, window: int, rng: np.random.Generator):
    """CBOW examples with the dynamic window: (contexts (N, 2*window) int64, mask (N, 2*window)
    bool, centers (N,) int64); centres without any context word are dropped."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    n = len(ids)
    b = rng.integers(1, window + 1, size=n)
    ctx = np.zeros((n, 2 * window), np.int64)
    mask = np.zeros((n, 2 * window), bool)
    for o in range(1, window + 1):
        same = sentence[o:] == sentence[:-o]
        right = same & (b[:-o] >= o)            # centre i sees i + o
        ctx[:-o, o - 1] = np.where(right, ids[o:], 0)
        mask[:-o, o - 1] = right
        left = same & (b[o:] >= o)              # centre i + o sees i
        ctx[o:, window + o - 1] = np.where(left, ids[:-o], 0)
        mask[o:, window + o - 1] = left
    has = mask.any(axis=1)
    return ctx[has], mask[has], ids[has]


# ---------------------------------------------------------------- training results
@dataclass
class TrainedVectors:
    """What a training run produced: W (input vectors), C (output vectors), the vocabulary,
    wall-clock seconds, words per second (raw corpus tokens x epochs / seconds), the
    mean loss of each epoch (empty for gensim) and the hyperparameters."""

    W: np.ndarray
    C: np.ndarray
    vocab: Vocab
    seconds: float
    words_per_second: float
    epoch_loss: list = field(default_factory=list)
    config: dict = field(default_factory=dict)

    def vectors(self, which: str = "W") -> np.ndarray:
        """'W' (input vectors, the usual choice) or 'W+C' ((W + C) / 2)."""
        if which == "W":
            return self.W
        if which in ("W+C", "avg"):
            return (self.W + self.C) / 2
        raise ValueError(f"which must be 'W' or 'W+C', got {which!r}")


def _lr_schedule(alpha, min_alpha, done, total):
    return alpha - (alpha - min_alpha) * min(done / total, 1.0)


def train_numpy(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5, negative: int = 5,
                sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025, min_alpha: float = 1e-4,
                batch_size: int = 2048, seed: int = 0, power: float = 0.75, progress: bool = True) -> TrainedVectors:
    """Train :class:`SkipGramNS` or :class:`CBOWNS` (float32) by SGD on ``corpus``.

    Each step sums the per-example gradients (as word2vec's one-example-at-a-time SGD
    does), so the learning rate is ``alpha`` per example, decaying linearly to
    ``min_alpha``. The progress bar shows words/s.
    """
    if model not in ("skipgram", "cbow"):
        raise ValueError(f"model must be 'skipgram' or 'cbow', got {model!r}")
    rng = np.random.default_rng(seed)
    V = len(corpus.vocab)
    sampler = NoiseSampler(corpus.vocab.counts, power, rng=rng)
    cls = SkipGramNS if model == "skipgram" else CBOWNS
    extra = {"word2vec_update": True} if model == "cbow" else {}
    # scatter='rows': each step updates only the rows the batch used (same result as the dense
    # update, whose other rows get zero gradient, without touching all V rows twice a step)
    net = cls(V, dim, sampler, k=negative, rng=rng, dtype=np.float32, scatter="rows", **extra)
    W_in, W_out = net.params
    tables = (net.embed, net.ns.dot.embed)
    total_words = corpus.n_raw_tokens * epochs
    epoch_loss, t0 = [], time.perf_counter()
    bar = tqdm(total=total_words, desc=f"NumPy {model}", unit="word", unit_scale=True, disable=not progress, leave=False)
    for epoch in range(epochs):
        ids, sent = _subsample(corpus, sample, rng)
        if model == "skipgram":
            c, o = skipgram_pairs(ids, sent, window, rng)
            order = rng.permutation(len(c))
            data = (c[order], o[order])
        else:
            ctx, mask, cen = cbow_examples(ids, sent, window, rng)
            order = rng.permutation(len(cen))
            data = (ctx[order], cen[order], mask[order])
        n = len(data[0])
        losses = []
        words_per_example = corpus.n_raw_tokens / n
        for start in range(0, n, batch_size):
            sl = slice(start, start + batch_size)
            lr = _lr_schedule(alpha, min_alpha, epoch * n + start, epochs * n)
            if model == "skipgram":
                loss = net.forward(data[0][sl], data[1][sl])
            else:
                loss = net.forward(data[0][sl], data[1][sl], mask=data[2][sl])
            net.backward()
            m = len(data[1][sl])
            # sum of per-example gradients = m * mean gradient
            for table in tables:
                rows, grad = table.row_grad
                table.params[0][rows] -= (lr * m) * grad
            losses.append(loss)
            bar.update(int(round(m * words_per_example)))
            if len(losses) % 50 == 0:
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}", lr=f"{lr:.4f}")
        epoch_loss.append(float(np.mean(losses)))
    bar.close()
    secs = time.perf_counter() - t0
    cfg = dict(impl="numpy", model=model, dim=dim, window=window, negative=negative, sample=sample,
               epochs=epochs, alpha=alpha, batch_size=batch_size, seed=seed)
    return TrainedVectors(W_in.copy(), W_out.copy(), corpus.vocab, secs, total_words / secs, epoch_loss, cfg)


def _torch_batches(W, C, table, labels, inp, tgt, msk, starts, batch_size, lr_of, gen, negative, record):
    """Run SGD on the batches beginning at ``starts`` (one worker's share of an epoch)."""
    dim = W.shape[1]
    for j, start in enumerate(starts):
        lr = lr_of(start)
        x, t = inp[start:start + batch_size], tgt[start:start + batch_size]
        m = len(t)
        neg = table[torch.randint(len(table), (m, negative), generator=gen, device=W.device)]
        targets = torch.cat([t[:, None], neg], dim=1).reshape(-1)            # (m(1+k),)
        if msk is None:
            h = W.index_select(0, x)                                         # (m, D)
        else:
            w = msk[start:start + batch_size]
            w = w / w.sum(dim=1, keepdim=True)                               # (m, 2win) mean weights
            h = torch.bmm(w[:, None, :], W.index_select(0, x.reshape(-1)).view(m, -1, dim)).squeeze(1)
        u = C.index_select(0, targets).view(m, 1 + negative, dim)            # (m, 1+k, D)
        s = (u * h[:, None, :]).sum(2)                                       # (m, 1+k) scores
        g = torch.sigmoid(s) - labels                                        # dL/ds = y - t
        g[:, 1:] *= (neg != t[:, None])                                      # a negative equal to the target is skipped
        if record is not None and j % 20 == 0:
            # loss = -log s(s_0) - sum_j log s(-s_j), on every 20th batch (for the bar)
            record(float((F.softplus(-s[:, 0]) + F.softplus(s[:, 1:]).sum(1)).mean()), lr)
        g *= -lr
        dh = torch.bmm(g[:, None, :], u).squeeze(1)                          # (m, D) = sum_j g_j u_j
        C.index_add_(0, targets, (g[:, :, None] * h[:, None, :]).view(-1, dim))   # du_j = g_j h
        if msk is None:
            W.index_add_(0, x, dh)
        else:
            # word2vec.c / gensim: each context word gets the full error of the mean (not dh / count)
            W.index_add_(0, x.reshape(-1), (msk[start:start + batch_size, :, None] * dh[:, None, :]).view(-1, dim))
        yield m


def train_torch(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5, negative: int = 5,
                sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025, min_alpha: float = 1e-4,
                batch_size: int = 1024, seed: int = 0, power: float = 0.75, workers: int = 1,
                device: str | None = None, progress: bool = True) -> TrainedVectors:
    """Fast skip-gram / CBOW with negative sampling in PyTorch.

    No autograd: for scores s = u . h the gradient of the loss is (sigmoid(s) - t), so
    dh = sum_j (y_j - t_j) u_j and du_j = (y_j - t_j) h; both are applied with
    ``index_add_`` to the rows that were used (repeated ids accumulate). For CBOW each context
    word receives the full error of the mean vector, as in word2vec.c and gensim. Gradients are
    summed over the batch (as word2vec's one-pair-at-a-time SGD would), the learning rate
    decays linearly from ``alpha`` to ``min_alpha``. Negatives come from a 10^6-entry
    unigram^power table (as in word2vec.c). Each op runs on one CPU thread; ``workers`` > 1
    runs that many Python threads on interleaved batches of the same tensors without locks
    ("Hogwild", like gensim's workers) — faster, no longer bit-for-bit reproducible.
    ``device``: None/'cpu' (default), 'cuda' or 'auto'. The progress bar shows words/s.
    """
    from concurrent.futures import ThreadPoolExecutor

    from helpers.seeding import choose_device
    if model not in ("skipgram", "cbow"):
        raise ValueError(f"model must be 'skipgram' or 'cbow', got {model!r}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    dev = choose_device(device)
    rng = np.random.default_rng(seed)
    gens = []
    for i in range(workers):
        g = torch.Generator(device=dev)
        g.manual_seed(seed + 1000 * i)
        gens.append(g)
    V = len(corpus.vocab)
    W = torch.from_numpy(((rng.random((V, dim)) - 0.5) / dim).astype(np.float32)).to(dev)
    C = torch.zeros((V, dim), dtype=torch.float32, device=dev)
    probs = unigram_noise(corpus.vocab.counts, power)
    reps = np.maximum(np.round(probs * 1_000_000), probs > 0).astype(np.int64)   # every word at least once
    table = torch.from_numpy(np.repeat(np.arange(V), reps)).to(dev)
    labels = torch.zeros(1 + negative, device=dev)
    labels[0] = 1
    total_words = corpus.n_raw_tokens * epochs
    epoch_loss, t0 = [], time.perf_counter()
    bar = tqdm(total=total_words, desc=f"PyTorch {model}", unit="word", unit_scale=True, disable=not progress, leave=False)
    threads = torch.get_num_threads()
    if dev.type == "cpu":
        # one thread per op: the ops are small and memory-bound, and OpenMP threads
        # spin-waiting on a busy 2-core machine made each op 5-10x slower when we measured
        torch.set_num_threads(1)
    pool = ThreadPoolExecutor(workers) if workers > 1 else None
    try:
        with torch.no_grad():
            for epoch in range(epochs):
                ids, sent = _subsample(corpus, sample, rng)
                if model == "skipgram":
                    c, o = skipgram_pairs(ids, sent, window, rng)
                    order = rng.permutation(len(c))
                    inp, tgt, msk = torch.from_numpy(c[order]).to(dev), torch.from_numpy(o[order]).to(dev), None
                else:
                    ctx, mask, cen = cbow_examples(ids, sent, window, rng)
                    order = rng.permutation(len(cen))
                    inp, tgt = torch.from_numpy(ctx[order]).to(dev), torch.from_numpy(cen[order]).to(dev)
                    msk = torch.from_numpy(mask[order]).to(dev, torch.float32)
                n = len(tgt)
                words_per_example = corpus.n_raw_tokens / n
                losses = []

                def record(loss, lr, losses=losses):
                    losses.append(loss)
                    bar.set_postfix(loss=f"{np.mean(losses):.3f}", lr=f"{lr:.4f}")

                def lr_of(start, epoch=epoch, n=n):
                    return _lr_schedule(alpha, min_alpha, epoch * n + start, epochs * n)

                starts = list(range(0, n, batch_size))

                def work(i, data=(inp, tgt, msk), starts=starts, wpe=words_per_example, record=record):
                    for m in _torch_batches(W, C, table, labels, *data, starts[i::workers], batch_size,
                                            lr_of, gens[i], negative, record if i == 0 else None):
                        bar.update(int(round(m * wpe)))

                if pool is None:
                    work(0)
                else:
                    list(pool.map(work, range(workers)))
                epoch_loss.append(float(np.mean(losses)) if losses else float("nan"))
    finally:
        torch.set_num_threads(threads)
        if pool is not None:
            pool.shutdown()
    bar.close()
    secs = time.perf_counter() - t0
    cfg = dict(impl="torch", model=model, dim=dim, window=window, negative=negative, sample=sample,
               epochs=epochs, alpha=alpha, batch_size=batch_size, seed=seed, workers=workers, device=str(dev))
    return TrainedVectors(W.cpu().numpy(), C.cpu().numpy(), corpus.vocab, secs, total_words / secs, epoch_loss, cfg)


def train_gensim(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5, negative: int = 5,
                 sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025, min_alpha: float = 1e-4,
                 seed: int = 0, workers: int = 2, min_count: int = 5) -> TrainedVectors:
    """gensim's ``Word2Vec`` on the same sentences and hyperparameters (the reference).
    The vectors are re-ordered to ``corpus.vocab`` so all three share one vocabulary."""
    from gensim.models import Word2Vec
    if model not in ("skipgram", "cbow"):
        raise ValueError(f"model must be 'skipgram' or 'cbow', got {model!r}")
    sents = [list(s) for s in corpus.sentences]
    t0 = time.perf_counter()
    m = Word2Vec(sents, vector_size=dim, window=window, negative=negative, sample=sample, epochs=epochs,
                 alpha=alpha, min_alpha=min_alpha, sg=int(model == "skipgram"), hs=0, workers=workers,
                 seed=seed, min_count=min_count)
    secs = time.perf_counter() - t0
    order = [m.wv.key_to_index[w] for w in corpus.vocab.itos]
    cfg = dict(impl="gensim", model=model, dim=dim, window=window, negative=negative, sample=sample,
               epochs=epochs, alpha=alpha, workers=workers, seed=seed)
    return TrainedVectors(m.wv.vectors[order].copy(), m.syn1neg[order].copy(), corpus.vocab, secs,
                          corpus.n_raw_tokens * epochs / secs, [], cfg)


# ---------------------------------------------------------------- the course's trained vectors
COURSE_CONFIG = dict(dim=100, window=5, negative=5, sample=1e-3, epochs=5, alpha=0.025, min_alpha=1e-4, seed=0)
COURSE_METHODS = ("numpy-skipgram", "numpy-cbow", "torch-skipgram", "torch-cbow", "gensim-skipgram", "gensim-cbow")
_CACHE_VERSION = "v1-" + "-".join(f"{k}{v}" for k, v in COURSE_CONFIG.items())


def course_corpus() -> Corpus:
    """The shared modern-English corpus (helpers.corpus) prepared with min_count=5."""
    global _COURSE_CORPUS
    try:
        return _COURSE_CORPUS
    except NameError:
        from helpers.corpus import modern_english_sentences
        _COURSE_CORPUS = prepare_corpus(modern_english_sentences(), min_count=5)
        return _COURSE_CORPUS


def course_vectors(name: str, progress: bool = True) -> TrainedVectors:
    """Vectors of ``name`` (one of COURSE_METHODS: '<numpy|torch|gensim>-<skipgram|cbow>')
    trained on the course corpus with COURSE_CONFIG (100 dims, window 5, 5 negatives,
    subsampling 1e-3, 5 epochs, gensim with 2 workers). Trained once and cached
    (helpers.cache); a missing cache is rebuilt, which says so and takes 10-60 s per model
    on an idle 2-core machine. ``seconds`` and ``words_per_second`` are from that run."""
    from helpers.cache import cached
    key = course_vectors_key(name)   # checks the name
    impl, model = name.split("-")

    def build():
        corpus = course_corpus()
        if impl == "numpy":
            return train_numpy(corpus, model, progress=progress, **COURSE_CONFIG)
        if impl == "torch":
            return train_torch(corpus, model, progress=progress, **COURSE_CONFIG)
        return train_gensim(corpus, model, workers=2, **COURSE_CONFIG)

    return cached(*key, build)


def course_vectors_key(name: str) -> tuple[str, str]:
    """The cache entry (name, version) of :func:`course_vectors` for ``name``."""
    if name not in COURSE_METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {COURSE_METHODS}")
    # '-cbow2': the CBOW runs were rebuilt when their update rule changed to word2vec's
    return f"word2vec-{name}", _CACHE_VERSION + ("-cbow2" if name.endswith("cbow") else "")


def dimension_render(dim: int = 50, fraction: float = 0.5, epochs: int = 1, seed: int = 0):
    """Explorer: train the PyTorch skip-gram with ``dim`` dimensions on the first
    ``fraction`` of the course corpus for ``epochs`` epochs and plot its WordSim-353,
    SimLex-999 and analogy (3CosAdd) scores. Returns (figure, summary)."""
    from helpers.corpus import modern_english_sentences
    from helpers.data import load_analogies, load_word_similarity
    from helpers.evaluation import analogy_accuracy, nearest_neighbours, similarity_correlation
    from helpers.plotting import new_figure
    sents = modern_english_sentences()
    corpus = prepare_corpus(sents[:max(1, int(len(sents) * fraction))], min_count=5)
    cfg = {**COURSE_CONFIG, "dim": int(dim), "epochs": int(epochs), "seed": seed}
    tv = train_torch(corpus, "skipgram", progress=False, **cfg)
    ws = similarity_correlation(tv.W, tv.vocab, load_word_similarity("wordsim353"), "WordSim-353")
    sl = similarity_correlation(tv.W, tv.vocab, load_word_similarity("simlex999"), "SimLex-999")
    an = analogy_accuracy(tv.W, tv.vocab, load_analogies(), "add")
    fig, ax = new_figure(width=6, height=3.4)
    names = ["WordSim-353 ρ", "SimLex-999 ρ", "analogy acc."]
    vals = [ws.rho or 0.0, sl.rho or 0.0, an.accuracy or 0.0]
    bars = ax.bar(names, vals, color=["tab:blue", "tab:orange", "tab:green"])
    for b, v in zip(bars, vals, strict=True):
        ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.3f}", ha="center", va="bottom")
    ax.set_ylim(min(0, min(vals)) - 0.02, 0.5)
    ax.set_ylabel("score (ρ or accuracy)")
    ax.set_title(f"skip-gram, {dim} dims, {epochs} epoch(s), {corpus.n_raw_tokens:,} tokens")
    nn = ", ".join(w for w, _ in nearest_neighbours(tv.W, tv.vocab, "money", k=5)) if "money" in tv.vocab else "-"
    summary = (f"dim={dim}: WS353 ρ={vals[0]:.3f}, SimLex ρ={vals[1]:.3f}, analogies {vals[2]:.1%} "
               f"({tv.seconds:.1f} s, {tv.words_per_second:,.0f} words/s); money → {nn}")
    return fig, summary
