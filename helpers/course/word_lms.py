"""The word-level RNN, GRU and LSTM language models of lessons 02-03, trained until they stop
improving: the shipped models ``data/models/{rnn,gru,lstm}_lm.npz`` (``make models NAME=rnn_lm``,
``NAME=gru_lm``, ``NAME=lstm_lm``).

Data: :func:`helpers.course.recurrent_lms.lm_data` (the course's modern-English corpus, split by
document 90/5/5 with seed 0, a vocabulary of the 3,000 most frequent training words plus
``<unk>`` and ``<eos>``). Model: :class:`helpers.lib.rnn_lm.RecurrentLM` (embedding -> one
recurrent layer -> linear over the vocabulary), the three kinds with the same sizes. Training:
truncated BPTT over the training stream (``batch_size`` rows read ``seq_len`` tokens at a
time, the state carried across windows and detached), Adam, global-norm clipping. Every
``eval_every`` steps (half an epoch) the perplexity on the *whole* validation split is measured;
an evaluation that does not improve on the best by ``min_delta`` nats multiplies the learning
rate by ``lr_decay`` (reduce-on-plateau); training stops after ``patience`` such evaluations in a
row, or at the cap of ``max_steps`` (eight epochs: a budget cap that keeps ``make models`` within
its time; the log and the metadata say which one stopped it). The best evaluation's weights are
kept.

All three kinds share the settings below (same data, vocabulary, sizes and budget rule). Only the
validation split steers training (early stopping, the learning-rate decay, the best weights); the
sizes, learning rate and step cap were set, not searched (the 2-core machine allowed about
35 CPU-minutes for the three). The test split gives final numbers only; the
recorded "subset metric" is the test perplexity on its first ``SUBSET`` tokens, so
``tests/test_models.py`` checks each shipped file in seconds.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from helpers.course.data import DATA_DIR
from helpers.course.recurrent_lms import lm_data
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
from helpers.lib.batching import bptt_batches
from helpers.lib.language_models import perplexity
from helpers.lib.ngram import kneser_ney_nlls
from helpers.lib.rnn_lm import LMData, RecurrentLM, detach_state, endless_batches, evaluate_nll
from helpers.lib.text import Vocab

KINDS = ("rnn", "gru", "lstm")
# eval_every: half an epoch (543 steps per epoch); max_steps: eight epochs, a budget cap (about 12
# CPU-minutes per model at idle) that early stopping may end sooner; lr_decay: every evaluation
# without an improvement halves the learning rate (reduce-on-plateau).
COMMON = dict(vocab_size=3000, emb_dim=128, hidden=128, batch_size=64, seq_len=35, lr=3e-3, clip=1.0,
              eval_every=272, patience=3, min_delta=2e-3, max_steps=4352, lr_decay=0.5, seed=0)
# The two big matrices are stored as float16 (half the bytes); the trainer rounds them before
# the final evaluation, so the recorded metrics are those of the shipped file.
FLOAT16 = ("model/embed.weight", "model/out.weight")
SETTINGS = {kind: {"kind": kind, **COMMON} for kind in KINDS}
SUBSET = 20_000        # test tokens of the recorded subset metric


@dataclass
class ShippedWordLM:
    """A shipped word-level LM: ``model`` (:class:`RecurrentLM`, eval mode), its ``vocab``, the
    ``settings`` it was trained with, its final ``metrics`` (valid_ppl, test_ppl, steps, ...),
    its ``curve`` ({'step', 'valid_ppl', 'train_loss'}: one point per evaluation, whole
    validation split), ``train_seconds`` (wall clock of the shipped training) and
    ``stopped_by`` (early stopping or the step cap)."""

    model: RecurrentLM
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    stopped_by: str


def _snapshot(model: nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def train_word_lm(settings: dict, log: RunLog, max_steps: int | None = None, progress: bool = True,
                  data: LMData | None = None) -> tuple[dict, dict, dict]:
    """Train the word-level LM of ``settings['kind']`` with early stopping on the validation
    perplexity; return (arrays, meta, metrics) for :func:`helpers.infra.artifacts.save_artifact`.
    Every step's loss and every evaluation go to ``log``. ``max_steps`` stops after that many
    steps, keeping the last weights (the tests replay the first steps)."""
    s = settings
    if s["kind"] not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {s['kind']!r}")
    data = data or lm_data(s["vocab_size"])
    model = RecurrentLM(len(data.vocab), s["kind"], s["emb_dim"], s["hidden"], seed=s["seed"]).train()
    opt = torch.optim.Adam(model.parameters(), lr=s["lr"])
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"])
    stream = endless_batches(data.train, s["batch_size"], s["seq_len"])
    per_epoch = (len(data.train) - 1) // s["batch_size"] // s["seq_len"]
    cap = s["max_steps"] if max_steps is None else min(max_steps, s["max_steps"])
    curve = {"step": [], "valid_ppl": [], "train_loss": []}
    bar = progress_bar(total=cap, desc=f"{s['kind']} LM", unit="step", disable=not progress)
    state, since_eval, t0 = None, [], time.perf_counter()
    reason = f"the step cap max_steps={s['max_steps']}"
    for step in range(1, cap + 1):
        x, y, fresh = next(stream)
        logits, state = model(torch.as_tensor(x), None if fresh else detach_state(state))
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.as_tensor(y).reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), s["clip"])
        opt.step()
        log.step(loss.item())
        since_eval.append(loss.item())
        bar.update(1)
        if step % s["eval_every"] == 0:
            valid = evaluate_nll(model, data.valid)
            stop = stopper.update(valid, step, snapshot=lambda: _snapshot(model))
            curve["step"].append(step)
            curve["valid_ppl"].append(perplexity(valid))
            curve["train_loss"].append(float(np.mean(since_eval)))
            since_eval = []
            log.event("eval", epoch=round(step / per_epoch, 3), valid_nll=valid, valid_ppl=perplexity(valid),
                      train_loss=curve["train_loss"][-1], seconds=time.perf_counter() - t0,
                      **{k: v for k, v in stopper.decisions[-1].items() if k != "value"})
            bar.set_postfix(valid_ppl=f"{perplexity(valid):.1f}", best_step=stopper.best_step)
            if stop:
                reason = f"early stopping: {stopper.summary()}"
                break
            if s.get("lr_decay") and not stopper.decisions[-1]["improved"]:
                for group in opt.param_groups:          # a plateau: smaller steps (reduce-on-plateau)
                    group["lr"] *= s["lr_decay"]
                log.event("lr", step=step, lr=opt.param_groups[0]["lr"])
    else:
        if max_steps is not None and max_steps < s["max_steps"]:
            reason = f"max_steps={max_steps}"
    bar.close()
    if stopper.best_state is not None and max_steps is None:
        model.load_state_dict(stopper.best_state)      # the best evaluation's weights, not the last
    with torch.no_grad():                              # as stored: float16 for the big matrices
        for name in FLOAT16:
            p = model.get_parameter(name.removeprefix("model/"))
            p.copy_(p.half().float())
    log.event("stop", reason=reason, steps=step, best_step=stopper.best_step,
              kept="best" if max_steps is None else "last")
    model.eval()
    if max_steps is not None:                          # a replay or a short run: the logged losses only
        return state_dict_to_arrays(model.state_dict(), "model/"), {"settings": dict(settings)}, {"steps": step}
    metrics = {"valid_ppl": perplexity(evaluate_nll(model, data.valid)),
               "test_ppl": perplexity(evaluate_nll(model, data.test)),
               "steps": step, "best_step": stopper.best_step, "epochs": round(step / per_epoch, 2),
               "n_params": sum(p.numel() for p in model.parameters())}
    arrays = {**state_dict_to_arrays(model.state_dict(), "model/"),
              **prefixed(data.vocab.to_arrays()[0], "vocab/"), **curves_to_arrays(curve)}
    meta = {"settings": dict(settings), "metrics": metrics, "vocab": data.vocab.to_arrays()[1], "stopped_by": reason,
            "data": f"modern-English corpus (Wikipedia + BBC News), split by document 90/5/5 (seed 0); "
                    f"{len(data.train):,} training tokens, {per_epoch:,} steps per epoch"}
    return arrays, meta, metrics


def load_word_lm(artifact: Artifact) -> ShippedWordLM:
    """The model stored by :func:`train_word_lm` (read through :func:`helpers.course.models.load_model`)."""
    s = artifact.meta["settings"]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    model = RecurrentLM(len(vocab), s["kind"], s["emb_dim"], s["hidden"], seed=s["seed"])
    model.load_state_dict({k: v.float() for k, v in arrays_to_state_dict(artifact.arrays, "model/").items()})
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedWordLM(model.eval(), vocab, s, artifact.meta["metrics"], curve,
                         float(artifact.meta.get("train_seconds", math.nan)), artifact.meta["stopped_by"])


def word_lm_subset_metric(shipped: ShippedWordLM) -> tuple[str, float]:
    """('test_ppl_first_20000', perplexity on the first SUBSET tokens of the test split)."""
    data = lm_data(shipped.settings["vocab_size"])
    if data.vocab.itos != shipped.vocab.itos:
        raise ValueError(f"the shipped {shipped.settings['kind']} LM's vocabulary differs from the one the current data "
                         f"gives (the corpus or the tokeniser changed): rebuild it with "
                         f"`make models NAME={shipped.settings['kind']}_lm`")
    return f"test_ppl_first_{SUBSET}", perplexity(evaluate_nll(shipped.model, data.test[:SUBSET]))


# ---------------------------------------------------------------- the Kneser-Ney baselines, stored
KN_ORDERS = (2, 3, 4, 5)
KN_DISCOUNT = 0.75


def kn_path():
    """``data/models/baselines/word_kn``: the stored Kneser-Ney baselines of the word-level LMs."""
    return DATA_DIR / "models" / "baselines" / "word_kn"


def build_kn_baselines(orders=KN_ORDERS) -> dict:
    """Fit interpolated Kneser-Ney n-grams (discount 0.75) of each order on the training split of
    :func:`lm_data` and score the whole validation and test splits; store them (npz + json, checksummed)
    at :func:`kn_path`. The perplexity of every order on both splits is in the metadata; the only array,
    ``test/<best>``, is the per-token NLL (nats) of the order with the lowest *validation* perplexity
    (the one the lessons bootstrap against; the others are not stored, to keep data/models under
    40 MB), token i scored from its n-1 predecessors (the first 4 tokens of each split are skipped for
    every order, so all orders score the same tokens), stored as float16 (relative rounding
    <= 5e-4 per token; the printed perplexities and bootstrap intervals do not change). Uses :func:`helpers.lib.ngram.kneser_ney_nlls`
    (the vectorised form of :class:`~helpers.lib.ngram.KneserNeyLM`; under a minute):
    ``python -m helpers.course.word_lms kn``."""
    data = lm_data(COMMON["vocab_size"])
    skip = max(orders) - 1
    nlls, metrics, t0 = {}, {}, time.perf_counter()
    for n in orders:
        for split in ("valid", "test"):
            nlls[split, n] = kneser_ney_nlls(data.train, getattr(data, split), n, len(data.vocab), KN_DISCOUNT)[skip - (n - 1):]
            metrics[f"{split}_ppl_{n}"] = perplexity(float(nlls[split, n].mean()))
    best = min(orders, key=lambda n: metrics[f"valid_ppl_{n}"])          # chosen on validation
    arrays = {f"test/{best}": nlls["test", best].astype(np.float16)}      # half the bytes; ppl agrees to 4 digits
    meta = {"orders": list(orders), "best_order": best, "discount": KN_DISCOUNT, "skipped_tokens": skip,
            "metrics": metrics, "vocab_size": COMMON["vocab_size"], "seconds": time.perf_counter() - t0,
            "command": "python -m helpers.course.word_lms kn"}
    save_artifact(kn_path(), arrays, meta)
    return meta


@dataclass
class KNBaselines:
    """The stored Kneser-Ney baselines: ``orders``, ``ppl[split][n]`` (from the float64 NLLs) and the
    per-token test NLLs of the validation-chosen order, ``nll["test"][best_order()]`` (float64 from the
    stored float16; the test split without its first ``skipped`` tokens)."""

    orders: list
    nll: dict
    ppl: dict
    skipped: int

    def best_order(self) -> int:
        """The order with the lowest *validation* perplexity (chosen on validation, reported on test)."""
        return min(self.orders, key=lambda n: self.ppl["valid"][n])


def load_kn_baselines() -> KNBaselines:
    """The baselines :func:`build_kn_baselines` stored (checksums verified on load)."""
    try:
        art = load_artifact(kn_path())
    except ArtifactError as e:
        raise ArtifactError(f"the Kneser-Ney baselines {kn_path()}: {e}. Rebuild them with "
                            f"`python -m helpers.course.word_lms kn` (about a minute)") from None
    orders, best, m = [int(n) for n in art.meta["orders"]], int(art.meta["best_order"]), art.meta["metrics"]
    nll = {"test": {best: art.arrays[f"test/{best}"].astype(np.float64)}}
    ppl = {split: {n: float(m[f"{split}_ppl_{n}"]) for n in orders} for split in ("valid", "test")}
    return KNBaselines(orders, nll, ppl, int(art.meta["skipped_tokens"]))


@torch.no_grad()
def token_nlls(model: RecurrentLM, ids: np.ndarray, batch_size: int = 16, seq_len: int = 64) -> np.ndarray:
    """Per-token NLL (nats) of the recurrent LM over a stream, in stream order: element i scores
    ids[i + 1] (the model carries its state across windows, as :func:`evaluate_nll`). The stream
    is read as ``batch_size`` rows; the last ``(len(ids) - 1) % batch_size`` tokens are not scored.
    Returns (n_scored,) float64 and the positions (in ``ids``) of the scored tokens."""
    model.eval()
    rows, state = [], None
    for x, y in bptt_batches(ids, batch_size, seq_len):
        logits, state = model(torch.as_tensor(x), state)
        # the loss of evaluate_nll, token by token: (batch_size, seq_len) losses, float32 like training
        loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), torch.as_tensor(y), reduction="none")
        rows.append(loss.double().numpy())
    nll = np.concatenate(rows, axis=1)                          # (batch_size, n_cols)
    n_cols = nll.shape[1]
    return nll.reshape(-1), 1 + np.arange(batch_size * n_cols)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["kn"]:
        sys.exit("usage: python -m helpers.course.word_lms kn   (rebuild the stored Kneser-Ney baselines)")
    print(build_kn_baselines())
