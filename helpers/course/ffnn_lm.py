"""Lesson 01's feed-forward language model, trained until it stops improving: the shipped model
``data/models/ffnn_lm.npz`` (``make models NAME=ffnn_lm``).

Data, exactly as in lesson 01: the Wikipedia articles tokenised with punctuation, ``<eos>``
after each article, split 90/5/5 in order (train / validation / test), a vocabulary of the
2,000 most frequent training tokens plus ``<unk>``. Model: :class:`helpers.lib.language_models.FeedForwardLM`
(4 previous tokens, 48-dim embeddings, 128 tanh units, dropout 0.2), Adam, mini-batches of 256
windows. The Kneser-Ney baseline (orders 2-5, discount chosen on validation) is computed on the same
tokens and stored with the model (:func:`kn_baseline`).
Training stops when the validation cross-entropy, measured every ``eval_every`` steps, has not
improved by ``min_delta`` nats for ``patience`` evaluations; the best weights are kept. With
``lr_decay`` in the settings, every evaluation without an improvement also multiplies the learning
rate by it (reduce-on-plateau).

The test split gives the final numbers only; the recorded "subset metric" is the test
perplexity on its first ``SUBSET`` windows, so ``tests/test_models.py`` can check the shipped
file in a second.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from tqdm.auto import tqdm

from helpers.course.data import load_wikipedia
from helpers.infra.artifacts import (
    Artifact,
    arrays_to_curves,
    arrays_to_state_dict,
    curves_to_arrays,
    prefixed,
    state_dict_to_arrays,
    unprefixed,
)
from helpers.infra.early_stopping import EarlyStopping
from helpers.infra.runlog import RunLog
from helpers.infra.seeding import seeded_init
from helpers.lib.batching import minibatch_indices, ngram_windows
from helpers.lib.language_models import FeedForwardLM, mean_nll, perplexity
from helpers.lib.ngram import KneserNeyLM
from helpers.lib.text import Vocab, tokenize

# Chosen on validation perplexity (the test split was not looked at), against the best Kneser-Ney
# order on the same tokens (the trigram, 53.9): context 3, 32-dim embeddings, 64 hidden units, no
# dropout, constant lr reached 54.7 (over-fitting after 7,500 steps); these settings without
# lr_decay hovered at 54.5-56 from step 5,500 to 9,800 (run stopped there); with lr_decay (halve
# the learning rate at every evaluation without improvement) they are the shipped model.
SETTINGS = dict(vocab_size=2000, context=4, emb_dim=48, hidden=128, dropout=0.2, batch_size=256, lr=3e-3,
                eval_every=500, patience=4, min_delta=1e-3, max_epochs=15, lr_decay=0.5, seed=0)
SUBSET = 5000          # test windows of the recorded subset metric
KN_ORDERS = (2, 3, 4, 5)                                   # the baseline's n-gram orders ...
KN_DISCOUNTS = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)      # ... and discounts, chosen on validation


@dataclass
class LMWindows:
    """Lesson 01's language-modelling data: the vocabulary and (context, next-token) windows of
    each split, X (N, context) int64 and y (N,) int64."""

    vocab: Vocab
    X_train: np.ndarray
    y_train: np.ndarray
    X_valid: np.ndarray
    y_valid: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


@lru_cache(maxsize=2)
def lm_streams(vocab_size: int = 2000) -> tuple[Vocab, np.ndarray, np.ndarray, np.ndarray]:
    """(vocab, train_ids, valid_ids, test_ids): lesson 01's Wikipedia token streams (int64 ids,
    ``<unk>`` for words outside the ``vocab_size`` most frequent training tokens)."""
    tokens = [t for text in load_wikipedia().values() for t in tokenize(text, punctuation=True) + ["<eos>"]]
    a, b = int(0.9 * len(tokens)), int(0.95 * len(tokens))
    vocab = Vocab.build(tokens[:a], max_size=vocab_size, specials=("<unk>",))
    ids = vocab.encode(tokens)
    return vocab, ids[:a], ids[a:b], ids[b:]


@lru_cache(maxsize=2)
def ffnn_lm_data(vocab_size: int = 2000, context: int = 3) -> LMWindows:
    """Lesson 01's Wikipedia split as windows of ``context`` tokens (see the module docstring)."""
    vocab, *parts = lm_streams(vocab_size)
    splits = [ngram_windows(part, context) for part in parts]
    return LMWindows(vocab, *(x for pair in splits for x in pair))


def kn_baseline(vocab_size: int, start: int, orders=KN_ORDERS, discounts=KN_DISCOUNTS,
                log: RunLog | None = None) -> dict:
    """The interpolated Kneser-Ney baseline on the same split, vocabulary and target tokens as the
    feed-forward LM: for each order n, the discount D chosen on validation, then its validation and
    test perplexity. Every scored token is ``ids[start:]`` of a split (``start`` = the neural model's
    window), so both models predict exactly the same tokens. Returns {n: {"D", "valid_ppl",
    "test_ppl", "valid_by_D": {D: ppl}}} with n as a string (JSON keys)."""
    vocab, train_ids, valid_ids, test_ids = lm_streams(vocab_size)
    out = {}
    for n in orders:
        kn = KneserNeyLM(order=n, vocab_size=len(vocab)).fit(train_ids)
        by_d = {}
        for d in discounts:
            kn.D = d
            by_d[f"{d:g}"] = perplexity(float(kn.token_nll(valid_ids, start).mean()))
        best = min(by_d, key=by_d.get)
        kn.D = float(best)
        out[str(n)] = {"D": float(best), "valid_ppl": by_d[best],
                       "test_ppl": perplexity(float(kn.token_nll(test_ids, start).mean())), "valid_by_D": by_d}
        if log is not None:
            log.event("kn_baseline", order=n, **{k: v for k, v in out[str(n)].items() if k != "valid_by_D"})
    return out


@dataclass
class ShippedFFNNLM:
    """The shipped feed-forward LM: ``model`` (in eval mode), its ``vocab``, the ``settings`` it
    was trained with, its final ``metrics`` and its validation ``curve``
    ({'step': [...], 'valid_ppl': [...]}, one point per evaluation)."""

    model: FeedForwardLM
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    kn_baseline: dict       # {n: {"D", "valid_ppl", "test_ppl", "valid_by_D"}}, see kn_baseline()


def _snapshot(model: torch.nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def train_ffnn_lm(settings: dict, log: RunLog, max_steps: int | None = None,
                  progress: bool = True) -> tuple[dict, dict, dict]:
    """Train the feed-forward LM with early stopping; return (arrays, meta, metrics) for
    :func:`helpers.infra.artifacts.save_artifact`. Every step's loss and every evaluation go
    to ``log``. ``max_steps`` stops after that many steps (the tests replay the first steps)."""
    s = settings
    data = ffnn_lm_data(s["vocab_size"], s["context"])
    model = seeded_init(FeedForwardLM(len(data.vocab), s["context"], s["emb_dim"], s["hidden"],
                                      s.get("dropout", 0.0)), s["seed"])
    torch.manual_seed(s["seed"])             # dropout's masks (the trainer runs in its own process)
    opt = torch.optim.Adam(model.parameters(), lr=s["lr"])
    rng = np.random.default_rng(s["seed"])
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"])
    X, y = torch.from_numpy(data.X_train), torch.from_numpy(data.y_train)
    per_epoch = math.ceil(len(y) / s["batch_size"])
    total = s["max_epochs"] * per_epoch if max_steps is None else min(max_steps, s["max_epochs"] * per_epoch)
    curve = {"step": [], "valid_ppl": [], "train_loss": []}
    bar = tqdm(total=total, desc="feed-forward LM", unit="step", disable=not progress)
    step, since_eval, reason, t0 = 0, [], f"the limit of {s['max_epochs']} epochs", time.perf_counter()
    for epoch in range(1, s["max_epochs"] + 1):
        for idx in minibatch_indices(len(y), s["batch_size"], rng):
            loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            log.step(loss.item())
            since_eval.append(loss.item())
            bar.update(1)
            if step % s["eval_every"] == 0:
                valid = mean_nll(model, data.X_valid, data.y_valid)
                stop = stopper.update(valid, step, snapshot=lambda: _snapshot(model))
                curve["step"].append(step)
                curve["valid_ppl"].append(perplexity(valid))
                curve["train_loss"].append(float(np.mean(since_eval)))
                since_eval = []
                log.event("eval", epoch=epoch, valid_nll=valid, valid_ppl=perplexity(valid),
                          train_loss=curve["train_loss"][-1], seconds=time.perf_counter() - t0,
                          **{k: v for k, v in stopper.decisions[-1].items() if k != "value"})
                bar.set_postfix(valid_ppl=f"{perplexity(valid):.1f}", best_step=stopper.best_step)
                if stop:
                    reason = f"early stopping: {stopper.summary()}"
                    break
                if s.get("lr_decay") and not stopper.decisions[-1]["improved"]:
                    for group in opt.param_groups:      # a plateau: smaller steps (reduce-on-plateau)
                        group["lr"] *= s["lr_decay"]
                    log.event("lr", step=step, lr=opt.param_groups[0]["lr"])
            if max_steps is not None and step >= max_steps:
                reason = f"max_steps={max_steps}"
                break
        else:
            continue
        break
    bar.close()
    if stopper.best_state is not None and max_steps is None:
        model.load_state_dict(stopper.best_state)      # the best evaluation's weights, not the last
    log.event("stop", reason=reason, steps=step, best_step=stopper.best_step, kept="best" if max_steps is None else "last")
    model.eval()
    metrics = {"valid_ppl": perplexity(mean_nll(model, data.X_valid, data.y_valid)),
               "test_ppl": perplexity(mean_nll(model, data.X_test, data.y_test)),
               "steps": step, "best_step": stopper.best_step, "epochs": round(step / per_epoch, 2)}
    arrays = {**state_dict_to_arrays(model.state_dict(), "model/"),
              **prefixed(data.vocab.to_arrays()[0], "vocab/"), **curves_to_arrays(curve)}
    if max_steps is None:                     # the baseline on the same tokens (not for the 50-step replays)
        kn = kn_baseline(s["vocab_size"], s["context"], log=log)
        best = min(kn, key=lambda n: kn[n]["valid_ppl"])
        metrics.update(kn_best_order=int(best), kn_best_valid_ppl=kn[best]["valid_ppl"],
                       kn_best_test_ppl=kn[best]["test_ppl"])
    else:
        kn = {}
    meta = {"settings": dict(settings), "metrics": metrics, "kn_baseline": kn, "vocab": data.vocab.to_arrays()[1], "stopped_by": reason,
            "data": f"Wikipedia (data/wikipedia.txt.gz), 90/5/5 in order; {len(data.y_train):,} training windows"}
    return arrays, meta, metrics


def load_ffnn_lm(artifact: Artifact) -> ShippedFFNNLM:
    """The model stored by :func:`train_ffnn_lm` (read through :func:`helpers.course.models.load_model`)."""
    s = artifact.meta["settings"]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    model = FeedForwardLM(len(vocab), s["context"], s["emb_dim"], s["hidden"], s.get("dropout", 0.0))
    model.load_state_dict(arrays_to_state_dict(artifact.arrays, "model/"))
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedFFNNLM(model.eval(), vocab, s, artifact.meta["metrics"], curve, artifact.meta.get("kn_baseline", {}))


def ffnn_subset_metric(shipped: ShippedFFNNLM) -> tuple[str, float]:
    """('test_ppl_first_5000', perplexity on the first SUBSET windows of the test split)."""
    data = ffnn_lm_data(shipped.settings["vocab_size"], shipped.settings["context"])
    if data.vocab.itos != shipped.vocab.itos:
        raise ValueError("the shipped model's vocabulary differs from the one the current data gives "
                         "(the corpus or the tokeniser changed): rebuild it with `make models NAME=ffnn_lm`")
    nll = mean_nll(shipped.model, data.X_test[:SUBSET], data.y_test[:SUBSET])
    return f"test_ppl_first_{SUBSET}", perplexity(nll)
