"""Training word2vec with negative sampling: the corpus, and three trainers.

Three implementations of the same algorithm (Mikolov et al. 2013) with the same
hyperparameters, so their speed and quality can be compared in one table:

- :func:`train_numpy`: the NumPy layers of :mod:`helpers.lib.negative_sampling`
  (:class:`SkipGramNS`, :class:`CBOWNS`, the course protocol), trained by SGD.
- :func:`train_torch`: PyTorch tensors, large batches, gradients written in closed form
  (``sigmoid(s) - t``) and applied with ``index_add_`` to the rows that were used only.
- :func:`train_gensim`: gensim's ``Word2Vec`` (the reference).

Data preparation shared by all three: :func:`prepare_corpus` (vocabulary, ids),
:func:`keep_probabilities` (frequent-word subsampling), :func:`skipgram_pairs` and
:func:`cbow_examples` (dynamic windows, vectorised), :class:`NoiseSampler` (P(w)^0.75).
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from helpers.infra.artifacts import TreeCodec, prefixed, unprefixed
from helpers.infra.progress import progress_bar
from helpers.infra.seeding import choose_device
from helpers.lib.checks import check_integers, check_whole
from helpers.lib.negative_sampling import (
    CBOWNS,
    NoiseSampler,
    SkipGramNS,
    unigram_table,
)
from helpers.lib.text import Vocab, check_token_lists


# ---------------------------------------------------------------- data
@dataclass
class Corpus:
    """A tokenised corpus as one id stream. Taught in lesson 07, section 7.

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

    def sentence_ids(self) -> list[np.ndarray]:
        """The ids of each sentence, [(n_i,) int64 arrays]: ``ids`` cut where ``sentence`` changes."""
        return np.split(self.ids, np.flatnonzero(np.diff(self.sentence)) + 1)


def prepare_corpus(sentences: Sequence[Sequence[str]], min_count: int = 5) -> Corpus:
    """Build the vocabulary (count >= ``min_count``, no specials) and the id stream. Taught in lesson 07, section 7."""
    check_token_lists(sentences, "sentences", "prepare_corpus")
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
    """Subsampling of frequent words: the probability of keeping each occurrence. Taught in lesson 07, section 7.

    Probability of keeping each occurrence of a word when subsampling frequent words,
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


def _check_stream(ids, sentence, window, where: str):
    """The id stream and its sentence numbers as 1-D integer arrays of one length; window >= 1."""
    check_whole(window, "window", where, minimum=1)
    ids = check_integers(ids, "ids", where, "integer word ids")
    sentence = check_integers(sentence, "sentence", where, "integer sentence numbers")
    if ids.ndim != 1 or ids.shape != sentence.shape:
        raise ValueError(f"{where}: ids and sentence must be 1-D of one length, got {ids.shape} and {sentence.shape}")
    return ids, sentence


def skipgram_pairs(ids: np.ndarray, sentence: np.ndarray, window: int, rng: np.random.Generator,
                   dynamic: bool = True):
    """Skip-gram (centre, context) pairs with the dynamic window. Taught in lesson 07, section 7.

    All (centre, context) pairs with word2vec's dynamic window: each centre draws
    b ~ U{1..window} and pairs with the words at distance <= b in the same sentence (a word
    at distance d is used with probability (window - d + 1) / window). ``dynamic=False``: the
    fixed window, b = window for every centre (the draw still happens, so the random stream
    that follows is the same). Returns (centers (P,), contexts (P,)) int64, grouped by offset
    (shuffle before SGD)."""
    ids, sentence = _check_stream(ids, sentence, window, "skipgram_pairs")
    b = rng.integers(1, window + 1, size=len(ids))
    if not dynamic:
        b[:] = window
    cs, os_ = [], []
    for o in range(1, window + 1):
        same = sentence[o:] == sentence[:-o]
        right = same & (b[:-o] >= o)            # centre i, context i + o
        left = same & (b[o:] >= o)              # centre i + o, context i
        cs += [ids[:-o][right], ids[o:][left]]
        os_ += [ids[o:][right], ids[:-o][left]]
    return np.concatenate(cs), np.concatenate(os_)


def cbow_examples(ids: np.ndarray, sentence: np.ndarray, window: int, rng: np.random.Generator):
    """CBOW examples (contexts, mask, centres) with the dynamic window. Taught in lesson 07, section 7.

    CBOW examples with the dynamic window: (contexts (N, 2*window) int64, mask (N, 2*window)
    bool, centers (N,) int64); centres without any context word are dropped."""
    ids, sentence = _check_stream(ids, sentence, window, "cbow_examples")
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
    """What a word2vec training run produced. Taught in lesson 07, section 7.

    What a training run produced: W (input vectors), C (output vectors), the vocabulary,
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

    def to_arrays(self) -> tuple[dict, dict]:
        """(arrays, meta) for :mod:`helpers.infra.artifacts` (the cache stores it without pickle)."""
        arrays, meta = TreeCodec.to_arrays({k: getattr(self, k) for k in _TV_FIELDS})
        vocab_arrays, meta["vocab"] = self.vocab.to_arrays()
        return {**arrays, **prefixed(vocab_arrays, "vocab/")}, meta

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "TrainedVectors":
        """The vectors stored by :meth:`to_arrays`."""
        vocab = Vocab.from_arrays(unprefixed(arrays, "vocab/"), meta["vocab"])
        return cls(vocab=vocab, **TreeCodec.from_arrays(arrays, meta))


_TV_FIELDS = ("W", "C", "seconds", "words_per_second", "epoch_loss", "config")


def _check_some_examples(n: int, corpus: Corpus, sample: float, window: int, epoch: int, model: str,
                         where: str) -> None:
    """Raise a clear error when an epoch has no training example (a tiny corpus): every later
    quantity (the learning-rate schedule, words per example) would divide by zero."""
    if n > 0:
        return
    what = "(centre, context) pairs" if model == "skipgram" else "CBOW examples (a centre with a context word)"
    cause = (f"after subsampling frequent words (sample={sample:g}) " if sample > 0 else "") + \
        f"no two words of one sentence lie within the window ({window})"
    fix = ("pass sample=0 to keep every occurrence (subsampling drops most of a word that makes up a large share of "
           "a tiny corpus), or give more text" if sample > 0 else "give more text: sentences of at least two words")
    raise ValueError(f"{where}: epoch {epoch} has no training {what}: {cause}. The corpus has "
                     f"{len(corpus.ids)} in-vocabulary tokens in {len(np.unique(corpus.sentence))} sentences and "
                     f"{len(corpus.vocab)} word types; {fix}")


def _lr_schedule(alpha, min_alpha, done, total):
    return alpha - (alpha - min_alpha) * min(done / total, 1.0)


def train_numpy(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5, negative: int = 5,
                sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025, min_alpha: float = 1e-4,
                batch_size: int = 2048, seed: int = 0, power: float = 0.75, progress: bool = True,
                epoch_end=None) -> TrainedVectors:
    """Train :class:`SkipGramNS` or :class:`CBOWNS` (float32) by SGD on ``corpus``. Taught in lesson 07, section 7.

    Each step sums the per-example gradients (as word2vec's one-example-at-a-time SGD
    does), so the learning rate is ``alpha`` per example, decaying linearly to
    ``min_alpha``. Negatives come from a 10^6-slot :func:`unigram_table` (as in word2vec.c),
    and each step updates only the rows the batch used. The progress bar shows words/s.
    Deterministic: the same seed gives bit-identical vectors.
    ``epoch_end(epoch, W, C, mean_loss) -> bool``, if given, runs after every epoch (1, 2, ...;
    W and C are the live arrays: copy what you keep) outside the timed training; returning
    True stops training (early stopping; the schedule stays that of ``epochs``).
    """
    if model not in ("skipgram", "cbow"):
        raise ValueError(f"model must be 'skipgram' or 'cbow', got {model!r}")
    rng = np.random.default_rng(seed)
    V = len(corpus.vocab)
    sampler = NoiseSampler(corpus.vocab.counts, power, rng=rng)    # the model's own, unused: we give the negatives
    table = unigram_table(corpus.vocab.counts, power)    # drawn from here, several times faster than the sampler
    cls = SkipGramNS if model == "skipgram" else CBOWNS
    extra = {"word2vec_update": True} if model == "cbow" else {}
    # scatter='rows': each step updates only the rows the batch used (same result as the dense
    # update, whose other rows get zero gradient, without touching all V rows twice a step)
    net = cls(V, dim, sampler, k=negative, rng=rng, dtype=np.float32, scatter="rows", **extra)
    W_in, W_out = net.params
    embeddings = (net.embed, net.ns.dot.embed)
    total_words = corpus.n_raw_tokens * epochs
    epoch_loss, t0 = [], time.perf_counter()
    bar = progress_bar(total=total_words, desc=f"NumPy {model}", unit="word", unit_scale=True, disable=not progress)
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
        _check_some_examples(n, corpus, sample, window, epoch + 1, model, "word2vec.train_numpy")
        losses = []
        words_per_example = corpus.n_raw_tokens / n
        for start in range(0, n, batch_size):
            sl = slice(start, start + batch_size)
            lr = _lr_schedule(alpha, min_alpha, epoch * n + start, epochs * n)
            m = len(data[1][sl])
            negatives = table[rng.integers(0, len(table), size=(m, negative))]
            if model == "skipgram":
                loss = net.forward(data[0][sl], data[1][sl], negatives)
            else:
                loss = net.forward(data[0][sl], data[1][sl], data[2][sl], negatives)
            net.backward()
            # SGD on the rows used; the sum of per-example gradients = m * mean gradient.
            # W[rows] -= step * grad, written as gather, update, scatter: the same arithmetic,
            # about 1.5x faster than NumPy's in-place update through an index array
            for embedding in embeddings:
                rows, grad = embedding.row_grad
                W = embedding.params[0]
                block = np.take(W, rows, axis=0)
                block -= (lr * m) * grad
                W[rows] = block
            losses.append(loss)
            bar.update(int(round(m * words_per_example)))
            if len(losses) % 50 == 0:
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}", lr=f"{lr:.4f}")
        epoch_loss.append(float(np.mean(losses)))
        if epoch_end is not None:
            te = time.perf_counter()
            stop = epoch_end(epoch + 1, W_in, W_out, epoch_loss[-1])
            t0 += time.perf_counter() - te          # the hook's time is not training time
            if stop:
                break
    bar.close()
    secs = time.perf_counter() - t0
    cfg = dict(impl="numpy", model=model, dim=dim, window=window, negative=negative, sample=sample,
               epochs=epochs, alpha=alpha, batch_size=batch_size, seed=seed)
    return TrainedVectors(W_in.copy(), W_out.copy(), corpus.vocab, secs, total_words / secs, epoch_loss, cfg)


def _torch_batches(W, C, table, inp, tgt, msk, starts, batch_size, lr_of, gen, negative, record):
    """Run SGD on the batches beginning at ``starts`` (one worker's share of an epoch).

    W, C: (V, D) float32 input and output vectors, updated in place. table: the unigram table
    (:func:`unigram_table`). inp: (n,) centre ids (skip-gram) or (n, 2 window) context ids
    (CBOW, with msk (n, 2 window) 0/1 marking the real ones); tgt: (n,) the words to predict."""
    dim = W.shape[1]
    for j, start in enumerate(starts):
        lr = lr_of(start)
        x, t = inp[start:start + batch_size], tgt[start:start + batch_size]
        m = len(t)
        # k negatives per example: random slots of the unigram table (m k draws, read as (m, k))
        neg = table.index_select(0, torch.randint(len(table), (m * negative,), generator=gen, device=W.device))
        targets = torch.cat([t[:, None], neg.view(m, negative)], dim=1)     # (m, 1+k): the word, then k negatives
        if msk is None:
            h = W.index_select(0, x)                                         # (m, D)
        else:
            w = msk[start:start + batch_size]
            # h = the mean of the real context vectors: a weighted sum of rows, weights mask / count
            h = F.embedding_bag(x, W, per_sample_weights=w / w.sum(dim=1, keepdim=True), mode="sum")
        flat = targets.reshape(-1)
        u = C.index_select(0, flat).view(m, 1 + negative, dim)               # (m, 1+k, D)
        s = (u * h[:, None, :]).sum(2)                                       # (m, 1+k) scores
        g = torch.sigmoid(s)
        g[:, 0] -= 1                                                         # dL/ds = y - t (t = 1 for the word)
        g[:, 1:].masked_fill_(targets[:, 1:] == t[:, None], 0)               # a negative equal to the target is skipped
        if record is not None and j % 20 == 0:
            # loss = -log s(s_0) - sum_j log s(-s_j), on every 20th batch (for the bar)
            record(float((F.softplus(-s[:, 0]) + F.softplus(s[:, 1:]).sum(1)).mean()), lr)
        g *= -lr
        # dh = sum_j g_j u_j, written as a weighted bag of C's rows: the same sum as
        # torch.bmm(g[:, None, :], u), about 1.2x faster end to end on one thread
        dh = F.embedding_bag(targets, C, per_sample_weights=g, mode="sum")  # (m, D)
        C.index_add_(0, flat, (g[:, :, None] * h[:, None, :]).view(-1, dim))   # du_j = g_j h
        if msk is None:
            W.index_add_(0, x, dh)
        else:
            # word2vec.c / gensim: each context word gets the full error of the mean (not dh / count)
            W.index_add_(0, x.reshape(-1), (msk[start:start + batch_size, :, None] * dh[:, None, :]).view(-1, dim))
        yield m


def train_torch(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5, negative: int = 5,
                sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025, min_alpha: float = 1e-4,
                batch_size: int = 1024, seed: int = 0, power: float = 0.75, workers: int = 1,
                device: str | None = None, progress: bool = True, epoch_end=None,
                dynamic_window: bool = True) -> TrainedVectors:
    """Fast skip-gram / CBOW with negative sampling in PyTorch. Taught in lesson 07, section 7.

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
    ``epoch_end(epoch, W, C, mean_loss) -> bool``: as in :func:`train_numpy` (W, C as NumPy arrays).
    ``dynamic_window=False`` (skip-gram only): every centre uses the full window (lesson 07 measures the difference).
    """
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
    table = torch.from_numpy(unigram_table(corpus.vocab.counts, power).astype(np.int64)).to(dev)
    total_words = corpus.n_raw_tokens * epochs
    epoch_loss, t0 = [], time.perf_counter()
    bar = progress_bar(total=total_words, desc=f"PyTorch {model}", unit="word", unit_scale=True, disable=not progress)
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
                    c, o = skipgram_pairs(ids, sent, window, rng, dynamic=dynamic_window)
                    order = rng.permutation(len(c))
                    inp, tgt, msk = torch.from_numpy(c[order]).to(dev), torch.from_numpy(o[order]).to(dev), None
                else:
                    ctx, mask, cen = cbow_examples(ids, sent, window, rng)
                    order = rng.permutation(len(cen))
                    inp, tgt = torch.from_numpy(ctx[order]).to(dev), torch.from_numpy(cen[order]).to(dev)
                    msk = torch.from_numpy(mask[order]).to(dev, torch.float32)
                n = len(tgt)
                _check_some_examples(n, corpus, sample, window, epoch + 1, model, "word2vec.train_torch")
                words_per_example = corpus.n_raw_tokens / n
                losses = []

                def record(loss, lr, losses=losses):
                    losses.append(loss)
                    bar.set_postfix(loss=f"{np.mean(losses):.3f}", lr=f"{lr:.4f}")

                def lr_of(start, epoch=epoch, n=n):
                    return _lr_schedule(alpha, min_alpha, epoch * n + start, epochs * n)

                starts = list(range(0, n, batch_size))

                def work(i, data=(inp, tgt, msk), starts=starts, wpe=words_per_example, record=record):
                    for m in _torch_batches(W, C, table, *data, starts[i::workers], batch_size,
                                            lr_of, gens[i], negative, record if i == 0 else None):
                        bar.update(int(round(m * wpe)))

                if pool is None:
                    work(0)
                else:
                    list(pool.map(work, range(workers)))
                epoch_loss.append(float(np.mean(losses)) if losses else float("nan"))
                if epoch_end is not None:
                    te = time.perf_counter()
                    stop = epoch_end(epoch + 1, W.cpu().numpy(), C.cpu().numpy(), epoch_loss[-1])
                    t0 += time.perf_counter() - te      # the hook's time is not training time
                    if stop:
                        break
    finally:
        torch.set_num_threads(threads)
        if pool is not None:
            pool.shutdown()
    bar.close()
    secs = time.perf_counter() - t0
    cfg = dict(impl="torch", model=model, dim=dim, window=window, negative=negative, sample=sample,
               epochs=epochs, alpha=alpha, batch_size=batch_size, seed=seed, workers=workers, device=str(dev),
               dynamic_window=dynamic_window)
    return TrainedVectors(W.cpu().numpy(), C.cpu().numpy(), corpus.vocab, secs, total_words / secs, epoch_loss, cfg)


def train_gensim(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5, negative: int = 5,
                 sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025, min_alpha: float = 1e-4,
                 seed: int = 0, workers: int = 2, min_count: int = 5) -> TrainedVectors:
    """gensim's ``Word2Vec`` on the same sentences and hyperparameters (the reference). Taught in lesson 07, section 7.
    The vectors are re-ordered to ``corpus.vocab`` so all three share one vocabulary. ``seconds``
    times the training only (not the vocabulary scan), like the other two trainers'."""
    from gensim.models import Word2Vec  # heavy optional import: loaded only when gensim is used
    if model not in ("skipgram", "cbow"):
        raise ValueError(f"model must be 'skipgram' or 'cbow', got {model!r}")
    sents = [list(s) for s in corpus.sentences]
    m = Word2Vec(vector_size=dim, window=window, negative=negative, sample=sample, epochs=epochs,
                 alpha=alpha, min_alpha=min_alpha, sg=int(model == "skipgram"), hs=0, workers=workers,
                 seed=seed, min_count=min_count)
    m.build_vocab(sents)     # what Word2Vec(sents, ...) does first; not timed, as prepare_corpus is not
    t0 = time.perf_counter()
    m.train(sents, total_examples=m.corpus_count, epochs=epochs)
    secs = time.perf_counter() - t0
    order = [m.wv.key_to_index[w] for w in corpus.vocab.itos]
    cfg = dict(impl="gensim", model=model, dim=dim, window=window, negative=negative, sample=sample,
               epochs=epochs, alpha=alpha, workers=workers, seed=seed)
    return TrainedVectors(m.wv.vectors[order].copy(), m.syn1neg[order].copy(), corpus.vocab, secs,
                          corpus.n_raw_tokens * epochs / secs, [], cfg)
