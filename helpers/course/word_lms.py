"""The word-level language models of lessons 02-03: their data, the PyTorch model ``make models``
trains (``load_model("rnn_lm")``, ``"gru_lm"``, ``"lstm_lm"``), the stored Kneser-Ney baselines,
per-token losses, and how much gradient reaches far back in a trained model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from helpers.course.corpus import document_groups, modern_english_documents
from helpers.course.data import DATA_DIR
from helpers.infra.artifacts import (
    Artifact,
    ArtifactError,
    arrays_to_curves,
    arrays_to_state_dict,
    load_artifact,
    unprefixed,
)
from helpers.infra.plotting import COLOURS, log_axis, new_figure, set_labels
from helpers.lib.batching import bptt_batches
from helpers.lib.checks import check_ids
from helpers.lib.language_models import perplexity, unigram_loss
from helpers.lib.near_duplicates import split_by_group
from helpers.lib.recurrent import NumpyLM, gradient_through_time
from helpers.lib.stats import Interval, bootstrap_interval
from helpers.lib.text import UNK, Vocab, split_sentences, tokenize

EOS = "<eos>"


# ---------------------------------------------------------------- the data
@dataclass
class LMData:
    """A word-level corpus as id streams ``train``, ``valid``, ``test`` (n,) int64, sentences
    joined by ``<eos>`` (lesson 02 §5)."""

    vocab: Vocab
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray

    def describe(self) -> str:
        rate = float(np.mean(self.train == self.vocab.unk_id))
        return (f"vocabulary {len(self.vocab):,} types (incl. <unk>, <eos>); tokens train "
                f"{len(self.train):,}, valid {len(self.valid):,}, test {len(self.test):,}; <unk> "
                f"rate in train {rate:.1%}")


def lm_data(vocab_size: int = 3000, fractions=(0.9, 0.05, 0.05), seed: int = 0,
            keep_copies_together: bool = True) -> LMData:
    """The modern-English corpus (Wikipedia and BBC News) split by document (lesson 02 §5).

    Documents shuffled with ``seed`` and split by ``fractions``, the near-duplicate articles of
    :func:`helpers.course.corpus.document_groups` kept on one side (``keep_copies_together=False``:
    the plain split); the vocabulary is the ``vocab_size`` most frequent training words, the rest
    ``<unk>``."""
    docs = [text for _, text in modern_english_documents()]
    order = np.random.default_rng(seed).permutation(len(docs))
    groups = document_groups() if keep_copies_together else list(range(len(docs)))
    splits = split_by_group(groups, order.tolist(), fractions)

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


def unigram_perplexity(train: np.ndarray, eval_ids: np.ndarray, vocab_size: int) -> float:
    """The perplexity of the add-one unigram model: the floor a model that reads context beats."""
    return perplexity(unigram_loss(train, eval_ids, vocab_size))


# ---------------------------------------------------------------- the shipped models
class RecurrentLM(nn.Module):
    """Embedding -> one ``nn.RNN`` (tanh), ``nn.LSTM`` or ``nn.GRU`` -> linear, in PyTorch: the
    shipped word models. forward(ids (B, T), state=None) -> (logits (B, T, V), new state)."""

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


@dataclass
class ShippedWordLM:
    """A shipped word model: ``model`` (eval mode), ``vocab``, ``settings``, ``metrics``, the
    validation ``curve``, ``train_seconds`` and ``stopped_by``."""

    model: RecurrentLM
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    stopped_by: str


def load_word_lm(artifact: Artifact) -> ShippedWordLM:
    """A shipped model from its checked artefact (the loader of ``load_model("lstm_lm")``)."""
    s = artifact.meta["settings"]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    model = RecurrentLM(len(vocab), s["kind"], s["emb_dim"], s["hidden"], seed=s["seed"])
    weights = arrays_to_state_dict(artifact.arrays, "model/")
    model.load_state_dict({k: v.float() for k, v in weights.items()})
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedWordLM(model.eval(), vocab, s, artifact.meta["metrics"], curve,
                         float(artifact.meta.get("train_seconds", math.nan)),
                         artifact.meta["stopped_by"])


def kn_path():
    """``data/models/baselines/word_kn``: the stored Kneser-Ney baselines of the word models."""
    return DATA_DIR / "models" / "baselines" / "word_kn"


@dataclass
class KNBaselines:
    """The stored Kneser-Ney baselines: ``orders``, ``ppl[split][n]``, and ``nll['test'][n]`` (the
    per-token test NLLs of the order chosen on validation, without the first ``skipped`` tokens)."""

    orders: list
    nll: dict
    ppl: dict
    skipped: int

    def best_order(self) -> int:
        """The order with the lowest validation perplexity."""
        return min(self.orders, key=lambda n: self.ppl["valid"][n])


def load_kn_baselines() -> KNBaselines:
    """The baselines ``python -m training.word_lms kn`` stored (checksums verified)."""
    try:
        art = load_artifact(kn_path())
    except ArtifactError as e:
        raise ArtifactError(f"the Kneser-Ney baselines {kn_path()}: {e}. Rebuild them with "
                            f"`python -m training.word_lms kn` (about a minute)") from None
    orders, best = [int(n) for n in art.meta["orders"]], int(art.meta["best_order"])
    m = art.meta["metrics"]
    nll = {"test": {best: art.arrays[f"test/{best}"].astype(np.float64)}}
    ppl = {split: {n: float(m[f"{split}_ppl_{n}"]) for n in orders} for split in ("valid", "test")}
    return KNBaselines(orders, nll, ppl, int(art.meta["skipped_tokens"]))


@torch.no_grad()
def token_nlls(model: RecurrentLM, ids: np.ndarray, batch_size: int = 16,
               seq_len: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Per-token NLL (nats) of a model over a stream read as ``batch_size`` rows, the state carried
    across windows: (nll (n,) float64, the positions in ``ids`` of the scored tokens)."""
    model.eval()
    rows, state = [], None
    for x, y in bptt_batches(ids, batch_size, seq_len):
        logits, state = model(torch.as_tensor(x), state)
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), torch.as_tensor(y),
                                           reduction="none")
        rows.append(loss.double().numpy())
    nll = np.concatenate(rows, axis=1)                          # (batch_size, n_cols)
    return nll.reshape(-1), 1 + np.arange(batch_size * nll.shape[1])


# ---------------------------------------------------------------- the gradient reaching far back
def trained_gradient_flow(model: RecurrentLM, ids: np.ndarray, T: int = 60, windows: int = 256,
                          warm_up: int = 60, seed: int = 0) -> np.ndarray:
    """How much of the gradient reaches k words back in a trained model (lesson 02 §6).

    ``windows`` windows of ``T`` words of ``ids`` (seeded starts: the same for every model), each
    read after the ``warm_up`` words before it; the loss is the cross-entropy of the word after
    the window, followed back through the model's NumPy copy. Returns (windows, T):
    ||dL/dh_{T-k}|| / ||dL/dh_T|| for k = 0 .. T-1."""
    if T < 2 or windows < 2 or warm_up < 0:
        raise ValueError(f"need T >= 2, windows >= 2 and warm_up >= 0, got {T}, {windows}, {warm_up}")
    if len(ids) < warm_up + T + 2:
        raise ValueError(f"the text has {len(ids)} tokens, too few for windows of {warm_up} + {T} + 1")
    lm = NumpyLM.from_torch(model, dtype=np.float64)
    Wy, by = lm.params[-2:]
    starts = np.random.default_rng(seed).integers(warm_up, len(ids) - T - 1, windows)
    out = []
    for part in np.array_split(starts, max(1, windows // 32)):
        state = None
        if warm_up:
            lm.states(np.stack([ids[s - warm_up:s] for s in part]))
            state = lm.last_state
        hs = lm.states(np.stack([ids[s:s + T] for s in part]), state)
        z = hs[:, -1] @ Wy + by
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(part)), np.asarray(ids)[part + T]] -= 1        # dL/dlogits
        out.append(gradient_through_time(lm, p @ Wy.T))
    norms = np.concatenate(out)
    return norms / norms[:, :1]


def flow_at(ratios: np.ndarray, k: int, against: np.ndarray | None = None) -> Interval:
    """The typical share of the gradient reaching ``k`` words back: the geometric mean over the
    windows, with a 95 % bootstrap interval; with ``against``, how many times model b's share
    (paired on the same windows)."""
    logs = np.log10(np.asarray(ratios)[:, k])
    if against is not None:
        other = np.log10(np.asarray(against)[:, k])
        if other.shape != logs.shape:
            raise ValueError(f"measure both models on the same windows, got {logs.shape} and "
                             f"{other.shape}")
        logs = logs - other
    iv = bootstrap_interval(np.mean, logs, n_boot=2000)
    return Interval(10 ** iv.estimate, 10 ** iv.low, 10 ** iv.high, iv.level, iv.n_items, iv.n_boot)


def plot_gradient_flow(flows: dict[str, np.ndarray], title: str):
    """The typical share of the gradient reaching k words back (geometric mean over windows, a 95 %
    band), one curve per model: ``flows`` name -> (windows, T) ratios."""
    fig, ax = new_figure(width=7.5)
    for (name, r), colour, marker in zip(flows.items(), COLOURS.values(), "os^D"):
        logs = np.log10(r)
        centre, half = logs.mean(axis=0), 1.96 * logs.std(axis=0, ddof=1) / np.sqrt(len(r))
        ks = np.arange(r.shape[1])
        ax.plot(ks, 10 ** centre, marker=marker, markevery=10, color=colour, label=name)
        ax.fill_between(ks, 10 ** (centre - half), 10 ** (centre + half), color=colour, alpha=0.2)
    log_axis(ax, "y")
    set_labels(ax, title, "k (words back from the prediction)",
               r"$\|\partial L/\partial h_{T-k}\| \;/\; \|\partial L/\partial h_T\|$ (log scale)")
    ax.legend()
    return fig
