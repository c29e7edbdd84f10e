"""Lesson 10's small BERT, pre-trained by masked language modelling: the shipped model
``data/models/mlm_bert.npz`` (``make models NAME=mlm_bert``).

Data: the course's modern-English corpus (Wikipedia + BBC News) as sentences per document
(:func:`helpers.course.corpus.document_sentences`), split **by document** k (its index):
validation ``k % 20 == 0``, test ``k % 20 == 10``, training the other 90 %; a held-out document with
a near-duplicate among the training documents (the BBC collection files some stories twice) is
left out (:func:`held_out_copies`). A 4,000-piece BPE
tokenizer is learned on the training documents only; every sentence becomes ``[CLS] pieces [SEP]``
(at most 64 pieces).

Model: :class:`helpers.lib.bert.TinyBert` (2 Pre-LN layers, 128 wide, 4 heads, feed-forward 256,
no dropout, input and output embeddings tied), the embedding table started from word2vec
vectors of the pieces (:func:`helpers.lib.pretraining.piece_word2vec`). AdamW (betas 0.9/0.98,
weight decay 0.01), 50 warm-up steps then linear decay to 0 at ``max_steps``, clipping at 1,
batches of 64 length-bucketed sentences masked afresh every time (15 %, 80/10/10).
The evidence for these settings is recorded in ``data/models/records/mlm_bert_settings.md`` (written
by ``python -m helpers.course.mlm_settings``): the CPU cost of a step of this size and of two larger
ones (which do not fit the CPU budget of ``make models``), the validation accuracy after a few hundred
steps from random and from word2vec embeddings (the head start), and the shipped run's own validation
curve, whose last fifth added less than a point (the flattening criterion) while the training loss was
still falling — a longer run is the first thing to try with more CPU. The learning rate, warm-up and
batch size were not searched there, and the record claims nothing more for them.

Every ``eval_every`` steps the whole validation split, masked once (seed 123, every chosen
position shown as ``[MASK]``), gives the masked-token accuracy; early stopping (patience
``patience`` evaluations, ``min_delta``) keeps the best weights. The test split (masked once,
seed 456) gives the final numbers only, beside the unigram baseline (always guess the most
frequent piece). The recorded subset metric is the test accuracy on the first ``SUBSET`` test
sentences.
"""
from __future__ import annotations

import hashlib
import math
import time
from collections import Counter
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import nn

from helpers.course.corpus import document_groups, document_sentences
from helpers.infra.artifacts import (
    Artifact,
    arrays_to_curves,
    arrays_to_state_dict,
    curves_to_arrays,
    state_dict_to_arrays,
)
from helpers.infra.cache import cached, settings_version
from helpers.infra.early_stopping import EarlyStopping
from helpers.infra.progress import progress_bar
from helpers.infra.runlog import RunLog
from helpers.infra.seeding import make_rng
from helpers.lib.bert import BertConfig, TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.near_duplicates import without_copies
from helpers.lib.pretraining import (
    encode_corpus,
    evaluate_mlm,
    fixed_eval_batches,
    mlm_update,
    next_masked_batch,
    piece_word2vec,
    unigram_baseline,
)

SETTINGS = dict(vocab_size=4000, max_len=64, dim=128, n_layers=2, n_heads=4, ff_dim=256, dropout=0.0,
                batch_size=64, lr=2e-3, weight_decay=0.01, warmup=50, max_steps=8_000, eval_every=500,
                patience=4, min_delta=1e-3, w2v_init=True, seed=0)
SUBSET = 1000                 # test sentences of the recorded subset metric
VALID_SEED, TEST_SEED = 123, 456


def split_of(k: int) -> str:
    """'valid', 'test' or 'train' for document number ``k`` of :func:`document_sentences`."""
    return "valid" if k % 20 == 0 else "test" if k % 20 == 10 else "train"


@lru_cache(maxsize=1)
def held_out_copies() -> frozenset:
    """Numbers k of the validation and test documents that have a near-duplicate among the training
    documents (:func:`helpers.course.corpus.document_groups`: the BBC collection files some stories
    twice): 17 + 17 of the 233. They are left out of both held-out splits (and not trained on), so
    the held-out accuracy is measured on text the model has not read."""
    docs, groups = document_sentences(), document_groups()
    if len(docs) != len(groups):
        raise RuntimeError(f"{len(docs)} documents with sentences but {len(groups)} texts: the corpus changed")
    train = [k for k in range(len(docs)) if split_of(k) == "train"]
    held_out = [k for k in range(len(docs)) if split_of(k) != "train"]
    return frozenset(held_out) - frozenset(without_copies(held_out, train, groups).tolist())


@lru_cache(maxsize=1)
def mlm_sentences() -> dict:
    """{'train', 'valid', 'test'}: the sentences (lists of words) of each split, split by document
    (:func:`split_of`), the held-out documents with a copy in training left out (:func:`held_out_copies`)."""
    out, copies = {"train": [], "valid": [], "test": []}, held_out_copies()
    for k, doc in enumerate(document_sentences()):
        if k not in copies:
            out[split_of(k)] += [list(s) for s in doc]
    return out


@lru_cache(maxsize=2)
def train_tokenizer(vocab_size: int) -> BPETokenizer:
    """The BPE tokenizer learned on the training documents (about a minute)."""
    return BPETokenizer.train(Counter(w for s in mlm_sentences()["train"] for w in s), vocab_size=vocab_size)


def model_config(settings: dict, vocab_size: int) -> BertConfig:
    """The :class:`BertConfig` of ``settings``."""
    s = settings
    return BertConfig(vocab_size=vocab_size, dim=s["dim"], n_layers=s["n_layers"], n_heads=s["n_heads"],
                      ff_dim=s["ff_dim"], max_len=s["max_len"], dropout=s["dropout"])


def piece_vectors(tok: BPETokenizer, train: list, settings: dict) -> np.ndarray:
    """The word2vec head start of the embedding table: :func:`helpers.lib.pretraining.piece_word2vec`
    of ``train`` (scale 0.1), built once per corpus and settings and then read from the cache
    (:func:`helpers.infra.cache.cached`; about a minute to build). Every trainer of lesson 10 that
    starts from word2vec starts from these vectors."""
    h = hashlib.sha256(np.concatenate(train).astype(np.int64).tobytes()).hexdigest()[:16]
    version = settings_version({"dim": settings["dim"], "seed": settings["seed"], "corpus": h}, "v1")
    return cached("mlm-piece-word2vec", version, lambda: {"E": piece_word2vec(tok, train, dim=settings["dim"],
                                                                              scale=0.1, seed=settings["seed"])},
                  verbose=False)["E"]


def float16_names() -> tuple:
    """Names of the stored arrays kept as float16: every floating parameter of the model."""
    # built on the CPU with a tiny vocabulary (the names do not depend on its size), the global
    # random state left as it was; not on the "meta" device, whose initialisers import
    # torch._dynamo (1.6 s at every import of this module)
    with torch.random.fork_rng(devices=[]):
        model = TinyBert(model_config(SETTINGS, 8))
    return tuple(f"model/{k}" for k, v in model.state_dict().items() if v.is_floating_point())


FLOAT16 = float16_names()


def tokenizer_to_arrays(tok: BPETokenizer) -> dict:
    """The tokenizer as arrays: its alphabet (in id order) and merges (n, 2), both unicode."""
    n_special = len(tok.special_ids)
    n_alpha = len(tok) - n_special - len(tok.merges)
    return {"tok/alphabet": np.array(tok.itos[n_special:n_special + n_alpha]),
            "tok/merges": np.array(tok.merges, dtype=str).reshape(-1, 2)}


def tokenizer_from_arrays(arrays: dict) -> BPETokenizer:
    """The tokenizer stored by :func:`tokenizer_to_arrays`."""
    return BPETokenizer([str(a) for a in arrays["tok/alphabet"]], [(str(a), str(b)) for a, b in arrays["tok/merges"]])


@dataclass
class ShippedMLM:
    """The shipped small BERT: ``model`` (TinyBert, eval mode), its tokenizer ``tok``, the
    ``settings``, final ``metrics`` (valid/test accuracy and NLL, unigram baselines, steps ...),
    the ``curve`` ({'step', 'valid_acc', 'valid_nll', 'train_loss'}, one point per evaluation,
    the whole validation split), ``train_seconds`` / ``cpu_seconds`` of the shipped training and
    ``stopped_by``."""

    model: TinyBert
    tok: BPETokenizer
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    cpu_seconds: float
    stopped_by: str

    @property
    def cfg(self) -> BertConfig:
        return self.model.cfg


def _snapshot(model: nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def train_mlm_bert(settings: dict, log: RunLog, max_steps: int | None = None, progress: bool = True,
                   tok: BPETokenizer | None = None) -> tuple[dict, dict, dict]:
    """Pre-train the small BERT of ``settings`` with early stopping on validation masked-token
    accuracy; return (arrays, meta, metrics) for :func:`helpers.infra.artifacts.save_artifact`.
    Every step's loss and every evaluation go to ``log``; ``max_steps`` stops after that many
    steps, keeping the last weights (the tests replay the first steps). ``tok``: a tokenizer
    already learned with these settings (saves the minute of BPE training)."""
    s = settings
    sents = mlm_sentences()
    tok = tok or train_tokenizer(s["vocab_size"])
    train = encode_corpus(tok, sents["train"], s["max_len"])
    valid_batches = fixed_eval_batches(tok, encode_corpus(tok, sents["valid"], s["max_len"]), seed=VALID_SEED)
    cfg = model_config(s, len(tok))
    E0 = piece_vectors(tok, train, s) if s["w2v_init"] else None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(s["seed"])
        model = TinyBert(cfg, tok.pad_id)
    if E0 is not None:
        with torch.no_grad():
            model.tok_emb.weight.copy_(torch.as_tensor(E0))
    model.train()
    cap = s["max_steps"] if max_steps is None else min(max_steps, s["max_steps"])
    warmup, total = s["warmup"], s["max_steps"]
    opt = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=s["weight_decay"], betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: min((k + 1) / warmup, max(0.0, (total - k) / max(1, total - warmup))))
    rng = make_rng(s["seed"])
    lengths = [len(x) for x in train]
    queue: list = []
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = {"step": [], "valid_acc": [], "valid_nll": [], "train_loss": []}
    bar = progress_bar(total=cap, desc="MLM pre-training", unit="step", disable=not progress)
    since_eval, t0, c0 = [], time.perf_counter(), time.process_time()
    reason = f"the step cap max_steps={s['max_steps']} (the learning rate reaches 0 there)"
    step = 0
    for step in range(1, cap + 1):
        loss = mlm_update(model, opt, sched, next_masked_batch(train, lengths, queue, s["batch_size"], tok, rng))
        log.step(loss)
        since_eval.append(loss)
        bar.update(1)
        if step % s["eval_every"] == 0 or (max_steps is None and step == cap):
            ev = evaluate_mlm(model, valid_batches)
            stop = stopper.update(ev["accuracy"], step, snapshot=lambda: _snapshot(model))
            curve["step"].append(step)
            curve["valid_acc"].append(ev["accuracy"])
            curve["valid_nll"].append(ev["nll"])
            curve["train_loss"].append(float(np.mean(since_eval)))
            since_eval = []
            log.event("eval", epoch=round(step * s["batch_size"] / len(train), 3), valid_acc=ev["accuracy"],
                      valid_nll=ev["nll"], train_loss=curve["train_loss"][-1], lr=opt.param_groups[0]["lr"],
                      seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0,
                      **{k: v for k, v in stopper.decisions[-1].items() if k != "value"})
            bar.set_postfix(valid_acc=f"{ev['accuracy']:.3f}", best_step=stopper.best_step)
            if stop:
                reason = f"early stopping: {stopper.summary()}"
                break
    else:
        if max_steps is not None and max_steps < s["max_steps"]:
            reason = f"max_steps={max_steps}"
    bar.close()
    if stopper.best_state is not None and max_steps is None:
        model.load_state_dict(stopper.best_state)
    with torch.no_grad():                      # as stored: float16
        for p in model.parameters():
            p.copy_(p.half().float())
    log.event("stop", reason=reason, steps=step, best_step=stopper.best_step,
              kept="best" if max_steps is None else "last")
    model.eval()
    metrics = {"steps": step, "best_step": stopper.best_step,
               "epochs": round(step * s["batch_size"] / len(train), 2),
               "n_params": sum(p.numel() for p in model.parameters())}
    if max_steps is None:                      # the final numbers (not for the replay test)
        test_batches = fixed_eval_batches(tok, encode_corpus(tok, sents["test"], s["max_len"]), seed=TEST_SEED)
        va, te = evaluate_mlm(model, valid_batches), evaluate_mlm(model, test_batches)
        uv, ut = unigram_baseline(tok, train, valid_batches), unigram_baseline(tok, train, test_batches)
        metrics.update(valid_acc=va["accuracy"], valid_nll=va["nll"], test_acc=te["accuracy"], test_nll=te["nll"],
                       n_valid_masked=va["n_masked"], n_test_masked=te["n_masked"],
                       unigram_valid_acc=uv["accuracy"], unigram_test_acc=ut["accuracy"],
                       unigram_test_nll=ut["nll"])
    arrays = {**state_dict_to_arrays(model.state_dict(), "model/"), **tokenizer_to_arrays(tok),
              **curves_to_arrays(curve)}
    meta = {"settings": dict(settings), "metrics": metrics, "config": asdict(cfg), "stopped_by": reason,
            "data": f"modern-English corpus (Wikipedia + BBC News) by document: validation k % 20 == 0, test "
                    f"k % 20 == 10, training the rest; {len(train):,} training sentences, "
                    f"{sum(lengths):,} pieces (with [CLS]/[SEP])"}
    return arrays, meta, metrics


def load_mlm_bert(artifact: Artifact) -> ShippedMLM:
    """The model stored by :func:`train_mlm_bert` (read through :func:`helpers.course.models.load_model`)."""
    meta = artifact.meta
    tok = tokenizer_from_arrays(artifact.arrays)
    model = TinyBert(BertConfig(**meta["config"]), tok.pad_id)
    model.load_state_dict({k: v.float() for k, v in arrays_to_state_dict(artifact.arrays, "model/").items()})
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedMLM(model.eval(), tok, meta["settings"], meta["metrics"], curve,
                      float(meta.get("train_seconds", math.nan)), float(meta.get("cpu_seconds", math.nan)),
                      meta["stopped_by"])


def test_subset_batches(tok: BPETokenizer, max_len: int = 64, n: int = SUBSET) -> list:
    """The first ``n`` test sentences, masked once (seed 456)."""
    return fixed_eval_batches(tok, encode_corpus(tok, mlm_sentences()["test"][:n], max_len), seed=TEST_SEED)


def mlm_subset_metric(shipped: ShippedMLM) -> tuple[str, float]:
    """('test_acc_first_1000', masked-token accuracy on the first SUBSET test sentences)."""
    batches = test_subset_batches(shipped.tok, shipped.settings["max_len"])
    return f"test_acc_first_{SUBSET}", evaluate_mlm(shipped.model, batches)["accuracy"]
