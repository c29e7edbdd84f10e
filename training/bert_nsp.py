"""Recipe of ``bert_nsp``: lesson 10's next-sentence-prediction study (scores only). Does BERT's
second pre-training task help?

The shipped encoder's pre-training is continued twice for ``max_steps`` steps on the same
batches of sentence pairs ``[CLS] A [SEP] B [SEP]`` (B the next sentence of A half of the time,
a sentence of another training document otherwise), masked alike (15 %, 80/10/10), from the same
weights, with AdamW at a peak rate of ``lr`` (warm-up, then linear decay): ``mlm`` with the
masked-LM loss only, ``mlm+nsp`` with BERT's NSP loss added (a pooler and classifier on the final
``[CLS]`` vector). Measured for both, paired wherever the items are shared: masked-token accuracy
on the test split (per sentence), the nearest-sense rounds (final layer), BBC topics from frozen
features (100 and 1,500 training articles, per test article), and NSP on 2,000 pairs of the test
documents: the ``mlm+nsp`` classifier, the same classifier trained alone on the frozen ``mlm``
encoder, and a baseline that reads no encoder (the share of pieces A and B have in common).
"""
from __future__ import annotations

import time
from dataclasses import asdict

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
    logreg_test_predictions,
    training_subset,
)
from helpers.course.contextual_studies import NSP_ARMS, NSPStudy
from helpers.course.corpus import document_sentences
from helpers.course.mlm_model import TEST_SEED, VALID_SEED, held_out_copies, mlm_sentences, split_of
from helpers.infra.seeding import make_rng
from helpers.lib.bert import TinyBert, mlm_loss
from helpers.lib.mlm import IGNORE, mask_tokens, next_sentence_pairs, pad_batch
from helpers.lib.pretraining import (
    encode_corpus,
    fixed_eval_batches,
    warmup_linear_decay,
)
from training.bert_finetune import frozen_features
from training.gpt_contrast import wsd_rounds
from training.loop import train_steps
from training.mlm_bert import SETTINGS as MLM_SETTINGS
from training.mlm_bert import evaluate_mlm
from training.runlog import RunLog

SETTINGS = dict({k: MLM_SETTINGS[k] for k in ("batch_size", "weight_decay", "warmup", "seed")},
                start="mlm_bert", lr=5e-4, max_len=64, max_steps=600, eval_every=200,
                n_test_pairs=2_000, n_valid_pairs=1_000, n_probe_pairs=4_000, pair_seed=789,
                topic_sizes=[100, 1500], topic_seed=0, Cs=[0.01, 0.1, 1.0, 10.0])


def split_documents(split: str) -> list:
    """The documents (lists of sentences) of ``split``, without the held-out ones that have a
    copy in training."""
    copies = held_out_copies()
    return [list(d) for k, d in enumerate(document_sentences())
            if split_of(k) == split and k not in copies]


def pair_batch(tok, pairs) -> tuple:
    """(ids, segments, attention_mask, is_next) arrays of a list of SentencePair."""
    ids, att = pad_batch([p.ids for p in pairs], tok.pad_id)
    seg, _ = pad_batch([p.segments for p in pairs], 0)
    return ids, seg, att, np.array([p.is_next for p in pairs], dtype=np.int64)


class NSPHead(nn.Module):
    """BERT's pooler and classifier on the final [CLS] vector: dense, tanh, linear to 2
    (NotNext, IsNext)."""

    def __init__(self, dim: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, 2))

    def forward(self, h):
        return self.net(h[:, 0])


@torch.no_grad()
def encode_pairs(model: TinyBert, tok, pairs, batch: int = 128):
    """Yield (final vectors (b, L, d), is_next (b,)) of ``pairs``, ``batch`` at once (eval mode)."""
    model.eval()
    for k in range(0, len(pairs), batch):
        ids, seg, att, y = pair_batch(tok, pairs[k:k + batch])
        yield model(torch.as_tensor(ids), torch.as_tensor(att), torch.as_tensor(seg)), y


@torch.no_grad()
def nsp_accuracy(model, head, tok, pairs) -> np.ndarray:
    """(n,) uint8: the head's answer right or wrong on each pair."""
    return np.concatenate([(head(h).argmax(-1).numpy() == y).astype(np.uint8)
                           for h, y in encode_pairs(model, tok, pairs)])


def nsp_probe(model: TinyBert, tok, train_pairs, test_pairs) -> np.ndarray:
    """NSP learned alone on a frozen encoder: logistic regression (standardised, C = 1) on the
    final [CLS] vectors of ``train_pairs``; (n,) uint8 right on ``test_pairs``."""
    X, Xt = (np.concatenate([h[:, 0].numpy() for h, _ in encode_pairs(model, tok, ps)])
             for ps in (train_pairs, test_pairs))
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
    """IsNext when the overlap exceeds a threshold chosen on ``train_pairs`` (the best accuracy,
    the lowest such threshold): ((n,) uint8 right on ``test_pairs``, the threshold)."""
    x = np.array([overlap(p, n_special) for p in train_pairs])
    y = np.array([p.is_next for p in train_pairs])
    candidates = np.unique(x)
    thr = float(candidates[int(np.argmax([np.mean((x > c) == y) for c in candidates]))])
    xt = np.array([overlap(p, n_special) for p in test_pairs])
    return ((xt > thr) == np.array([p.is_next for p in test_pairs])).astype(np.uint8), thr


@torch.no_grad()
def mlm_sentence_scores(model: TinyBert, batches: list) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence of masked-once batches: masked pieces predicted right and masked pieces,
    (n,) int64 each (sentences without a masked piece left out)."""
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
    """{n: (n_test,) uint8}: frozen final-layer mean features + logistic regression (C chosen
    on validation), for each training-set size n."""
    data = bbc_finetune_data(5, 30, 0)
    layer = model.cfg.n_layers
    docs = encode_docs(tok, data.docs, 64)
    X = frozen_features(model, tok, docs, (layer,), ("mean",))[layer, "mean"]
    y = data.labels
    out = {}
    for n in s["topic_sizes"]:
        idx = data.pool[training_subset(y[data.pool], int(n), s["topic_seed"])]
        _, C, _ = choose_logreg({"x": (X[idx], X[data.valid])}, y[idx], y[data.valid], s["Cs"])
        pred = logreg_test_predictions(X[idx], y[idx], X[data.test], C)
        out[n] = (pred == y[data.test]).astype(np.uint8)
    return out


def continue_pretraining(arm: str, start, tok, train_docs, valid_mlm, valid_pairs, s: dict,
                         log: RunLog, max_steps: int | None, progress: bool):
    """One arm's continued pre-training from the shipped weights: (model, head, curve, CPU s)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(s["seed"])
        model = TinyBert(start.model.cfg, tok.pad_id)
        head = NSPHead(start.model.cfg.dim)
    model.load_state_dict(start.model.state_dict())
    params = list(model.parameters()) + (list(head.parameters()) if arm == "mlm+nsp" else [])
    opt = torch.optim.AdamW(params, lr=s["lr"], weight_decay=s["weight_decay"], betas=(0.9, 0.98))
    sched = warmup_linear_decay(opt, s["warmup"], s["max_steps"])
    pair_rng, mask_rng = make_rng(s["seed"]), make_rng(s["seed"] + 1)    # the same batches for both
    since = {"mlm": [], "nsp": []}
    model.train()
    c0 = time.process_time()

    def step(k):
        pairs = next_sentence_pairs(tok, train_docs, s["batch_size"], pair_rng, s["max_len"])
        ids, seg, att, is_next = pair_batch(tok, pairs)
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
        since["mlm"].append(l_mlm.item())
        since["nsp"].append(l_nsp.item())
        return loss.item()

    def evaluate(k):
        out = {"valid_mlm_acc": evaluate_mlm(model, valid_mlm)["accuracy"],
               "valid_nsp_acc": float(nsp_accuracy(model, head, tok, valid_pairs).mean()),
               "train_mlm": float(np.mean(since["mlm"])), "train_nsp": float(np.mean(since["nsp"]))}
        since["mlm"], since["nsp"] = [], []
        model.train()
        return out

    run = train_steps(step, s["max_steps"], log, evaluate=evaluate, eval_every=s["eval_every"],
                      eval_at_end=True, limit=max_steps, log_fields={"arm": arm},
                      curve=("step", "valid_mlm_acc", "valid_nsp_acc", "train_mlm", "train_nsp"),
                      cap_reason=f"the step cap max_steps={s['max_steps']} (the learning rate "
                                 "reaches 0 there)",
                      desc=f"pre-training ({arm})", progress=progress)
    return model.eval(), head.eval(), run.curve, time.process_time() - c0


def train(settings: dict, log: RunLog, max_steps: int | None = None, progress: bool = True, *,
          load=None) -> tuple[dict, dict, dict]:
    """Pre-train both arms and measure them; return (arrays, meta, metrics). ``load``: the
    registry's ``load_model`` (the tokenizer and the starting weights are the shipped masked LM's).
    ``max_steps``: that many steps of the first arm only (a replay of the first steps)."""
    if load is None:
        raise TypeError("bert_nsp's train needs load=helpers.course.models.load_model")
    s = settings
    start = load(s["start"])
    tok = start.tok
    sents = mlm_sentences()
    train_docs, test_docs = split_documents("train"), split_documents("test")
    valid_seqs = encode_corpus(tok, sents["valid"], s["max_len"])
    valid_mlm = fixed_eval_batches(tok, valid_seqs, seed=VALID_SEED)
    valid_pairs = next_sentence_pairs(tok, split_documents("valid"), s["n_valid_pairs"],
                                      make_rng(s["pair_seed"]), s["max_len"])
    arms = {}
    for arm in NSP_ARMS:
        arms[arm] = continue_pretraining(arm, start, tok, train_docs, valid_mlm, valid_pairs, s,
                                         log, max_steps, progress)
        if max_steps is not None:
            return {}, {"settings": dict(s)}, {}
    test_seqs = encode_corpus(tok, sents["test"], s["max_len"])
    test_mlm = fixed_eval_batches(tok, test_seqs, seed=TEST_SEED)
    test_pairs = next_sentence_pairs(tok, test_docs, s["n_test_pairs"],
                                     make_rng(s["pair_seed"] + 1), s["max_len"])
    probe_pairs = next_sentence_pairs(tok, train_docs, s["n_probe_pairs"],
                                      make_rng(s["pair_seed"] + 2), s["max_len"])
    arrays, metrics = {}, {}
    for arm, (model, head, curve, cpu) in arms.items():
        right, count = mlm_sentence_scores(model, test_mlm)
        arrays[f"{arm}/mlm_right"], arrays[f"{arm}/mlm_count"] = right, count
        for w, r in wsd_rounds(model, tok).items():
            arrays[f"{arm}/wsd/{w}"] = r[-1]                          # the final layer
        for n, r in topic_rights(model, tok, s).items():
            arrays[f"{arm}/topics_{n}"] = r
        if arm == "mlm+nsp":
            arrays[f"{arm}/nsp_right"] = nsp_accuracy(model, head, tok, test_pairs)
        else:                               # the NSP head trained alone on the frozen encoder
            arrays[f"{arm}/nsp_right"] = nsp_probe(model, tok, probe_pairs, test_pairs)
        for k, v in curve.items():
            arrays[f"{arm}/curve/{k}"] = np.asarray(v)
        metrics[f"{arm}_test_mlm_acc"] = float(right.sum() / count.sum())
        metrics[f"{arm}_test_nsp_acc"] = float(arrays[f"{arm}/nsp_right"].mean())
        metrics[f"{arm}_cpu_seconds"] = cpu
    right, thr = overlap_baseline(probe_pairs, test_pairs, len(tok.special_ids))
    arrays["overlap/nsp_right"] = right
    metrics["overlap_test_nsp_acc"] = float(arrays["overlap/nsp_right"].mean())
    meta = {"settings": dict(s), "config": asdict(start.model.cfg), "metrics": metrics,
            "overlap_threshold": thr, "n_test_pairs": len(test_pairs),
            "test_is_next_share": float(np.mean([p.is_next for p in test_pairs])),
            "data": "sentence pairs of the masked-LM training documents (NSP test pairs: of the "
                    "test documents); masked-token accuracy on the test split's single sentences; "
                    "BBC topics: the fine-tuning experiment's split"}
    return arrays, meta, metrics


def subset_metric(study: NSPStudy) -> tuple[str, float]:
    """('mlm+nsp_test_nsp_acc', the NSP test accuracy) from the stored per-pair answers, which
    must give the recorded metric."""
    acc = float(study.arrays["mlm+nsp"]["nsp_right"].mean())
    if abs(acc - study.metrics["mlm+nsp_test_nsp_acc"]) > 1e-12:
        raise ValueError(f"the stored answers give {acc}, the record says "
                         f"{study.metrics['mlm+nsp_test_nsp_acc']}")
    return "mlm+nsp_test_nsp_acc", acc
