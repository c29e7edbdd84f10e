"""Masked-language-model pre-training data for lesson 10 §3: the encoded corpus, masked batches,
the warm-up schedule and the frequency baseline."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from helpers.infra.seeding import make_rng
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import encode_sentence, length_bucketed_batches, mask_tokens, pad_batch
from helpers.lib.text import check_token_lists


def encode_corpus(tok: BPETokenizer, sentences, max_len: int) -> list[np.ndarray]:
    """Sentences as ``[CLS] pieces [SEP]`` id arrays, cut at ``max_len`` (lesson 10 §3)."""
    check_token_lists(sentences, "sentences", "encode_corpus")
    if len(sentences) == 0:
        raise ValueError("cannot encode an empty corpus (no sentences)")
    return [encode_sentence(tok, s, max_len) for s in sentences]


def batch_to_torch(batch, device="cpu"):
    """A MaskedBatch as tensors on ``device`` (lesson 10 §3): (inputs, labels, attention_mask)."""
    return tuple(torch.as_tensor(a, device=device)
                 for a in (batch.inputs, batch.labels, batch.attention_mask))


def fixed_eval_batches(tok: BPETokenizer, seqs: Sequence[np.ndarray], seed: int = 123,
                       batch_size: int = 128, p_mask: float = 1.0) -> list:
    """Held-out batches masked once, with a fixed seed (lesson 10 §3): 15 % of the positions, all
    shown as [MASK] by default, so that every evaluation scores the same positions."""
    rng = make_rng(seed)
    out = []
    order = np.argsort([len(s) for s in seqs], kind="stable")
    for k in range(0, len(order), batch_size):
        ids, att = pad_batch([seqs[i] for i in order[k:k + batch_size]], tok.pad_id)
        out.append(mask_tokens(ids, tok, rng, p_mask=p_mask,
                               p_random=1 - p_mask if p_mask < 1 else 0.0, attention_mask=att))
    return out


def unigram_baseline(tok: BPETokenizer, train_seqs: Sequence[np.ndarray], batches: list) -> dict:
    """The frequency baseline of masked-token prediction (lesson 10 §3): always guess the most
    frequent ordinary piece; its NLL is that of the add-one unigram distribution of the training
    pieces. Returns {'accuracy', 'nll', 'n_masked', 'top_piece'}."""
    if len(train_seqs) == 0 or len(batches) == 0:
        raise ValueError("unigram_baseline: needs training sequences and evaluation batches; "
                         "one of them is empty")
    counts = np.bincount(np.concatenate(train_seqs), minlength=len(tok)).astype(np.float64)
    counts[tok.special_ids] = 0
    probs = (counts + 1) / (counts + 1)[len(tok.special_ids):].sum()
    top = int(np.argmax(counts))
    targets = np.concatenate([b.labels[b.chosen] for b in batches])
    if targets.size == 0:
        raise ValueError("unigram_baseline: the batches have no masked position to score")
    return {"accuracy": float(np.mean(targets == top)),
            "nll": float(-np.mean(np.log(probs[targets]))), "n_masked": int(len(targets)),
            "top_piece": tok.itos[top]}


def next_masked_batch(train_seqs: Sequence[np.ndarray], lengths: Sequence[int], queue: list,
                      batch_size: int, tok: BPETokenizer, rng: np.random.Generator):
    """The next masked training batch (lesson 10 §3): the next length-bucketed group of
    ``train_seqs`` (``queue`` refilled in place when empty), padded and masked 80/10/10; masked
    again when no position happens to be chosen, so every step has a loss."""
    if not queue:
        queue.extend(length_bucketed_batches(lengths, batch_size, rng))
    idx = queue.pop()
    ids, att = pad_batch([train_seqs[i] for i in idx], tok.pad_id)
    if not (~np.isin(ids, tok.special_ids) & att).any():
        raise ValueError(f"next_masked_batch: sequences {idx.tolist()} hold no ordinary token "
                         "(only [CLS], [SEP] and padding), so no position can be masked; remove "
                         "empty sentences from train_seqs")
    while True:
        batch = mask_tokens(ids, tok, rng, attention_mask=att)
        if batch.chosen.any():
            return batch


def warmup_linear_decay(optimizer: torch.optim.Optimizer, warmup: int, total: int):
    """A LambdaLR schedule (lesson 10 §3): the learning rate rises linearly over ``warmup`` steps,
    then falls linearly to 0 at step ``total``."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda k: min((k + 1) / warmup, max(0.0, (total - k) / max(1, total - warmup))))


def piece_word2vec(tok: BPETokenizer, seqs, dim: int, scale: float = 0.1, window: int = 5,
                   epochs: int = 3, seed: int = 0) -> np.ndarray:
    """CBOW word2vec vectors of the pieces, (V, d) float32: the head start of an embedding table
    (lesson 10 §3); special tokens and unseen pieces keep random N(0, scale²) rows."""
    from gensim.models import Word2Vec  # heavy optional import: loaded only to train
    if len(seqs) == 0:
        raise ValueError("piece_word2vec: cannot train piece vectors on an empty corpus")
    n_special = len(tok.special_ids)        # the special tokens have the first ids
    w2v = Word2Vec([[str(i) for i in s if i >= n_special] for s in seqs], vector_size=dim,
                   window=window, min_count=1, sg=0, negative=5, epochs=epochs, workers=1,
                   seed=seed)
    E = make_rng(seed).standard_normal((len(tok), dim))
    known = [i for i in range(n_special, len(tok)) if str(i) in w2v.wv]
    E[known] = w2v.wv[[str(i) for i in known]]
    E[known] /= E[known].std()
    return (E * scale).astype(np.float32)
