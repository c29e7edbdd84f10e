"""The word-level language models of lessons 02-03: their data, their settings, and the trained
models, cached on disk.

The corpus is the course's modern-English text (:mod:`helpers.course.corpus`), split by document;
the model and its training are :mod:`helpers.lib.rnn_lm`. Every lesson that needs a trained RNN,
GRU or LSTM language model loads the same one with :func:`cached_lm`.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from helpers.course.corpus import modern_english_documents
from helpers.infra.cache import cached
from helpers.lib.language_models import perplexity
from helpers.lib.rnn_lm import EOS, LMData, RecurrentLM, evaluate_nll, train_lm
from helpers.lib.text import UNK, Vocab, split_sentences, tokenize


def lm_data(vocab_size: int = 3000, fractions=(0.9, 0.05, 0.05), seed: int = 0) -> LMData:
    """The course's modern-English corpus (Wikipedia + BBC News, ~1.3M tokens) for language
    modelling. Documents are shuffled with ``seed`` and split by ``fractions``; the vocabulary
    is the ``vocab_size`` most frequent training words, everything else becomes ``<unk>``
    (so perplexities are over this closed vocabulary).
    """
    docs = [text for _, text in modern_english_documents()]
    order = np.random.default_rng(seed).permutation(len(docs))
    n_train = int(round(fractions[0] * len(docs)))
    n_valid = int(round(fractions[1] * len(docs)))
    splits = [order[:n_train], order[n_train:n_train + n_valid], order[n_train + n_valid:]]

    def tokens(idx):
        out = []
        for i in idx:
            for sent in split_sentences(docs[i]):
                toks = tokenize(sent)
                if toks:
                    out += toks + [EOS]
        return out

    train, valid, test = (tokens(s) for s in splits)
    vocab = Vocab.build(train, max_size=vocab_size, specials=(UNK, EOS))
    return LMData(vocab, vocab.encode(train), vocab.encode(valid), vocab.encode(test))


# ---------------------------------------------------------------- the lessons' trained models
LM_SETTINGS = dict(vocab_size=3000, emb_dim=64, hidden=128, batch_size=32, seq_len=35, lr=5e-3, clip=1.0)

# The steps each kind completed in the course's reference run of a 40-second budget (wall clock,
# one thread, on a shared 2-core machine): the lessons train exactly these steps, so every
# machine, busy or idle, gets the models and the numbers the lessons show. (A wall-clock budget
# made them depend on the load: an idle machine fits ~590 steps, and lesson 03's gradient-flow
# comparison then comes out the other way; see that lesson.)
LM_STEPS = {"rnn": 192, "gru": 175, "lstm": 152}


def train_budgeted_lm(kind: str, seconds: float | None = 40.0, seed: int = 0, data: LMData | None = None,
                      device="cpu", progress: bool = True, threads: int | None = 1,
                      steps: int | None = None) -> dict:
    """Train a :class:`RecurrentLM` of ``kind`` with :data:`LM_SETTINGS` for ``steps`` steps or
    ``seconds`` of CPU time of the training thread, whichever ends first (give one or both), and
    evaluate it on the full validation and test splits. CPU time, not wall clock: other work on
    the machine then does not shrink the budget. Returns a dict of plain values and arrays
    (cached by :class:`helpers.infra.artifacts.TreeCodec`, no pickle): ``state_dict`` (NumPy arrays), ``kind``, ``steps``, ``train_seconds`` (wall clock), ``curve`` (list of
    (steps, valid_ppl on the first 20k valid tokens)), ``step_loss``, ``valid_ppl``,
    ``test_ppl``, ``n_params``.

    On the CPU, torch runs with ``threads`` threads meanwhile (restored afterwards; None leaves
    it alone). One thread by default: all work then happens on the training thread; with two
    threads on a busy 2-core machine we measured 4-7x fewer steps in the same 40 s of wall clock.
    Training is deterministic for a given number of steps (one thread, seeded).
    """
    data = data or lm_data(LM_SETTINGS["vocab_size"])
    s = LM_SETTINGS
    model = RecurrentLM(len(data.vocab), kind, s["emb_dim"], s["hidden"], seed=seed)
    before = torch.get_num_threads()
    if threads is not None and str(device) == "cpu":
        torch.set_num_threads(threads)
    try:
        return _train_and_evaluate(model, kind, data, seconds, steps, device, progress)
    finally:
        torch.set_num_threads(before)


def _train_and_evaluate(model, kind, data, seconds, steps, device, progress) -> dict:
    s = LM_SETTINGS
    what = f"{steps} steps" if steps is not None else f"{seconds:g} CPU-s budget"
    hist = train_lm(model, data, steps=steps, max_seconds=seconds, batch_size=s["batch_size"], seq_len=s["seq_len"],
                    lr=s["lr"], clip=s["clip"], desc=f"{kind} LM, {what}", device=device,
                    progress=progress, budget_clock=time.thread_time)
    return {"kind": kind, "seconds_budget": seconds, "steps": hist.steps, "train_seconds": hist.seconds,
            "curve": [(e["steps"], e["valid_ppl"]) for e in hist.epochs], "step_loss": hist.step_loss,
            "valid_ppl": perplexity(evaluate_nll(model, data.valid, device=device)),
            "test_ppl": perplexity(evaluate_nll(model, data.test, device=device)),
            "n_params": sum(p.numel() for p in model.parameters()),
            "state_dict": {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}}


def model_from_result(result: dict, vocab_size: int) -> RecurrentLM:
    """Rebuild the trained torch model from a :func:`train_budgeted_lm` result."""
    s = LM_SETTINGS
    model = RecurrentLM(vocab_size, result["kind"], s["emb_dim"], s["hidden"])
    model.load_state_dict({k: torch.as_tensor(v) for k, v in result["state_dict"].items()})
    return model.eval()


def cached_lm(kind: str, seconds: float = 40.0, seed: int = 0, data: LMData | None = None) -> dict:
    """The lessons' trained language model of ``kind``, cached on disk (helpers.infra.cache): the
    first call trains it and stores the result, later calls (any lesson) load it. With the
    default 40-second budget it trains exactly :data:`LM_STEPS` ``[kind]`` steps, the steps that
    budget bought in the course's reference run (the same models on every machine); another
    ``seconds`` trains for that much CPU time."""
    if seconds == 40.0 and kind in LM_STEPS:
        build = lambda: train_budgeted_lm(kind, None, seed, data, steps=LM_STEPS[kind])  # noqa: E731
    else:
        build = lambda: train_budgeted_lm(kind, seconds, seed, data)  # noqa: E731
    return cached(f"lesson02-03-{kind}-lm", f"v1-{seconds:g}s-seed{seed}", build)
