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

Lesson 09 uses it to compare frozen, fine-tuned and randomly initialised embeddings on BBC News
topics (:func:`helpers.lessons.lesson09.embedding_experiment`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from helpers.infra.seeding import choose_device
from helpers.infra.training import train_loop
from helpers.lib.checks import check_ids
from helpers.lib.text import PAD, UNK, Vocab, check_token_lists, check_tokens

__all__ = ["vocab_with_specials", "encode_documents", "MeanEmbeddingClassifier", "train_classifier", "accuracy"]


# ---------------------------------------------------------------- data
def vocab_with_specials(vectors: np.ndarray, words: Sequence[str]) -> tuple[np.ndarray, Vocab]:
    """Prepend <pad> (id 0) and <unk> (id 1) to pre-trained vectors. Taught in lesson 09, section 8.

    vectors: (V, D) float, ``words``: the V words of its rows (a list, or a Vocab without
    specials). Returns (E (V + 2, D) float32, Vocab) where E[0] = 0 (padding) and E[1] = the
    mean vector (a neutral guess for an unknown word). Raises ValueError if shapes disagree.
    """
    check_tokens(words, "words", "vocab_with_specials")
    itos = list(words.itos if hasattr(words, "itos") else words)
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(itos):
        raise ValueError(f"vectors must be (V, D) with V = {len(itos)} words, got shape {vectors.shape}")
    if PAD in itos or UNK in itos:
        raise ValueError("the words already contain <pad> or <unk>; pass the vectors of ordinary words only")
    E = np.concatenate([np.zeros((1, vectors.shape[1]), np.float32), vectors.mean(0, keepdims=True), vectors])
    return E, Vocab([PAD, UNK] + itos, specials=(PAD, UNK))


def encode_documents(documents: Sequence[Sequence[str]], vocab: Vocab, max_len: int = 400) -> torch.Tensor:
    """Token lists as a padded (N, T) matrix of ids. Taught in lesson 09, section 8.

    Token lists -> (N, T) int64 ids, T = min(max_len, longest document), padded with
    ``vocab.pad_id`` at the end and truncated after ``max_len`` tokens; unknown tokens map to
    <unk>. An empty document becomes all padding (the model then sees a zero vector)."""
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    check_token_lists(documents, "documents", "encode_documents", "document")
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
    """Masked mean of token embeddings -> (optional hidden ReLU layer) -> class logits. Taught in lesson 09, section 8.

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
        check_ids(ids, self.embedding.num_embeddings, "ids", "MeanEmbeddingClassifier", noun="token ids")
        mask = (ids != self.padding_idx).unsqueeze(-1).float()             # (B, T, 1)
        summed = (self.embedding(ids) * mask).sum(1)
        return summed / mask.sum(1).clamp(min=1.0)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.document_vectors(ids))


# ---------------------------------------------------------------- training
@torch.no_grad()
def accuracy(model: nn.Module, ids: torch.Tensor, labels: torch.Tensor, batch_size: int = 512) -> float:
    """Share of rows of ``ids`` (N, T) whose arg-max logit equals ``labels`` (N,). Taught in lesson 09, section 8."""
    if len(ids) != len(labels):
        raise ValueError(f"accuracy: {len(ids)} documents but {len(labels)} labels")
    if len(ids) == 0:
        raise ValueError("accuracy: the set is empty; the accuracy of no documents is undefined")
    was = model.training
    model.eval()
    dev = next(model.parameters()).device
    correct = 0
    for s in range(0, len(ids), batch_size):
        correct += int((model(ids[s:s + batch_size].to(dev)).argmax(1).cpu() == labels[s:s + batch_size]).sum())
    model.train(was)
    return correct / len(ids)


def train_classifier(model: nn.Module, train_ids: torch.Tensor, train_labels: torch.Tensor, epochs: int = 20,
                     lr: float = 1e-2, embedding_lr: float | None = None, batch_size: int = 32,
                     weight_decay: float = 0.0, valid: tuple | None = None, seed: int = 0,
                     device: str | None = None, progress: bool = True, desc: str = "classifier"):
    """Adam on cross-entropy, shuffled mini-batches from a seeded generator, with a tqdm bar. Taught in lesson 09, section 8.

    ``embedding_lr`` (default ``lr``) is the learning rate of a trainable embedding table.
    ``valid`` = (ids, labels) is scored after each epoch. Returns a
    :class:`helpers.infra.training.History` (epochs: {'epoch', 'train_loss', 'seconds',
    'train_acc', 'valid_acc'?}).
    """
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
