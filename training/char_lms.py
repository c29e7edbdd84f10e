"""Recipe of ``char_transformer``, ``char_lstm`` and ``char_lstm_matched``: lesson 04's
character LMs on Shakespeare (:func:`helpers.course.char_live.char_split`).

Training: random windows of ``ctx + 1`` characters, AdamW (weight decay on matrices only), linear
warm-up then cosine decay to ``min_lr_frac`` of the peak, global-norm clipping. Every
``eval_every`` steps the loss on the first ``EVAL_TOKENS`` validation predictions decides early
stopping (the best weights are kept); ``max_steps`` caps the budget, about 31 CPU-minutes on one
thread for each model: an LSTM step costs less than a Transformer step, so the LSTMs get more
steps (the same compute, not the same number of updates). ``char_lstm_matched`` has the
Transformer's parameter count (813,300 against 814,932). Only the validation play steers
training; the subset metric is the loss on the first ``SUBSET`` test predictions.
``python -m training.char_lms ngram`` rebuilds the stored Kneser-Ney baseline. Where the settings
and the step caps come from: ``data/models/records/lm_settings.md``.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from helpers.course.char_live import TEST_PREDICTIONS as SUBSET
from helpers.course.char_live import char_split, ngram_path
from helpers.course.char_lms import EVAL_TOKENS, build_char_lm
from helpers.infra.artifacts import save_artifact
from helpers.lib.batching import random_windows
from helpers.lib.ngram import kneser_ney_nlls
from helpers.lib.transformer import evaluate_lm
from training.loop import model_arrays, round_to_float16, torch_snapshot, train_steps
from training.runlog import RunLog

COMMON = dict(ctx=256, batch_size=16, lr=3e-3, warmup=100, min_lr_frac=0.1, beta2=0.99,
              weight_decay=0.1, clip=1.0, eval_every=250, patience=3, min_delta=0.0, seed=0)
SETTINGS = {
    "char_transformer": {"kind": "transformer", "d_model": 128, "n_heads": 4, "n_layers": 4,
                         "norm": "pre", "positions": "rope", "max_steps": 3500, **COMMON},
    "char_lstm": {"kind": "lstm", "emb_dim": 64, "hidden": 512, "max_steps": 4000, **COMMON},
    "char_lstm_matched": {"kind": "lstm", "emb_dim": 64, "hidden": 408, "max_steps": 5200,
                          **COMMON},
}
# the n-gram grid reaches past the best model on both axes, so the validation loss is seen to turn
NGRAM_ORDERS = (2, 3, 4, 5, 6, 7, 8, 9, 10)
NGRAM_DISCOUNTS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99)


def float16_names(name: str) -> tuple[str, ...]:
    """The arrays of ``name``'s artefact stored as float16: every weight of the model."""
    return tuple(f"model/{k}" for k in build_char_lm(SETTINGS[name], 84).state_dict())


def lr_factor(step: int, warmup: int, total: int, min_frac: float) -> float:
    """The multiplier of the peak learning rate at ``step`` (0-based): linear warm-up, then a
    cosine decay to ``min_frac``."""
    if step < warmup:
        return (step + 1) / warmup
    t = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_frac + (1 - min_frac) * 0.5 * (1 + math.cos(math.pi * t))


def train(settings: dict, log: RunLog, max_steps: int | None = None,
          progress: bool = True) -> tuple[dict, dict, dict]:
    """Train the character LM of ``settings``; return (arrays, meta, metrics). ``max_steps``:
    stop there, keeping the last weights (a replay of the first steps)."""
    s = settings
    split = char_split()
    model = build_char_lm(s, split.V).train()
    matrices = [p for p in model.parameters() if p.dim() >= 2]      # weight decay on these only
    others = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": matrices, "weight_decay": s["weight_decay"]},
                             {"params": others, "weight_decay": 0.0}],
                            lr=s["lr"], betas=(0.9, s["beta2"]))
    rng = np.random.default_rng(s["seed"])

    def step(k):
        for g in opt.param_groups:
            g["lr"] = s["lr"] * lr_factor(k - 1, s["warmup"], s["max_steps"], s["min_lr_frac"])
        # split.train[:-1]: the draw the shipped models were trained with (never the last window)
        x, y = random_windows(split.train[:-1], s["batch_size"], s["ctx"], rng)
        logits = model(torch.as_tensor(x))
        loss = F.cross_entropy(logits.flatten(0, 1), torch.as_tensor(y).flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), s["clip"])
        opt.step()
        return loss.item()

    def evaluate(k):
        return {"valid_loss": evaluate_lm(model, split.valid, seq_len=s["ctx"],
                                          max_tokens=EVAL_TOKENS, batch_size=32)}

    snapshot, restore = torch_snapshot(model)
    run = train_steps(step, s["max_steps"], log, evaluate=evaluate, eval_every=s["eval_every"],
                      curve=("step", "valid_loss", "train_loss"), metric="valid_loss",
                      patience=s["patience"], min_delta=s["min_delta"], snapshot=snapshot,
                      restore=restore, limit=max_steps, desc=f"char {s['kind']}", progress=progress)
    round_to_float16(model.state_dict().values())                  # as stored: float16
    model.eval()
    if max_steps is not None:
        return model_arrays(model, run.curve), {"settings": dict(s)}, {"steps": run.steps}
    metrics = {"valid_loss": evaluate_lm(model, split.valid, s["ctx"], max_tokens=len(split.valid)),
               "test_loss": evaluate_lm(model, split.test, s["ctx"], max_tokens=len(split.test)),
               "steps": run.steps, "best_step": run.best_step,
               "n_params": sum(p.numel() for p in model.parameters())}
    meta = {"settings": dict(s), "metrics": metrics, "vocab": split.vocab.to_arrays()[1],
            "stopped_by": run.stopped_by,
            "data": f"Shakespeare by work: train {len(split.train):,} characters (40 works), "
                    f"validation {split.valid_work} ({len(split.valid):,}), test {split.test_work} "
                    f"({len(split.test):,})"}
    return model_arrays(model, run.curve, split.vocab), meta, metrics


def subset_metric(shipped) -> tuple[str, float]:
    """('test_loss_first_32768', nats/char on the first SUBSET predictions of the test play)."""
    split = char_split()
    if split.vocab.itos != shipped.vocab.itos:
        raise ValueError("the shipped character LM's vocabulary differs from the corpus's: rebuild "
                         f"it with `make models NAME=char_{shipped.settings['kind']}`")
    loss = evaluate_lm(shipped.model, split.test, shipped.settings["ctx"], max_tokens=SUBSET)
    return f"test_loss_first_{SUBSET}", loss


def build_char_ngram() -> dict:
    """Interpolated Kneser-Ney character n-grams on the training works: per order the discount
    chosen on the validation play, then the order with the lowest validation loss scored on the
    test play. Stores (at :func:`helpers.course.char_live.ngram_path`) the table of every order
    and the chosen order's NLL of test characters 1 .. SUBSET (``test_nll``: element i scores
    test[i + 1]; the first n - 2 are NaN, without a full context). About a CPU-minute."""
    split, t0, rows = char_split(), time.perf_counter(), []
    for n in NGRAM_ORDERS:
        valid = {D: float(kneser_ney_nlls(split.train, split.valid, n, split.V, D).mean())
                 for D in NGRAM_DISCOUNTS}
        best = min(valid, key=valid.get)
        rows.append({"n": n, "discount": best, "valid_loss": valid[best],
                     "valid_by_discount": {str(D): v for D, v in valid.items()}})
    chosen = min(rows, key=lambda r: r["valid_loss"])
    n, D = chosen["n"], chosen["discount"]
    chosen["valid_loss_first"] = float(
        kneser_ney_nlls(split.train, split.valid[:EVAL_TOKENS + 1], n, split.V, D).mean())
    nll = kneser_ney_nlls(split.train, split.test, n, split.V, D)
    chosen["test_loss"] = float(nll.mean())
    head = np.full(SUBSET, np.nan)       # head[i] scores test[i + 1]; nll[j] scores test[j + n - 1]
    head[n - 2:] = nll[:SUBSET - n + 2]
    meta = {"rows": rows, "chosen": chosen, "subset": SUBSET, "seconds": time.perf_counter() - t0,
            "what": "interpolated Kneser-Ney, one discount per model chosen on validation "
                    "(Othello); test Hamlet",
            "command": "python -m training.char_lms ngram"}
    save_artifact(ngram_path(), {"test_nll": head.astype(np.float32)}, meta)
    return meta


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["ngram"]:
        sys.exit("usage: python -m training.char_lms ngram   (rebuild the stored n-gram baseline)")
    print(build_char_ngram())
