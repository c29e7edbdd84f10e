"""Lesson 10's fine-tuning experiment: the shipped small BERT fine-tuned on BBC News topics,
against its frozen features and against static word vectors, at four training-set sizes
(``make models NAME=bert_finetune``; scores only, no weights are shipped).

Data (:func:`bbc_finetune_data`): the 2,225 BBC articles of the course corpus, each cut to its
first ``max_sents`` sentences (the title is the first), each sentence to ``max_len`` pieces.

- **test**: the BBC articles of the masked-LM *validation and test* documents
  (:func:`helpers.course.mlm_model.split_of`), which the encoder never saw in pre-training, less
  those with a near-duplicate among the pre-training documents
  (:func:`helpers.course.mlm_model.held_out_copies`: the BBC collection files some stories twice;
  a copy in the training pool would be a test article seen with its label);
- **validation**: ``n_valid_per_topic`` articles of each topic drawn (seed ``valid_seed``) from the
  masked-LM *training* documents; it chooses the learning rate and pooling (once, at one size),
  the number of epochs of the budget (once, at one size), the fine-tuning step, the frozen layer
  and pooling, and the regularisation C -- nothing else;
- **pool**: the other BBC articles of the masked-LM training documents; a training set of size n
  is a stratified random subset of the pool (``random_state = 1000 + seed``, scikit-learn).

Methods, for every size x seed (:func:`train_finetune_results`):

- ``fine-tuned``: the shipped encoder plus a new linear head on the pooled output, every weight
  trained (AdamW, a small learning rate for the encoder, a larger one for the new head, warm-up
  then linear decay over a fixed budget of ``steps`` steps of ``batch_size`` articles); the
  validation accuracy is measured ``n_evals`` times and the best step's weights are kept. The
  budget grows with the training set: ``steps = max(min_steps, ceil(epochs * n / batch_size))``
  (:func:`budget_steps`), with ``epochs`` chosen among ``epoch_grid`` on validation at
  n = ``epoch_size``, seed ``epoch_seed`` (the size where a fixed budget is shortest in epochs);
- ``frozen``: the encoder's vectors of one layer, pooled over the article, fixed; logistic
  regression on them (layer, pooling and C chosen on validation);
- ``static``: the course's shipped skip-gram vectors (lesson 07), unit length, averaged over the
  article's words; logistic regression (C chosen on validation).

Every method's answer on every test article is kept (``test_right``), so two methods are compared
by a paired bootstrap over the test articles (:meth:`FinetuneResults.paired_difference`).

Pooling: ``mean`` averages the vectors of every ordinary piece of the article (no [CLS], [SEP],
padding); ``cls`` averages the [CLS] vectors of its sentences.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.nn import functional as F

from helpers.course.corpus import document_sentences, modern_english_documents
from helpers.course.mlm_model import ShippedMLM, held_out_copies, split_of
from helpers.infra.artifacts import Artifact, timings_from_meta, timings_to_meta
from helpers.infra.progress import progress_bar
from helpers.lib.bert import TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import encode_sentence, pad_batch

METHODS = ("fine-tuned", "frozen", "static")
POOLINGS = ("mean", "cls")
SETTINGS = dict(sizes=[25, 100, 400, 1500], seeds=[0, 1, 2], max_sents=5, max_len=64, n_valid_per_topic=30,
                valid_seed=0, batch_size=16, min_steps=200,
                epoch_grid=[3, 6], epoch_size=1500, epoch_seed=0, n_evals=8, warmup=0.1, head_lr=3e-3, weight_decay=0.01,
                head_dropout=0.1, grid_lrs=[1e-4, 3e-4, 1e-3], grid_poolings=["mean", "cls"], grid_size=100,
                grid_seed=0, Cs=[0.01, 0.1, 1.0, 10.0], frozen_layers=[0, 1, 2], static="wv_gensim_skipgram")
SUBSET = dict(n=100, seed=0)        # the frozen-feature cell the subset metric recomputes


# ---------------------------------------------------------------- data
@dataclass
class BBCData:
    """The BBC articles of the experiment: ``docs`` (list of articles, each a list of at most
    ``max_sents`` sentences, each a tuple of words), ``labels`` (N,) int64, ``topics`` (5 names),
    ``doc_index`` (N,) the article's index in :func:`document_sentences`, and the index arrays
    ``pool``, ``valid``, ``test`` into ``docs`` (disjoint, together all N)."""

    docs: list
    labels: np.ndarray
    topics: list
    doc_index: np.ndarray
    pool: np.ndarray
    valid: np.ndarray
    test: np.ndarray


@lru_cache(maxsize=2)
def bbc_finetune_data(max_sents: int = 5, n_valid_per_topic: int = 30, valid_seed: int = 0) -> BBCData:
    """The split described in the module docstring (cached: the same object for the same arguments)."""
    if max_sents < 1:
        raise ValueError(f"max_sents must be at least 1, got {max_sents}")
    sources = [s for s, _ in modern_english_documents()]
    docs_all = document_sentences()
    if len(sources) != len(docs_all):
        raise RuntimeError(f"{len(sources)} sources but {len(docs_all)} documents: the corpus changed")
    topics = sorted({s.split(":", 1)[1] for s in sources if s.startswith("bbc:")})
    copies = held_out_copies()                  # held-out documents with a copy among the pre-training ones
    docs, labels, index, pretrain, copied = [], [], [], [], []
    for k, (src, d) in enumerate(zip(sources, docs_all)):
        if src.startswith("bbc:") and len(d):
            docs.append([tuple(s) for s in d[:max_sents]])
            labels.append(topics.index(src.split(":", 1)[1]))
            index.append(k)
            pretrain.append(split_of(k) == "train")
            copied.append(k in copies)
    y, pretrain, copied = np.array(labels, dtype=np.int64), np.array(pretrain), np.array(copied)
    rng = np.random.default_rng(valid_seed)
    valid = np.sort(np.concatenate([rng.choice(np.flatnonzero(pretrain & (y == c)), n_valid_per_topic,
                                               replace=False) for c in range(len(topics))]))
    pool = np.setdiff1d(np.flatnonzero(pretrain), valid)
    return BBCData(docs, y, topics, np.array(index), pool, valid, np.flatnonzero(~pretrain & ~copied))


def training_subset(labels: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Sorted positions of a stratified random subset of size ``n`` of ``labels`` (class
    proportions kept; scikit-learn's ``train_test_split``, ``random_state = 1000 + seed``);
    all positions when ``n`` is the whole pool."""
    labels = np.asarray(labels)
    k = len(np.unique(labels))
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"n must be an integer, got {type(n).__name__}")
    if n < k or n > len(labels):
        raise ValueError(f"a training set of n={n} articles must hold one of each of the {k} topics and fit "
                         f"in the pool of {len(labels)}")
    if n == len(labels):
        return np.arange(n)
    idx, _ = train_test_split(np.arange(len(labels)), train_size=n, stratify=labels, random_state=1000 + seed)
    return np.sort(idx)


def encode_docs(tok: BPETokenizer, docs, max_len: int = 64) -> list[list[np.ndarray]]:
    """Every article as a list of ``[CLS] pieces [SEP]`` id arrays, one per sentence."""
    return [[encode_sentence(tok, s, max_len) for s in d] for d in docs]


def doc_batch(tok: BPETokenizer, docs_ids) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The sentences of several articles as one batch: ids (S, L) int64, attention_mask (S, L)
    bool, owner (S,) int64 the article (0 .. len(docs_ids) - 1) each sentence belongs to."""
    seqs, owner = [], []
    for j, d in enumerate(docs_ids):
        if not len(d):
            raise ValueError(f"article {j} of the batch has no sentence")
        seqs += d
        owner += [j] * len(d)
    ids, att = pad_batch(seqs, tok.pad_id)
    return torch.as_tensor(ids), torch.as_tensor(att), torch.as_tensor(owner)


def pool_articles(h: torch.Tensor, ids: torch.Tensor, att: torch.Tensor, owner: torch.Tensor, n_docs: int,
                  n_special: int, pooling: str = "mean") -> torch.Tensor:
    """(S, L, d) vectors of the sentences -> (n_docs, d): ``mean`` of every ordinary piece of each
    article (ids >= n_special, not padding), or ``cls``: mean of its sentences' [CLS] vectors."""
    if pooling == "mean":
        keep = (att & (ids >= n_special)).to(h.dtype)[..., None]
        sums = torch.zeros(n_docs, h.shape[-1], dtype=h.dtype).index_add(0, owner, (h * keep).sum(1))
        count = torch.zeros(n_docs, dtype=h.dtype).index_add(0, owner, keep.sum((1, 2)))
    elif pooling == "cls":
        sums = torch.zeros(n_docs, h.shape[-1], dtype=h.dtype).index_add(0, owner, h[:, 0])
        count = torch.zeros(n_docs, dtype=h.dtype).index_add(0, owner, torch.ones(len(owner), dtype=h.dtype))
    else:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    return sums / count.clamp(min=1)[:, None]


# ---------------------------------------------------------------- fine-tuning
def budget_steps(n: int, epochs: float, batch_size: int, min_steps: int) -> int:
    """The fine-tuning budget for ``n`` training articles: ``max(min_steps, ceil(epochs * n /
    batch_size))`` steps, i.e. at least ``epochs`` passes over the training set."""
    if n < 1 or epochs <= 0 or batch_size < 1 or min_steps < 1:
        raise ValueError(f"n, epochs, batch_size and min_steps must be positive, got {n}, {epochs}, {batch_size}, "
                         f"{min_steps}")
    return max(int(min_steps), math.ceil(epochs * n / batch_size))


class ArticleClassifier(nn.Module):
    """The pre-trained encoder with a new linear head on the pooled article vector.

    forward(ids (S, L), attention_mask (S, L), owner (S,), n_docs) -> logits (n_docs, n_classes)."""

    def __init__(self, encoder: TinyBert, n_classes: int, n_special: int, pooling: str = "mean",
                 dropout: float = 0.1):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self.encoder, self.n_special, self.pooling = encoder, n_special, pooling
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.cfg.dim, n_classes)

    def forward(self, ids, attention_mask, owner, n_docs):
        h = self.encoder(ids, attention_mask)
        return self.head(self.drop(pool_articles(h, ids, attention_mask, owner, n_docs, self.n_special,
                                                 self.pooling)))


@torch.no_grad()
def classifier_predictions(model: ArticleClassifier, tok: BPETokenizer, docs_ids, chunk: int = 16) -> np.ndarray:
    """The topic ``model`` predicts for each of the articles ``docs_ids``, (N,) int64 (eval mode,
    ``chunk`` articles at a time)."""
    was = model.training
    model.eval()
    pred = []
    for k in range(0, len(docs_ids), chunk):
        ids, att, owner = doc_batch(tok, docs_ids[k:k + chunk])
        pred.append(model(ids, att, owner, len(docs_ids[k:k + chunk])).argmax(-1))
    model.train(was)
    return torch.cat(pred).numpy().astype(np.int64)


def classifier_accuracy(model: ArticleClassifier, tok: BPETokenizer, docs_ids, labels: np.ndarray,
                        chunk: int = 16) -> float:
    """Accuracy of ``model`` on the articles ``docs_ids`` (eval mode, ``chunk`` articles at a time)."""
    return float((classifier_predictions(model, tok, docs_ids, chunk) == np.asarray(labels)).mean())


def copy_encoder(shipped: ShippedMLM) -> TinyBert:
    """A fresh trainable copy of the shipped encoder (the shipped model is left untouched)."""
    enc = TinyBert(shipped.model.cfg, shipped.tok.pad_id)
    enc.load_state_dict(shipped.model.state_dict())
    return enc.train()


def finetune_run(shipped: ShippedMLM, train_ids, train_y: np.ndarray, valid_ids, valid_y: np.ndarray,
                 settings: dict, lr: float, pooling: str, seed: int, n_classes: int, log=None,
                 max_steps: int | None = None, progress: bool = False, desc: str = "fine-tuning") -> dict:
    """Fine-tune a copy of the shipped encoder plus a new head on ``train_ids`` / ``train_y``.

    AdamW (``lr`` for the encoder, ``settings['head_lr']`` for the head, weight decay), warm-up
    over the first ``warmup`` fraction of ``settings['steps']`` (the budget, set by the caller:
    :func:`budget_steps`) then linear decay to 0, gradient
    clipping at 1, batches of ``batch_size`` articles drawn in a seeded shuffled order, epoch
    after epoch. The validation accuracy is measured ``n_evals`` times (evenly spaced) and the
    weights of the best measurement are kept (the first best on ties). ``max_steps`` stops early
    (the replay test); ``log`` (a RunLog) receives every step's loss.

    Returns {'model' (best weights, eval mode), 'best_step', 'valid_acc' (best), 'curve':
    {'step', 'valid_acc'}, 'losses' (every step), 'cpu_seconds'}."""
    s = settings
    if len(train_ids) != len(train_y) or not len(train_y):
        raise ValueError(f"{len(train_ids)} training articles but {len(train_y)} labels")
    c0 = time.process_time()
    total = int(s["steps"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)                     # the head's initial weights and the dropout masks
        model = ArticleClassifier(copy_encoder(shipped), n_classes, len(shipped.tok.special_ids), pooling,
                                  s["head_dropout"])
        opt = torch.optim.AdamW([{"params": model.encoder.parameters(), "lr": lr},
                                 {"params": model.head.parameters(), "lr": s["head_lr"]}],
                                weight_decay=s["weight_decay"])
        warm = max(1, round(total * s["warmup"]))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda i: min((i + 1) / warm, max(0.0, (total - i) / max(1, total - warm))))
        evals = sorted({max(1, round(total * q / s["n_evals"])) for q in range(1, s["n_evals"] + 1)})
        rng = np.random.default_rng(seed)
        n, bs = len(train_y), min(s["batch_size"], len(train_y))
        cap = total if max_steps is None else min(total, max_steps)
        best, curve, losses, order = (-1.0, 0, None), {"step": [], "valid_acc": []}, [], []
        model.train()
        bar = progress_bar(total=cap, desc=desc, unit="step", disable=not progress)
        for step in range(1, cap + 1):
            if len(order) < bs:                       # a new epoch: a new shuffled order
                order = list(order) + list(rng.permutation(n))
            b, order = np.array(order[:bs]), order[bs:]
            ids, att, owner = doc_batch(shipped.tok, [train_ids[i] for i in b])
            loss = F.cross_entropy(model(ids, att, owner, len(b)), torch.as_tensor(train_y[b]))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(loss.item())
            if log is not None:
                log.step(losses[-1])
            bar.update(1)
            if step in evals and max_steps is None:
                va = classifier_accuracy(model, shipped.tok, valid_ids, valid_y)
                curve["step"].append(step)
                curve["valid_acc"].append(va)
                if va > best[0]:
                    best = (va, step, {k: v.detach().clone() for k, v in model.state_dict().items()})
        bar.close()
    if best[2] is not None:
        model.load_state_dict(best[2])
    return {"model": model.eval(), "best_step": best[1], "valid_acc": best[0], "curve": curve, "losses": losses,
            "cpu_seconds": time.process_time() - c0}


# ---------------------------------------------------------------- frozen and static features
@torch.no_grad()
def frozen_features(model: TinyBert, tok: BPETokenizer, docs_ids, layers=(0, 1, 2),
                    poolings=POOLINGS) -> dict:
    """{(layer, pooling): (N, d) float32}: each article's vectors of ``layers`` (0 = the
    embeddings, ``n_layers`` = the final output), pooled; one article per forward pass, so an
    article's features never depend on which other articles are computed with it."""
    was = model.training
    model.eval()
    out = {(layer, p): [] for layer in layers for p in poolings}
    for d in docs_ids:
        ids, att, owner = doc_batch(tok, [d])
        hidden, _ = model.layers_and_attention(ids, att)
        for layer in layers:
            for p in poolings:
                out[layer, p].append(pool_articles(hidden[layer], ids, att, owner, 1, len(tok.special_ids), p)[0])
    model.train(was)
    return {k: torch.stack(v).numpy() for k, v in out.items()}


def static_features(W: np.ndarray, stoi: dict, docs) -> np.ndarray:
    """(N, D) float32: each article's average of its words' unit-length vectors (unknown words
    skipped; an article with no known word gets zeros)."""
    U = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-12)
    out = np.zeros((len(docs), W.shape[1]), dtype=np.float32)
    for j, d in enumerate(docs):
        rows = [stoi[w] for s in d for w in s if w in stoi]
        if rows:
            out[j] = U[rows].mean(0)
    return out


def fit_logreg(X_train: np.ndarray, y_train: np.ndarray, C: float) -> tuple[StandardScaler, LogisticRegression]:
    """Standardise on the training articles, then multinomial logistic regression with ``C``."""
    sc = StandardScaler().fit(X_train)
    return sc, LogisticRegression(C=C, max_iter=5000).fit(sc.transform(X_train), y_train)


def choose_logreg(candidates: dict, y_train: np.ndarray, y_valid: np.ndarray, Cs) -> tuple:
    """Best (key, C) on validation: ``candidates`` {key: (X_train, X_valid)}; ties go to the
    first key, then the smaller C. Returns (key, C, valid_acc)."""
    best = None
    for key, (Xt, Xv) in candidates.items():
        for C in Cs:
            sc, clf = fit_logreg(Xt, y_train, C)
            va = float(clf.score(sc.transform(Xv), y_valid))
            if best is None or va > best[2]:
                best = (key, C, va)
    return best


def logreg_test_accuracy(X_train, y_train, X_test, y_test, C: float) -> float:
    sc, clf = fit_logreg(X_train, y_train, C)
    return float(clf.score(sc.transform(X_test), y_test))


def logreg_test_predictions(X_train, y_train, X_test, C: float) -> np.ndarray:
    """The labels a logistic regression with ``C`` fitted on (X_train, y_train) predicts for X_test."""
    sc, clf = fit_logreg(X_train, y_train, C)
    return clf.predict(sc.transform(X_test)).astype(np.int64)


def static_vectors_of(vectors) -> tuple[np.ndarray, dict]:
    """(W float32, stoi) of shipped word vectors as ``load_model`` returns them ((W, C, vocab, meta))."""
    W, _, vocab, _ = vectors
    return np.asarray(W, dtype=np.float32), dict(vocab.stoi)


# ---------------------------------------------------------------- the shipped experiment
def train_finetune_results(settings: dict, log, max_steps: int | None = None, progress: bool = True, *,
                           load=None):
    """Run the whole experiment (``make models NAME=bert_finetune``); returns (arrays, meta, metrics).

    ``load(name)`` returns a shipped model checked against the manifest (the registry passes
    :func:`helpers.course.models.load_model`, which this module cannot import: the registry
    imports it): the encoder ``mlm_bert`` and the static vectors ``settings['static']``.

    1. Learning rate x pooling of fine-tuning, chosen on validation at n = grid_size, seed grid_seed
       (budget: :func:`budget_steps` with the smallest of ``epoch_grid``).
    2. The epochs of the budget, chosen among ``epoch_grid`` on validation at n = epoch_size, seed
       epoch_seed, with the chosen pair (ties: the fewer epochs).
    3. For every size x seed: fine-tuning with the chosen pair and budget (a run of steps 1-2 with
       the same n, seed and budget is reused for its cell), frozen features + logistic regression,
       static vectors + logistic regression.
    A step of the log is one fine-tuning step (the grid's runs first); ``max_steps`` runs only the
    first grid run, for that many steps (the replay test)."""
    s = settings
    if load is None:
        raise TypeError("train_finetune_results needs load=helpers.course.models.load_model (the registry passes it)")
    data = bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    shipped = load("mlm_bert")
    tok, y, K = shipped.tok, data.labels, len(data.topics)
    c0 = time.process_time()
    ids = encode_docs(tok, data.docs, s["max_len"])
    pool_ids, valid_ids, test_ids = ([ids[i] for i in part] for part in (data.pool, data.valid, data.test))
    y_pool, y_valid, y_test = y[data.pool], y[data.valid], y[data.test]
    encode_cpu = time.process_time() - c0

    def steps_for(n, epochs):
        return budget_steps(n, epochs, s["batch_size"], s["min_steps"])

    runs = {}                                   # (n, seed, lr, pooling, steps) -> run (deterministic: reused)

    def run(n, seed, lr, pooling, epochs, steps_cap=None, desc="fine-tuning"):
        key = (n, seed, lr, pooling, steps_for(n, epochs))
        if key in runs:
            return runs[key]
        idx = training_subset(y_pool, n, seed)
        r = finetune_run(shipped, [pool_ids[i] for i in idx], y_pool[idx], valid_ids, y_valid,
                         {**s, "steps": key[-1]}, lr, pooling, seed, K, log=log, max_steps=steps_cap,
                         progress=progress, desc=desc)
        if steps_cap is None:
            runs[key] = r
        return r

    # 1. the grid
    grid = [(lr, p) for p in s["grid_poolings"] for lr in s["grid_lrs"]]
    e0 = min(s["epoch_grid"])
    if max_steps is not None:
        run(s["grid_size"], s["grid_seed"], grid[0][0], grid[0][1], e0, steps_cap=max_steps)
        log.event("stop", reason=f"max_steps={max_steps} (replay: the first grid run only)", steps=max_steps)
        return {}, {"settings": dict(s)}, {}
    grid_valid = np.zeros((len(s["grid_poolings"]), len(s["grid_lrs"])))
    grid_runs = {}
    for lr, p in grid:
        r = run(s["grid_size"], s["grid_seed"], lr, p, e0, desc=f"grid lr={lr:g} {p}")
        grid_valid[s["grid_poolings"].index(p), s["grid_lrs"].index(lr)] = r["valid_acc"]
        grid_runs[lr, p] = r
        log.event("eval", part="grid", n=s["grid_size"], seed=s["grid_seed"], lr=lr, pooling=p,
                  valid_acc=r["valid_acc"], best_step=r["best_step"], curve=r["curve"], cpu_seconds=r["cpu_seconds"])
    pi, li = np.unravel_index(int(np.argmax(grid_valid)), grid_valid.shape)   # first best: lr grid order
    lr, pooling = s["grid_lrs"][li], s["grid_poolings"][pi]
    log.event("eval", part="grid choice", lr=lr, pooling=pooling, valid_acc=float(grid_valid[pi, li]))

    # 2. the epochs of the budget
    epoch_valid, epoch_cpu, epoch_best = [], [], []
    for e in s["epoch_grid"]:
        r = run(s["epoch_size"], s["epoch_seed"], lr, pooling, e,
                desc=f"epochs={e:g} n={s['epoch_size']} ({steps_for(s['epoch_size'], e)} steps)")
        epoch_valid.append(r["valid_acc"])
        epoch_cpu.append(r["cpu_seconds"])
        epoch_best.append(r["best_step"])
        log.event("eval", part="epochs", n=s["epoch_size"], seed=s["epoch_seed"], epochs=e,
                  steps=steps_for(s["epoch_size"], e), valid_acc=r["valid_acc"], best_step=r["best_step"],
                  curve=r["curve"], cpu_seconds=r["cpu_seconds"])
    k = max(range(len(s["epoch_grid"])), key=lambda k: (epoch_valid[k], -s["epoch_grid"][k]))  # ties: fewer
    epochs = s["epoch_grid"][k]
    log.event("eval", part="epochs choice", epochs=epochs, valid_acc=float(epoch_valid[k]),
              rule=f"steps = max({s['min_steps']}, ceil({epochs} * n / {s['batch_size']}))",
              steps={str(n): steps_for(n, epochs) for n in s["sizes"]})

    # 3. frozen and static features (computed once for every article)
    c0 = time.process_time()
    feats = frozen_features(shipped.model, tok, ids, tuple(s["frozen_layers"]), POOLINGS)
    feats = {k: v for k, v in feats.items() if not (k[0] == 0 and k[1] == "cls")}  # layer-0 [CLS]: a constant
    frozen_feature_cpu = time.process_time() - c0
    c0 = time.process_time()
    W, stoi = static_vectors_of(load(s["static"]))
    X_static = static_features(W, stoi, data.docs)
    static_feature_cpu = time.process_time() - c0

    S, N = len(s["sizes"]), len(s["seeds"])
    test_acc = {m: np.full((S, N), np.nan) for m in METHODS}
    test_right = {m: np.zeros((S, N, len(data.test)), dtype=np.uint8) for m in METHODS}   # per test article
    valid_acc = {m: np.full((S, N), np.nan) for m in METHODS}
    cpu = {m: np.full((S, N), np.nan) for m in METHODS}
    best_step = np.zeros((S, N), dtype=np.int64)
    budget = np.array([[steps_for(n, epochs)] * N for n in s["sizes"]], dtype=np.int64)
    curves = np.full((S, N, s["n_evals"]), np.nan)
    frozen_layer, frozen_pool, frozen_C, static_C = (np.zeros((S, N), dtype=np.int64), np.zeros((S, N), dtype="<U4"),
                                                      np.zeros((S, N)), np.zeros((S, N)))
    cells = [(i, j) for i in range(S) for j in range(N)]
    bar = progress_bar(total=len(cells), desc="sizes x seeds", unit="cell", disable=not progress)
    for i, j in cells:
        n, seed = s["sizes"][i], s["seeds"][j]
        r = run(n, seed, lr, pooling, epochs, desc=f"fine-tuning n={n} seed={seed} ({budget[i, j]} steps)")
        test_right["fine-tuned"][i, j] = classifier_predictions(r["model"], tok, test_ids) == y_test
        valid_acc["fine-tuned"][i, j], best_step[i, j] = r["valid_acc"], r["best_step"]
        curves[i, j, :len(r["curve"]["valid_acc"])] = r["curve"]["valid_acc"]
        cpu["fine-tuned"][i, j] = r["cpu_seconds"]
        idx = training_subset(y_pool, n, seed)
        c0 = time.process_time()
        key, C, va = choose_logreg({k: (v[data.pool][idx], v[data.valid]) for k, v in feats.items()},
                                   y_pool[idx], y_valid, s["Cs"])
        test_right["frozen"][i, j] = logreg_test_predictions(feats[key][data.pool][idx], y_pool[idx],
                                                             feats[key][data.test], C) == y_test
        valid_acc["frozen"][i, j], frozen_layer[i, j], frozen_pool[i, j], frozen_C[i, j] = va, key[0], key[1], C
        cpu["frozen"][i, j] = time.process_time() - c0
        c0 = time.process_time()
        _, C, va = choose_logreg({"static": (X_static[data.pool][idx], X_static[data.valid])}, y_pool[idx], y_valid,
                                 s["Cs"])
        test_right["static"][i, j] = logreg_test_predictions(X_static[data.pool][idx], y_pool[idx],
                                                             X_static[data.test], C) == y_test
        for m in METHODS:
            test_acc[m][i, j] = float(test_right[m][i, j].mean())
        valid_acc["static"][i, j], static_C[i, j] = va, C
        cpu["static"][i, j] = time.process_time() - c0
        log.event("eval", part="cell", n=n, seed=seed, **{f"{m}_test_acc": test_acc[m][i, j] for m in METHODS},
                  **{f"{m}_valid_acc": valid_acc[m][i, j] for m in METHODS}, best_step=int(best_step[i, j]),
                  steps=int(budget[i, j]),
                  frozen_layer=int(frozen_layer[i, j]), frozen_pooling=str(frozen_pool[i, j]),
                  frozen_C=float(frozen_C[i, j]), static_C=float(static_C[i, j]),
                  finetune_cpu_seconds=float(cpu["fine-tuned"][i, j]))
        bar.update(1)
    bar.close()
    log.event("stop", reason="every cell trained; fine-tuning keeps the best of its validation evaluations "
              f"(a budget of max({s['min_steps']}, ceil({epochs} * n / {s['batch_size']})) steps, the epochs "
              "chosen on validation)", steps=log.steps)
    arrays = {**{f"test_acc/{m}": test_acc[m] for m in METHODS}, **{f"valid_acc/{m}": valid_acc[m] for m in METHODS},
              **{f"test_right/{m}": test_right[m] for m in METHODS},
              "best_step": best_step, "steps": budget, "valid_curves": curves,
              "frozen/layer": frozen_layer, "frozen/pooling": frozen_pool, "frozen/C": frozen_C, "static/C": static_C,
              "grid/valid_acc": grid_valid,
              "epochs/valid_acc": np.array(epoch_valid), "epochs/best_step": np.array(epoch_best, dtype=np.int64)}
    timings = {**{f"cpu_seconds/{m}": cpu[m] for m in METHODS}, "epochs/cpu_seconds": np.array(epoch_cpu),
               "grid/cpu_seconds": np.array([[grid_runs[g, p]["cpu_seconds"] for g in s["grid_lrs"]]
                                             for p in s["grid_poolings"]])}
    meta = {"settings": dict(s), "topics": data.topics, "chosen": {"lr": lr, "pooling": pooling, "epochs": epochs},
            "budget_rule": f"steps = max({s['min_steps']}, ceil({epochs} * n / {s['batch_size']})); epochs chosen "
                           f"among {s['epoch_grid']} on validation at n = {s['epoch_size']}, seed {s['epoch_seed']}",
            "n_articles": {"pool": len(data.pool), "valid": len(data.valid), "test": len(data.test)},
            "timings": timings_to_meta(timings),
            "cpu_seconds_parts": {"encode": encode_cpu, "frozen_features": frozen_feature_cpu,
                                  "static_features": static_feature_cpu},
            "data": "BBC articles of the course corpus, first max_sents sentences; test = the articles of the "
                    "masked-LM validation/test documents (never pre-trained on) without a near-duplicate among "
                    "the pre-training documents"}
    metrics = {"chosen_lr": lr, "chosen_pooling": pooling, "chosen_epochs": epochs,
               **{f"{m}_test_acc_n{n}": float(np.mean(test_acc[m][i])) for m in METHODS
                  for i, n in enumerate(s["sizes"])}}
    return arrays, meta, metrics


@dataclass
class FinetuneResults:
    """The shipped experiment. ``test_acc`` / ``valid_acc`` / ``cpu_seconds``: {method: (sizes,
    seeds)}; ``best_step`` (sizes, seeds) the fine-tuning step kept, of ``steps`` (sizes, seeds)
    the budget; ``valid_curves`` (sizes, seeds, n_evals); ``epoch_valid`` / ``epoch_best_step``
    (one per ``epoch_grid`` entry) the validation accuracy and kept step of the epoch choice; ``frozen`` {'layer', 'pooling', 'C'} and ``static_C`` (sizes, seeds): the
    choices made on validation; ``grid_valid`` (poolings, lrs) and ``chosen`` {'lr', 'pooling', 'epochs'};
    ``settings``, ``meta``, ``train_seconds`` / ``cpu_seconds`` of the whole shipped run."""

    sizes: list
    seeds: list
    test_acc: dict
    valid_acc: dict
    cpu_seconds: dict
    best_step: np.ndarray
    steps: np.ndarray
    valid_curves: np.ndarray
    frozen: dict
    static_C: np.ndarray
    grid_valid: np.ndarray
    epoch_valid: np.ndarray
    epoch_best_step: np.ndarray
    chosen: dict
    settings: dict
    meta: dict
    train_seconds: float
    total_cpu_seconds: float
    test_right: dict = None

    def summary(self) -> list[dict]:
        """[{'method', 'n', 'mean', 'min', 'max', 'sd'}] of the test accuracy over the seeds."""
        out = []
        for m in METHODS:
            for i, n in enumerate(self.sizes):
                a = self.test_acc[m][i]
                out.append({"method": m, "n": int(n), "mean": float(a.mean()), "min": float(a.min()),
                            "max": float(a.max()), "sd": float(a.std(ddof=1))})
        return out

    def paired_difference(self, a: str, b: str, i: int, n_boot: int = 10_000, seed: int = 0) -> tuple:
        """(difference, low, high): method ``a``'s test accuracy minus ``b``'s at size index ``i``
        (each the mean over the seeds), with the 95 % interval of a paired bootstrap over the test
        articles — both methods are scored on the same articles after training on the same subsets,
        so the articles are resampled together (lesson 01's rule for comparisons that share items)."""
        d = self.test_right[a][i].mean(0) - self.test_right[b][i].mean(0)       # (n_test,) per article
        rng = np.random.default_rng(seed)
        boot = d[rng.integers(0, len(d), (n_boot, len(d)))].mean(1)
        return float(d.mean()), float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))

    def compare(self, a: str, b: str, i: int) -> str:
        """'win', 'loss' or 'tie' of method ``a`` against ``b`` at size index ``i``: a win or a loss
        only when the paired interval of :meth:`paired_difference` excludes 0."""
        _, lo, hi = self.paired_difference(a, b, i)
        return "win" if lo > 0 else "loss" if hi < 0 else "tie"


def load_finetune_results(artifact: Artifact) -> FinetuneResults:
    """The results stored by :func:`train_finetune_results` (via :func:`helpers.course.models.load_model`)."""
    a, meta = artifact.arrays, artifact.meta
    s = meta["settings"]
    cpu = timings_from_meta(meta["timings"])
    return FinetuneResults(list(s["sizes"]), list(s["seeds"]),
                           {m: np.asarray(a[f"test_acc/{m}"], dtype=np.float64) for m in METHODS},
                           {m: np.asarray(a[f"valid_acc/{m}"], dtype=np.float64) for m in METHODS},
                           {m: cpu[f"cpu_seconds/{m}"] for m in METHODS},
                           np.asarray(a["best_step"]), np.asarray(a["steps"]), np.asarray(a["valid_curves"]),
                           {"layer": np.asarray(a["frozen/layer"]), "pooling": np.asarray(a["frozen/pooling"]).astype(str),
                            "C": np.asarray(a["frozen/C"])}, np.asarray(a["static/C"]),
                           np.asarray(a["grid/valid_acc"]), np.asarray(a["epochs/valid_acc"]),
                           np.asarray(a["epochs/best_step"]), dict(meta["chosen"]), s, meta,
                           float(meta.get("train_seconds", math.nan)), float(meta.get("cpu_seconds", math.nan)),
                           {m: np.asarray(a[f"test_right/{m}"], dtype=np.float64) for m in METHODS})


def frozen_cell_accuracy(results: FinetuneResults, n: int, seed: int, shipped: ShippedMLM) -> float:
    """Recompute the frozen-feature test accuracy of one cell from scratch: the ``shipped``
    encoder's features of that cell's training articles and of the test articles, logistic
    regression with the layer, pooling and C recorded for the cell."""
    s = results.settings
    i, j = results.sizes.index(n), results.seeds.index(seed)
    data = bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    idx = data.pool[training_subset(data.labels[data.pool], n, seed)]
    layer, pooling = int(results.frozen["layer"][i, j]), str(results.frozen["pooling"][i, j])
    tr, te = (frozen_features(shipped.model, shipped.tok, encode_docs(shipped.tok, [data.docs[k] for k in part],
                                                                       s["max_len"]), (layer,), (pooling,))
              [layer, pooling] for part in (idx, data.test))
    return logreg_test_accuracy(tr, data.labels[idx], te, data.labels[data.test], float(results.frozen["C"][i, j]))


def finetune_subset_metric(results: FinetuneResults, shipped: ShippedMLM) -> tuple[str, float]:
    """('frozen_test_acc_n100_seed0', that cell's frozen-feature test accuracy recomputed with the
    ``shipped`` encoder)."""
    return (f"frozen_test_acc_n{SUBSET['n']}_seed{SUBSET['seed']}",
            frozen_cell_accuracy(results, SUBSET["n"], SUBSET["seed"], shipped))
