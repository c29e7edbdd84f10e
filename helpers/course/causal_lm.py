"""Lesson 10's contrast: a causal (GPT-style) language model with the small BERT's blocks, data and
tokenizer (``make models NAME=gpt_contrast``; scores only — the size budget of ``data/models`` has no
room for a second set of weights).

Model: :class:`helpers.lib.bert.TinyGPT` — TinyBert's sizes (2 Pre-LN layers, 128 wide, 4 heads,
feed-forward 256, tied output layer), the embedding table started from the same word2vec vectors
of the pieces (:func:`helpers.course.mlm_model.piece_vectors`), with a causal mask; trained to predict the next piece at every
position (:func:`helpers.lib.bert.causal_lm_loss`) on the shipped masked LM's training sentences,
tokenizer and optimiser settings (AdamW, betas 0.9/0.98, weight decay 0.01, 50 warm-up steps, linear
decay to 0, clipping at 1, batches of 64 length-bucketed sentences).

**Budget: about half the masked LM's CPU time** (the time a shared machine allowed): a GPT step scores
every position (the masked LM scores 15 %) and costs about 2.5 masked-LM steps, so 1,600 steps are
about 4,000 masked-LM steps' worth, against the shipped masked LM's 8,000. Every ``eval_every`` steps:
next-piece NLL and accuracy on the whole validation split; the step count is fixed (the learning rate
reaches 0 there).

What ships (:class:`GPTContrast`), measured at the end:

- next-piece NLL and accuracy on the test split;
- **fill the blank from the left**: at the masked LM's own test positions (the same masked-once test
  batches, seed 456), the GPT's prediction of each masked piece from the true pieces before it —
  per sentence, so the lesson compares it with the masked LM by a paired bootstrap over sentences;
- word senses: the 200 nearest-sense rounds per word and layer (3 labelled sentences per sense, the
  lesson's draws), from the GPT's vectors, which see only the words to their left;
- a few generated continuations (sampled at temperature 0.8 from a seeded generator).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch.nn import functional as F

from helpers.course.data import load_wsd_sentences
from helpers.course.mlm_model import SETTINGS as MLM_SETTINGS
from helpers.course.mlm_model import (
    TEST_SEED,
    VALID_SEED,
    mlm_sentences,
    model_config,
    piece_vectors,
)
from helpers.infra.artifacts import Artifact, array_to_strings, strings_to_array
from helpers.infra.progress import progress_bar
from helpers.infra.runlog import RunLog
from helpers.infra.seeding import make_rng
from helpers.lib.bert import TinyGPT, causal_lm_loss
from helpers.lib.bpe import BPETokenizer
from helpers.lib.contextual import nearest_sense_accuracy, word_vectors
from helpers.lib.mlm import IGNORE, encode_sentence, length_bucketed_batches, pad_batch
from helpers.lib.pretraining import encode_corpus, fixed_eval_batches

SETTINGS = dict({k: MLM_SETTINGS[k] for k in ("vocab_size", "max_len", "dim", "n_layers", "n_heads", "ff_dim",
                                              "dropout", "batch_size", "lr", "weight_decay", "warmup", "w2v_init",
                                              "seed")},
                max_steps=1_600, eval_every=400, sample_pieces=14, temperature=0.8,
                prompts=["the bank", "the prime minister said", "in the second half", "the new phone"])
WSD_SUPPORT, WSD_REPEATS, WSD_SEED = 3, 200, 0


def sentence_batches(seqs: list, pad_id: int, batch_size: int = 128) -> list:
    """Fixed (ids, attention_mask) batches of ``seqs`` sorted by length, as torch tensors."""
    order = np.argsort([len(s) for s in seqs], kind="stable")
    out = []
    for k in range(0, len(order), batch_size):
        ids, att = pad_batch([seqs[i] for i in order[k:k + batch_size]], pad_id)
        out.append((torch.as_tensor(ids), torch.as_tensor(att)))
    return out


@torch.no_grad()
def next_piece_scores(model: TinyGPT, batches: list) -> dict:
    """Mean NLL (nats) and top-1 accuracy of every next piece of ``batches`` ((ids, mask) pairs)."""
    was = model.training
    model.eval()
    nll, right, n = 0.0, 0, 0
    for ids, att in batches:
        h = model(ids, att)[:, :-1]
        real = att[:, 1:]
        logits = model.mlm_logits(h[real]).float()
        target = ids[:, 1:][real]
        nll += float(F.cross_entropy(logits, target, reduction="sum"))
        right += int((logits.argmax(-1) == target).sum())
        n += int(real.sum())
    model.train(was)
    return {"nll": nll / n, "accuracy": right / n, "n": n}


@torch.no_grad()
def fill_from_the_left(model: TinyGPT, masked_batches: list) -> dict:
    """At the masked positions of masked-once batches (:func:`helpers.lib.pretraining.fixed_eval_batches`),
    the GPT's prediction of each masked piece from the true pieces to its left. Returns per sentence
    'right' and 'count' (n,) int64 (sentences without a masked piece left out), and 'nll', 'accuracy'."""
    model.eval()
    right, count, nll, n = [], [], 0.0, 0
    for b in masked_batches:
        chosen = b.labels != IGNORE
        ids = torch.as_tensor(np.where(chosen, b.labels, b.inputs))     # the original sentence
        att = torch.as_tensor(b.attention_mask)
        h = model(ids, att)
        rows, cols = np.nonzero(chosen)
        logits = model.mlm_logits(h[rows, cols - 1]).float()             # position t - 1 predicts piece t
        target = torch.as_tensor(b.labels[rows, cols])
        hits = np.zeros(len(b.labels), dtype=np.int64)
        np.add.at(hits, rows, (logits.argmax(-1) == target).numpy())
        nll += float(F.cross_entropy(logits, target, reduction="sum"))
        n += len(rows)
        per = chosen.sum(1)
        right.append(hits[per > 0])
        count.append(per[per > 0])
    right, count = np.concatenate(right), np.concatenate(count)
    return {"right": right, "count": count, "nll": nll / n, "accuracy": float(right.sum() / count.sum())}


@torch.no_grad()
def sample(model: TinyGPT, tok: BPETokenizer, prompt: str, pieces: int, temperature: float, seed: int) -> str:
    """``prompt`` continued by ``pieces`` pieces sampled at ``temperature`` (stops at [SEP])."""
    model.eval()
    g = torch.Generator().manual_seed(seed)
    seq = list(encode_sentence(tok, prompt.split(), model.cfg.max_len)[:-1])     # [CLS] pieces, no [SEP]
    for _ in range(pieces):
        logits = model.mlm_logits(model(torch.as_tensor([seq]))[0, -1]).float()
        end = logits[tok.sep_id].clone()
        logits[:len(tok.special_ids)] = -np.inf                 # no special piece, except the end
        logits[tok.sep_id] = end
        nxt = int(torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=g))
        if nxt == tok.sep_id or len(seq) >= model.cfg.max_len:
            break
        seq.append(nxt)
    return tok.decode(np.array(seq), skip_special=True)


def wsd_rounds(model, tok: BPETokenizer) -> dict:
    """{word: (n_layers + 1, repeats)} per-round nearest-sense accuracies (the lesson's draws)."""
    examples = load_wsd_sentences()
    out = {}
    for w in sorted({e.word for e in examples}):
        exs = [e for e in examples if e.word == w]
        senses = [e.sense for e in exs]
        out[w] = np.stack([nearest_sense_accuracy(word_vectors(model, tok, [e.tokens for e in exs],
                                                               [e.position for e in exs], layer),
                                                  senses, WSD_SUPPORT, make_rng(WSD_SEED), WSD_REPEATS)["per_round"]
                           for layer in range(model.cfg.n_layers + 1)])
    return out


def train_gpt_contrast(settings: dict, log: RunLog, max_steps: int | None = None, progress: bool = True, *,
                       load=None) -> tuple[dict, dict, dict]:
    """Train the GPT of ``settings`` and measure it (see the module docstring). ``load(name)`` returns a
    shipped model (the registry passes :func:`helpers.course.models.load_model`): the tokenizer is
    the shipped masked LM's. Returns (arrays, meta, metrics); ``max_steps`` stops early (the replay)."""
    if load is None:
        raise TypeError("train_gpt_contrast needs load=helpers.course.models.load_model (the registry passes it)")
    s = settings
    tok = load("mlm_bert").tok
    sents = mlm_sentences()
    train = encode_corpus(tok, sents["train"], s["max_len"])
    valid = sentence_batches(encode_corpus(tok, sents["valid"], s["max_len"]), tok.pad_id)
    cfg = model_config(s, len(tok))
    E0 = piece_vectors(tok, train, s) if s["w2v_init"] else None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(s["seed"])
        model = TinyGPT(cfg, tok.pad_id)
    if E0 is not None:
        with torch.no_grad():
            model.tok_emb.weight.copy_(torch.as_tensor(E0))
    model.train()
    total, warmup = s["max_steps"], s["warmup"]
    cap = total if max_steps is None else min(max_steps, total)
    opt = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=s["weight_decay"], betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: min((k + 1) / warmup, max(0.0, (total - k) / max(1, total - warmup))))
    rng, queue, lengths = make_rng(s["seed"]), [], [len(x) for x in train]
    curve = {"step": [], "valid_nll": [], "valid_acc": [], "train_loss": []}
    since, t0, c0 = [], time.perf_counter(), time.process_time()
    bar = progress_bar(total=cap, desc="GPT pre-training", unit="step", disable=not progress)
    for step in range(1, cap + 1):
        if not queue:
            queue.extend(length_bucketed_batches(lengths, s["batch_size"], rng))
        ids, att = pad_batch([train[i] for i in queue.pop()], tok.pad_id)
        loss = causal_lm_loss(model, torch.as_tensor(ids), torch.as_tensor(att))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        log.step(loss.item())
        since.append(loss.item())
        bar.update(1)
        if max_steps is None and (step % s["eval_every"] == 0 or step == cap):
            ev = next_piece_scores(model, valid)
            for k, v in (("step", step), ("valid_nll", ev["nll"]), ("valid_acc", ev["accuracy"]),
                         ("train_loss", float(np.mean(since)))):
                curve[k].append(v)
            since = []
            log.event("eval", step=step, valid_nll=ev["nll"], valid_acc=ev["accuracy"], train_loss=curve["train_loss"][-1],
                      lr=opt.param_groups[0]["lr"], seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
            bar.set_postfix(valid_nll=f"{ev['nll']:.3f}")
    bar.close()
    cpu = time.process_time() - c0
    log.event("stop", reason=f"the step cap max_steps={cap} (the learning rate reaches 0 there)" if max_steps is None
              else f"max_steps={max_steps}", steps=cap)
    model.eval()
    metrics = {"steps": cap, "train_cpu_seconds": cpu}
    if max_steps is not None:
        return {}, {"settings": dict(s)}, metrics
    test = next_piece_scores(model, sentence_batches(encode_corpus(tok, sents["test"], s["max_len"]), tok.pad_id))
    masked = fixed_eval_batches(tok, encode_corpus(tok, sents["test"], s["max_len"]), seed=TEST_SEED)
    left = fill_from_the_left(model, masked)
    wsd = wsd_rounds(model, tok)
    samples = [sample(model, tok, p, s["sample_pieces"], s["temperature"], s["seed"] + k)
               for k, p in enumerate(s["prompts"])]
    arrays = {"fill/right": left["right"], "fill/count": left["count"],
              **{f"wsd/{w}": r for w, r in wsd.items()}, "samples": strings_to_array(samples),
              **{f"curve/{k}": np.asarray(v) for k, v in curve.items()}}
    metrics.update(test_nll=test["nll"], test_acc=test["accuracy"], fill_left_acc=left["accuracy"],
                   fill_left_nll=left["nll"], valid_nll=curve["valid_nll"][-1])
    meta = {"settings": dict(s), "config": asdict(cfg), "metrics": metrics, "valid_seed": VALID_SEED,
            "test_seed": TEST_SEED, "n_test_next_pieces": test["n"],
            "data": "the shipped masked LM's training sentences and tokenizer; validation and test splits alike"}
    return arrays, meta, metrics


@dataclass
class GPTContrast:
    """What :func:`train_gpt_contrast` measured: ``metrics`` (test next-piece NLL/accuracy, the
    fill-from-the-left accuracy/NLL, steps, CPU seconds), ``fill_right`` / ``fill_count`` (n,) per
    test sentence, ``wsd`` {word: (layers, repeats)}, ``samples`` (list of str), ``curve`` and ``meta``."""

    metrics: dict
    fill_right: np.ndarray
    fill_count: np.ndarray
    wsd: dict
    samples: list
    curve: dict
    meta: dict


def load_gpt_contrast(artifact: Artifact) -> GPTContrast:
    """The records stored by :func:`train_gpt_contrast` (via ``load_model``)."""
    a = artifact.arrays
    return GPTContrast(dict(artifact.meta["metrics"]), np.asarray(a["fill/right"]), np.asarray(a["fill/count"]),
                       {k.split("/", 1)[1]: np.asarray(v) for k, v in a.items() if k.startswith("wsd/")},
                       array_to_strings(a["samples"]),
                       {k.split("/", 1)[1]: np.asarray(v).tolist() for k, v in a.items() if k.startswith("curve/")},
                       dict(artifact.meta))


def gpt_subset_metric(result: GPTContrast) -> tuple[str, float]:
    """('fill_left_acc', the fill-from-the-left accuracy) from the stored per-sentence counts, which
    must equal the recorded metric."""
    acc = float(result.fill_right.sum() / result.fill_count.sum())
    if abs(acc - result.metrics["fill_left_acc"]) > 1e-12:
        raise ValueError(f"the stored per-sentence counts give {acc}, the record says {result.metrics['fill_left_acc']}")
    return "fill_left_acc", acc
