"""Lesson 10's fine-tuning experiment: the shipped small BERT fine-tuned on BBC News topics,
against its frozen features and static word vectors (``load_model("bert_finetune")``)."""
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
from helpers.infra.artifacts import Artifact, timings_from_meta
from helpers.infra.progress import progress_bar
from helpers.lib.bert import TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import encode_sentence, pad_batch
from helpers.lib.pretraining import warmup_linear_decay
from helpers.lib.stats import resamples

METHODS = ("fine-tuned", "frozen", "static")
POOLINGS = ("mean", "cls")


# ---------------------------------------------------------------- data
@dataclass
class BBCData:
    """The experiment's articles: ``docs``, ``labels`` (N,), ``topics``, ``doc_index`` (N,) and
    the disjoint index arrays ``pool``, ``valid``, ``test`` into ``docs``."""

    docs: list
    labels: np.ndarray
    topics: list
    doc_index: np.ndarray
    pool: np.ndarray
    valid: np.ndarray
    test: np.ndarray


@lru_cache(maxsize=2)
def bbc_finetune_data(max_sents: int = 5, n_valid_per_topic: int = 30,
                      valid_seed: int = 0) -> BBCData:
    """The split of the module docstring (cached)."""
    if max_sents < 1:
        raise ValueError(f"max_sents must be at least 1, got {max_sents}")
    sources = [s for s, _ in modern_english_documents()]
    docs_all = document_sentences()
    if len(sources) != len(docs_all):
        raise RuntimeError(f"{len(sources)} sources but {len(docs_all)} documents: the corpus "
                           "changed")
    topics = sorted({s.split(":", 1)[1] for s in sources if s.startswith("bbc:")})
    copies = held_out_copies()
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
    valid = np.sort(np.concatenate([
        rng.choice(np.flatnonzero(pretrain & (y == c)), n_valid_per_topic, replace=False)
        for c in range(len(topics))]))
    pool = np.setdiff1d(np.flatnonzero(pretrain), valid)
    test = np.flatnonzero(~pretrain & ~copied)
    return BBCData(docs, y, topics, np.array(index), pool, valid, test)


def training_subset(labels: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Sorted positions of a stratified random subset of size ``n`` of ``labels``."""
    labels = np.asarray(labels)
    k = len(np.unique(labels))
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"n must be an integer, got {type(n).__name__}")
    if n < k or n > len(labels):
        raise ValueError(f"a training set of n={n} articles must hold one of each of the {k} "
                         f"topics and fit in the pool of {len(labels)}")
    if n == len(labels):
        return np.arange(n)
    idx, _ = train_test_split(np.arange(len(labels)), train_size=n, stratify=labels,
                              random_state=1000 + seed)
    return np.sort(idx)


def encode_docs(tok: BPETokenizer, docs, max_len: int = 64) -> list[list[np.ndarray]]:
    """Every article as a list of ``[CLS] pieces [SEP]`` id arrays, one per sentence."""
    return [[encode_sentence(tok, s, max_len) for s in d] for d in docs]


def doc_batch(tok: BPETokenizer, docs_ids) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The sentences of several articles as one batch: ids (S, L) int64, attention_mask (S, L)
    bool, owner (S,) int64, the article (0 .. len(docs_ids) - 1) of each sentence."""
    seqs, owner = [], []
    for j, d in enumerate(docs_ids):
        if not len(d):
            raise ValueError(f"article {j} of the batch has no sentence")
        seqs += d
        owner += [j] * len(d)
    ids, att = pad_batch(seqs, tok.pad_id)
    return torch.as_tensor(ids), torch.as_tensor(att), torch.as_tensor(owner)


def pool_articles(h: torch.Tensor, ids: torch.Tensor, att: torch.Tensor, owner: torch.Tensor,
                  n_docs: int, n_special: int, pooling: str = "mean") -> torch.Tensor:
    """(S, L, d) sentence vectors -> (n_docs, d) article vectors by ``pooling`` (see the module)."""
    if pooling == "mean":
        keep = (att & (ids >= n_special)).to(h.dtype)[..., None]
        sums = torch.zeros(n_docs, h.shape[-1], dtype=h.dtype).index_add(0, owner,
                                                                          (h * keep).sum(1))
        count = torch.zeros(n_docs, dtype=h.dtype).index_add(0, owner, keep.sum((1, 2)))
    elif pooling == "cls":
        sums = torch.zeros(n_docs, h.shape[-1], dtype=h.dtype).index_add(0, owner, h[:, 0])
        count = torch.zeros(n_docs, dtype=h.dtype).index_add(0, owner,
                                                              torch.ones(len(owner), dtype=h.dtype))
    else:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    return sums / count.clamp(min=1)[:, None]


# ---------------------------------------------------------------- fine-tuning
class ArticleClassifier(nn.Module):
    """The pre-trained encoder with a new linear head on the pooled article vector:
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
        pooled = pool_articles(h, ids, attention_mask, owner, n_docs, self.n_special, self.pooling)
        return self.head(self.drop(pooled))


@torch.no_grad()
def classifier_predictions(model: ArticleClassifier, tok: BPETokenizer, docs_ids,
                           chunk: int = 16) -> np.ndarray:
    """The topic ``model`` predicts for each article, (N,) int64 (eval mode, ``chunk`` at once)."""
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
    """The accuracy of ``model`` on the articles ``docs_ids``."""
    return float((classifier_predictions(model, tok, docs_ids, chunk) == np.asarray(labels)).mean())


def copy_encoder(shipped: ShippedMLM) -> TinyBert:
    """A fresh trainable copy of the shipped encoder (the shipped model is left untouched)."""
    enc = TinyBert(shipped.model.cfg, shipped.tok.pad_id)
    enc.load_state_dict(shipped.model.state_dict())
    return enc.train()


def finetune_run(shipped: ShippedMLM, train_ids, train_y: np.ndarray, valid_ids,
                 valid_y: np.ndarray, settings: dict, lr: float, pooling: str, seed: int,
                 n_classes: int, log=None, max_steps: int | None = None, progress: bool = False,
                 desc: str = "fine-tuning") -> dict:
    """Fine-tune a copy of the shipped encoder plus a new head on ``train_ids`` / ``train_y``,
    keeping the best of ``n_evals`` validation measurements. Returns {'model', 'best_step',
    'valid_acc', 'curve': {'step', 'valid_acc'}, 'losses', 'cpu_seconds'}."""
    s = settings
    if len(train_ids) != len(train_y) or not len(train_y):
        raise ValueError(f"{len(train_ids)} training articles but {len(train_y)} labels")
    c0 = time.process_time()
    total = int(s["steps"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)                  # the head's initial weights and the dropout masks
        model = ArticleClassifier(copy_encoder(shipped), n_classes, len(shipped.tok.special_ids),
                                  pooling, s["head_dropout"])
        opt = torch.optim.AdamW([{"params": model.encoder.parameters(), "lr": lr},
                                 {"params": model.head.parameters(), "lr": s["head_lr"]}],
                                weight_decay=s["weight_decay"])
        sched = warmup_linear_decay(opt, max(1, round(total * s["warmup"])), total)
        evals = sorted({max(1, round(total * q / s["n_evals"]))
                        for q in range(1, s["n_evals"] + 1)})
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
                    weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
                    best = (va, step, weights)
        bar.close()
    if best[2] is not None:
        model.load_state_dict(best[2])
    return {"model": model.eval(), "best_step": best[1], "valid_acc": best[0], "curve": curve,
            "losses": losses, "cpu_seconds": time.process_time() - c0}


# ---------------------------------------------------------------- static features, classifiers
def static_features(W: np.ndarray, stoi: dict, docs) -> np.ndarray:
    """(N, D) float32: each article's average of its known words' unit-length vectors."""
    U = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-12)
    out = np.zeros((len(docs), W.shape[1]), dtype=np.float32)
    for j, d in enumerate(docs):
        rows = [stoi[w] for s in d for w in s if w in stoi]
        if rows:
            out[j] = U[rows].mean(0)
    return out


def static_vectors_of(vectors) -> tuple[np.ndarray, dict]:
    """(W float32, stoi) of shipped word vectors, given as ``load_model`` returns them."""
    W, _, vocab, _ = vectors
    return np.asarray(W, dtype=np.float32), dict(vocab.stoi)


def fit_logreg(X_train: np.ndarray, y_train: np.ndarray,
               C: float) -> tuple[StandardScaler, LogisticRegression]:
    """Standardise on the training articles, then multinomial logistic regression with ``C``."""
    sc = StandardScaler().fit(X_train)
    return sc, LogisticRegression(C=C, max_iter=5000).fit(sc.transform(X_train), y_train)


def choose_logreg(candidates: dict, y_train: np.ndarray, y_valid: np.ndarray, Cs) -> tuple:
    """The best (key, C, valid_acc) on validation of ``candidates`` {key: (X_train, X_valid)};
    ties go to the first key, then the smaller C."""
    best = None
    for key, (Xt, Xv) in candidates.items():
        for C in Cs:
            sc, clf = fit_logreg(Xt, y_train, C)
            va = float(clf.score(sc.transform(Xv), y_valid))
            if best is None or va > best[2]:
                best = (key, C, va)
    return best


def logreg_test_predictions(X_train, y_train, X_test, C: float) -> np.ndarray:
    """The labels a logistic regression with ``C`` fitted on (X_train, y_train) gives X_test."""
    sc, clf = fit_logreg(X_train, y_train, C)
    return clf.predict(sc.transform(X_test)).astype(np.int64)


# ---------------------------------------------------------------- the shipped record
@dataclass
class FinetuneResults:
    """The shipped experiment: ``test_acc`` / ``valid_acc`` {method: (sizes, seeds)},
    ``test_right`` {method: (sizes, seeds, n_test)}, and the choices made on validation."""

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

    def paired_difference(self, a: str, b: str, i: int, n_boot: int = 10_000,
                          seed: int = 0) -> tuple:
        """(difference, low, high): method ``a``'s test accuracy minus ``b``'s at size index ``i``,
        with the 95 % interval of a paired bootstrap over the test articles."""
        d = self.test_right[a][i].mean(0) - self.test_right[b][i].mean(0)       # (n_test,)
        boot = d[resamples(len(d), n_boot, seed)].mean(1)
        return float(d.mean()), float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))

    def compare(self, a: str, b: str, i: int) -> str:
        """'win', 'loss' or 'tie' of method ``a`` against ``b`` at size index ``i``."""
        _, lo, hi = self.paired_difference(a, b, i)
        return "win" if lo > 0 else "loss" if hi < 0 else "tie"


def load_finetune_results(artifact: Artifact) -> FinetuneResults:
    """The record of ``bert_finetune`` from its checked artefact."""
    a, meta = artifact.arrays, artifact.meta
    s = meta["settings"]
    cpu = timings_from_meta(meta["timings"])
    per_method = {key: {m: np.asarray(a[f"{key}/{m}"], dtype=np.float64) for m in METHODS}
                  for key in ("test_acc", "valid_acc", "test_right")}
    frozen = {"layer": np.asarray(a["frozen/layer"]),
              "pooling": np.asarray(a["frozen/pooling"]).astype(str),
              "C": np.asarray(a["frozen/C"])}
    return FinetuneResults(list(s["sizes"]), list(s["seeds"]), per_method["test_acc"],
                           per_method["valid_acc"], {m: cpu[f"cpu_seconds/{m}"] for m in METHODS},
                           np.asarray(a["best_step"]), np.asarray(a["steps"]),
                           np.asarray(a["valid_curves"]), frozen, np.asarray(a["static/C"]),
                           np.asarray(a["grid/valid_acc"]), np.asarray(a["epochs/valid_acc"]),
                           np.asarray(a["epochs/best_step"]), dict(meta["chosen"]), s, meta,
                           float(meta.get("train_seconds", math.nan)),
                           float(meta.get("cpu_seconds", math.nan)), per_method["test_right"])
