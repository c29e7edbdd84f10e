"""Masked-language-model pre-training of :class:`helpers.lib.bert.TinyBert` (lesson 10).

- :func:`encode_corpus` and :func:`fixed_eval_batches`: the training sequences and the held-out
  batches masked once, so every evaluation scores the same positions;
- :func:`pretrain_mlm`: AdamW with warm-up and linear decay, dynamic masking, length buckets;
  returns a :class:`PretrainResult` (cached as arrays, see its ``to_arrays``), rebuilt into a model by :func:`load_pretrained`;
- :func:`evaluate_mlm` and :func:`unigram_baseline`: held-out masked-token accuracy and NLL, and
  the frequency baseline to beat;
- :func:`piece_word2vec`: word2vec vectors of the subword pieces, an optional head start for the
  embedding table.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.infra.artifacts import TreeCodec
from helpers.infra.seeding import choose_device, make_rng
from helpers.infra.training import History, train_loop
from helpers.lib.bert import BertConfig, TinyBert, masked_lm_loss
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import IGNORE, encode_sentence, length_bucketed_batches, mask_tokens, pad_batch
from helpers.lib.text import check_token_lists


def encode_corpus(tok: BPETokenizer, sentences, max_len: int) -> list[np.ndarray]:
    """``[CLS] pieces [SEP]`` for every sentence (list of words), truncated to max_len. Taught in lesson 10, section 3."""
    check_token_lists(sentences, "sentences", "encode_corpus")
    if len(sentences) == 0:
        raise ValueError("cannot encode an empty corpus (no sentences)")
    return [encode_sentence(tok, s, max_len) for s in sentences]


def batch_to_torch(batch, device):
    """A MaskedBatch as tensors (inputs, labels, attention_mask) on ``device``. Taught in lesson 10, section 3."""
    return (torch.as_tensor(batch.inputs, device=device), torch.as_tensor(batch.labels, device=device),
            torch.as_tensor(batch.attention_mask, device=device))


def fixed_eval_batches(tok: BPETokenizer, seqs: Sequence[np.ndarray], seed: int = 123,
                       batch_size: int = 128, p_mask: float = 1.0) -> list:
    """Held-out MLM batches masked once, with a fixed seed. Taught in lesson 10, section 3.

    Held-out MLM batches masked once with a fixed seed (15 % of positions, all shown
    as [MASK] by default), so every evaluation scores the very same positions."""
    rng = make_rng(seed)
    out = []
    order = np.argsort([len(s) for s in seqs], kind="stable")
    for k in range(0, len(order), batch_size):
        ids, att = pad_batch([seqs[i] for i in order[k:k + batch_size]], tok.pad_id)
        out.append(mask_tokens(ids, tok, rng, p_mask=p_mask, p_random=1 - p_mask if p_mask < 1 else 0.0,
                               attention_mask=att))
    return out


@torch.no_grad()
def evaluate_mlm(model: TinyBert, batches: list, device="cpu") -> dict:
    """Held-out masked-token accuracy and NLL. Taught in lesson 10, section 3.

    Masked-token accuracy (top-1) and mean NLL (nats) over the masked positions of
    ``batches`` (from :func:`fixed_eval_batches`). Returns {'accuracy', 'nll', 'n_masked'}."""
    was = model.training
    model.eval()
    correct, nll, n = 0, 0.0, 0
    for b in batches:
        x, y, att = batch_to_torch(b, device)
        sel = y != IGNORE
        if not sel.any():
            continue
        logits = model.mlm_logits(model(x, att)[sel]).float()
        correct += int((logits.argmax(-1) == y[sel]).sum())
        nll += float(F.cross_entropy(logits, y[sel], reduction="sum"))
        n += int(sel.sum())
    model.train(was)
    if n == 0:
        raise ValueError("evaluate_mlm: the batches have no masked position to score")
    return {"accuracy": correct / n, "nll": nll / n, "n_masked": n}


def unigram_baseline(tok: BPETokenizer, train_seqs: Sequence[np.ndarray], batches: list) -> dict:
    """The frequency baseline of masked-token prediction. Taught in lesson 10, section 3.

    The frequency baseline: always guess the most frequent ordinary piece; its NLL
    uses the add-one-smoothed unigram distribution of the training pieces.
    Returns {'accuracy', 'nll', 'n_masked', 'top_piece'}."""
    if len(train_seqs) == 0 or len(batches) == 0:
        raise ValueError("unigram_baseline: needs training sequences and evaluation batches; one of them is empty")
    counts = np.bincount(np.concatenate(train_seqs), minlength=len(tok)).astype(np.float64)
    counts[tok.special_ids] = 0
    probs = (counts + 1) / (counts + 1)[len(tok.special_ids):].sum()
    top = int(np.argmax(counts))
    targets = np.concatenate([b.labels[b.chosen] for b in batches])
    if targets.size == 0:
        raise ValueError("unigram_baseline: the batches have no masked position to score")
    return {"accuracy": float(np.mean(targets == top)), "nll": float(-np.mean(np.log(probs[targets]))),
            "n_masked": int(len(targets)), "top_piece": tok.itos[top]}


@dataclass
class PretrainResult:
    """What :func:`pretrain_mlm` returns (stored without pickle by ``to_arrays``). Taught in lesson 10, section 3.

    state_dict: CPU tensors of the trained model; config: BertConfig as a dict;
    history: helpers.infra.training.History (step losses, held-out accuracy/NLL per evaluation);
    cpu_seconds: process CPU time of the training run."""

    state_dict: dict
    config: dict
    history: History
    steps: int
    tokens_seen: int
    cpu_seconds: float

    def to_arrays(self) -> tuple[dict, dict]:
        """(arrays, meta) for :mod:`helpers.infra.artifacts` (the cache stores it without pickle)."""
        fields = {"state_dict": self.state_dict, "config": self.config, "history": asdict(self.history),
                  "steps": self.steps, "tokens_seen": self.tokens_seen, "cpu_seconds": self.cpu_seconds}
        return TreeCodec.to_arrays(fields)

    @classmethod
    def from_arrays(cls, arrays: dict, meta: dict) -> "PretrainResult":
        """The result stored by :meth:`to_arrays`."""
        fields = TreeCodec.from_arrays(arrays, meta)
        return cls(**{**fields, "history": History(**fields["history"])})


def pretrain_mlm(tok: BPETokenizer, train_seqs: Sequence[np.ndarray], eval_batches: list,
                 cfg: BertConfig, steps: int = 2000, batch_size: int = 64, lr: float = 1e-3,
                 warmup: int = 100, n_evals: int = 10, seed: int = 0, device: str = "cpu",
                 init_embeddings: np.ndarray | None = None, progress: bool = True) -> PretrainResult:
    """Pre-train a TinyBert by masked language modelling. Taught in lesson 10, section 3.

    Train a :class:`TinyBert` with the MLM objective (AdamW, linear warm-up then
    linear decay, gradient clipping at 1). Sequences are drawn in length buckets and
    masked afresh each time (dynamic masking, as in RoBERTa). Held-out metrics are
    recorded ``n_evals`` times. ``init_embeddings`` (V, d): start the (tied) embedding
    table from these vectors instead of random ones (see :func:`piece_word2vec`).
    ``device``: 'cpu' (default), 'cuda' or 'auto'."""
    if steps < n_evals:
        raise ValueError(f"steps ({steps}) must be at least n_evals ({n_evals})")
    if init_embeddings is not None and init_embeddings.shape != (cfg.vocab_size, cfg.dim):
        raise ValueError(f"init_embeddings has shape {init_embeddings.shape}, expected "
                         f"({cfg.vocab_size}, {cfg.dim})")
    dev = choose_device(device)
    rng = make_rng(seed)
    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        torch.manual_seed(seed)  # initial weights and dropout masks; global state restored after
        model = TinyBert(cfg, tok.pad_id)
        if init_embeddings is not None:
            with torch.no_grad():
                model.tok_emb.weight.copy_(torch.as_tensor(init_embeddings, dtype=torch.float32))
        model = model.to(dev).train()
        return _pretrain(model, tok, train_seqs, eval_batches, cfg, steps, batch_size, lr, warmup,
                         n_evals, rng, dev, progress)


def next_masked_batch(train_seqs: Sequence[np.ndarray], lengths: Sequence[int], queue: list, batch_size: int,
                      tok: BPETokenizer, rng: np.random.Generator):
    """The next masked pre-training batch. Taught in lesson 10, section 3.

    The next length-bucketed group of ``train_seqs`` (``queue`` is refilled in place when empty),
    padded and masked 80/10/10. Returns a MaskedBatch of (B, L) arrays. A batch in which no position
    happens to be chosen (likely only for a few short sequences) is masked again, so that every step
    has a loss to follow; a batch with no ordinary token at all is an error."""
    if not queue:
        queue.extend(length_bucketed_batches(lengths, batch_size, rng))
    idx = queue.pop()
    ids, att = pad_batch([train_seqs[i] for i in idx], tok.pad_id)
    if not (~np.isin(ids, tok.special_ids) & att).any():
        raise ValueError(f"next_masked_batch: sequences {idx.tolist()} hold no ordinary token (only [CLS], [SEP] "
                         "and padding), so no position can be masked; remove empty sentences from train_seqs")
    while True:
        batch = mask_tokens(ids, tok, rng, attention_mask=att)
        if batch.chosen.any():
            return batch


def mlm_update(model, opt, sched, batch, device="cpu") -> float:
    """One masked-LM optimiser step on a MaskedBatch. Taught in lesson 10, section 3.

    The loss, its gradient clipped to norm 1, then the optimiser and the scheduler steps.
    Returns the loss (float)."""
    x, y, att = batch_to_torch(batch, device)
    loss = masked_lm_loss(model, x, y, att)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    return loss.item()


def _pretrain(model, tok, train_seqs, eval_batches, cfg, steps, batch_size, lr, warmup, n_evals,
              rng, dev, progress) -> PretrainResult:
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    lengths = [len(s) for s in train_seqs]
    per_eval = steps // n_evals
    state = {"tokens": 0, "queue": []}

    def batches(epoch):
        for _ in range(per_eval):
            yield next_masked_batch(train_seqs, lengths, state["queue"], batch_size, tok, rng)

    def step(batch):
        state["tokens"] += int(batch.attention_mask.sum())
        return mlm_update(model, opt, sched, batch, dev)

    t0 = time.process_time()
    hist = train_loop(step, batches, n_evals, evaluate=lambda: evaluate_mlm(model, eval_batches, dev),
                      desc="MLM pre-training", progress=progress)
    cpu = time.process_time() - t0
    sd = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return PretrainResult(sd, asdict(cfg), hist, per_eval * n_evals, state["tokens"], cpu)


def piece_word2vec(tok: BPETokenizer, seqs: Sequence[np.ndarray], dim: int, scale: float = 0.1,
                   window: int = 5, epochs: int = 3, seed: int = 0) -> np.ndarray:
    """word2vec vectors of the subword pieces, a head start for the embedding table. Taught in lesson 10, section 3.

    Static word2vec (CBOW) vectors of the subword pieces, as a (V, d) float32 table
    with overall standard deviation ``scale``, to start the MLM's embedding table from.

    ``seqs`` are ``[CLS] pieces [SEP]`` id arrays; the special tokens (and pieces never
    seen) keep random N(0, scale²) vectors. One gensim worker: same seed, same vectors."""
    from gensim.models import Word2Vec  # heavy optional import: loaded only when gensim is used
    if len(seqs) == 0:
        raise ValueError("cannot train piece vectors on an empty corpus")
    n_special = len(tok.special_ids)        # the special tokens have the first ids
    w2v = Word2Vec([[str(i) for i in s if i >= n_special] for s in seqs], vector_size=dim,
                   window=window, min_count=1, sg=0, negative=5, epochs=epochs, workers=1, seed=seed)
    E = make_rng(seed).standard_normal((len(tok), dim))
    known = [i for i in range(n_special, len(tok)) if str(i) in w2v.wv]
    E[known] = w2v.wv[[str(i) for i in known]]
    E[known] /= E[known].std()
    return (E * scale).astype(np.float32)


def load_pretrained(result: PretrainResult, device: str = "cpu") -> TinyBert:
    """Rebuild the trained :class:`TinyBert` (in eval mode) from a :class:`PretrainResult`. Taught in lesson 10, section 3."""
    model = TinyBert(BertConfig(**result.config))
    model.load_state_dict(result.state_dict)
    return model.to(choose_device(device)).eval()
