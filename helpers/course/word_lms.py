"""The word-level LMs of lessons 02-03: data, shipped models (``load_model("lstm_lm")`` ...),
Kneser-Ney baselines, and how much gradient reaches far back."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from helpers.course.corpus import document_groups, modern_english_documents
from helpers.course.data import DATA_DIR
from helpers.infra import artifacts
from helpers.infra.plotting import COLOURS, log_axis, new_figure, set_labels
from helpers.lib.checks import check_ids
from helpers.lib.layers import softmax
from helpers.lib.near_duplicates import split_by_group
from helpers.lib.recurrent import NumpyLM, gradient_through_time
from helpers.lib.stats import Interval, bootstrap_interval
from helpers.lib.text import UNK, Vocab, split_sentences, tokenize

EOS = "<eos>"


@dataclass
class LMData:
    """A word-level corpus as id streams, sentences joined by ``<eos>`` (lesson 02 §5)."""

    vocab: Vocab
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray


def lm_data(vocab_size: int = 3000, fractions=(0.9, 0.05, 0.05), seed: int = 0,
            keep_copies_together: bool = True) -> LMData:
    """The modern-English corpus split by document, and its vocabulary (lesson 02 §5)."""
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
    """A shipped word model (eval mode), its vocabulary, settings, metrics and validation curve."""

    model: RecurrentLM
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    stopped_by: str


def load_word_lm(artifact) -> ShippedWordLM:
    """A shipped model from its checked artefact (the loader of ``load_model("lstm_lm")``)."""
    s = artifact.meta["settings"]
    vocab_arrays = artifacts.unprefixed(artifact.arrays, "vocab/")
    vocab = Vocab.from_arrays(vocab_arrays, artifact.meta["vocab"])
    model = RecurrentLM(len(vocab), s["kind"], s["emb_dim"], s["hidden"], seed=s["seed"])
    weights = artifacts.arrays_to_state_dict(artifact.arrays, "model/")
    model.load_state_dict({k: v.float() for k, v in weights.items()})
    curve = artifacts.arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedWordLM(model.eval(), vocab, s, artifact.meta["metrics"], curve,
                         float(artifact.meta.get("train_seconds", float("nan"))),
                         artifact.meta["stopped_by"])


def kn_path():
    """Where the Kneser-Ney baselines of the word models are stored."""
    return DATA_DIR / "models" / "baselines" / "word_kn"


@dataclass
class KNBaselines:
    """The Kneser-Ney baselines: ``ppl[split][n]``, and ``nll['test'][n]`` per test token for the
    order best on validation, without the first ``skipped`` tokens."""

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
        art = artifacts.load_artifact(kn_path())
    except artifacts.ArtifactError as e:
        raise artifacts.ArtifactError(f"the Kneser-Ney baselines {kn_path()}: {e}. Rebuild with "
                            f"`python -m training.word_lms kn` (about a minute)") from None
    orders, best = [int(n) for n in art.meta["orders"]], int(art.meta["best_order"])
    m = art.meta["metrics"]
    nll = {"test": {best: art.arrays[f"test/{best}"].astype(np.float64)}}
    ppl = {split: {n: float(m[f"{split}_ppl_{n}"]) for n in orders} for split in ("valid", "test")}
    return KNBaselines(orders, nll, ppl, int(art.meta["skipped_tokens"]))


def trained_gradient_flow(model: RecurrentLM, ids: np.ndarray, T: int = 60, windows: int = 256,
                          warm_up: int = 60, seed: int = 0) -> np.ndarray:
    """||dL/dh_{T-k}|| / ||dL/dh_T||, (windows, T), for the word after each of ``windows``
    seeded windows of ``T`` words, read after ``warm_up`` words (lesson 02 §6)."""
    if T < 2 or windows < 2 or warm_up < 0 or len(ids) < warm_up + T + 2:
        raise ValueError(f"need T >= 2, windows >= 2, warm_up >= 0 and a text longer than warm_up "
                         f"+ T + 1; got {T}, {windows}, {warm_up} and {len(ids)} tokens (too few?)")
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
        p = softmax(hs[:, -1] @ Wy + by)
        p[np.arange(len(part)), np.asarray(ids)[part + T]] -= 1        # dL/dlogits
        out.append(gradient_through_time(lm, p @ Wy.T))
    norms = np.concatenate(out)
    return norms / norms[:, :1]


def flow_at(ratios: np.ndarray, k: int, against: np.ndarray | None = None) -> Interval:
    """The geometric mean over windows of the gradient share reaching ``k`` words back, with a
    95 % bootstrap interval; with ``against``, the ratio to that model's, paired."""
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
    """The gradient share reaching k words back (geometric mean, 95 % band), one curve per model."""
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
