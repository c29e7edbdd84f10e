"""Recurrent language models in PyTorch for lessons 02-03: the model, generation with a
temperature, how bland a text is, and the trained model as NumPy layers.

The NumPy layers of :mod:`helpers.lib.recurrent` are the taught implementation; these torch
models are the same maths (``torch.nn.RNN``/``LSTM``/``GRU``), used where training must be fast.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from helpers.lib.checks import check_ids
from helpers.lib.language_models import perplexity, unigram_loss
from helpers.lib.recurrent import TimeGRU, TimeLSTM, TimeRNN, copy_from_torch
from helpers.lib.text import Vocab, check_tokens

EOS = "<eos>"


@dataclass
class LMData:
    """A word-level corpus as id streams. Taught in lesson 02, section 4.

    ``train``, ``valid``, ``test``: (n,) int64, sentences joined by ``<eos>``, split by
    document."""

    vocab: Vocab
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray

    def describe(self) -> str:
        rate = float(np.mean(self.train == self.vocab.unk_id))
        return (f"vocabulary {len(self.vocab):,} types (incl. <unk>, <eos>); tokens train "
                f"{len(self.train):,}, valid {len(self.valid):,}, test {len(self.test):,}; <unk> "
                f"rate in train {rate:.1%}")


def unigram_perplexity(train: np.ndarray, eval_ids: np.ndarray, vocab_size: int) -> float:
    """The perplexity of the add-one unigram model. Taught in lesson 02, section 4.

    The floor any model that reads context should beat
    (:func:`helpers.lib.language_models.unigram_loss`)."""
    return perplexity(unigram_loss(train, eval_ids, vocab_size))


class RecurrentLM(nn.Module):
    """A recurrent language model in PyTorch. Taught in lesson 02, section 4.

    Embedding -> one recurrent layer ('rnn' (tanh), 'lstm' or 'gru') -> linear over the vocabulary.
    forward(ids (B, T) int64, state=None) -> (logits (B, T, V), new state); the state is h (1, B, H)
    for rnn and gru, (h, c) for the lstm."""

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


def temperature_probs(logits: np.ndarray, temperature: float) -> np.ndarray:
    """Softmax with a temperature. Taught in lesson 02, section 4.

    softmax(logits / temperature) along the last axis: towards the argmax as the temperature
    falls to 0, the model's distribution at 1, towards uniform above it."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature} (greedy: the argmax)")
    z = np.asarray(logits, np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=-1, keepdims=True)


@torch.no_grad()
def generate(model: RecurrentLM, vocab: Vocab, prompt: list[str], n_words: int = 20,
             temperature: float = 1.0, rng: np.random.Generator | None = None, greedy: bool = False,
             forbid_unk: bool = True, device="cpu") -> list[str]:
    """Text from a recurrent LM, one word at a time. Taught in lesson 02, section 4.

    The ``n_words`` tokens written after ``prompt``, each drawn from softmax(logits / temperature)
    with ``rng`` (the argmax if ``greedy``) and fed back as the next input; unknown prompt words
    become ``<unk>``, which is never produced when ``forbid_unk``."""
    if not greedy and rng is None:
        raise ValueError("sampling needs an explicit rng (np.random.Generator), or greedy=True")
    check_tokens(prompt, "prompt", "generate")
    model.eval()
    ids = vocab.encode([EOS] + list(prompt))
    logits, state = model(torch.as_tensor(ids[None], device=device))
    out = []
    for _ in range(n_words):
        last = logits[0, -1].double().cpu().numpy()
        if forbid_unk and vocab.unk_id is not None:
            last[vocab.unk_id] = -np.inf
        nxt = (int(np.argmax(last)) if greedy
               else int(rng.choice(len(last), p=temperature_probs(last, temperature))))
        out.append(vocab.itos[nxt])
        logits, state = model(torch.tensor([[nxt]], device=device), state)
    return out


def frequency_profile(tokens: list[str], vocab: Vocab, top: int = 100) -> dict[str, float]:
    """How bland a text is, special tokens aside. Taught in lesson 02, section 5.

    ``top_share``: the share of its words among the ``top`` most frequent training words;
    ``median_rank``: the median frequency rank of its words (1 = the most frequent);
    ``distinct``: types / tokens."""
    check_tokens(tokens, "tokens", "frequency_profile")
    specials = set(vocab.specials)
    ordered = sorted((t for t in vocab.itos if t not in specials),
                     key=lambda t: (-vocab.counts[vocab.stoi[t]], t))
    rank = {t: r for r, t in enumerate(ordered, 1)}
    words = [t for t in tokens if t in rank]
    if not words:
        raise ValueError("cannot profile an empty list of tokens (no ordinary vocabulary words)")
    ranks = np.array([rank[t] for t in words])
    return {"top_share": float(np.mean(ranks <= top)), "median_rank": float(np.median(ranks)),
            "distinct": len(set(words)) / len(words)}


@torch.no_grad()
def next_word_logits(model: RecurrentLM, vocab: Vocab, prompt: list[str]) -> np.ndarray:
    """The logits of the word after a prompt. Taught in lesson 02, section 4.

    (V,) float64, the prompt read after an ``<eos>``."""
    check_tokens(prompt, "prompt", "next_word_logits")
    model.eval()
    logits, _ = model(torch.as_tensor(vocab.encode([EOS] + list(prompt))[None]))
    return logits[0, -1].double().numpy()


def to_numpy_layers(model: RecurrentLM):
    """A trained recurrent LM as NumPy pieces. Taught in lesson 03, section 5.

    Float64: (E (V, D), a Time{RNN,LSTM,GRU} of :mod:`helpers.lib.recurrent` with the weights
    copied in, W_out (V, H), b_out (V,))."""
    cls = {"rnn": TimeRNN, "lstm": TimeLSTM, "gru": TimeGRU}[model.kind]
    blank = cls(model.rnn.input_size, model.rnn.hidden_size, np.random.default_rng(0))
    layer = copy_from_torch(blank, model.rnn)
    as_np = lambda t: t.detach().cpu().double().numpy()  # noqa: E731
    return as_np(model.embed.weight), layer, as_np(model.out.weight), as_np(model.out.bias)
