"""Recipe of ``rnn_lm``, ``gru_lm`` and ``lstm_lm``: the word-level recurrent LMs of lessons 02-03.

Data: :func:`helpers.course.word_lms.lm_data` (the modern-English corpus split by document,
3,000 words). Model: :class:`helpers.course.word_lms.RecurrentLM`, the three kinds with the same
sizes. Training: truncated BPTT (``batch_size`` rows read ``seq_len`` tokens at a time, the state
carried across windows and detached), Adam, global-norm clipping. Every ``eval_every`` steps
(half an epoch) the perplexity of the whole validation split decides early stopping (the best
weights are kept) and, when it did not improve, halves the learning rate; ``max_steps`` (eight
epochs) caps the budget. The subset metric is the test perplexity of the first ``SUBSET``
tokens. ``python -m training.word_lms kn`` rebuilds the stored Kneser-Ney baselines. Where the
settings come from: ``data/models/records/lm_settings.md``.
"""
from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from helpers.course.word_lms import RecurrentLM, kn_path, lm_data
from helpers.infra.artifacts import save_artifact
from helpers.lib.batching import bptt_batches
from helpers.lib.language_models import perplexity
from helpers.lib.ngram import kneser_ney_nlls
from training.loop import model_arrays, round_to_float16, torch_snapshot, train_steps
from training.runlog import RunLog

KINDS = ("rnn", "gru", "lstm")
COMMON = dict(vocab_size=3000, emb_dim=128, hidden=128, batch_size=64, seq_len=35, lr=3e-3,
              clip=1.0, eval_every=272, patience=3, min_delta=2e-3, max_steps=4352, lr_decay=0.5,
              seed=0)
SETTINGS = {kind: {"kind": kind, **COMMON} for kind in KINDS}
FLOAT16 = ("model/embed.weight", "model/out.weight")    # the two big matrices, stored as float16
SUBSET = 20_000                                         # test tokens of the subset metric
KN_ORDERS, KN_DISCOUNT = (2, 3, 4, 5), 0.75          # the stored Kneser-Ney baselines


def detach_state(state):
    """The recurrent state without its history: a truncated-BPTT boundary."""
    if state is None:
        return None
    return tuple(s.detach() for s in state) if isinstance(state, tuple) else state.detach()


def endless_batches(ids, batch_size: int, seq_len: int):
    """Truncated-BPTT windows of full length over the stream, pass after pass: (x, y, fresh),
    x and y (batch_size, seq_len) int64, ``fresh`` True at the start of a pass (reset the state)."""
    if (len(ids) - 1) // batch_size < seq_len:
        raise ValueError(f"the training stream ({len(ids)} tokens) is too short for one window of "
                         f"batch_size={batch_size} rows x seq_len={seq_len} steps")
    while True:
        for k, (x, y) in enumerate(bptt_batches(ids, batch_size, seq_len)):
            if x.shape[1] == seq_len:
                yield x, y, k == 0


@torch.no_grad()
def evaluate_nll(model: RecurrentLM, ids: np.ndarray, batch_size: int = 16,
                 seq_len: int = 64) -> float:
    """The mean next-token NLL (nats) over a whole id stream, the state carried across windows."""
    was = model.training
    model.eval()
    total, n, state = 0.0, 0, None
    for x, y in bptt_batches(ids, batch_size, seq_len):
        logits, state = model(torch.as_tensor(x), state)
        total += nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             torch.as_tensor(y).reshape(-1), reduction="sum").item()
        n += y.size
    model.train(was)
    if n == 0:
        raise ValueError("evaluate_nll: the stream gave no batch to score")
    return total / n


def train(settings: dict, log: RunLog, max_steps: int | None = None,
          progress: bool = True) -> tuple[dict, dict, dict]:
    """Train the word-level LM of ``settings['kind']``; return (arrays, meta, metrics).
    ``max_steps``: stop there, keeping the last weights (a replay of the first steps)."""
    s = settings
    if s["kind"] not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {s['kind']!r}")
    data = lm_data(s["vocab_size"])
    model = RecurrentLM(len(data.vocab), s["kind"], s["emb_dim"], s["hidden"], seed=s["seed"])
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=s["lr"])
    stream = endless_batches(data.train, s["batch_size"], s["seq_len"])
    per_epoch = (len(data.train) - 1) // s["batch_size"] // s["seq_len"]
    state = None

    def step(k):
        nonlocal state
        x, y, fresh = next(stream)
        logits, state = model(torch.as_tensor(x), None if fresh else detach_state(state))
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                           torch.as_tensor(y).reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), s["clip"])
        opt.step()
        return loss.item()

    def evaluate(k):
        valid = evaluate_nll(model, data.valid)
        return {"epoch": round(k / per_epoch, 3), "valid_nll": valid,
                "valid_ppl": perplexity(valid)}

    snapshot, restore = torch_snapshot(model)
    run = train_steps(step, s["max_steps"], log, evaluate=evaluate, eval_every=s["eval_every"],
                      curve=("step", "valid_ppl", "train_loss"), metric="valid_nll",
                      patience=s["patience"], min_delta=s["min_delta"], snapshot=snapshot,
                      restore=restore, optimizer=opt, lr_decay=s["lr_decay"], limit=max_steps,
                      desc=f"{s['kind']} LM", progress=progress)
    round_to_float16(model.get_parameter(name.removeprefix("model/")) for name in FLOAT16)
    model.eval()
    if max_steps is not None:
        return model_arrays(model, run.curve), {"settings": dict(s)}, {"steps": run.steps}
    metrics = {"valid_ppl": perplexity(evaluate_nll(model, data.valid)),
               "test_ppl": perplexity(evaluate_nll(model, data.test)),
               "steps": run.steps, "best_step": run.best_step,
               "epochs": round(run.steps / per_epoch, 2),
               "n_params": sum(p.numel() for p in model.parameters())}
    meta = {"settings": dict(s), "metrics": metrics, "vocab": data.vocab.to_arrays()[1],
            "stopped_by": run.stopped_by,
            "data": f"modern-English corpus (Wikipedia + BBC News), split by document 90/5/5 "
                    f"(seed 0); {len(data.train):,} training tokens, {per_epoch:,} steps per epoch"}
    return model_arrays(model, run.curve, data.vocab), meta, metrics


def subset_metric(shipped) -> tuple[str, float]:
    """('test_ppl_first_20000', the perplexity of the first SUBSET test tokens)."""
    data = lm_data(shipped.settings["vocab_size"])
    if data.vocab.itos != shipped.vocab.itos:
        raise ValueError(f"the shipped {shipped.settings['kind']} LM's vocabulary differs from the "
                         f"one the current data gives: rebuild it with "
                         f"`make models NAME={shipped.settings['kind']}_lm`")
    return f"test_ppl_first_{SUBSET}", perplexity(evaluate_nll(shipped.model, data.test[:SUBSET]))


def build_kn_baselines() -> dict:
    """Interpolated Kneser-Ney n-grams of orders 2-5 on the training split of :func:`lm_data`,
    scored on the whole validation and test splits (the first 4 tokens of each skipped, so every
    order scores the same tokens); stored at :func:`helpers.course.word_lms.kn_path`: the
    perplexities in the metadata, and the per-token test NLL (float16) of the order chosen on
    validation."""
    data = lm_data(COMMON["vocab_size"])
    skip = max(KN_ORDERS) - 1
    nlls, metrics, t0 = {}, {}, time.perf_counter()
    for n in KN_ORDERS:
        for split in ("valid", "test"):
            nll = kneser_ney_nlls(data.train, getattr(data, split), n, len(data.vocab), KN_DISCOUNT)
            nlls[split, n] = nll[skip - (n - 1):]
            metrics[f"{split}_ppl_{n}"] = perplexity(float(nlls[split, n].mean()))
    best = min(KN_ORDERS, key=lambda n: metrics[f"valid_ppl_{n}"])
    meta = {"orders": list(KN_ORDERS), "best_order": best, "discount": KN_DISCOUNT,
            "skipped_tokens": skip, "metrics": metrics, "vocab_size": COMMON["vocab_size"],
            "seconds": time.perf_counter() - t0, "command": "python -m training.word_lms kn"}
    save_artifact(kn_path(), {f"test/{best}": nlls["test", best].astype(np.float16)}, meta)
    return meta


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["kn"]:
        sys.exit("usage: python -m training.word_lms kn   (rebuilds the Kneser-Ney baselines)")
    print(build_kn_baselines())
