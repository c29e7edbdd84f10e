"""Recipe of ``mlm_bert``: lesson 10's small BERT pre-trained by masked language modelling.

Data: :func:`helpers.course.mlm_model.mlm_sentences`; a 4,000-piece BPE tokenizer learned on the
training documents; every sentence ``[CLS] pieces [SEP]`` (at most 64 pieces). Model:
:class:`helpers.lib.bert.TinyBert` (2 Pre-LN layers, 128 wide, 4 heads, feed-forward 256, tied
embeddings), its embedding table started from word2vec vectors of the pieces
(:func:`piece_vectors`). AdamW with β₁ = 0.9 and β₂ = 0.98 (RoBERTa's value; BERT used 0.999)
and weight decay 0.01, clipping at 1, batches of 64 length-bucketed sentences masked afresh
(15 %, 80/10/10). The schedule has three phases: 50 warm-up steps; a constant learning rate
until the masked-token accuracy on the whole validation split (masked once, every
``eval_every`` steps) has not improved by ``min_delta`` for ``patience`` evaluations (the
plateau, at most ``max_constant_steps``); then a linear decay to 0 over ``decay_fraction`` of
the steps taken so far, keeping the best evaluation of the decay.
The evidence for these settings is recorded in ``data/models/records/mlm_bert_settings.md``
(``python -m training.mlm_settings``). The subset metric is the test accuracy on the first
``SUBSET`` test sentences.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import asdict
from functools import lru_cache

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.course.mlm_model import (
    TEST_SEED,
    VALID_SEED,
    mlm_sentences,
)
from helpers.infra.cache import cached, settings_version
from helpers.infra.seeding import make_rng
from helpers.lib.bert import BertConfig, TinyBert, masked_lm_loss
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import IGNORE
from helpers.lib.pretraining import (
    batch_to_torch,
    encode_corpus,
    fixed_eval_batches,
    next_masked_batch,
    piece_word2vec,
    unigram_baseline,
)
from training.loop import model_arrays, round_to_float16, torch_snapshot, train_steps
from training.runlog import RunLog

SETTINGS = dict(vocab_size=4000, max_len=64, dim=128, n_layers=2, n_heads=4, ff_dim=256,
                dropout=0.0, batch_size=64, lr=2e-3, weight_decay=0.01, warmup=50,
                max_constant_steps=40_000, decay_fraction=0.2, eval_every=1_000, patience=4,
                min_delta=2e-3, w2v_init=True, seed=0)
SUBSET = 1000                 # test sentences of the subset metric


@lru_cache(maxsize=2)
def train_tokenizer(vocab_size: int) -> BPETokenizer:
    """The BPE tokenizer learned on the training documents (about a minute)."""
    words = Counter(w for s in mlm_sentences()["train"] for w in s)
    return BPETokenizer.train(words, vocab_size=vocab_size)


def piece_vectors(tok: BPETokenizer, train: list, settings: dict) -> np.ndarray:
    """The word2vec head start of the embedding table (:func:`piece_word2vec` of ``train``,
    scale 0.1), built once per corpus and settings, then read from the course's cache. Every
    lesson-10 trainer that starts from word2vec starts from these vectors."""
    h = hashlib.sha256(np.concatenate(train).astype(np.int64).tobytes()).hexdigest()[:16]
    key = {"dim": settings["dim"], "seed": settings["seed"], "corpus": h}
    version = settings_version(key, "v1")
    build = lambda: {"E": piece_word2vec(tok, train, dim=settings["dim"], scale=0.1,  # noqa: E731
                                         seed=settings["seed"])}
    return cached("mlm-piece-word2vec", version, build, verbose=False)["E"]


def new_encoder(model_class, settings: dict, tok: BPETokenizer, train: list) -> TinyBert:
    """A seeded ``model_class`` (TinyBert or TinyGPT) of ``settings`` in training mode, its
    embedding table started from :func:`piece_vectors` when ``settings['w2v_init']``."""
    E0 = piece_vectors(tok, train, settings) if settings["w2v_init"] else None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(settings["seed"])
        model = model_class(model_config(settings, len(tok)), tok.pad_id)
    if E0 is not None:
        with torch.no_grad():
            model.tok_emb.weight.copy_(torch.as_tensor(E0))
    return model.train()


def float16_names() -> tuple:
    """The stored arrays kept as float16: every floating parameter of the model."""
    # a tiny vocabulary (the names do not depend on it); the global random state left as it was
    with torch.random.fork_rng(devices=[]):
        model = TinyBert(model_config(SETTINGS, 8))
    return tuple(f"model/{k}" for k, v in model.state_dict().items() if v.is_floating_point())


def set_lr(opt: torch.optim.Optimizer, lr: float) -> None:
    """Set the learning rate of every parameter group of ``opt``."""
    for group in opt.param_groups:
        group["lr"] = lr


def train(settings: dict, log: RunLog, max_steps: int | None = None,
          progress: bool = True) -> tuple[dict, dict, dict]:
    """Pre-train the small BERT of ``settings``; return (arrays, meta, metrics). ``max_steps``:
    stop there, keeping the last weights (a replay of the first steps)."""
    s = settings
    sents = mlm_sentences()
    tok = train_tokenizer(s["vocab_size"])
    train_seqs = encode_corpus(tok, sents["train"], s["max_len"])
    valid_seqs = encode_corpus(tok, sents["valid"], s["max_len"])
    valid = fixed_eval_batches(tok, valid_seqs, seed=VALID_SEED)
    model = new_encoder(TinyBert, s, tok, train_seqs)
    opt = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=s["weight_decay"],
                            betas=(0.9, 0.98))
    rng, queue, lengths = make_rng(s["seed"]), [], [len(x) for x in train_seqs]
    done = {"steps": 0}              # steps of the phases before the current one

    def step_at(lr):
        def step(k):
            set_lr(opt, lr(k))
            batch = next_masked_batch(train_seqs, lengths, queue, s["batch_size"], tok, rng)
            return mlm_update(model, opt, None, batch)
        return step

    def evaluate(k):
        ev = evaluate_mlm(model, valid)
        step = done["steps"] + k
        return {"step": step, "epoch": round(step * s["batch_size"] / len(train_seqs), 3),
                "valid_acc": ev["accuracy"], "valid_nll": ev["nll"],
                "lr": opt.param_groups[0]["lr"]}

    names = ("step", "valid_acc", "valid_nll", "train_loss", "lr")
    constant = train_steps(step_at(lambda k: s["lr"] * min(1.0, k / s["warmup"])),
                           s["max_constant_steps"], log, evaluate=evaluate,
                           eval_every=s["eval_every"], curve=names, metric="valid_acc",
                           mode="max", patience=s["patience"], min_delta=s["min_delta"],
                           limit=max_steps, desc="MLM pre-training, constant rate",
                           progress=progress, log_fields={"phase": "constant"},
                           cap_reason=f"the cap max_constant_steps={s['max_constant_steps']}")
    curve, steps = constant.curve, constant.steps
    n_decay, best, stopped_by = 0, steps, f"constant rate: {constant.stopped_by}"
    if max_steps is None or steps < max_steps:
        done["steps"] = steps
        n_decay = max(s["eval_every"], s["eval_every"] * round(s["decay_fraction"] * steps
                                                               / s["eval_every"]))
        snapshot, restore = torch_snapshot(model)
        decay = train_steps(step_at(lambda k: s["lr"] * (1 - (k - 1) / n_decay)), n_decay, log,
                            evaluate=evaluate, eval_every=s["eval_every"], eval_at_end=True,
                            curve=names, metric="valid_acc", mode="max", patience=n_decay,
                            snapshot=snapshot, restore=restore,
                            limit=None if max_steps is None else max_steps - steps,
                            desc="MLM pre-training, decay", progress=progress,
                            log_fields={"phase": "decay"},
                            cap_reason=f"the decay's end ({n_decay} steps, the learning rate "
                                       "reaches 0)")
        curve = {k: curve[k] + decay.curve[k] for k in names}
        best = steps + (decay.best_step or decay.steps)
        steps += decay.steps
        stopped_by += f"; then a linear decay over {n_decay:,} steps, the best step kept"
    round_to_float16(model.parameters())                        # as stored: float16
    model.eval()
    metrics = {"steps": steps, "constant_steps": constant.steps, "decay_steps": n_decay,
               "plateau_step": constant.best_step, "best_step": best,
               "epochs": round(steps * s["batch_size"] / len(train_seqs), 2),
               "n_params": sum(p.numel() for p in model.parameters())}
    if max_steps is None:
        test_seqs = encode_corpus(tok, sents["test"], s["max_len"])
        test = fixed_eval_batches(tok, test_seqs, seed=TEST_SEED)
        va, te = evaluate_mlm(model, valid), evaluate_mlm(model, test)
        uv, ut = unigram_baseline(tok, train_seqs, valid), unigram_baseline(tok, train_seqs, test)
        metrics.update(valid_acc=va["accuracy"], valid_nll=va["nll"], test_acc=te["accuracy"],
                       test_nll=te["nll"], n_valid_masked=va["n_masked"],
                       n_test_masked=te["n_masked"],
                       unigram_valid_acc=uv["accuracy"], unigram_test_acc=ut["accuracy"],
                       unigram_test_nll=ut["nll"])
    arrays = {**model_arrays(model, curve), **tokenizer_to_arrays(tok)}
    meta = {"settings": dict(s), "metrics": metrics, "config": asdict(model.cfg),
            "stopped_by": stopped_by,
            "data": f"modern-English corpus (Wikipedia + BBC News) by document: validation k % 20 "
                    f"== 0, test k % 20 == 10, training the rest; {len(train_seqs):,} training "
                    f"sentences, {sum(lengths):,} pieces (with [CLS]/[SEP])"}
    return arrays, meta, metrics


def subset_metric(shipped) -> tuple[str, float]:
    """('test_acc_first_1000', the masked-token accuracy on the first SUBSET test sentences,
    masked once with the test seed)."""
    seqs = encode_corpus(shipped.tok, mlm_sentences()["test"][:SUBSET], shipped.settings["max_len"])
    batches = fixed_eval_batches(shipped.tok, seqs, seed=TEST_SEED)
    return f"test_acc_first_{SUBSET}", evaluate_mlm(shipped.model, batches)["accuracy"]


def model_config(settings: dict, vocab_size: int) -> BertConfig:
    """The :class:`BertConfig` of the shipped settings."""
    s = settings
    return BertConfig(vocab_size=vocab_size, dim=s["dim"], n_layers=s["n_layers"],
                      n_heads=s["n_heads"], ff_dim=s["ff_dim"], max_len=s["max_len"],
                      dropout=s["dropout"])


def tokenizer_to_arrays(tok: BPETokenizer) -> dict:
    """The tokenizer as arrays: its alphabet ``tok/alphabet`` (in id order) and its merges
    ``tok/merges`` (n, 2), both unicode."""
    n_special = len(tok.special_ids)
    n_alpha = len(tok) - n_special - len(tok.merges)
    return {"tok/alphabet": np.array(tok.itos[n_special:n_special + n_alpha]),
            "tok/merges": np.array(tok.merges, dtype=str).reshape(-1, 2)}


@torch.no_grad()
def evaluate_mlm(model: TinyBert, batches: list, device="cpu") -> dict:
    """Top-1 accuracy and mean NLL (nats) at the masked positions of held-out batches
    (lesson 10 §3): {'accuracy', 'nll', 'n_masked'}."""
    was = model.training
    model.eval()
    correct, nll, n = 0, 0.0, 0
    for b in batches:
        x, y, att = batch_to_torch(b, device)
        sel = y != IGNORE
        if not sel.any():
            continue
        logits = model.mlm_logits(model(x, att)[sel]).float()
        correct += int((logits.argmax(-1) == y[sel]).sum())
        nll += float(F.cross_entropy(logits, y[sel], reduction="sum"))
        n += int(sel.sum())
    model.train(was)
    if n == 0:
        raise ValueError("evaluate_mlm: the batches have no masked position to score")
    return {"accuracy": correct / n, "nll": nll / n, "n_masked": n}


def mlm_update(model, opt, sched, batch, device="cpu") -> float:
    """One masked-LM optimiser step on a MaskedBatch (lesson 10 §3): the loss, its gradient
    clipped to norm 1, the optimiser's step and the scheduler's (unless None). Returns the loss."""
    x, y, att = batch_to_torch(batch, device)
    loss = masked_lm_loss(model, x, y, att)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if sched is not None:
        sched.step()
    return loss.item()
