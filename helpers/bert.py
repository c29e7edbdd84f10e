"""A small BERT-style encoder for lesson 09, its masked-LM training, and contextual vectors.

- :class:`NumpyMaskedLM` — the masked-LM loss with a tied embedding, forward and backward
  by hand in NumPy (the tied matrix receives the *sum* of two gradients).
- :class:`TinyBert` — token + position + segment embeddings, a stack of Pre-LN
  ``torch.nn.TransformerEncoderLayer`` blocks, and an MLM head whose output matrix is the
  transposed input embedding (``W = Eᵀ``) when ``tie_weights`` is true.
- :func:`pretrain_mlm` / :func:`evaluate_mlm` — training on the course corpus and held-out
  masked-token accuracy; :func:`unigram_baseline` — the frequency baseline.
- :func:`word_vectors` / :func:`contextual_vector` — the contextual vector of a word
  occurrence (the mean of its subword vectors at a chosen layer); :func:`piece_word2vec` —
  word2vec vectors of the subword pieces, an optional starting point for the embedding table.
- :func:`load_wsd_sentences` — the course's hand-labelled word-sense sentences;
  :func:`nearest_sense_accuracy` — classification by the nearest sense centroid;
  :func:`train_static_vectors` — the static (word2vec) baseline; and the explorers' pure
  ``render_*`` functions.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from helpers.bpe import SPECIALS, BPETokenizer
from helpers.layers import log_softmax, softmax
from helpers.mlm import IGNORE, encode_sentence, length_bucketed_batches, mask_tokens, pad_batch
from helpers.seeding import choose_device, make_rng
from helpers.text import tokenize
from helpers.training import History, train_loop


# ====================================================================== NumPy: MLM loss with tying
def mlm_loss_numpy(logits: np.ndarray, targets: np.ndarray) -> float:
    """``L = −(1/|M|) Σ_{i∈M} log P(x_i | h_i)`` for logits (|M|, V) at the masked
    positions and their original ids ``targets`` (|M|,) int."""
    if logits.ndim != 2 or targets.shape != (logits.shape[0],):
        raise ValueError(f"expected logits (M, V) and targets (M,), got {logits.shape} and {targets.shape}")
    if len(targets) == 0:
        raise ValueError("no masked positions: the MLM loss is an average over an empty set")
    return float(-np.mean(log_softmax(logits)[np.arange(len(targets)), targets]))


class NumpyMaskedLM:
    """A tiny masked LM in NumPy whose output matrix is its embedding matrix (``W = Eᵀ``).

    For ids (B, L) with a boolean attention mask (B, L):

    - ``x_j = E[id_j]``                                  (B, L, d)
    - ``c = Σ_j m_j x_j / Σ_j m_j``  (padding excluded)   (B, d)  — the sentence context
    - ``h_i = tanh([x_i, c] W + b)``                     (B, L, d)
    - at masked positions only: ``logits_i = h_i Eᵀ + b_out``, softmax cross-entropy.

    ``E`` is used twice (lookup and output), so its gradient is the sum of both uses.
    Parameters (float64): E (V, d), W (2d, d), b (d,), b_out (V,); ``grads`` alike.
    """

    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator, dtype=np.float64):
        E = rng.standard_normal((vocab_size, dim)) * 0.5
        W = rng.standard_normal((2 * dim, dim)) / math.sqrt(2 * dim)
        self.params = [E.astype(dtype), W.astype(dtype), np.zeros(dim, dtype), np.zeros(vocab_size, dtype)]
        self.grads = [np.zeros_like(p) for p in self.params]

    def forward(self, ids: np.ndarray, labels: np.ndarray, attention_mask: np.ndarray) -> float:
        """Mean NLL over the positions where ``labels != -100``. ids, labels (B, L) int."""
        E, W, b, b_out = self.params
        if ids.shape != labels.shape or ids.shape != attention_mask.shape or ids.ndim != 2:
            raise ValueError(f"ids, labels and attention_mask must share one (B, L) shape; got "
                             f"{ids.shape}, {labels.shape}, {attention_mask.shape}")
        d = E.shape[1]
        x = E[ids]                                             # (B, L, d)
        m = attention_mask[..., None].astype(E.dtype)          # (B, L, 1)
        n = m.sum(1)                                           # (B, 1)
        if np.any(n == 0):
            raise ValueError("a sequence has no real token (attention_mask all False)")
        c = (x * m).sum(1) / n                                 # (B, d)
        zin = np.concatenate([x, np.broadcast_to(c[:, None, :], x.shape)], axis=-1)  # (B, L, 2d)
        h = np.tanh(zin @ W + b)                               # (B, L, d)
        sel = labels != IGNORE
        t = labels[sel]
        hm = h[sel]                                            # (M, d)
        logits = hm @ E.T + b_out                              # (M, V): the tied output
        loss = mlm_loss_numpy(logits, t)
        self.cache = (ids, m, n, zin, h, sel, t, hm, logits, d)
        return loss

    def backward(self) -> None:
        """Fill ``grads`` with dL/dparams (E gets lookup + output contributions summed)."""
        E, W, b, b_out = self.params
        ids, m, n, zin, h, sel, t, hm, logits, d = self.cache
        M = len(t)
        dlogits = softmax(logits)
        dlogits[np.arange(M), t] -= 1
        dlogits /= M                                           # (M, V)
        dE_out = dlogits.T @ hm                                # (V, d) from logits = h Eᵀ
        dh = np.zeros_like(h)
        dh[sel] = dlogits @ E
        dz = dh * (1 - h ** 2)                                 # tanh'
        dW = zin.reshape(-1, 2 * d).T @ dz.reshape(-1, d)
        dzin = dz @ W.T
        dc = dzin[..., d:].sum(1)                              # (B, d)
        dx = dzin[..., :d] + m * (dc / n)[:, None, :]          # padding gets nothing from c
        dE_in = np.zeros_like(E)
        np.add.at(dE_in, ids.reshape(-1), dx.reshape(-1, d))
        self.grads[0][...] = dE_in + dE_out                    # tied: sum, never overwrite
        self.grads[1][...] = dW
        self.grads[2][...] = dz.reshape(-1, d).sum(0)
        self.grads[3][...] = dlogits.sum(0)


def numpy_mlm_torch_reference(params: Sequence[np.ndarray], ids, labels, attention_mask):
    """The same computation as :class:`NumpyMaskedLM` with autograd.

    Returns (loss tensor, list of parameter tensors with ``.grad`` filled)."""
    E, W, b, b_out = [torch.tensor(p, requires_grad=True) for p in params]
    ids_t = torch.as_tensor(ids)
    m = torch.as_tensor(attention_mask)[..., None].to(E.dtype)
    x = E[ids_t]
    c = (x * m).sum(1) / m.sum(1)
    h = torch.tanh(torch.cat([x, c[:, None, :].expand_as(x)], -1) @ W + b)
    sel = torch.as_tensor(labels) != IGNORE
    logits = F.linear(h[sel], E, b_out)  # weight tying: the output projection IS E
    loss = F.cross_entropy(logits, torch.as_tensor(labels)[sel])
    loss.backward()
    return loss, [E, W, b, b_out]


# ====================================================================== PyTorch: the encoder
@dataclass
class BertConfig:
    """Sizes of a :class:`TinyBert`. BERT-base is vocab 30,522, dim 768, 12 layers,
    12 heads, ff 3,072, max_len 512."""

    vocab_size: int
    dim: int = 128
    n_layers: int = 4
    n_heads: int = 4
    ff_dim: int = 512
    max_len: int = 64
    n_segments: int = 2
    dropout: float = 0.1
    tie_weights: bool = True


class TinyBert(nn.Module):
    """A BERT-style encoder with a masked-LM head.

    forward(ids (B, L) int64, attention_mask (B, L) bool = ids != 0, segments (B, L) int64
    = zeros) -> contextual vectors (B, L, dim) float32. Padding (attention_mask False) is
    never attended to: it is passed as ``src_key_padding_mask``, i.e. −∞ before the softmax.
    """

    def __init__(self, cfg: BertConfig, pad_id: int = 0):
        super().__init__()
        self.cfg, self.pad_id = cfg, pad_id
        d = cfg.dim
        self.tok_emb = nn.Embedding(cfg.vocab_size, d)        # E, (V, d)
        self.pos_emb = nn.Embedding(cfg.max_len, d)            # learned positions
        self.seg_emb = nn.Embedding(cfg.n_segments, d)         # sentence A / B
        self.emb_norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(cfg.dropout)
        layer = nn.TransformerEncoderLayer(d, cfg.n_heads, cfg.ff_dim, cfg.dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layers, norm=nn.LayerNorm(d),
                                             enable_nested_tensor=False)
        # MLM head: transform, then project on the vocabulary
        self.head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d))
        self.out_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.out = None if cfg.tie_weights else nn.Linear(d, cfg.vocab_size, bias=False)
        for emb in (self.tok_emb, self.pos_emb, self.seg_emb):
            nn.init.normal_(emb.weight, std=0.02)

    def _check(self, ids, attention_mask, segments):
        if ids.ndim != 2:
            raise ValueError(f"ids must have shape (B, L), got {tuple(ids.shape)}")
        if ids.shape[1] > self.cfg.max_len:
            raise ValueError(f"sequence length {ids.shape[1]} exceeds max_len={self.cfg.max_len}")
        if attention_mask is None:
            attention_mask = ids != self.pad_id
        if attention_mask.shape != ids.shape:
            raise ValueError(f"attention_mask has shape {tuple(attention_mask.shape)}, ids {tuple(ids.shape)}")
        if segments is None:
            segments = torch.zeros_like(ids)
        return attention_mask.bool(), segments

    def embed(self, ids, segments):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok_emb(ids) + self.pos_emb(pos)[None] + self.seg_emb(segments)
        return self.drop(self.emb_norm(x))

    def forward(self, ids, attention_mask=None, segments=None):
        attention_mask, segments = self._check(ids, attention_mask, segments)
        return self.encoder(self.embed(ids, segments), src_key_padding_mask=~attention_mask)

    def output_matrix(self) -> torch.Tensor:
        """The (V, d) matrix of the output projection: E itself when weights are tied."""
        return self.tok_emb.weight if self.out is None else self.out.weight

    def mlm_logits(self, hidden):
        """(..., d) contextual vectors -> (..., V) scores over the vocabulary."""
        return F.linear(self.head(hidden), self.output_matrix(), self.out_bias)

    @torch.no_grad()
    def layers_and_attention(self, ids, attention_mask=None, segments=None):
        """Every layer's vectors and every head's attention weights (eval mode).

        Returns hidden (n_layers + 1, B, L, d) — index 0 the embeddings, the last the final
        (normalised) output, equal to ``forward`` — and attention (n_layers, B, heads, L, L)
        whose rows sum to 1 over the real (non-padding) keys.
        """
        attention_mask, segments = self._check(ids, attention_mask, segments)
        pad = ~attention_mask
        x = self.embed(ids, segments)
        hidden, attn = [x], []
        for layer in self.encoder.layers:
            h = layer.norm1(x)
            _, w = layer.self_attn(h, h, h, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
            attn.append(w)
            x = layer(x, src_key_padding_mask=pad)
            hidden.append(x)
        hidden[-1] = self.encoder.norm(x)
        return torch.stack(hidden), torch.stack(attn)


def count_parameters(module: nn.Module) -> int:
    """Number of distinct trainable parameters (a tied matrix counts once)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def tying_saving(cfg: BertConfig) -> dict:
    """Parameters of the model with and without weight tying; the saving is V × d."""
    with torch.device("meta"):  # sizes only: nothing is allocated
        tied = count_parameters(TinyBert(BertConfig(**{**asdict(cfg), "tie_weights": True})))
        untied = count_parameters(TinyBert(BertConfig(**{**asdict(cfg), "tie_weights": False})))
    return {"tied": tied, "untied": untied, "saved": untied - tied,
            "V_times_d": cfg.vocab_size * cfg.dim, "saved_fraction": (untied - tied) / untied}


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``−(1/|M|) Σ_{i∈M} log P(x_i | h_i)`` where M = positions with ``labels != -100``.

    logits (..., V) float, labels (...) int64 -> scalar. Raises if nothing is masked."""
    sel = labels != IGNORE
    n = int(sel.sum())
    if n == 0:
        raise ValueError("no masked positions in the batch: the MLM loss is undefined")
    logp = F.log_softmax(logits[sel].float(), dim=-1)
    return -logp.gather(1, labels[sel][:, None]).sum() / n


def masked_lm_loss(model: TinyBert, inputs, labels, attention_mask) -> torch.Tensor:
    """The MLM loss of a batch, projecting only the masked positions on the vocabulary
    (the other 85 % never need the (d x V) product)."""
    h = model(inputs, attention_mask)
    sel = labels != IGNORE
    return mlm_loss(model.mlm_logits(h[sel]), labels[sel])


# ====================================================================== data and training
def encode_corpus(tok: BPETokenizer, sentences, max_len: int) -> list[np.ndarray]:
    """``[CLS] pieces [SEP]`` for every sentence (list of words), truncated to max_len."""
    if len(sentences) == 0:
        raise ValueError("cannot encode an empty corpus (no sentences)")
    return [encode_sentence(tok, s, max_len) for s in sentences]


def _to_torch(batch, device):
    return (torch.as_tensor(batch.inputs, device=device), torch.as_tensor(batch.labels, device=device),
            torch.as_tensor(batch.attention_mask, device=device))


def fixed_eval_batches(tok: BPETokenizer, seqs: Sequence[np.ndarray], seed: int = 123,
                       batch_size: int = 128, p_mask: float = 1.0) -> list:
    """Held-out MLM batches masked once with a fixed seed (15 % of positions, all shown
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
    """Masked-token accuracy (top-1) and mean NLL (nats) over the masked positions of
    ``batches`` (from :func:`fixed_eval_batches`). Returns {'accuracy', 'nll', 'n_masked'}."""
    was = model.training
    model.eval()
    correct, nll, n = 0, 0.0, 0
    for b in batches:
        x, y, att = _to_torch(b, device)
        sel = y != IGNORE
        if not sel.any():
            continue
        logits = model.mlm_logits(model(x, att)[sel]).float()
        correct += int((logits.argmax(-1) == y[sel]).sum())
        nll += float(F.cross_entropy(logits, y[sel], reduction="sum"))
        n += int(sel.sum())
    model.train(was)
    return {"accuracy": correct / n, "nll": nll / n, "n_masked": n}


def unigram_baseline(tok: BPETokenizer, train_seqs: Sequence[np.ndarray], batches: list) -> dict:
    """The frequency baseline: always guess the most frequent ordinary piece; its NLL
    uses the add-one-smoothed unigram distribution of the training pieces.
    Returns {'accuracy', 'nll', 'n_masked', 'top_piece'}."""
    counts = np.bincount(np.concatenate(train_seqs), minlength=len(tok)).astype(np.float64)
    counts[tok.special_ids] = 0
    probs = (counts + 1) / (counts + 1)[len(tok.special_ids):].sum()
    top = int(np.argmax(counts))
    targets = np.concatenate([b.labels[b.chosen] for b in batches])
    return {"accuracy": float(np.mean(targets == top)), "nll": float(-np.mean(np.log(probs[targets]))),
            "n_masked": int(len(targets)), "top_piece": tok.itos[top]}


@dataclass
class PretrainResult:
    """What :func:`pretrain_mlm` returns (picklable, so it can be cached).

    state_dict: CPU tensors of the trained model; config: BertConfig as a dict;
    history: helpers.training.History (step losses, held-out accuracy/NLL per evaluation);
    cpu_seconds: process CPU time of the training run."""

    state_dict: dict
    config: dict
    history: History
    steps: int
    tokens_seen: int
    cpu_seconds: float


def pretrain_mlm(tok: BPETokenizer, train_seqs: Sequence[np.ndarray], eval_batches: list,
                 cfg: BertConfig, steps: int = 2000, batch_size: int = 64, lr: float = 1e-3,
                 warmup: int = 100, n_evals: int = 10, seed: int = 0, device: str = "cpu",
                 init_embeddings: np.ndarray | None = None, progress: bool = True) -> PretrainResult:
    """Train a :class:`TinyBert` with the MLM objective (AdamW, linear warm-up then
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


def _pretrain(model, tok, train_seqs, eval_batches, cfg, steps, batch_size, lr, warmup, n_evals,
              rng, dev, progress) -> PretrainResult:
    import time

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    lengths = [len(s) for s in train_seqs]
    per_eval = steps // n_evals
    state = {"tokens": 0, "queue": []}

    def batches(epoch):
        for _ in range(per_eval):
            if not state["queue"]:
                state["queue"] = length_bucketed_batches(lengths, batch_size, rng)
            idx = state["queue"].pop()
            ids, att = pad_batch([train_seqs[i] for i in idx], tok.pad_id)
            yield mask_tokens(ids, tok, rng, attention_mask=att)

    def step(batch):
        x, y, att = _to_torch(batch, dev)
        state["tokens"] += int(att.sum())
        loss = masked_lm_loss(model, x, y, att)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        return loss.item()

    t0 = time.process_time()
    hist = train_loop(step, batches, n_evals, evaluate=lambda: evaluate_mlm(model, eval_batches, dev),
                      desc="MLM pre-training", progress=progress)
    cpu = time.process_time() - t0
    sd = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return PretrainResult(sd, asdict(cfg), hist, per_eval * n_evals, state["tokens"], cpu)


def piece_word2vec(tok: BPETokenizer, seqs: Sequence[np.ndarray], dim: int, scale: float = 0.1,
                   window: int = 5, epochs: int = 3, seed: int = 0) -> np.ndarray:
    """Static word2vec (CBOW) vectors of the subword pieces, as a (V, d) float32 table
    with overall standard deviation ``scale``, to start the MLM's embedding table from.

    ``seqs`` are ``[CLS] pieces [SEP]`` id arrays; the special tokens (and pieces never
    seen) keep random N(0, scale²) vectors. One gensim worker: same seed, same vectors."""
    from gensim.models import Word2Vec

    if len(seqs) == 0:
        raise ValueError("cannot train piece vectors on an empty corpus")
    w2v = Word2Vec([[str(i) for i in s if i >= len(tok.special_ids)] for s in seqs], vector_size=dim,
                   window=window, min_count=1, sg=0, negative=5, epochs=epochs, workers=1, seed=seed)
    E = make_rng(seed).standard_normal((len(tok), dim))
    known = [i for i in range(len(tok.special_ids), len(tok)) if str(i) in w2v.wv]
    E[known] = w2v.wv[[str(i) for i in known]]
    E[known] /= E[known].std()
    return (E * scale).astype(np.float32)


def load_pretrained(result: PretrainResult, device: str = "cpu") -> TinyBert:
    """Rebuild the trained :class:`TinyBert` (in eval mode) from a :class:`PretrainResult`."""
    model = TinyBert(BertConfig(**result.config))
    model.load_state_dict(result.state_dict)
    return model.to(choose_device(device)).eval()


# ====================================================================== contextual vectors
@torch.no_grad()
def word_vectors(model: TinyBert, tok: BPETokenizer, sentences: Sequence[Sequence[str]],
                 positions: Sequence[int], layer: int = -1, device: str = "cpu") -> np.ndarray:
    """Contextual vector of word ``positions[k]`` of ``sentences[k]`` (lists of words).

    Each sentence is encoded as ``[CLS] pieces [SEP]``; the word's vector is the mean of
    its pieces' vectors at ``layer`` (0 = embeddings, -1 = the final output).
    Returns (n, d) float32.
    """
    if len(sentences) != len(positions):
        raise ValueError(f"{len(sentences)} sentences but {len(positions)} positions")
    n_layers = model.cfg.n_layers
    if not -(n_layers + 1) <= layer <= n_layers:
        raise ValueError(f"layer must be in [-{n_layers + 1}, {n_layers}], got {layer}")
    dev = choose_device(device)
    seqs, spans = [], []
    for words, pos in zip(sentences, positions, strict=True):
        if not 0 <= pos < len(words):
            raise ValueError(f"position {pos} is outside a sentence of {len(words)} words")
        ids, owner = tok.encode_words(list(words))
        span = np.flatnonzero(owner == pos) + 1  # +1 for [CLS]
        if span.max() >= model.cfg.max_len - 1:
            raise ValueError(f"word {words[pos]!r} lies beyond max_len={model.cfg.max_len} pieces")
        seqs.append(encode_sentence(tok, words, model.cfg.max_len))
        spans.append(span)
    ids, att = pad_batch(seqs, tok.pad_id)
    model.eval()
    hidden, _ = model.to(dev).layers_and_attention(torch.as_tensor(ids, device=dev),
                                                   torch.as_tensor(att, device=dev))
    h = hidden[layer].float().cpu().numpy()
    return np.stack([h[k, span].mean(0) for k, span in enumerate(spans)])


def find_word(words: Sequence[str], word: str, occurrence: int = 0) -> int:
    """Position of the ``occurrence``-th (0-based) ``word`` in ``words``; a clear error if absent."""
    hits = [i for i, w in enumerate(words) if w == word]
    if len(hits) <= occurrence:
        raise ValueError(f"the word {word!r} occurs {len(hits)} time(s) in the sentence "
                         f"{' '.join(words)!r}; occurrence {occurrence} was asked for")
    return hits[occurrence]


def contextual_vector(model: TinyBert, tok: BPETokenizer, sentence: str, word: str,
                      occurrence: int = 0, layer: int = -1, device: str = "cpu") -> np.ndarray:
    """The contextual vector (d,) float32 of ``word`` in the text ``sentence``."""
    words = tokenize(sentence)
    return word_vectors(model, tok, [words], [find_word(words, word.lower(), occurrence)], layer, device)[0]


# ====================================================================== word senses
@dataclass(frozen=True)
class SenseExample:
    """One labelled occurrence: ``tokens[position] == word`` is used in sense ``sense``."""

    word: str
    sense: str
    sentence: str
    tokens: tuple
    position: int


WSD_FILE = "wsd_sentences.tsv"


def parse_wsd_lines(lines: Sequence[str], source: str = "<lines>") -> list[SenseExample]:
    """Parse ``word<TAB>sense<TAB>sentence`` lines (the first line is the header).

    Raises DataError naming the line when a line has the wrong number of fields or its
    sentence does not contain its word exactly once."""
    from helpers.data import DataError

    if not lines or lines[0].rstrip("\n").split("\t") != ["word", "sense", "sentence"]:
        raise DataError(f"{source}: expected the header 'word<TAB>sense<TAB>sentence'")
    out = []
    for k, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise DataError(f"{source}, line {k}: expected 3 tab-separated fields, got {len(fields)}")
        word, sense, sentence = fields
        tokens = tuple(tokenize(sentence))
        if tokens.count(word) != 1:
            raise DataError(f"{source}, line {k}: the word {word!r} occurs {tokens.count(word)} times "
                            f"in {sentence!r}; it must occur exactly once")
        out.append(SenseExample(word, sense, sentence, tokens, tokens.index(word)))
    if not out:
        raise DataError(f"{source}: no examples")
    return out


def load_wsd_sentences() -> list[SenseExample]:
    """The course's 144 hand-labelled sentences (6 words x 2 senses x 12), checksum
    verified (see data/README.md). Returns them in file order."""
    from helpers.data import DATA_DIR, SHA256, verify_file

    path = verify_file(DATA_DIR / WSD_FILE, SHA256[WSD_FILE],
                       f"Restore it with `git checkout -- data/{WSD_FILE}` (see data/README.md).")
    return parse_wsd_lines(path.read_text(encoding="utf-8").splitlines(), str(path))


def _unit(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    n = np.linalg.norm(X, axis=-1, keepdims=True)
    return X / np.where(n == 0, 1, n)


def nearest_sense(query: np.ndarray, support: np.ndarray, support_senses: Sequence[str]) -> tuple[str, dict]:
    """Classify ``query`` (d,) by the cosine similarity to each sense's centroid of the
    (unit-length) ``support`` vectors (n, d). Returns (sense, {sense: cosine}); ties go to
    the alphabetically first sense."""
    support, senses = np.asarray(support), np.asarray(support_senses)
    if support.ndim != 2 or support.shape[0] != len(senses) or query.shape != (support.shape[1],):
        raise ValueError(f"expected query (d,), support (n, d) and n senses; got {query.shape}, "
                         f"{support.shape} and {len(senses)}")
    q = _unit(query)
    scores = {s: float(_unit(_unit(support[senses == s]).mean(0)) @ q) for s in sorted(set(senses))}
    best = max(scores, key=lambda s: (round(scores[s], 12), -sorted(scores).index(s)))
    return best, scores


def nearest_sense_accuracy(X: np.ndarray, senses: Sequence[str], n_support: int, rng: np.random.Generator,
                           repeats: int = 200) -> dict:
    """Few-shot word-sense classification by the nearest sense centroid.

    In each of ``repeats`` rounds, ``n_support`` random examples per sense are the labelled
    ones, and every other example is classified with :func:`nearest_sense`.
    Returns {'accuracy': mean, 'std': std over rounds, 'n_queries': per round}.
    """
    senses = np.asarray(senses)
    labels = sorted(set(senses))
    if any(np.sum(senses == s) <= n_support for s in labels):
        raise ValueError(f"every sense needs more than n_support={n_support} examples")
    accs = []
    for _ in range(repeats):
        sup = np.concatenate([rng.choice(np.flatnonzero(senses == s), n_support, replace=False) for s in labels])
        qry = np.setdiff1d(np.arange(len(senses)), sup)
        pred = [nearest_sense(X[i], X[sup], senses[sup])[0] for i in qry]
        accs.append(np.mean(np.asarray(pred) == senses[qry]))
    return {"accuracy": float(np.mean(accs)), "std": float(np.std(accs)), "n_queries": int(len(qry))}


def train_static_vectors(sentences, dim: int = 100, window: int = 5, epochs: int = 5, min_count: int = 3,
                         seed: int = 0):
    """A static word2vec baseline (gensim skip-gram, negative sampling, one worker so the
    same seed gives the same vectors). Returns gensim KeyedVectors."""
    from gensim.models import Word2Vec

    if len(sentences) == 0:
        raise ValueError("cannot train word vectors on an empty corpus")
    model = Word2Vec([list(s) for s in sentences], vector_size=dim, window=window, min_count=min_count,
                     sg=1, negative=5, epochs=epochs, workers=1, seed=seed)
    return model.wv


def static_vectors(kv, examples: Sequence[SenseExample], context: bool = False) -> np.ndarray:
    """Static vectors of the examples, (n, d) float64: the target word's own vector (the
    same for every sentence), or with ``context=True`` the mean vector of the other words
    of the sentence (words missing from ``kv`` are skipped)."""
    out = []
    for e in examples:
        if not context:
            if e.word not in kv:
                raise KeyError(f"{e.word!r} is not in the static vocabulary")
            out.append(kv[e.word])
        else:
            ctx = [kv[w] for i, w in enumerate(e.tokens) if i != e.position and w in kv]
            if not ctx:
                raise ValueError(f"no context word of {e.sentence!r} has a static vector")
            out.append(np.mean(ctx, axis=0))
    return np.asarray(out, dtype=np.float64)


def example_vectors(model: TinyBert, tok: BPETokenizer, examples: Sequence[SenseExample], layer: int = -1,
                    device: str = "cpu") -> np.ndarray:
    """Contextual vectors (n, d) of the examples' target words at ``layer``."""
    return word_vectors(model, tok, [e.tokens for e in examples], [e.position for e in examples], layer, device)


# ====================================================================== explorers (pure)
def pca_2d(X: np.ndarray) -> np.ndarray:
    """Project (n, d) onto its first two principal components, (n, 2); signs fixed so that
    the largest-magnitude loading of each component is positive (deterministic)."""
    Xc = np.asarray(X, np.float64) - np.mean(X, axis=0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    Vt = Vt[:2] * np.sign(Vt[:2][np.arange(2), np.argmax(np.abs(Vt[:2]), axis=1)])[:, None]
    return Xc @ Vt.T


def render_sense_explorer(model: TinyBert, tok: BPETokenizer, examples: Sequence[SenseExample],
                          sentence: int = 0, word: str = "bank", layer: int = -1):
    """Explorer: one sentence of ``word``, its attention and its nearest sense.

    Left: the attention of the word's first piece over the sentence at ``layer`` (mean of
    the heads). Right: all contextual vectors of ``word`` at that layer projected by PCA,
    coloured by sense, the chosen sentence starred. The nearest sense is computed from
    the *other* sentences (leave one out). Returns (figure, summary)."""
    from helpers.plotting import new_figure

    exs = [e for e in examples if e.word == word]
    if not exs:
        raise ValueError(f"no examples for the word {word!r}")
    if not 0 <= sentence < len(exs):
        raise ValueError(f"sentence must be in [0, {len(exs)}), got {sentence}")
    L = model.cfg.n_layers
    layer = L if layer == -1 else layer
    if not 1 <= layer <= L:
        raise ValueError(f"layer must be in [1, {L}] (or -1 for the last), got {layer}")
    ex = exs[sentence]
    X = example_vectors(model, tok, exs, layer)
    senses = np.array([e.sense for e in exs])
    others = np.arange(len(exs)) != sentence
    pred, scores = nearest_sense(X[sentence], X[others], senses[others])

    ids, owner = tok.encode_words(list(ex.tokens))
    seq = encode_sentence(tok, ex.tokens, model.cfg.max_len)
    q = 1 + int(np.flatnonzero(owner == ex.position)[0])
    _, attn = model.layers_and_attention(torch.as_tensor(seq[None]))
    a = attn[layer - 1, 0].mean(0)[q].numpy()            # (L,) over keys
    # word-initial pieces without their marker, continuation pieces as '-ing', specials as they are
    pieces = [p if p in SPECIALS else p[1:] if p.startswith("▁") else "-" + p for p in tok.pieces(seq)]

    fig, (ax1, ax2) = new_figure(2, width=5.6, height=3.8)
    colors = ["tab:red" if k == q else "tab:blue" for k in range(len(seq))]
    ax1.bar(np.arange(len(seq)), a, color=colors)
    ax1.set_xticks(np.arange(len(seq)), pieces, rotation=70, fontsize=8)
    ax1.set_ylabel("attention weight (mean of heads)")
    ax1.set_title(f"layer {layer}: where '{word}' (red) looks")
    P = pca_2d(X)
    for s, c in zip(sorted(set(senses)), ["tab:orange", "tab:green"], strict=False):
        ax2.scatter(*P[senses == s].T, c=c, label=s, alpha=0.75)
    ax2.scatter(*P[sentence], marker="*", s=300, c="black", label="this sentence")
    ax2.set_title(f"contextual vectors of '{word}', layer {layer} (PCA)")
    ax2.set_xlabel("principal component 1")
    ax2.set_ylabel("principal component 2")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    top = int(np.argmax(np.where(np.arange(len(seq)) == q, -1, a)))
    cos = ", ".join(f"{s} {v:.2f}" for s, v in scores.items())
    summary = (f"“{ex.sentence}” — labelled: {ex.sense}; nearest sense at layer {layer}: {pred} "
               f"(cosine to centroids: {cos}); '{word}' attends most to '{pieces[top]}' ({a[top]:.2f})")
    return fig, summary
