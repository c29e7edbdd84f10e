"""Character-level Shakespeare for lessons 02-04: train on 40 works, watch *Othello*, report on
*Hamlet*; live batches, held-out scores, and the Kneser-Ney yardsticks on the models' characters."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from helpers.course.data import DATA_DIR, load_shakespeare
from helpers.infra.artifacts import ArtifactError, load_artifact
from helpers.lib.batching import random_windows
from helpers.lib.ngram import kneser_ney_nlls
from helpers.lib.text import Vocab

LIVE = dict(batch=32, seq_len=64, lr=3e-3, clip=1.0)   # the settings the lessons start from
TEST_PREDICTIONS = 32_768    # Hamlet's predictions 1 .. 32,768, as the shipped models are scored
VALID_PREDICTIONS = 8_192    # Othello's first predictions: the curves' points, cheap to score often


@dataclass(frozen=True)
class CharSplit:
    """Shakespeare split by work as character ids: 40 works, a play to validate, one to test."""

    vocab: Vocab
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray
    valid_work: str
    test_work: str

    @property
    def V(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> np.ndarray:
        return encode_chars(self.vocab, text)

    def decode(self, ids) -> str:
        return "".join(self.vocab.decode(ids))


def encode_chars(vocab: Vocab, text: str) -> np.ndarray:
    """The character ids (len(text),) of ``text``; an unknown character is an error naming it."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    table = np.full(int(codes.max(initial=0)) + 1, -1, dtype=np.int64)
    for ch, i in vocab.stoi.items():
        if len(ch) == 1 and ord(ch) < len(table):
            table[ord(ch)] = i
    ids = table[codes]
    if np.any(ids < 0):
        vocab.index(text[int(np.argmax(ids < 0))])        # raises, naming the character
    return ids


@functools.lru_cache(maxsize=2)
def char_split(valid_work: str = "othello", test_work: str = "hamlet") -> CharSplit:
    """The split by work (cached): the other 40 works are the training text."""
    works = load_shakespeare()
    if valid_work not in works or test_work not in works or valid_work == test_work:
        raise KeyError(f"need two different works, got {valid_work!r}, {test_work!r}; choose from "
                       f"{sorted(works)}")
    train_text = "\n".join(t for w, t in works.items() if w not in (valid_work, test_work))
    vocab = Vocab.build(list(train_text + works[valid_work] + works[test_work]), specials=())
    return CharSplit(vocab, encode_chars(vocab, train_text), encode_chars(vocab, works[valid_work]),
                     encode_chars(vocab, works[test_work]), valid_work, test_work)


def live_split() -> CharSplit:
    """The character split of lessons 02-04 (every call returns the same object)."""
    return char_split()


def random_batch(ids: np.ndarray, batch: int, seq_len: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` random windows of ``ids``: x and y (batch, seq_len), y the next characters."""
    return random_windows(np.asarray(ids)[:-1], batch, seq_len, rng)


def windows(ids: np.ndarray, seq_len: int, predictions: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``predictions`` predictions of ``ids`` as windows x, y of ``seq_len``."""
    ids = np.asarray(ids)
    if seq_len < 1 or predictions % seq_len or predictions < seq_len or len(ids) <= predictions:
        raise ValueError(f"predictions ({predictions}) must be a positive multiple of seq_len "
                         f"({seq_len}), below the length of the text ({len(ids)})")
    n = predictions // seq_len
    return (ids[:predictions].reshape(n, seq_len).astype(np.int64),
            ids[1:predictions + 1].reshape(n, seq_len).astype(np.int64))


def heldout_loss(loss_fn: Callable[[np.ndarray, np.ndarray], float], ids: np.ndarray, seq_len: int,
                 predictions: int, batch: int = 64) -> float:
    """Mean NLL (nats per character) over the first ``predictions`` predictions of ``ids``, in
    windows of ``seq_len`` from the initial state; ``loss_fn(x, y)``: the mean loss of a batch."""
    x, y = windows(ids, seq_len, predictions)
    total = 0.0
    for i in range(0, len(x), batch):
        loss = float(loss_fn(x[i:i + batch], y[i:i + batch]))
        if not np.isfinite(loss):
            raise FloatingPointError(f"the loss on held-out windows {i}..{i + batch} is {loss}")
        total += loss * len(x[i:i + batch])
    return total / len(x)


def ngram_path():
    """``data/models/baselines/char_ngram``: the stored Kneser-Ney baseline of the character LMs."""
    return DATA_DIR / "models" / "baselines" / "char_ngram"


def load_char_ngram() -> dict:
    """The stored character n-gram baseline: its table of orders and per-prediction ``test_nll``.
    """
    try:
        art = load_artifact(ngram_path())
    except ArtifactError as e:
        raise ArtifactError(f"the character n-gram baseline {ngram_path()}: {e}. Rebuild it with "
                            "`python -m training.char_lms ngram`") from None
    return {**art.meta, "test_nll": art.arrays["test_nll"].astype(np.float64)}


@functools.lru_cache(maxsize=4)
def kn_baselines(orders: tuple[int, ...] = (3, 4)) -> dict[int, dict]:
    """Kneser-Ney character n-grams: {n: {'discount', 'valid_loss', 'test_loss'}} (nats/char)."""
    split, rows = live_split(), {r["n"]: r for r in load_char_ngram()["rows"]}
    out = {}
    for n in orders:
        if n not in rows:
            raise ValueError(f"no stored Kneser-Ney order {n}; the table has {sorted(rows)}")
        D = float(rows[n]["discount"])
        out[n] = {"discount": D}
        for key, ids, k in (("valid_loss", split.valid, VALID_PREDICTIONS),
                            ("test_loss", split.test, TEST_PREDICTIONS)):
            out[n][key] = float(kneser_ney_nlls(split.train, ids[:k + 1], n, split.V, D).mean())
    return out
