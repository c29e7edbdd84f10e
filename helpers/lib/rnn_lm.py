"""Recurrent language models in PyTorch for lessons 02-03: the model, truncated-BPTT training,
perplexity, generation with temperature, and the exposure-bias measurement.

The NumPy layers in :mod:`helpers.lib.recurrent` are the taught implementation; these torch
models are the same maths (``torch.nn.RNN``/``LSTM``/``GRU``) used when training must be fast.
The course's corpus, settings and trained models are in :mod:`helpers.course.recurrent_lms`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from helpers.infra.training import History, train_loop
from helpers.lib.batching import bptt_batches
from helpers.lib.checks import check_ids
from helpers.lib.language_models import perplexity
from helpers.lib.layers import check_class_ids
from helpers.lib.recurrent import TimeGRU, TimeLSTM, TimeRNN, copy_from_torch
from helpers.lib.text import Vocab, check_tokens

EOS = "<eos>"


# ---------------------------------------------------------------- data
@dataclass
class LMData:
    """A word-level corpus as train, valid and test id streams. Taught in lesson 02, section 4.

    A word-level corpus as id streams. ``train``/``valid``/``test``: (n,) int64, sentences
    joined by ``<eos>``; the split is by document (no document is in two splits)."""

    vocab: Vocab
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray

    def describe(self) -> str:
        unk = self.vocab.unk_id
        rate = float(np.mean(self.train == unk))
        return (f"vocabulary {len(self.vocab):,} types (incl. <unk>, <eos>); tokens train {len(self.train):,}, "
                f"valid {len(self.valid):,}, test {len(self.test):,}; <unk> rate in train {rate:.1%}")


def unigram_perplexity(train: np.ndarray, eval_ids: np.ndarray, vocab_size: int) -> float:
    """Perplexity of the add-one unigram model: the floor any context-using model should beat. Taught in lesson 02, section 4."""
    for name, ids in (("train", train), ("eval_ids", eval_ids)):
        if len(ids) == 0:
            raise ValueError(f"unigram_perplexity: {name} is empty")
        check_class_ids(ids, vocab_size, "unigram_perplexity", name)
    counts = np.bincount(train, minlength=vocab_size) + 1.0
    logp = np.log(counts / counts.sum())
    return perplexity(-float(logp[eval_ids].mean()))


# ---------------------------------------------------------------- model
class RecurrentLM(nn.Module):
    """Embedding -> one recurrent layer ('rnn' (tanh), 'lstm' or 'gru') -> linear over the vocabulary. Taught in lesson 02, section 4.

    forward(ids (B, T) int64, state=None) -> (logits (B, T, V), new state); ``state`` is
    h (1, B, H) for rnn/gru and (h, c) for the lstm.
    """

    KINDS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}

    def __init__(self, vocab_size: int, kind: str = "lstm", emb_dim: int = 64, hidden: int = 128,
                 seed: int = 0):
        super().__init__()
        if kind not in self.KINDS:
            raise ValueError(f"kind must be one of {sorted(self.KINDS)}, got {kind!r}")
        self.kind = kind
        with torch.random.fork_rng(devices=[]):  # seeded init without touching global state
            torch.manual_seed(seed)
            self.embed = nn.Embedding(vocab_size, emb_dim)
            self.rnn = self.KINDS[kind](emb_dim, hidden, batch_first=True)
            self.out = nn.Linear(hidden, vocab_size)

    def forward(self, ids: torch.Tensor, state=None):
        if ids.ndim != 2:
            raise ValueError(f"expected token ids of shape (batch, time), got {tuple(ids.shape)}")
        check_ids(ids, self.embed.num_embeddings, "ids", "RecurrentLM.forward", noun="token ids")
        h, state = self.rnn(self.embed(ids), state)
        return self.out(h), state


def detach_state(state):
    """Cut the graph at a truncated-BPTT boundary (keep the values, drop the history). Taught in lesson 02, section 3."""
    if state is None:
        return None
    return tuple(s.detach() for s in state) if isinstance(state, tuple) else state.detach()


@torch.no_grad()
def evaluate_nll(model: RecurrentLM, ids: np.ndarray, batch_size: int = 16, seq_len: int = 64,
                 device="cpu") -> float:
    """Mean next-token negative log-likelihood over a whole id stream. Taught in lesson 02, section 4.

    Mean next-token negative log-likelihood (nats) over a whole id stream, carrying the
    hidden state across windows (as in training)."""
    was = model.training
    model.eval()
    total, n, state = 0.0, 0, None
    for x, y in bptt_batches(ids, batch_size, seq_len):
        logits, state = model(torch.as_tensor(x, device=device), state)
        total += nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             torch.as_tensor(y, device=device).reshape(-1),
                                             reduction="sum").item()
        n += y.size
    model.train(was)
    if n == 0:
        raise ValueError("evaluate_nll: the stream gave no batch to score")
    return total / n


def train_lm(model: RecurrentLM, data: LMData, steps: int | None = None, max_seconds: float | None = None,
             batch_size: int = 32, seq_len: int = 35, lr: float = 3e-3, clip: float | None = 1.0,
             eval_every: int = 50, eval_tokens: int = 20_000, desc: str = "training", device="cpu",
             progress: bool = True, budget_clock=time.perf_counter) -> History:
    """Truncated-BPTT training with Adam and global-norm gradient clipping. Taught in lesson 02, section 4.

    The training stream is cut into ``batch_size`` rows read ``seq_len`` tokens at a time;
    the hidden state is carried from one window to the next but detached (gradients stop at
    the window boundary). Training stops after ``steps`` steps or ``max_seconds`` (wall clock,
    or measured by ``budget_clock``, e.g. ``time.thread_time`` for CPU time), whichever comes first. Every ``eval_every`` steps (one "round" of
    :func:`helpers.infra.training.train_loop`) the validation perplexity on the first
    ``eval_tokens`` validation tokens is recorded as ``valid_ppl``.
    Returns the History; ``history.steps`` is the number of steps taken.
    """
    if steps is None and max_seconds is None:
        raise ValueError("give steps, max_seconds or both")
    model.to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    n_rounds = 10**9 if steps is None else -(-steps // eval_every)
    stream = endless_batches(data.train, batch_size, seq_len)
    carry = {"state": None, "steps": 0}

    def batches(_round):
        for _ in range(eval_every):
            if steps is not None and carry["steps"] >= steps:
                return
            yield next(stream)

    def step(batch):
        x, y, fresh = batch
        state = None if fresh else detach_state(carry["state"])
        logits, carry["state"] = model(torch.as_tensor(x, device=device), state)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                           torch.as_tensor(y, device=device).reshape(-1))
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        carry["steps"] += 1
        return loss.item()

    valid = data.valid[:eval_tokens]
    hist = train_loop(step, batches, n_rounds, desc=desc, max_seconds=max_seconds, progress=progress,
                      budget_clock=budget_clock, evaluate=lambda: {"valid_ppl": perplexity(evaluate_nll(model, valid, device=device)),
                                        "steps": carry["steps"]})
    hist.steps = carry["steps"]
    return hist


def endless_batches(ids, batch_size, seq_len):
    """Truncated-BPTT batches over the stream, pass after pass. Taught in lesson 02, section 4.

    Yields (x, y, fresh) forever: :func:`helpers.lib.batching.bptt_batches` windows of full
    length ``seq_len`` (x, y (batch_size, seq_len) int64), ``fresh`` True at the start of each
    pass over the stream (where a carried state must be reset)."""
    if (len(ids) - 1) // batch_size < seq_len:
        raise ValueError(f"the training stream ({len(ids)} tokens) is too short for one window of "
                         f"batch_size={batch_size} rows x seq_len={seq_len} steps")
    while True:
        for k, (x, y) in enumerate(bptt_batches(ids, batch_size, seq_len)):
            if x.shape[1] == seq_len:
                yield x, y, k == 0


# ---------------------------------------------------------------- generation
def temperature_probs(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Softmax with a temperature. Taught in lesson 02, section 4.

    softmax(logits / temperature) along the last axis. temperature -> 0 approaches the
    argmax (greedy), 1 is the model's distribution, > 1 flattens it towards uniform."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature} (use greedy=True for argmax)")
    z = np.asarray(logits, np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=-1, keepdims=True)


@torch.no_grad()
def generate(model: RecurrentLM, vocab: Vocab, prompt: list[str], n_words: int = 20,
             temperature: float = 1.0, rng: np.random.Generator | None = None, greedy: bool = False,
             forbid_unk: bool = True, device="cpu") -> list[str]:
    """Generate text with a recurrent LM, one word at a time. Taught in lesson 02, section 4.

    Continue ``prompt`` (tokens; unknown words become ``<unk>``) by ``n_words`` tokens,
    each drawn from softmax(logits / temperature) with ``rng`` (or the argmax if ``greedy``)
    and fed back as the next input. ``<unk>`` is never produced when ``forbid_unk``.
    Returns only the generated tokens.
    """
    if not greedy and rng is None:
        raise ValueError("sampling needs an explicit rng (np.random.Generator); or pass greedy=True")
    check_tokens(prompt, "prompt", "generate")
    model.eval()
    ids = vocab.encode([EOS] + list(prompt))
    logits, state = model(torch.as_tensor(ids[None], device=device))
    out = []
    for _ in range(n_words):
        last = logits[0, -1].double().cpu().numpy()
        if forbid_unk and vocab.unk_id is not None:
            last[vocab.unk_id] = -np.inf
        nxt = int(np.argmax(last)) if greedy else int(rng.choice(len(last), p=temperature_probs(last, temperature)))
        out.append(vocab.itos[nxt])
        logits, state = model(torch.tensor([[nxt]], device=device), state)
    return out


@torch.no_grad()
def exposure_bias(model: RecurrentLM, ids: np.ndarray, n_starts: int = 256, prefix: int = 10,
                  horizon: int = 15, seed: int = 0, device="cpu") -> dict[str, np.ndarray]:
    """Teacher forcing vs free running, scored against the original text. Taught in lesson 02, section 5.

    Not a measurement of exposure bias: after the model has been fed its own words, the
    original next word is no longer the likely one, so even a perfect model shows the gap.
    Lesson 02 measures exposure bias against a known source instead
    (:func:`helpers.lessons.lesson02.exposure_gap`).

    From ``n_starts`` random positions the model reads ``prefix`` true tokens, then goes on for
    ``horizon`` steps in two ways: fed the *true* previous token (teacher forcing, as in
    training) or fed its *own* greedy prediction (free running, as in generation). At every
    step we score the true next token. Returns arrays of shape (horizon,):
    ``teacher_nll``, ``free_nll`` (mean -log p(true token), nats) and ``teacher_acc``,
    ``free_acc`` (top-1 accuracy against the true token).
    """
    if len(ids) <= prefix + horizon + 1:
        raise ValueError(f"exposure_bias: needs more than prefix + horizon + 1 = {prefix + horizon + 1} tokens, "
                         f"got {len(ids)}")
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(ids) - prefix - horizon - 1, n_starts)
    window = np.stack([ids[s:s + prefix + horizon + 1] for s in starts])  # (N, prefix+horizon+1)
    model.eval()
    x = torch.as_tensor(window[:, :prefix], device=device)
    logits, st0 = model(x)
    res = {}
    for mode in ("teacher", "free"):
        lg, st = logits[:, -1], st0
        nll, acc = [], []
        for k in range(horizon):
            true_next = torch.as_tensor(window[:, prefix + k], device=device)
            logp = torch.log_softmax(lg, -1)
            nll.append(-logp.gather(1, true_next[:, None]).mean().item())
            pred = lg.argmax(-1)
            acc.append((pred == true_next).float().mean().item())
            feed = true_next if mode == "teacher" else pred
            out, st = model(feed[:, None], st)
            lg = out[:, -1]
        res[f"{mode}_nll"], res[f"{mode}_acc"] = np.array(nll), np.array(acc)
    return res


def frequency_profile(tokens: list[str], vocab: Vocab, top: int = 100) -> dict[str, float]:
    """How bland a text is: how frequent its words are. Taught in lesson 02, section 5.

    How 'bland' a text is, ignoring special tokens: ``top_share``, the share of its words
    among the ``top`` most frequent training words; ``median_rank``, the median frequency rank
    of its words (1 = the most frequent word); ``distinct``, types / tokens."""
    check_tokens(tokens, "tokens", "frequency_profile")
    specials = set(vocab.specials)
    ordered = sorted((t for t in vocab.itos if t not in specials), key=lambda t: (-vocab.counts[vocab.stoi[t]], t))
    rank = {t: r for r, t in enumerate(ordered, 1)}
    words = [t for t in tokens if t in rank]
    if not words:
        raise ValueError("cannot profile an empty list of tokens (no ordinary vocabulary words)")
    ranks = np.array([rank[t] for t in words])
    return {"top_share": float(np.mean(ranks <= top)), "median_rank": float(np.median(ranks)),
            "distinct": len(set(words)) / len(words)}


# ---------------------------------------------------------------- a trained model, looked into
@torch.no_grad()
def next_word_logits(model: RecurrentLM, vocab: Vocab, prompt: list[str]) -> np.ndarray:
    """Logits (V,) float64 of the word after ``prompt`` (read after an ``<eos>``). Taught in lesson 02, section 4."""
    check_tokens(prompt, "prompt", "next_word_logits")
    model.eval()
    logits, _ = model(torch.as_tensor(vocab.encode([EOS] + list(prompt))[None]))
    return logits[0, -1].double().numpy()


def to_numpy_layers(model: RecurrentLM):
    """A trained PyTorch recurrent LM as NumPy pieces. Taught in lesson 03, section 5.

    The trained torch model as NumPy pieces (float64): (E (V, D) embedding matrix,
    a helpers.lib.recurrent Time{RNN,LSTM,GRU} with the weights copied in, W_out (V, H), b_out (V,))."""
    cls = {"rnn": TimeRNN, "lstm": TimeLSTM, "gru": TimeGRU}[model.kind]
    layer = copy_from_torch(cls(model.rnn.input_size, model.rnn.hidden_size, np.random.default_rng(0)), model.rnn)
    as_np = lambda t: t.detach().cpu().double().numpy()  # noqa: E731
    return as_np(model.embed.weight), layer, as_np(model.out.weight), as_np(model.out.bias)
