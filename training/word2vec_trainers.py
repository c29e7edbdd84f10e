"""Word2vec and fastText trainers of the shipped models and the benchmarks.

The same algorithm (skip-gram or CBOW with negative sampling, Mikolov et al. 2013) three ways,
with the same hyperparameters, so speed and quality compare in one table:

- :func:`train_numpy`: the course's NumPy layers (:class:`training.word2vec_layers.SkipGramNS`,
  ``CBOWNS``) trained by SGD: the shipped ``wv_numpy_skipgram``;
- :func:`train_torch`: PyTorch tensors, gradients in closed form applied with ``index_add_``;
  several workers run "Hogwild" (``wv_torch_skipgram`` runs one);
- :func:`train_gensim`: gensim's ``Word2Vec``, the reference; :func:`train_fasttext`: gensim's
  ``FastText``.

The data they train on is lesson 07's (:mod:`helpers.lib.word2vec`).
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from helpers.infra.progress import progress_bar
from helpers.infra.seeding import choose_device
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.negative_sampling import NoiseSampler, unigram_table
from helpers.lib.text import Vocab, check_token_lists
from helpers.lib.word2vec import Corpus, keep_probabilities, skipgram_pairs
from training.word2vec_layers import CBOWNS, SkipGramNS


@dataclass
class TrainedVectors:
    """What a word2vec run produced.

    W, C: (V, D) input and output vectors; vocab; seconds of training; words per second (raw
    corpus tokens x epochs / seconds); the mean loss of each epoch (empty for gensim); config."""

    W: np.ndarray
    C: np.ndarray
    vocab: Vocab
    seconds: float
    words_per_second: float
    epoch_loss: list = field(default_factory=list)
    config: dict = field(default_factory=dict)


def _check_model(model: str) -> None:
    if model not in ("skipgram", "cbow"):
        raise ValueError(f"model must be 'skipgram' or 'cbow', got {model!r}")


def _subsample(corpus: Corpus, sample: float, rng: np.random.Generator):
    """The tokens one epoch keeps (frequent words subsampled): (ids, sentence numbers)."""
    keep = rng.random(len(corpus.ids)) < keep_probabilities(corpus.vocab.counts, sample)[corpus.ids]
    return corpus.ids[keep], corpus.sentence[keep]


def _check_some_examples(n: int, corpus: Corpus, sample: float, window: int, epoch: int, model: str,
                         where: str) -> None:
    """A clear error when an epoch has no training example (a tiny corpus)."""
    if n > 0:
        return
    what = ("(centre, context) pairs" if model == "skipgram"
            else "CBOW examples (a centre with a context word)")
    cause = ((f"after subsampling frequent words (sample={sample:g}) " if sample > 0 else "")
             + f"no two words of one sentence lie within the window ({window})")
    fix = ("pass sample=0 to keep every occurrence (subsampling drops most of a word that makes up "
           "a large share of a tiny corpus), or give more text" if sample > 0
           else "give more text: sentences of at least two words")
    raise ValueError(f"{where}: epoch {epoch} has no training {what}: {cause}. The corpus has "
                     f"{len(corpus.ids)} in-vocabulary tokens in {len(np.unique(corpus.sentence))} "
                     f"sentences and {len(corpus.vocab)} word types; {fix}")


def _lr_schedule(alpha, min_alpha, done, total):
    return alpha - (alpha - min_alpha) * min(done / total, 1.0)


def cbow_examples(ids: np.ndarray, sentence: np.ndarray, window: int, rng: np.random.Generator):
    """CBOW examples with the dynamic window (lesson 07 §7): (contexts (N, 2 window) int64, mask
    (N, 2 window) bool, centres (N,) int64); centres without a context word are dropped."""
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


def _epoch_data(corpus: Corpus, model: str, sample: float, window: int, rng, dynamic: bool = True):
    """One epoch's shuffled examples: (centres, contexts) or (contexts, centres, mask)."""
    ids, sent = _subsample(corpus, sample, rng)
    if model == "skipgram":
        c, o = skipgram_pairs(ids, sent, window, rng, dynamic=dynamic)
        order = rng.permutation(len(c))
        return c[order], o[order]
    ctx, mask, cen = cbow_examples(ids, sent, window, rng)
    order = rng.permutation(len(cen))
    return ctx[order], cen[order], mask[order]


def train_numpy(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5,
                negative: int = 5, sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025,
                min_alpha: float = 1e-4, batch_size: int = 2048, seed: int = 0, power: float = 0.75,
                progress: bool = True, epoch_end=None) -> TrainedVectors:
    """Skip-gram or CBOW (float32) trained by SGD with the course's NumPy layers.

    A step sums the batch's per-example gradients (word2vec's one-example SGD, learning rate
    ``alpha`` per example, decaying linearly to ``min_alpha``) and updates only the rows the batch
    used. Negatives come from a 10^6-slot unigram table, as in word2vec.c. The same seed gives
    bit-identical vectors. ``epoch_end(epoch, W, C, mean_loss) -> bool`` runs after every epoch
    (W, C the live arrays), outside the timed training; True stops training.
    """
    _check_model(model)
    rng = np.random.default_rng(seed)
    V = len(corpus.vocab)
    # the layer's own sampler is not used (the negatives are given), but building it draws from rng
    sampler = NoiseSampler(corpus.vocab.counts, power, rng=rng)
    table = unigram_table(corpus.vocab.counts, power)
    cls = SkipGramNS if model == "skipgram" else CBOWNS
    extra = {"word2vec_update": True} if model == "cbow" else {}
    net = cls(V, dim, sampler, k=negative, rng=rng, dtype=np.float32, scatter="rows", **extra)
    W_in, W_out = net.params
    embeddings = (net.embed, net.ns.dot.embed)
    total_words = corpus.n_raw_tokens * epochs
    epoch_loss, t0 = [], time.perf_counter()
    bar = progress_bar(total=total_words, desc=f"NumPy {model}", unit="word", unit_scale=True,
                       disable=not progress)
    for epoch in range(epochs):
        data = _epoch_data(corpus, model, sample, window, rng)
        n = len(data[0])
        _check_some_examples(n, corpus, sample, window, epoch + 1, model, "train_numpy")
        losses = []
        words_per_example = corpus.n_raw_tokens / n
        for start in range(0, n, batch_size):
            sl = slice(start, start + batch_size)
            lr = _lr_schedule(alpha, min_alpha, epoch * n + start, epochs * n)
            m = len(data[1][sl])
            negatives = table[rng.integers(0, len(table), size=(m, negative))]
            loss = net.forward(*(x[sl] for x in data), negatives)
            net.backward()
            # SGD on the rows used, m times the mean gradient; gather, update, scatter is the
            # same arithmetic as W[rows] -= step * grad, and faster
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
    return TrainedVectors(W_in.copy(), W_out.copy(), corpus.vocab, secs, total_words / secs,
                          epoch_loss, cfg)


def _torch_batches(W, C, table, inp, tgt, msk, starts, batch_size, lr_of, gen, negative, record):
    """SGD on the batches beginning at ``starts`` (one worker's share of an epoch).

    W, C: (V, D) float32, updated in place; table: the unigram table; inp (n,) centre ids
    (skip-gram) or (n, 2 window) context ids with msk (n, 2 window) 0/1 (CBOW); tgt (n,) the
    words to predict. Yields each batch's size."""
    dim = W.shape[1]
    for j, start in enumerate(starts):
        lr = lr_of(start)
        x, t = inp[start:start + batch_size], tgt[start:start + batch_size]
        m = len(t)
        neg = table.index_select(0, torch.randint(len(table), (m * negative,), generator=gen,
                                                  device=W.device))
        targets = torch.cat([t[:, None], neg.view(m, negative)], dim=1)     # (m, 1+k)
        if msk is None:
            h = W.index_select(0, x)                                         # (m, D)
        else:
            w = msk[start:start + batch_size]
            # h = the mean of the real context vectors: weights mask / count
            h = F.embedding_bag(x, W, per_sample_weights=w / w.sum(dim=1, keepdim=True), mode="sum")
        flat = targets.reshape(-1)
        u = C.index_select(0, flat).view(m, 1 + negative, dim)               # (m, 1+k, D)
        s = (u * h[:, None, :]).sum(2)                                       # (m, 1+k) scores
        g = torch.sigmoid(s)
        g[:, 0] -= 1                                                         # dL/ds = y - t
        g[:, 1:].masked_fill_(targets[:, 1:] == t[:, None], 0)   # a negative equal to the word
        if record is not None and j % 20 == 0:
            record(float((F.softplus(-s[:, 0]) + F.softplus(s[:, 1:]).sum(1)).mean()), lr)
        g *= -lr
        dh = F.embedding_bag(targets, C, per_sample_weights=g, mode="sum")  # sum_j g_j u_j, (m, D)
        C.index_add_(0, flat, (g[:, :, None] * h[:, None, :]).view(-1, dim))   # du_j = g_j h
        if msk is None:
            W.index_add_(0, x, dh)
        else:
            # word2vec.c / gensim: each context word gets the full error of the mean
            W.index_add_(0, x.reshape(-1),
                         (msk[start:start + batch_size, :, None] * dh[:, None, :]).view(-1, dim))
        yield m


def train_torch(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5,
                negative: int = 5, sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025,
                min_alpha: float = 1e-4, batch_size: int = 1024, seed: int = 0, power: float = 0.75,
                workers: int = 1, device: str | None = None, progress: bool = True,
                epoch_end=None, dynamic_window: bool = True) -> TrainedVectors:
    """Skip-gram or CBOW with negative sampling in PyTorch, without autograd.

    For a score s = u.h the loss's gradient is sigmoid(s) - t, so dh = sum_j (y_j - t_j) u_j and
    du_j = (y_j - t_j) h, added with ``index_add_`` to the rows used (CBOW: each context word gets
    the full error of the mean, as in word2vec.c). Gradients are summed over the batch and the
    rate decays linearly, as in :func:`train_numpy`. Each op runs on one CPU thread;
    ``workers`` > 1 runs that many threads on interleaved batches of the same tensors without
    locks ("Hogwild", like gensim's workers): faster, not reproducible bit for bit.
    ``device``: None/'cpu', 'cuda' or 'auto'. ``epoch_end`` as in :func:`train_numpy`;
    ``dynamic_window=False`` (skip-gram): every centre uses the full window.
    """
    _check_model(model)
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
    bar = progress_bar(total=total_words, desc=f"PyTorch {model}", unit="word", unit_scale=True,
                       disable=not progress)
    threads = torch.get_num_threads()
    if dev.type == "cpu":
        torch.set_num_threads(1)       # small, memory-bound ops: extra threads only spin
    pool = ThreadPoolExecutor(workers) if workers > 1 else None
    try:
        with torch.no_grad():
            for epoch in range(epochs):
                data = [torch.from_numpy(a).to(dev) for a in
                        _epoch_data(corpus, model, sample, window, rng, dynamic_window)]
                inp, tgt = data[0], data[1]
                msk = data[2].to(torch.float32) if model == "cbow" else None
                n = len(tgt)
                _check_some_examples(n, corpus, sample, window, epoch + 1, model, "train_torch")
                words_per_example = corpus.n_raw_tokens / n
                losses = []

                def record(loss, lr, losses=losses):
                    losses.append(loss)
                    bar.set_postfix(loss=f"{np.mean(losses):.3f}", lr=f"{lr:.4f}")

                def lr_of(start, epoch=epoch, n=n):
                    return _lr_schedule(alpha, min_alpha, epoch * n + start, epochs * n)

                starts = list(range(0, n, batch_size))

                def work(i, data=(inp, tgt, msk), starts=starts, wpe=words_per_example,
                         record=record):
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
                    t0 += time.perf_counter() - te
                    if stop:
                        break
    finally:
        torch.set_num_threads(threads)
        if pool is not None:
            pool.shutdown()
    bar.close()
    secs = time.perf_counter() - t0
    cfg = dict(impl="torch", model=model, dim=dim, window=window, negative=negative, sample=sample,
               epochs=epochs, alpha=alpha, batch_size=batch_size, seed=seed, workers=workers,
               device=str(dev), dynamic_window=dynamic_window)
    return TrainedVectors(W.cpu().numpy(), C.cpu().numpy(), corpus.vocab, secs, total_words / secs,
                          epoch_loss, cfg)


def train_gensim(corpus: Corpus, model: str = "skipgram", dim: int = 100, window: int = 5,
                 negative: int = 5, sample: float = 1e-3, epochs: int = 5, alpha: float = 0.025,
                 min_alpha: float = 1e-4, seed: int = 0, workers: int = 2,
                 min_count: int = 5) -> TrainedVectors:
    """gensim's ``Word2Vec`` on the same sentences and settings, its vectors in ``corpus.vocab``'s
    order. ``seconds`` times the training only, not the vocabulary scan."""
    from gensim.models import Word2Vec  # heavy optional import: loaded only when gensim is used
    _check_model(model)
    sents = [list(s) for s in corpus.sentences]
    m = Word2Vec(vector_size=dim, window=window, negative=negative, sample=sample, epochs=epochs,
                 alpha=alpha, min_alpha=min_alpha, sg=int(model == "skipgram"), hs=0,
                 workers=workers, seed=seed, min_count=min_count)
    m.build_vocab(sents)
    t0 = time.perf_counter()
    m.train(sents, total_examples=m.corpus_count, epochs=epochs)
    secs = time.perf_counter() - t0
    order = [m.wv.key_to_index[w] for w in corpus.vocab.itos]
    cfg = dict(impl="gensim", model=model, dim=dim, window=window, negative=negative,
               sample=sample, epochs=epochs, alpha=alpha, workers=workers, seed=seed)
    return TrainedVectors(m.wv.vectors[order].copy(), m.syn1neg[order].copy(), corpus.vocab, secs,
                          corpus.n_raw_tokens * epochs / secs, [], cfg)


def fasttext_from_gensim(kv, seconds: float = 0.0, config: dict | None = None) -> FastTextVectors:
    """A gensim ``FastTextKeyedVectors`` (``model.wv``) as a :class:`FastTextVectors` of arrays."""
    def f32(a):
        return np.array(a, dtype=np.float32)
    return FastTextVectors(list(kv.index_to_key), f32(kv.vectors), f32(kv.vectors_vocab),
                           f32(kv.vectors_ngrams), int(kv.min_n), int(kv.max_n), float(seconds),
                           dict(config or {}))


def train_fasttext(sentences, dim: int = 100, window: int = 5, min_count: int = 5, epochs: int = 5,
                   min_n: int = 3, max_n: int = 6, buckets: int = 200_000, sg: bool = True,
                   negative: int = 5, sample: float = 1e-3, seed: int = 0,
                   workers: int = 2) -> FastTextVectors:
    """gensim's ``FastText`` (skip-gram with negative sampling by default) on tokenised sentences.

    ``buckets`` is the size of the n-gram table (fastText's default 2,000,000 would take 800 MB
    at 100 dimensions)."""
    from gensim.models import FastText  # heavy optional import: loaded only when gensim is used
    check_token_lists(sentences, "sentences", "train_fasttext")
    sents = [list(s) for s in sentences if len(s)]
    if not sents:
        raise ValueError("cannot train fastText on an empty corpus (no tokens)")
    t0 = time.perf_counter()
    m = FastText(sents, vector_size=dim, window=window, min_count=min_count, epochs=epochs,
                 min_n=min_n, max_n=max_n, bucket=buckets, sg=int(sg), hs=0, negative=negative,
                 sample=sample, seed=seed, workers=workers)
    cfg = dict(dim=dim, window=window, min_count=min_count, epochs=epochs, min_n=min_n,
               max_n=max_n, buckets=buckets, sg=sg, negative=negative, sample=sample, seed=seed,
               workers=workers)
    return fasttext_from_gensim(m.wv, time.perf_counter() - t0, cfg)
