"""Lesson 04's shipped character language models: a small decoder-only Transformer and an LSTM
given the same training budget (``make models NAME=char_transformer``, ``NAME=char_lstm``).

Data: :func:`helpers.course.shakespeare.char_split` — train on 40 works, validate on *Othello*,
test on *Hamlet* (split by work: nothing of the two held-out plays is trained on), 84 characters.
Training: random windows of ``ctx + 1`` characters, AdamW (weight decay on matrices only), linear
warm-up then cosine decay to ``min_lr_frac`` of the peak, global-norm clipping. Every
``eval_every`` steps the loss on the first ``EVAL_TOKENS`` predictions of the validation play is
measured (non-overlapping windows of ``ctx``); the best evaluation's weights are kept, and
training stops when ``patience`` evaluations in a row did not improve, or at the step cap
``max_steps`` (the budget: both models get about the same CPU time, see :data:`SETTINGS`; the log
and metadata say which rule stopped it).

The settings follow the course's research run R1 on the same split (validation = Othello): at
1,000 steps a 4-layer d=128 Transformer with rotary positions (RoPE) reached 1.61 nats/char on
Othello against 1.83 with learned positions, and an LSTM with 512 units 1.46 after 1,800 steps
(2 blocks and 256 units, the sizes shipped before, reached 1.66 and 1.58). The budget is a cap of
about 31 CPU-minutes (one thread) for each model; early stopping on Othello may end a run sooner.
Only the validation play steers training; *Hamlet* gives the final numbers, and its first
``SUBSET`` predictions are the recorded subset metric that ``tests/test_models.py`` recomputes.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from helpers.course.data import DATA_DIR
from helpers.course.shakespeare import CharSplit, char_split
from helpers.infra.artifacts import (
    Artifact,
    ArtifactError,
    arrays_to_curves,
    arrays_to_state_dict,
    curves_to_arrays,
    load_artifact,
    prefixed,
    save_artifact,
    state_dict_to_arrays,
    unprefixed,
)
from helpers.infra.early_stopping import EarlyStopping
from helpers.infra.progress import progress_bar
from helpers.infra.runlog import RunLog
from helpers.lib.ngram import kneser_ney_nlls
from helpers.lib.text import Vocab
from helpers.lib.transformer import LSTMLM, DecoderLM, TransformerConfig, evaluate_lm

EVAL_TOKENS = 32_768     # validation predictions scored at every evaluation (the early-stopping number)
SUBSET = 32_768          # test predictions of the recorded subset metric

COMMON = dict(ctx=256, batch_size=16, lr=3e-3, warmup=100, min_lr_frac=0.1, beta2=0.99, weight_decay=0.1,
              clip=1.0, eval_every=250, patience=3, min_delta=0.0, seed=0)
# The budget: a cap of about 31 CPU-minutes (one thread) for each model. A step of the 4-layer
# RoPE Transformer costs about 0.54 CPU-s, one of the 512-unit LSTM 0.46 (research R1, one thread),
# so the LSTM's cap is 4,000 steps to the Transformer's 3,500: the same compute, not the same
# number of updates.
SETTINGS = {
    "char_transformer": {"kind": "transformer", "d_model": 128, "n_heads": 4, "n_layers": 4, "norm": "pre",
                         "positions": "rope", "max_steps": 3500, **COMMON},
    "char_lstm": {"kind": "lstm", "emb_dim": 64, "hidden": 512, "max_steps": 4000, **COMMON},
}


def build_char_lm(settings: dict, vocab_size: int) -> nn.Module:
    """The model of ``settings`` (kind 'transformer' -> DecoderLM, 'lstm' -> LSTMLM), seeded."""
    s = settings
    if s["kind"] == "transformer":
        cfg = TransformerConfig(vocab_size, d_model=s["d_model"], n_heads=s["n_heads"], n_layers=s["n_layers"],
                                max_len=s["ctx"], norm=s["norm"], positions=s["positions"])
        return DecoderLM(cfg, seed=s["seed"])
    if s["kind"] == "lstm":
        return LSTMLM(vocab_size, emb_dim=s["emb_dim"], hidden=s["hidden"], seed=s["seed"])
    raise ValueError(f"kind must be 'transformer' or 'lstm', got {s['kind']!r}")


def float16_names(name: str) -> tuple[str, ...]:
    """The arrays of ``name``'s artefact stored as float16: every weight of the model."""
    return tuple(f"model/{k}" for k in build_char_lm(SETTINGS[name], 84).state_dict())


def lr_factor(step: int, warmup: int, total: int, min_frac: float) -> float:
    """Multiplier of the peak learning rate at ``step`` (0-based): linear warm-up, then cosine to ``min_frac``."""
    if step < warmup:
        return (step + 1) / warmup
    t = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_frac + (1 - min_frac) * 0.5 * (1 + math.cos(math.pi * t))


def _param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Weight decay on matrices (embeddings, linear weights), none on biases and LayerNorm gains."""
    return [{"params": [p for p in model.parameters() if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in model.parameters() if p.dim() < 2], "weight_decay": 0.0}]


@dataclass
class ShippedCharLM:
    """A shipped character LM: ``model`` (eval mode), its ``vocab`` (84 characters), ``settings``,
    final ``metrics`` (valid_loss, test_loss in nats/char, steps, ...), its ``curve`` ({'step',
    'valid_loss', 'train_loss'}, one point per evaluation on the first EVAL_TOKENS validation
    predictions), ``train_seconds``/``cpu_seconds`` of the shipped training and ``stopped_by``."""

    model: nn.Module
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    cpu_seconds: float
    stopped_by: str


def train_char_lm(settings: dict, log: RunLog, max_steps: int | None = None, progress: bool = True,
                  split: CharSplit | None = None) -> tuple[dict, dict, dict]:
    """Train the character LM of ``settings`` with early stopping on the validation play; return
    (arrays, meta, metrics) for :func:`helpers.infra.artifacts.save_artifact`. Every step's loss
    and every evaluation go to ``log``; ``max_steps`` stops early (the tests replay the first steps,
    the lesson a few live); the whole validation and test plays are scored only for a whole run
    (``max_steps`` None): with ``max_steps`` the metrics hold only the steps."""
    s = settings
    split = split or char_split()
    model = build_char_lm(s, split.V).train()
    opt = torch.optim.AdamW(_param_groups(model, s["weight_decay"]), lr=s["lr"], betas=(0.9, s["beta2"]))
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"])
    rng = np.random.default_rng(s["seed"])
    offsets = np.arange(s["ctx"] + 1)
    cap = s["max_steps"] if max_steps is None else min(max_steps, s["max_steps"])
    curve = {"step": [], "valid_loss": [], "train_loss": []}
    bar = progress_bar(total=cap, desc=f"char {s['kind']}", unit="step", disable=not progress)
    since_eval, t0, reason = [], time.perf_counter(), f"the step cap max_steps={s['max_steps']}"
    step = 0
    for step in range(1, cap + 1):
        for g in opt.param_groups:
            g["lr"] = s["lr"] * lr_factor(step - 1, s["warmup"], s["max_steps"], s["min_lr_frac"])
        starts = rng.integers(0, len(split.train) - s["ctx"] - 1, size=s["batch_size"])
        w = torch.as_tensor(split.train[starts[:, None] + offsets])
        loss = F.cross_entropy(model(w[:, :-1]).flatten(0, 1), w[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), s["clip"])
        opt.step()
        if not math.isfinite(loss.item()):
            raise FloatingPointError(f"the training loss is {loss.item()} at step {step}")
        log.step(loss.item())
        since_eval.append(loss.item())
        bar.update(1)
        if step % s["eval_every"] == 0:
            valid = evaluate_lm(model, split.valid, seq_len=s["ctx"], max_tokens=EVAL_TOKENS, batch_size=32)
            stop = stopper.update(valid, step, snapshot=lambda: {k: v.detach().clone()
                                                                for k, v in model.state_dict().items()})
            curve["step"].append(step)
            curve["valid_loss"].append(valid)
            curve["train_loss"].append(float(np.mean(since_eval)))
            since_eval = []
            log.event("eval", valid_loss=valid, train_loss=curve["train_loss"][-1],
                      seconds=time.perf_counter() - t0, cpu_seconds=time.process_time(),
                      **{k: v for k, v in stopper.decisions[-1].items() if k != "value"})
            bar.set_postfix(valid=f"{valid:.3f}", best_step=stopper.best_step)
            if stop:
                reason = f"early stopping: {stopper.summary()}"
                break
    else:
        if max_steps is not None and max_steps < s["max_steps"]:
            reason = f"max_steps={max_steps}"
    bar.close()
    if stopper.best_state is not None and max_steps is None:
        model.load_state_dict(stopper.best_state)       # the best evaluation's weights, not the last
    with torch.no_grad():                               # as stored: float16
        for p in model.state_dict().values():
            if p.is_floating_point():
                p.copy_(p.half().float())
    log.event("stop", reason=reason, steps=step, best_step=stopper.best_step,
              kept="best" if max_steps is None else "last")
    model.eval()
    if max_steps is not None:                         # a replay or a live run: the logged losses only
        return state_dict_to_arrays(model.state_dict(), "model/"), {"settings": dict(settings)}, {"steps": step}
    metrics = {"valid_loss": evaluate_lm(model, split.valid, seq_len=s["ctx"], max_tokens=len(split.valid)),
               "test_loss": evaluate_lm(model, split.test, seq_len=s["ctx"], max_tokens=len(split.test)),
               "steps": step, "best_step": stopper.best_step,
               "n_params": sum(p.numel() for p in model.parameters())}
    arrays = {**state_dict_to_arrays(model.state_dict(), "model/"),
              **prefixed(split.vocab.to_arrays()[0], "vocab/"), **curves_to_arrays(curve)}
    meta = {"settings": dict(settings), "metrics": metrics, "vocab": split.vocab.to_arrays()[1], "stopped_by": reason,
            "data": f"Shakespeare by work: train {len(split.train):,} characters (40 works), validation "
                    f"{split.valid_work} ({len(split.valid):,}), test {split.test_work} ({len(split.test):,})"}
    return arrays, meta, metrics


def load_char_lm(artifact: Artifact) -> ShippedCharLM:
    """The model stored by :func:`train_char_lm` (read through :func:`helpers.course.models.load_model`)."""
    s = artifact.meta["settings"]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    model = build_char_lm(s, len(vocab))
    model.load_state_dict({k: v.float() for k, v in arrays_to_state_dict(artifact.arrays, "model/").items()})
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedCharLM(model.eval(), vocab, s, artifact.meta["metrics"], curve,
                         float(artifact.meta.get("train_seconds", math.nan)),
                         float(artifact.meta.get("cpu_seconds", math.nan)), artifact.meta["stopped_by"])


def char_lm_subset_metric(shipped: ShippedCharLM) -> tuple[str, float]:
    """('test_loss_first_32768', nats/char on the first SUBSET predictions of the test play)."""
    split = char_split()
    if split.vocab.itos != shipped.vocab.itos:
        raise ValueError("the shipped character LM's vocabulary differs from the corpus's: rebuild it with "
                         f"`make models NAME=char_{shipped.settings['kind']}`")
    return f"test_loss_first_{SUBSET}", evaluate_lm(shipped.model, split.test, seq_len=shipped.settings["ctx"],
                                                    max_tokens=SUBSET)


# ---------------------------------------------------------------- the n-gram baseline, stored
NGRAM_ORDERS = (2, 3, 4, 5, 6, 7, 8)
NGRAM_DISCOUNTS = (0.5, 0.7, 0.8, 0.9, 0.95)


def ngram_path():
    """``data/models/baselines/char_ngram``: the stored Kneser-Ney baseline of the character LMs."""
    return DATA_DIR / "models" / "baselines" / "char_ngram"


def build_char_ngram(orders=NGRAM_ORDERS, discounts=NGRAM_DISCOUNTS) -> dict:
    """Interpolated Kneser-Ney character n-grams (:func:`helpers.lib.ngram.kneser_ney_nlls`) on the
    training works of :func:`char_split`: for every order n the discount is chosen on the validation
    play, then the order with the lowest validation loss is scored once on the test play. Stores
    (checksummed, at :func:`ngram_path`) the table of every order and, for the chosen one, the
    per-character NLL of test characters 1 .. SUBSET (``test_nll``: element i scores test[i + 1],
    the characters the models' subset metric scores; the first n - 2 are NaN: no full context):
    ``python -m helpers.course.char_lms ngram`` (a few CPU-minutes)."""
    split, t0, rows = char_split(), time.perf_counter(), []
    for n in orders:
        valid = {D: float(kneser_ney_nlls(split.train, split.valid, n, split.V, D).mean()) for D in discounts}
        best = min(valid, key=valid.get)
        rows.append({"n": n, "discount": best, "valid_loss": valid[best],
                     "valid_by_discount": {str(D): v for D, v in valid.items()}})
    chosen = min(rows, key=lambda r: r["valid_loss"])
    # the curves' validation number: predictions 1 .. EVAL_TOKENS of the validation play
    v = kneser_ney_nlls(split.train, split.valid[:EVAL_TOKENS + 1], chosen["n"], split.V, chosen["discount"])
    chosen["valid_loss_first"] = float(v.mean())
    nll = kneser_ney_nlls(split.train, split.test, chosen["n"], split.V, chosen["discount"])
    chosen["test_loss"] = float(nll.mean())
    head = np.full(SUBSET, np.nan)          # head[i] scores test[i + 1]; nll[j] scores test[j + n - 1]
    head[chosen["n"] - 2:] = nll[:SUBSET - chosen["n"] + 2]
    meta = {"rows": rows, "chosen": chosen, "subset": SUBSET, "seconds": time.perf_counter() - t0,
            "what": "interpolated Kneser-Ney, one discount per model chosen on validation (Othello); test Hamlet",
            "command": "python -m helpers.course.char_lms ngram"}
    save_artifact(ngram_path(), {"test_nll": head.astype(np.float32)}, meta)
    return meta


def load_char_ngram() -> dict:
    """What :func:`build_char_ngram` stored: its metadata plus ``test_nll`` (float64, nats)."""
    try:
        art = load_artifact(ngram_path())
    except ArtifactError as e:
        raise ArtifactError(f"the character n-gram baseline {ngram_path()}: {e}. Rebuild it with "
                            "`python -m helpers.course.char_lms ngram`") from None
    return {**art.meta, "test_nll": art.arrays["test_nll"].astype(np.float64)}


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["ngram"]:
        sys.exit("usage: python -m helpers.course.char_lms ngram   (rebuild the stored n-gram baseline)")
    print(build_char_ngram())
