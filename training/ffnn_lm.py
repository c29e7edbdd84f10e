"""Recipe of ``ffnn_lm``: lesson 01's feed-forward language model (``make models NAME=ffnn_lm``).

Data: :func:`helpers.course.ffnn_lm.ffnn_lm_data` (lesson 01's Wikipedia split, windows of
``context`` tokens). Model: :class:`FeedForwardLM` below, Adam, shuffled
mini-batches epoch after epoch. Every ``eval_every`` steps the validation cross-entropy decides
early stopping (the best weights are kept) and, when it did not improve, halves the learning
rate. The interpolated Kneser-Ney baseline (orders 2-5, discount chosen on validation) is scored
on the same target tokens and stored with the model. The subset metric is the test perplexity on
the first ``SUBSET`` windows. Where the settings come from: ``data/models/records/lm_settings.md``.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.course.ffnn_lm import ffnn_lm_data, lm_streams
from helpers.lib.batching import minibatch_indices
from helpers.lib.checks import check_ids
from helpers.lib.language_models import perplexity
from helpers.lib.ngram import KneserNeyLM
from training.loop import model_arrays, torch_snapshot, train_steps
from training.runlog import RunLog

# chosen on validation perplexity against the best Kneser-Ney order on the same tokens
SETTINGS = dict(vocab_size=2000, context=4, emb_dim=48, hidden=128, dropout=0.2, batch_size=256,
                lr=3e-3, eval_every=500, patience=4, min_delta=1e-3, max_epochs=15, lr_decay=0.5,
                seed=0)
SUBSET = 5000                                              # test windows of the subset metric
KN_ORDERS = (2, 3, 4, 5)
KN_DISCOUNTS = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)      # chosen on validation, per order


def seeded_init(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Re-initialise ``module``'s parameters reproducibly from ``seed``.

    PyTorch's layer constructors draw from the global generator; this runs their
    ``reset_parameters`` under a temporary fork of it, so the global state is left as it was.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for m in module.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()
    return module


class FeedForwardLM(nn.Module):
    """The feed-forward (Bengio-style) language model of lesson 01 §10, in PyTorch.

    ids (B, n) -> embeddings (B, n, d) -> concatenated (B, n·d) -> tanh hidden (B, h) -> scores
    (B, V); ``dropout`` on the concatenated embeddings and on the hidden layer in training mode.
    The lesson runs the trained weights with the student's NumPy MLP."""

    def __init__(self, vocab_size: int, context: int = 3, emb_dim: int = 64, hidden: int = 128,
                 dropout: float = 0.0):
        super().__init__()
        if not 0 <= dropout < 1:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.context = context
        self.drop = nn.Dropout(dropout)
        self.embed = nn.Embedding(vocab_size, emb_dim)
        self.hidden = nn.Linear(context * emb_dim, hidden)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, ctx: torch.Tensor) -> torch.Tensor:
        if ctx.ndim != 2 or ctx.shape[1] != self.context:
            raise ValueError(f"expected context ids of shape (B, {self.context}), got "
                             f"{tuple(ctx.shape)}")
        check_ids(ctx, self.embed.num_embeddings, "ctx", "FeedForwardLM.forward", noun="token ids")
        x = self.drop(self.embed(ctx).flatten(1))
        return self.out(self.drop(torch.tanh(self.hidden(x))))


def torch_model(shipped) -> FeedForwardLM:
    """The shipped weights (``load_model("ffnn_lm")``, laid out for x W) in the PyTorch model."""
    s, w = shipped.settings, shipped.weights
    model = FeedForwardLM(len(shipped.vocab), s["context"], s["emb_dim"], s["hidden"], s["dropout"])
    state = {"embed.weight": w["E"], "hidden.weight": w["W1"].T, "hidden.bias": w["b1"],
             "out.weight": w["W2"].T, "out.bias": w["b2"]}
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()})
    return model.eval()


@torch.no_grad()
def mean_nll(model: torch.nn.Module, X: np.ndarray, y: np.ndarray, batch_size: int = 2048) -> float:
    """The mean cross-entropy (nats) of ``model(X[i]) -> y[i]`` over a whole split (eval mode)."""
    if len(X) != len(y) or len(y) == 0:
        raise ValueError(f"mean_nll: {len(X)} contexts and {len(y)} targets (need as many, > 0)")
    was_training = model.training
    model.eval()
    total = 0.0
    for s in range(0, len(y), batch_size):
        xb, yb = torch.as_tensor(X[s:s + batch_size]), torch.as_tensor(y[s:s + batch_size])
        total += F.cross_entropy(model(xb), yb, reduction="sum").item()
    model.train(was_training)
    return total / len(y)


def kn_baseline(vocab_size: int, start: int, log: RunLog | None = None) -> dict:
    """Interpolated Kneser-Ney on the feed-forward LM's split and target tokens (``ids[start:]``
    of each split): per order n, the discount D chosen on validation and both perplexities.
    Returns {n (str): {'D', 'valid_ppl', 'test_ppl', 'valid_by_D': {D: ppl}}}."""
    vocab, train_ids, valid_ids, test_ids = lm_streams(vocab_size)
    out = {}
    for n in KN_ORDERS:
        kn = KneserNeyLM(order=n, vocab_size=len(vocab)).fit(train_ids)
        by_d = {}
        for d in KN_DISCOUNTS:
            kn.D = d
            by_d[f"{d:g}"] = perplexity(float(kn.token_nll(valid_ids, start).mean()))
        best = min(by_d, key=by_d.get)
        kn.D = float(best)
        test_ppl = perplexity(float(kn.token_nll(test_ids, start).mean()))
        out[str(n)] = {"D": float(best), "valid_ppl": by_d[best], "test_ppl": test_ppl,
                       "valid_by_D": by_d}
        if log is not None:
            log.event("kn_baseline", order=n, D=float(best), valid_ppl=by_d[best],
                      test_ppl=test_ppl)
    return out


def train(settings: dict, log: RunLog, max_steps: int | None = None,
          progress: bool = True) -> tuple[dict, dict, dict]:
    """Train the feed-forward LM; return (arrays, meta, metrics). ``max_steps``: stop there
    (a replay of the first steps)."""
    s = settings
    data = ffnn_lm_data(s["vocab_size"], s["context"])
    model = seeded_init(FeedForwardLM(len(data.vocab), s["context"], s["emb_dim"], s["hidden"],
                                      s["dropout"]), s["seed"])
    torch.manual_seed(s["seed"])             # dropout's masks (the trainer runs in its own process)
    opt = torch.optim.Adam(model.parameters(), lr=s["lr"])
    rng = np.random.default_rng(s["seed"])
    X, y = torch.from_numpy(data.X_train), torch.from_numpy(data.y_train)
    per_epoch = math.ceil(len(y) / s["batch_size"])

    def batches():
        while True:                                       # epoch after epoch, a new order each
            yield from minibatch_indices(len(y), s["batch_size"], rng)

    order = batches()

    def step(k):
        idx = next(order)
        loss = F.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def evaluate(k):
        valid = mean_nll(model, data.X_valid, data.y_valid)
        return {"epoch": math.ceil(k / per_epoch), "valid_nll": valid,
                "valid_ppl": perplexity(valid)}

    snapshot, restore = torch_snapshot(model)
    run = train_steps(step, s["max_epochs"] * per_epoch, log, evaluate=evaluate,
                      eval_every=s["eval_every"], curve=("step", "valid_ppl", "train_loss"),
                      metric="valid_nll", patience=s["patience"], min_delta=s["min_delta"],
                      snapshot=snapshot, restore=restore, optimizer=opt, lr_decay=s["lr_decay"],
                      limit=max_steps, cap_reason=f"the limit of {s['max_epochs']} epochs",
                      desc="feed-forward LM", progress=progress)
    model.eval()
    if max_steps is not None:
        return model_arrays(model, run.curve), {"settings": dict(s)}, {"steps": run.steps}
    kn = kn_baseline(s["vocab_size"], s["context"], log)
    best = min(kn, key=lambda n: kn[n]["valid_ppl"])
    metrics = {"valid_ppl": perplexity(mean_nll(model, data.X_valid, data.y_valid)),
               "test_ppl": perplexity(mean_nll(model, data.X_test, data.y_test)),
               "steps": run.steps, "best_step": run.best_step,
               "epochs": round(run.steps / per_epoch, 2), "kn_best_order": int(best),
               "kn_best_valid_ppl": kn[best]["valid_ppl"], "kn_best_test_ppl": kn[best]["test_ppl"]}
    meta = {"settings": dict(s), "metrics": metrics, "kn_baseline": kn,
            "vocab": data.vocab.to_arrays()[1], "stopped_by": run.stopped_by,
            "data": f"Wikipedia (data/wikipedia.txt.gz), 90/5/5 in order; "
                    f"{len(data.y_train):,} training windows"}
    return model_arrays(model, run.curve, data.vocab), meta, metrics


def subset_metric(shipped) -> tuple[str, float]:
    """('test_ppl_first_5000', the test perplexity on the first SUBSET windows)."""
    data = ffnn_lm_data(shipped.settings["vocab_size"], shipped.settings["context"])
    if data.vocab.itos != shipped.vocab.itos:
        raise ValueError("the shipped model's vocabulary differs from the one the current data "
                         "gives: rebuild it with `make models NAME=ffnn_lm`")
    nll = mean_nll(torch_model(shipped), data.X_test[:SUBSET], data.y_test[:SUBSET])
    return f"test_ppl_first_{SUBSET}", perplexity(nll)
