"""The record behind the shipped masked LM's settings: ``python -m training.mlm_settings``
writes ``data/models/records/mlm_bert_settings.md``.

Three measurements, a few CPU-minutes each at most, from the committed data and shipped files:

1. **the sizes**: CPU seconds of one training step (the shipped batch, one thread, the median
   of ``steps`` steps after a warm-up) of the shipped model and of two larger ones;
2. **the head start**: validation accuracy after ``head_start_steps`` steps from random
   embeddings and from the word2vec vectors of the pieces;
3. **the step count**: the shipped run's validation curve, where its constant learning rate
   reached a plateau and what the decay added after it.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from helpers.course.mlm_model import VALID_SEED, mlm_sentences
from helpers.course.models import load_model, model_dir
from helpers.infra.seeding import make_rng
from helpers.lib.bert import TinyBert
from helpers.lib.pretraining import (
    encode_corpus,
    fixed_eval_batches,
    next_masked_batch,
)
from training.mlm_bert import SETTINGS, evaluate_mlm, mlm_update, new_encoder

RECORD = Path("records") / "mlm_bert_settings.md"
SHIPPED_SIZE = "shipped: d 128, 2 layers, ff 256"
SIZES = {SHIPPED_SIZE: dict(dim=128, n_layers=2, ff_dim=256),
         "d 128, 4 layers, ff 256": dict(dim=128, n_layers=4, ff_dim=256),
         "d 256, 2 layers, ff 512": dict(dim=256, n_layers=2, ff_dim=512)}


def _trainer(s: dict, tok, train: list):
    """(model, optimiser, scheduler) of settings ``s`` as the shipped recipe builds them, with
    its schedule's first two phases: the warm-up, then the constant learning rate."""
    model = new_encoder(TinyBert, s, tok, train)
    opt = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=s["weight_decay"],
                            betas=(0.9, 0.98))
    warmup = s["warmup"]
    return model, opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda k: min(1.0, (k + 1) / warmup))


def step_seconds(tok, train, steps: int = 20) -> dict:
    """{size: median CPU seconds of one step} for :data:`SIZES` (one thread)."""
    out = {}
    for name, size in SIZES.items():
        s = {**SETTINGS, **size, "w2v_init": False}
        model, opt, sched = _trainer(s, tok, train)
        rng, queue, lengths = make_rng(0), [], [len(x) for x in train]
        times = []
        for k in range(steps + 3):
            batch = next_masked_batch(train, lengths, queue, s["batch_size"], tok, rng)
            t0 = time.process_time()
            mlm_update(model, opt, sched, batch)
            if k >= 3:
                times.append(time.process_time() - t0)
        out[name] = float(np.median(times))
    return out


def head_start(tok, train_all, steps: int) -> dict:
    """{'random', 'word2vec'}: validation accuracy after ``steps`` steps of the shipped settings
    (batches from the first 10,000 training sentences, the first 1,000 validation sentences)."""
    train = train_all[:10_000]
    valid_seqs = encode_corpus(tok, mlm_sentences()["valid"][:1000], SETTINGS["max_len"])
    valid = fixed_eval_batches(tok, valid_seqs, seed=VALID_SEED)
    out = {}
    for name, w2v in (("random", False), ("word2vec", True)):
        model, opt, sched = _trainer({**SETTINGS, "w2v_init": w2v}, tok, train_all)
        rng, queue, lengths = make_rng(SETTINGS["seed"]), [], [len(x) for x in train]
        for _ in range(steps):
            batch = next_masked_batch(train, lengths, queue, SETTINGS["batch_size"], tok, rng)
            mlm_update(model, opt, sched, batch)
        out[name] = evaluate_mlm(model, valid)["accuracy"]
    return out


def curve_section(shipped) -> list:
    """The lines of the record's section 3: every evaluation of the shipped run (step, phase,
    learning rate, validation accuracy, training loss), where the constant rate's plateau was
    declared and what the decay added."""
    s, m, c = shipped.settings, shipped.metrics, shipped.curve
    acc = dict(zip(c["step"], c["valid_acc"]))
    n_const, plateau, best = m["constant_steps"], m["plateau_step"], m["best_step"]
    lines = ["## 3. The step count: the shipped run's validation curve", "",
             f"Evaluated every {s['eval_every']:,} steps on the whole validation split. The "
             f"constant rate ends when {s['patience']} evaluations in a row improve on the best "
             f"by no more than {s['min_delta']:g} ({100 * s['min_delta']:g} points), at most "
             f"{s['max_constant_steps']:,} steps; the linear decay to 0 then lasts "
             f"{s['decay_fraction']:g} of the steps taken and keeps its best evaluation.", "",
             "| step | phase | learning rate | validation accuracy | training loss |",
             "|---|---|---|---|---|"]
    for step, acc_k, lr, loss in zip(c["step"], c["valid_acc"], c["lr"], c["train_loss"]):
        phase = "constant" if step <= n_const else "decay"
        mark = " (plateau)" if step == plateau else " (kept)" if step == best else ""
        lines.append(f"| {step:,}{mark} | {phase} | {lr:.2g} | {acc_k:.1%} | {loss:.3f} |")
    last = [a for st, a in acc.items() if plateau < st <= n_const]
    if n_const >= s["max_constant_steps"]:
        verdict = (f"The constant rate reached its cap of {n_const:,} steps before a plateau: "
                   "the curve had not flattened.")
    else:
        verdict = (f"The constant rate reached its plateau: its best accuracy, "
                   f"{acc[plateau]:.1%} at step {plateau:,}, was not beaten by more than "
                   f"{100 * s['min_delta']:g} points in the {len(last)} evaluations after it "
                   f"(their best {max(last):.1%}), so it stopped at step {n_const:,}.")
    lines += ["", verdict + f" The decay over {m['decay_steps']:,} steps took the accuracy from "
              f"{acc[n_const]:.1%} to {acc[best]:.1%} (step {best:,}, the weights kept); the "
              "training loss is the mean since the previous evaluation, on sentences masked "
              "afresh."]
    return lines


def main(argv=None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20, help="timed steps per size")
    ap.add_argument("--head-start-steps", type=int, default=300)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    shipped = load_model("mlm_bert")
    tok = shipped.tok
    train = encode_corpus(tok, mlm_sentences()["train"], SETTINGS["max_len"])
    t0 = time.process_time()
    seconds = step_seconds(tok, train, args.steps)
    start = head_start(tok, train, args.head_start_steps)
    steps = shipped.metrics["steps"]
    base = seconds[SHIPPED_SIZE]
    lines = ["# The shipped masked LM's settings (`data/models/mlm_bert`): the record", "",
             "Written by `python -m training.mlm_settings` (`training/mlm_settings.py`) from the "
             "committed data and the shipped files; one thread, CPU seconds (`time.process_time`).",
             "", f"## 1. The sizes: one training step (batch of {SETTINGS['batch_size']} "
             f"sentences, the median of {args.steps} steps after 3 warm-up steps)", "",
             f"| model | CPU s / step | × shipped | the shipped {steps:,} steps, CPU min |",
             "|---|---|---|---|"]
    lines += [f"| {n} | {v:.3f} | {v / base:.2f} | {steps * v / 60:.1f} |"
              for n, v in seconds.items()]
    lines += ["", "## 2. The head start: validation accuracy after "
              f"{args.head_start_steps} steps", "",
              "The shipped settings, batches from the first 10,000 training sentences, accuracy on "
              "the first 1,000 validation sentences (masked once, seed 123); the unigram baseline "
              "is about 4.5 %.", "",
              "| embedding table starts from | validation accuracy |", "|---|---|"]
    lines += [f"| {n} | {v:.1%} |" for n, v in start.items()]
    lines += ["", *curve_section(shipped), "",
              "The learning rate (0.002), the 50 warm-up steps, the batch size, the plateau rule "
              "(patience, min_delta) and the decay's length were not searched for this record; "
              "it claims no more for them than that the shipped run trained with them.", "",
              f"Measured in {time.process_time() - t0:.0f} CPU seconds.",
              "", "```json",
              json.dumps({"step_cpu_seconds": seconds, "head_start_valid_acc": start,
                          "head_start_steps": args.head_start_steps}, indent=1), "```", ""]
    path = model_dir() / RECORD
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
