"""Pre-trained word vectors used downstream: a small PyTorch text classifier whose embedding
table is frozen, fine-tuned, or randomly initialised.

The model is the simplest one that uses an embedding table well: a document is the *mean*
of its token vectors (padding excluded by a mask), followed by a linear layer or a small MLP:

    h = Σ_t m_t E[x_t] / Σ_t m_t,    m_t = [x_t != <pad>],    logits = MLP(h)

``nn.Embedding.from_pretrained(E, freeze=..., padding_idx=...)`` loads the pre-trained table;
``padding_idx`` keeps the <pad> row out of every gradient and the mask keeps it out of the mean.

- :func:`vocab_with_specials` adds <pad>/<unk> rows to a pre-trained (V, D) matrix.
- :func:`encode_documents`: token lists -> padded (N, T) int64 ids.
- :class:`MeanEmbeddingClassifier`, :func:`train_classifier` (tqdm bar, returns a History),
  :func:`accuracy`.
- :func:`embedding_experiment`: frozen / fine-tuned / random on BBC News topics for several
  training-set sizes (list of dicts); :func:`plot_accuracy_vs_size` and
  :func:`make_size_render` (an Explorer render) show it.
"""
from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.text import PAD, UNK, Vocab

__all__ = ["MODES", "vocab_with_specials", "encode_documents", "MeanEmbeddingClassifier", "train_classifier",
           "accuracy", "bbc_split", "embedding_experiment", "plot_accuracy_vs_size", "summarise_experiment",
           "make_size_render"]

MODES = ("frozen", "fine-tuned", "random")


# ---------------------------------------------------------------- data
def vocab_with_specials(vectors: np.ndarray, words: Sequence[str]) -> tuple[np.ndarray, Vocab]:
    """Prepend <pad> (id 0) and <unk> (id 1) to pre-trained vectors.

    vectors: (V, D) float, ``words``: the V words of its rows (a list, or a Vocab without
    specials). Returns (E (V + 2, D) float32, Vocab) where E[0] = 0 (padding) and E[1] = the
    mean vector (a neutral guess for an unknown word). Raises ValueError if shapes disagree.
    """
    itos = list(words.itos if hasattr(words, "itos") else words)
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(itos):
        raise ValueError(f"vectors must be (V, D) with V = {len(itos)} words, got shape {vectors.shape}")
    if PAD in itos or UNK in itos:
        raise ValueError("the words already contain <pad> or <unk>; pass the vectors of ordinary words only")
    E = np.concatenate([np.zeros((1, vectors.shape[1]), np.float32), vectors.mean(0, keepdims=True), vectors])
    return E, Vocab([PAD, UNK] + itos, specials=(PAD, UNK))


def encode_documents(documents: Sequence[Sequence[str]], vocab: Vocab, max_len: int = 400) -> torch.Tensor:
    """Token lists -> (N, T) int64 ids, T = min(max_len, longest document), padded with
    ``vocab.pad_id`` at the end and truncated after ``max_len`` tokens; unknown tokens map to
    <unk>. An empty document becomes all padding (the model then sees a zero vector)."""
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    if isinstance(documents, str) or (len(documents) and isinstance(documents[0], str)):
        raise TypeError("documents must be a list of token lists (tokenize each document first)")
    if vocab.unk_id is None:
        raise ValueError("the vocabulary needs an <unk> token (use vocab_with_specials)")
    T = max(1, min(max_len, max((len(d) for d in documents), default=1)))
    out = np.full((len(documents), T), vocab.pad_id, dtype=np.int64)
    for i, d in enumerate(documents):
        ids = vocab.encode(d[:T])
        out[i, :len(ids)] = ids
    return torch.from_numpy(out)


# ---------------------------------------------------------------- model
class MeanEmbeddingClassifier(nn.Module):
    """Masked mean of token embeddings -> (optional hidden ReLU layer) -> class logits.

    Give either ``embeddings`` ((V, D) array or tensor: loaded with
    ``nn.Embedding.from_pretrained(..., freeze=freeze, padding_idx=padding_idx)``) or
    ``vocab_size`` and ``dim`` (random N(0, init_std²) rows, the pad row zeroed).
    forward(ids (B, T) int64) -> logits (B, num_classes) float32.
    """

    def __init__(self, num_classes: int, embeddings=None, freeze: bool = False, vocab_size: int | None = None,
                 dim: int | None = None, padding_idx: int = 0, hidden: int = 0, dropout: float = 0.0,
                 init_std: float = 1.0, seed: int = 0):
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"a classifier needs at least 2 classes, got {num_classes}")
        g = torch.Generator().manual_seed(seed)
        if embeddings is not None:
            E = torch.as_tensor(np.asarray(embeddings), dtype=torch.float32)
            if E.ndim != 2:
                raise ValueError(f"embeddings must be a (V, D) matrix, got shape {tuple(E.shape)}")
            self.embedding = nn.Embedding.from_pretrained(E.clone(), freeze=freeze, padding_idx=padding_idx)
        else:
            if vocab_size is None or dim is None:
                raise ValueError("give either a pre-trained embedding matrix or vocab_size and dim")
            self.embedding = nn.Embedding(vocab_size, dim, padding_idx=padding_idx)
            with torch.no_grad():
                self.embedding.weight.copy_(torch.randn(vocab_size, dim, generator=g) * init_std)
                self.embedding.weight[padding_idx].zero_()
            self.embedding.weight.requires_grad_(not freeze)
        V, D = self.embedding.weight.shape
        if not 0 <= padding_idx < V:
            raise ValueError(f"padding_idx {padding_idx} is outside the vocabulary [0, {V})")
        self.padding_idx = padding_idx
        layers: list[nn.Module] = [nn.Dropout(dropout)] if dropout else []
        if hidden:
            layers += [nn.Linear(D, hidden), nn.ReLU(), nn.Linear(hidden, num_classes)]
        else:
            layers += [nn.Linear(D, num_classes)]
        self.head = nn.Sequential(*layers)
        with torch.no_grad():                       # seeded head initialisation
            for m in self.head:
                if isinstance(m, nn.Linear):
                    bound = 1 / np.sqrt(m.in_features)
                    m.weight.copy_((torch.rand(m.weight.shape, generator=g) * 2 - 1) * bound)
                    m.bias.zero_()

    def document_vectors(self, ids: torch.Tensor) -> torch.Tensor:
        """(B, T) ids -> (B, D) masked means; an all-padding row gives the zero vector."""
        if ids.ndim != 2:
            raise ValueError(f"ids must be a (batch, length) matrix, got shape {tuple(ids.shape)}")
        if ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"ids must be integer token ids, got dtype {ids.dtype}")
        V = self.embedding.num_embeddings
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= V):
            raise ValueError(f"ids hold a token id outside the vocabulary [0, {V})")
        mask = (ids != self.padding_idx).unsqueeze(-1).float()             # (B, T, 1)
        summed = (self.embedding(ids) * mask).sum(1)
        return summed / mask.sum(1).clamp(min=1.0)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.document_vectors(ids))


# ---------------------------------------------------------------- training
@torch.no_grad()
def accuracy(model: nn.Module, ids: torch.Tensor, labels: torch.Tensor, batch_size: int = 512) -> float:
    """Share of rows of ``ids`` (N, T) whose arg-max logit equals ``labels`` (N,)."""
    was = model.training
    model.eval()
    dev = next(model.parameters()).device
    correct = 0
    for s in range(0, len(ids), batch_size):
        correct += int((model(ids[s:s + batch_size].to(dev)).argmax(1).cpu() == labels[s:s + batch_size]).sum())
    model.train(was)
    return correct / max(len(ids), 1)


def train_classifier(model: nn.Module, train_ids: torch.Tensor, train_labels: torch.Tensor, epochs: int = 20,
                     lr: float = 1e-2, embedding_lr: float | None = None, batch_size: int = 32,
                     weight_decay: float = 0.0, valid: tuple | None = None, seed: int = 0,
                     device: str | None = None, progress: bool = True, desc: str = "classifier"):
    """Adam on cross-entropy, shuffled mini-batches from a seeded generator, with a tqdm bar.

    ``embedding_lr`` (default ``lr``) is the learning rate of a trainable embedding table.
    ``valid`` = (ids, labels) is scored after each epoch. Returns a
    :class:`helpers.training.History` (epochs: {'epoch', 'train_loss', 'seconds',
    'train_acc', 'valid_acc'?}).
    """
    from helpers.seeding import choose_device
    from helpers.training import train_loop
    if len(train_ids) != len(train_labels):
        raise ValueError(f"{len(train_ids)} documents but {len(train_labels)} labels")
    if len(train_ids) == 0:
        raise ValueError("the training set is empty")
    dev = choose_device(device)
    model.to(dev)
    emb = [p for n, p in model.named_parameters() if n.startswith("embedding") and p.requires_grad]
    rest = [p for n, p in model.named_parameters() if not n.startswith("embedding") and p.requires_grad]
    groups = [{"params": rest}] + ([{"params": emb, "lr": embedding_lr or lr}] if emb else [])
    opt = torch.optim.Adam(groups, lr=lr, weight_decay=weight_decay)
    gen = torch.Generator().manual_seed(seed)
    n = len(train_ids)

    def batches(_epoch):
        order = torch.randperm(n, generator=gen)
        for s in range(0, n, batch_size):
            yield order[s:s + batch_size]

    def step(idx):
        model.train()
        loss = F.cross_entropy(model(train_ids[idx].to(dev)), train_labels[idx].to(dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    def evaluate():
        out = {"train_acc": accuracy(model, train_ids, train_labels)}
        if valid is not None:
            out["valid_acc"] = accuracy(model, *valid)
        return out

    return train_loop(step, batches, epochs, evaluate=evaluate, desc=desc, progress=progress)


# ---------------------------------------------------------------- the experiment
def bbc_split(test_fraction: float = 0.3, seed: int = 0):
    """BBC News articles (title + text, tokenised) split into a stratified training pool and a
    fixed test set. Returns (pool_docs, pool_labels (N,) int64, test_docs, test_labels, topics)."""
    from sklearn.model_selection import train_test_split

    from helpers.evaluation import bbc_topic_task
    docs, topics = bbc_topic_task()
    names = sorted(set(topics))
    y = np.array([names.index(t) for t in topics], dtype=np.int64)
    idx_pool, idx_test = train_test_split(np.arange(len(y)), test_size=test_fraction, random_state=seed, stratify=y)
    return ([docs[i] for i in idx_pool], y[idx_pool], [docs[i] for i in idx_test], y[idx_test], names)


def _subset(labels: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n indices of ``labels`` drawn without replacement, stratified (class proportions kept,
    every class at least once); all of them, shuffled, when n is the whole pool."""
    from sklearn.model_selection import train_test_split
    k = len(np.unique(labels))
    if n < k:
        raise ValueError(f"a training set of {n} documents cannot hold one of each of the {k} classes")
    if n >= len(labels):
        return np.random.default_rng(seed).permutation(len(labels))
    idx, _ = train_test_split(np.arange(len(labels)), train_size=n, stratify=labels, random_state=seed)
    return idx


def embedding_experiment(vectors: np.ndarray, words: Sequence[str], train_sizes: Sequence[int] = (25, 100, 400, 1500),
                         modes: Sequence[str] = MODES, epochs: int = 10, min_steps: int = 150, lr: float = 5e-2,
                         embedding_lr: float = 1e-2, max_len: int = 200, seeds: Sequence[int] = (0,),
                         split=None, device: str | None = None, progress: bool = True) -> list[dict]:
    """Frozen vs fine-tuned pre-trained embeddings vs random initialisation on BBC News topics.

    For each training-set size n (a stratified random subset of the training pool), each seed and each
    mode, trains a :class:`MeanEmbeddingClassifier` (linear head; Adam, ``lr`` for the head,
    ``embedding_lr`` for a trainable table, batches of 32) for ``epochs`` epochs or at least
    ``min_steps`` steps (so that 25 documents get as many updates as the head needs) and
    measures test accuracy on the fixed test set; documents are cut after ``max_len`` tokens. 'random' uses the same vocabulary with rows
    drawn N(0, s²), s = the std of the pre-trained matrix (same scale), and trains them.
    ``split`` = the output of :func:`bbc_split` (default: bbc_split()).

    Returns [{'mode', 'n_train', 'seed', 'test_acc', 'train_acc', 'epochs', 'seconds',
    'unknown_token_share'}], one per run.
    """
    from tqdm.auto import tqdm
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; choose from {MODES}")
    pool_docs, pool_y, test_docs, test_y, names = split if split is not None else bbc_split()
    E, vocab = vocab_with_specials(vectors, words)
    std = float(E[2:].std())
    X_pool = encode_documents(pool_docs, vocab, max_len)
    X_test = encode_documents(test_docs, vocab, max_len)
    y_pool, y_test = torch.from_numpy(pool_y), torch.from_numpy(test_y)
    real = X_pool != vocab.pad_id
    unk_share = float(((X_pool == vocab.unk_id) & real).sum() / real.sum())
    for n in train_sizes:
        if not 1 <= n <= len(pool_y):
            raise ValueError(f"training-set size {n} is outside [1, {len(pool_y)}] (the training pool)")
    runs = [(n, s, m) for n in train_sizes for s in seeds for m in modes]
    rows = []
    for n, s, mode in tqdm(runs, desc="frozen / fine-tuned / random", disable=not progress, leave=False):
        idx = torch.from_numpy(_subset(pool_y, n, 1000 + s))
        if mode == "random":
            model = MeanEmbeddingClassifier(len(names), vocab_size=len(vocab), dim=E.shape[1], init_std=std, seed=s)
        else:
            model = MeanEmbeddingClassifier(len(names), embeddings=E, freeze=(mode == "frozen"), seed=s)
        t = time.perf_counter()
        bs = min(32, n)
        n_epochs = max(epochs, -(-min_steps // -(-n // bs)))
        hist = train_classifier(model, X_pool[idx], y_pool[idx], epochs=n_epochs, lr=lr, embedding_lr=embedding_lr,
                                batch_size=bs, seed=s, device=device, progress=False)
        secs = time.perf_counter() - t
        rows.append({"mode": mode, "n_train": int(n), "seed": int(s), "test_acc": accuracy(model, X_test, y_test),
                     "train_acc": hist.epochs[-1]["train_acc"], "epochs": n_epochs, "seconds": secs,
                     "unknown_token_share": unk_share})
    return rows


def summarise_experiment(rows: list[dict]) -> list[dict]:
    """Mean and spread over seeds: [{'mode', 'n_train', 'mean_acc', 'min_acc', 'max_acc', 'runs'}]."""
    keys = sorted({(r["n_train"], r["mode"]) for r in rows}, key=lambda k: (k[0], MODES.index(k[1])))
    out = []
    for n, m in keys:
        accs = [r["test_acc"] for r in rows if r["n_train"] == n and r["mode"] == m]
        out.append({"mode": m, "n_train": n, "mean_acc": float(np.mean(accs)), "min_acc": float(min(accs)),
                    "max_acc": float(max(accs)), "runs": len(accs)})
    return out


def plot_accuracy_vs_size(rows: list[dict], ax=None, highlight: int | None = None, title: str | None = None):
    """Test accuracy (mean over seeds, min-max band) vs training-set size, one line per mode,
    log-scaled x axis. ``highlight`` marks one size with a vertical line. Returns the axes."""
    from helpers.plotting import new_figure
    if not rows:
        raise ValueError("no experiment rows to plot")
    if ax is None:
        _, ax = new_figure(width=6, height=3.8)
    summ = summarise_experiment(rows)
    colours = {"frozen": "tab:blue", "fine-tuned": "tab:orange", "random": "tab:gray"}
    for m in MODES:
        pts = [r for r in summ if r["mode"] == m]
        if not pts:
            continue
        x = [r["n_train"] for r in pts]
        ax.plot(x, [r["mean_acc"] for r in pts], "o-", color=colours[m], label=m)
        ax.fill_between(x, [r["min_acc"] for r in pts], [r["max_acc"] for r in pts], color=colours[m], alpha=0.15)
    if highlight is not None:
        ax.axvline(highlight, color="k", ls=":", lw=1)
    ax.set_xscale("log")
    sizes = sorted({r["n_train"] for r in summ})
    ax.minorticks_off()                                   # label the measured sizes, not 3x10^1, 4x10^1, ...
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set_xlabel("training documents (log scale)")
    ax.set_ylabel("test accuracy")
    ax.set_title(title or "BBC News topics: pre-trained embeddings frozen / fine-tuned vs random")
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def make_size_render(vectors: np.ndarray, words: Sequence[str], epochs: int = 10, split=None, **experiment_kw):
    """An Explorer render that trains at one training-set size per click.

    Returns ``render(n_train=100, seed=0) -> (figure, summary)``: trains the three modes on
    ``n_train`` documents (seeded subset) with :func:`embedding_experiment` (``experiment_kw``
    passed on), adds the result to the curves measured so far (kept in ``render.rows``) and
    plots accuracy vs size with ``n_train`` marked.
    """
    split = split if split is not None else bbc_split()
    done: list[dict] = []

    def render(n_train: int = 100, seed: int = 0):
        from helpers.plotting import new_figure
        new = [r for r in done if r["n_train"] == int(n_train) and r["seed"] == int(seed)]
        if not new:
            new = embedding_experiment(vectors, words, train_sizes=(int(n_train),), seeds=(int(seed),),
                                       epochs=epochs, split=split, progress=False, **experiment_kw)
            done.extend(new)
        fig, ax = new_figure(width=6, height=3.8)
        plot_accuracy_vs_size(done, ax=ax, highlight=int(n_train))
        acc = {r["mode"]: r["test_acc"] for r in new}
        best = max(acc, key=acc.get)
        summary = (f"{int(n_train)} training documents (seed {seed}): " +
                   ", ".join(f"{m} {acc[m]:.1%}" for m in MODES if m in acc) + f" — best: {best}")
        return fig, summary

    render.rows = done
    return render
