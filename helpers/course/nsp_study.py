"""Lesson 10's next-sentence-prediction study (``make models NAME=bert_nsp``; scores only): does BERT's
second pre-training task help?

The shipped encoder's pre-training is continued twice for ``max_steps`` steps on the **same batches of
sentence pairs** ``[CLS] A [SEP] B [SEP]`` (segment 0 for A, 1 for B; B the next sentence of A's training
document half of the time, a sentence of another training document otherwise,
:func:`helpers.lib.mlm.next_sentence_pairs`), masked alike (15 %, 80/10/10), from the same weights (the
shipped ``mlm_bert``), with AdamW (the shipped settings but a peak learning rate of ``lr``, warm-up then
linear decay: a continued pre-training, which a shared machine's CPU time allowed where two
pre-trainings from scratch did not):

- ``mlm``: the masked-LM loss only;
- ``mlm+nsp``: the masked-LM loss plus BERT's NSP loss, a classifier (dense, tanh, linear: BERT's
  pooler) on the final ``[CLS]`` vector, ``L = L_MLM + L_NSP``.

So the only difference is the NSP loss. Measured at the end, for both (paired wherever the items are
shared): the masked-token accuracy on the test split (single sentences, masked once, seed 456, per
sentence); the nearest-sense rounds of lesson 10's word-sense sentences (final layer, the lesson's 200
draws); BBC News topics from frozen features (final layer, mean pooling, logistic regression with C chosen
on validation, the fine-tuning experiment's split, 100 and 1,500 training articles), per test article;
and NSP itself on 2,000 pairs of the test documents: the ``mlm+nsp`` encoder's classifier; the same
classifier trained alone (logistic regression on the final ``[CLS]`` vectors of 4,000 training pairs) on
the frozen ``mlm`` encoder, which never saw the task; and a baseline that reads no encoder at all — the share of pieces A and B have in common, with a threshold
chosen on training pairs (random pairs come from another document, usually on another topic).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.nn import functional as F

from helpers.course.bert_finetune import (
    bbc_finetune_data,
    choose_logreg,
    encode_docs,
    frozen_features,
    logreg_test_predictions,
    training_subset,
)
from helpers.course.causal_lm import wsd_rounds
from helpers.course.corpus import document_sentences
from helpers.course.mlm_model import SETTINGS as MLM_SETTINGS
from helpers.course.mlm_model import TEST_SEED, VALID_SEED, held_out_copies, mlm_sentences, split_of
from helpers.infra.artifacts import Artifact
from helpers.infra.progress import progress_bar
from helpers.infra.runlog import RunLog
from helpers.infra.seeding import make_rng
from helpers.lib.bert import TinyBert, mlm_loss
from helpers.lib.mlm import IGNORE, mask_tokens, next_sentence_pairs, pad_batch
from helpers.lib.pretraining import encode_corpus, evaluate_mlm, fixed_eval_batches

ARMS = ("mlm", "mlm+nsp")
SETTINGS = dict({k: MLM_SETTINGS[k] for k in ("batch_size", "weight_decay", "warmup", "seed")},
                start="mlm_bert", lr=5e-4, max_len=64, max_steps=600, eval_every=200, n_test_pairs=2_000, n_valid_pairs=1_000,
                n_probe_pairs=4_000, pair_seed=789, topic_sizes=[100, 1500], topic_seed=0,
                Cs=[0.01, 0.1, 1.0, 10.0])


def split_documents(split: str) -> list:
    """The documents (lists of sentences) of ``split``, the held-out ones with a copy in training left out."""
    copies = held_out_copies()
    return [list(d) for k, d in enumerate(document_sentences()) if split_of(k) == split and k not in copies]


def pair_batch(tok, pairs) -> tuple:
    """(ids, segments, attention_mask, is_next) tensors of a list of SentencePair."""
    ids, att = pad_batch([p.ids for p in pairs], tok.pad_id)
    seg, _ = pad_batch([p.segments for p in pairs], 0)
    return ids, seg, att, np.array([p.is_next for p in pairs], dtype=np.int64)


class NSPHead(nn.Module):
    """BERT's pooler and classifier on the final [CLS] vector: dense, tanh, linear to 2 (NotNext, IsNext)."""

    def __init__(self, dim: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, 2))

    def forward(self, h):
        return self.net(h[:, 0])


@torch.no_grad()
def nsp_accuracy(model, head, tok, pairs, batch: int = 128) -> np.ndarray:
    """(n,) uint8: the head's answer right or wrong on each pair."""
    model.eval()
    out = []
    for k in range(0, len(pairs), batch):
        ids, seg, att, y = pair_batch(tok, pairs[k:k + batch])
        h = model(torch.as_tensor(ids), torch.as_tensor(att), torch.as_tensor(seg))
        out.append((head(h).argmax(-1).numpy() == y).astype(np.uint8))
    return np.concatenate(out)


@torch.no_grad()
def cls_vectors(model: TinyBert, tok, pairs, batch: int = 128) -> np.ndarray:
    """(n, d) final [CLS] vectors of sentence pairs (what an NSP head reads)."""
    model.eval()
    out = []
    for k in range(0, len(pairs), batch):
        ids, seg, att, _ = pair_batch(tok, pairs[k:k + batch])
        out.append(model(torch.as_tensor(ids), torch.as_tensor(att), torch.as_tensor(seg))[:, 0].numpy())
    return np.concatenate(out)


def nsp_probe(model: TinyBert, tok, train_pairs, test_pairs) -> np.ndarray:
    """An NSP classifier trained alone on a frozen encoder: logistic regression (standardised, C = 1) on
    the final [CLS] vectors of ``train_pairs``; returns (n,) uint8 right on ``test_pairs``."""
    X, Xt = cls_vectors(model, tok, train_pairs), cls_vectors(model, tok, test_pairs)
    y, yt = (np.array([p.is_next for p in ps], dtype=np.int64) for ps in (train_pairs, test_pairs))
    sc = StandardScaler().fit(X)
    clf = LogisticRegression(C=1.0, max_iter=5000).fit(sc.transform(X), y)
    return (clf.predict(sc.transform(Xt)) == yt).astype(np.uint8)


def overlap(pair, n_special: int) -> float:
    """The share of the pieces of A and B (ordinary ids, as sets) they have in common (Jaccard)."""
    ids, seg = np.asarray(pair.ids), np.asarray(pair.segments)
    a = {int(i) for i in ids[seg == 0] if i >= n_special}
    b = {int(i) for i in ids[seg == 1] if i >= n_special}
    return len(a & b) / max(1, len(a | b))


def overlap_baseline(train_pairs, test_pairs, n_special: int) -> tuple[np.ndarray, float]:
    """IsNext when the overlap exceeds a threshold chosen on ``train_pairs`` (the best accuracy, the
    lowest such threshold); returns ((n,) uint8 right on ``test_pairs``, the threshold)."""
    x = np.array([overlap(p, n_special) for p in train_pairs])
    y = np.array([p.is_next for p in train_pairs])
    candidates = np.unique(x)
    acc = [np.mean((x > c) == y) for c in candidates]
    thr = float(candidates[int(np.argmax(acc))])
    xt = np.array([overlap(p, n_special) for p in test_pairs])
    return ((xt > thr) == np.array([p.is_next for p in test_pairs])).astype(np.uint8), thr


@torch.no_grad()
def mlm_sentence_scores(model: TinyBert, batches: list) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence of masked-once batches: masked pieces predicted right and masked pieces, (n,) int64
    each (sentences without a masked piece left out)."""
    model.eval()
    right, count = [], []
    for b in batches:
        x, y, att = (torch.as_tensor(a) for a in (b.inputs, b.labels, b.attention_mask))
        sel = y != IGNORE
        pred = torch.full_like(y, -1)
        if sel.any():
            pred[sel] = model.mlm_logits(model(x, att)[sel]).argmax(-1)
        right.append(((pred == y) & sel).sum(1).numpy())
        count.append(sel.sum(1).numpy())
    right, count = np.concatenate(right), np.concatenate(count)
    return right[count > 0].astype(np.int64), count[count > 0].astype(np.int64)


def topic_rights(model: TinyBert, tok, s: dict) -> dict:
    """{n: (n_test,) uint8}: frozen final-layer mean features + logistic regression (C on validation)."""
    data = bbc_finetune_data(5, 30, 0)
    ids = encode_docs(tok, data.docs, 64)
    layer = model.cfg.n_layers
    X = frozen_features(model, tok, ids, (layer,), ("mean",))[layer, "mean"]
    y = data.labels
    out = {}
    for n in s["topic_sizes"]:
        idx = data.pool[training_subset(y[data.pool], int(n), s["topic_seed"])]
        _, C, _ = choose_logreg({"x": (X[idx], X[data.valid])}, y[idx], y[data.valid], s["Cs"])
        out[n] = (logreg_test_predictions(X[idx], y[idx], X[data.test], C) == y[data.test]).astype(np.uint8)
    return out


def train_nsp_study(settings: dict, log: RunLog, max_steps: int | None = None, progress: bool = True, *,
                    load=None) -> tuple[dict, dict, dict]:
    """Pre-train both arms and measure them (module docstring). ``load``: the registry's ``load_model``
    (the tokenizer is the shipped masked LM's). A step of the log is a step of the ``mlm`` arm, then
    of the ``mlm+nsp`` arm; ``max_steps`` trains that many steps of the first arm and stops (the replay)."""
    if load is None:
        raise TypeError("train_nsp_study needs load=helpers.course.models.load_model (the registry passes it)")
    s = settings
    tok = load("mlm_bert").tok
    sents = mlm_sentences()
    train_docs, valid_docs, test_docs = (split_documents(k) for k in ("train", "valid", "test"))
    valid_mlm = fixed_eval_batches(tok, encode_corpus(tok, sents["valid"], s["max_len"]), seed=VALID_SEED)
    valid_pairs = next_sentence_pairs(tok, valid_docs, s["n_valid_pairs"], make_rng(s["pair_seed"]), s["max_len"])
    start = load(s["start"])
    steps = s["max_steps"] if max_steps is None else min(max_steps, s["max_steps"])
    total, warmup = s["max_steps"], s["warmup"]
    models, heads, curves, cpu = {}, {}, {}, {}
    for arm in ARMS:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(s["seed"])
            model = TinyBert(start.model.cfg, tok.pad_id)
            head = NSPHead(start.model.cfg.dim)
        model.load_state_dict(start.model.state_dict())     # both arms start from the shipped weights
        params = list(model.parameters()) + (list(head.parameters()) if arm == "mlm+nsp" else [])
        opt = torch.optim.AdamW(params, lr=s["lr"], weight_decay=s["weight_decay"], betas=(0.9, 0.98))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda k: min((k + 1) / warmup, max(0.0, (total - k) / max(1, total - warmup))))
        pair_rng, mask_rng = make_rng(s["seed"]), make_rng(s["seed"] + 1)     # the same batches for both arms
        curve = {"step": [], "valid_mlm_acc": [], "valid_nsp_acc": [], "train_mlm": [], "train_nsp": []}
        since_mlm, since_nsp, c0 = [], [], time.process_time()
        model.train()
        bar = progress_bar(total=steps, desc=f"pre-training ({arm})", unit="step", disable=not progress)
        for step in range(1, steps + 1):
            ids, seg, att, is_next = pair_batch(tok, next_sentence_pairs(tok, train_docs, s["batch_size"], pair_rng,
                                                                         s["max_len"]))
            mb = mask_tokens(ids, tok, mask_rng, attention_mask=att)
            x, y, a = (torch.as_tensor(v) for v in (mb.inputs, mb.labels, mb.attention_mask))
            h = model(x, a, torch.as_tensor(seg))
            sel = y != IGNORE
            l_mlm = mlm_loss(model.mlm_logits(h[sel]), y[sel])
            l_nsp = F.cross_entropy(head(h), torch.as_tensor(is_next))
            loss = l_mlm + l_nsp if arm == "mlm+nsp" else l_mlm
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            log.step(loss.item())
            since_mlm.append(l_mlm.item())
            since_nsp.append(l_nsp.item())
            bar.update(1)
            if max_steps is None and (step % s["eval_every"] == 0 or step == steps):
                v_mlm = evaluate_mlm(model, valid_mlm)["accuracy"]
                v_nsp = float(nsp_accuracy(model, head, tok, valid_pairs).mean())
                for k, v in (("step", step), ("valid_mlm_acc", v_mlm), ("valid_nsp_acc", v_nsp),
                             ("train_mlm", float(np.mean(since_mlm))), ("train_nsp", float(np.mean(since_nsp)))):
                    curve[k].append(v)
                since_mlm, since_nsp = [], []
                log.event("eval", arm=arm, step=step, valid_mlm_acc=v_mlm, valid_nsp_acc=v_nsp,
                          train_mlm=curve["train_mlm"][-1], train_nsp=curve["train_nsp"][-1],
                          cpu_seconds=time.process_time() - c0)
                model.train()
        bar.close()
        cpu[arm] = time.process_time() - c0
        models[arm], heads[arm], curves[arm] = model.eval(), head.eval(), curve
        if max_steps is not None:
            break                               # the replay: the log's first steps are the first arm's
    log.event("stop", reason=f"the step cap max_steps={steps} for each arm (the learning rate reaches 0 there)"
              if max_steps is None else f"max_steps={max_steps}", steps=2 * steps if max_steps is None else steps)
    if max_steps is not None:
        return {}, {"settings": dict(s)}, {}
    # ---------------------------------------------------------------- the measurements
    test_mlm = fixed_eval_batches(tok, encode_corpus(tok, sents["test"], s["max_len"]), seed=TEST_SEED)
    test_pairs = next_sentence_pairs(tok, test_docs, s["n_test_pairs"], make_rng(s["pair_seed"] + 1), s["max_len"])
    probe_pairs = next_sentence_pairs(tok, train_docs, s["n_probe_pairs"], make_rng(s["pair_seed"] + 2), s["max_len"])
    arrays, metrics = {}, {}
    for arm in ARMS:
        right, count = mlm_sentence_scores(models[arm], test_mlm)
        arrays[f"{arm}/mlm_right"], arrays[f"{arm}/mlm_count"] = right, count
        for w, r in wsd_rounds(models[arm], tok).items():
            arrays[f"{arm}/wsd/{w}"] = r[-1]                          # the final layer
        for n, r in topic_rights(models[arm], tok, s).items():
            arrays[f"{arm}/topics_{n}"] = r
        if arm == "mlm+nsp":
            arrays[f"{arm}/nsp_right"] = nsp_accuracy(models[arm], heads[arm], tok, test_pairs)
        else:                                   # the NSP head trained alone on the frozen MLM-only encoder
            arrays[f"{arm}/nsp_right"] = nsp_probe(models[arm], tok, probe_pairs, test_pairs)
        for k, v in curves[arm].items():
            arrays[f"{arm}/curve/{k}"] = np.asarray(v)
        metrics[f"{arm}_test_mlm_acc"] = float(right.sum() / count.sum())
        metrics[f"{arm}_test_nsp_acc"] = float(arrays[f"{arm}/nsp_right"].mean())
        metrics[f"{arm}_cpu_seconds"] = cpu[arm]
    arrays["overlap/nsp_right"], thr = overlap_baseline(probe_pairs, test_pairs, len(tok.special_ids))
    metrics["overlap_test_nsp_acc"] = float(arrays["overlap/nsp_right"].mean())
    meta = {"settings": dict(s), "config": asdict(start.model.cfg), "metrics": metrics, "overlap_threshold": thr,
            "n_test_pairs": len(test_pairs), "test_is_next_share": float(np.mean([p.is_next for p in test_pairs])),
            "data": "sentence pairs of the masked-LM training documents (NSP test pairs: of the test documents); "
                    "masked-token accuracy on the test split's single sentences; BBC topics: the fine-tuning "
                    "experiment's split"}
    return arrays, meta, metrics


@dataclass
class NSPStudy:
    """What :func:`train_nsp_study` measured, per arm ('mlm', 'mlm+nsp'): ``arrays[arm]`` {name: array}
    (mlm_right, mlm_count, wsd/<word>, topics_<n>, nsp_right, curve/<k>), ``overlap_right`` (the
    baseline's answers on the NSP test pairs), ``metrics`` and ``meta``."""

    arrays: dict
    overlap_right: np.ndarray
    metrics: dict
    meta: dict

    def mlm_accuracy(self, arm: str) -> float:
        a = self.arrays[arm]
        return float(a["mlm_right"].sum() / a["mlm_count"].sum())

    def wsd_rounds(self, arm: str) -> np.ndarray:
        """(repeats,) accuracy per round, mean over the six words (final layer)."""
        a = self.arrays[arm]
        return np.mean([a[k] for k in sorted(a) if k.startswith("wsd/")], axis=0)


def load_nsp_study(artifact: Artifact) -> NSPStudy:
    """The records stored by :func:`train_nsp_study` (via ``load_model``)."""
    a = artifact.arrays
    arms = {arm: {k[len(arm) + 1:]: np.asarray(v) for k, v in a.items() if k.startswith(arm + "/")} for arm in ARMS}
    return NSPStudy(arms, np.asarray(a["overlap/nsp_right"]), dict(artifact.meta["metrics"]), dict(artifact.meta))


def nsp_subset_metric(study: NSPStudy) -> tuple[str, float]:
    """('mlm+nsp_test_nsp_acc', the NSP test accuracy) from the stored per-pair answers, which must
    equal the recorded metric."""
    acc = float(study.arrays["mlm+nsp"]["nsp_right"].mean())
    if abs(acc - study.metrics["mlm+nsp_test_nsp_acc"]) > 1e-12:
        raise ValueError(f"the stored answers give {acc}, the record says {study.metrics['mlm+nsp_test_nsp_acc']}")
    return "mlm+nsp_test_nsp_acc", acc
