"""Recipe of ``gpt_contrast``: lesson 10's causal (GPT-style) LM with the small BERT's blocks,
data and tokenizer (scores only: ``data/models`` has no room for a second set of weights).

Model: :class:`TinyGPT` (TinyBert's sizes with a causal mask, the embedding
table started from the same word2vec vectors of the pieces), trained to predict the next piece at
every position on the shipped masked LM's training sentences, tokenizer and optimiser settings.
Budget: 1,600 steps, fixed (not derived from the masked LM's run); a GPT step scores every
position and costs about 2.5 masked-LM steps, so they are about 4,000 masked-LM steps' worth, well
under the shipped masked LM's budget (its record gives its steps and CPU time): not an equal
budget. Measured at the end: next-piece NLL and accuracy on the test split; the blanks of the
masked LM's test batches filled from the left (per sentence, for a paired comparison); the
nearest-sense rounds of the word-sense sentences; a few samples. The budget's measurement:
``data/models/records/lm_settings.md``.
"""
from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np
import torch
from torch.nn import functional as F

from helpers.course.contextual_studies import GPTContrast
from helpers.course.data import load_wsd_sentences
from helpers.course.mlm_model import TEST_SEED, VALID_SEED, mlm_sentences
from helpers.infra.artifacts import strings_to_array
from helpers.infra.seeding import make_rng
from helpers.lib.bert import TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.contextual import nearest_sense_accuracy, word_vectors
from helpers.lib.mlm import IGNORE, encode_sentence, length_bucketed_batches, pad_batch
from helpers.lib.pretraining import encode_corpus, fixed_eval_batches, warmup_linear_decay
from training.loop import train_steps
from training.mlm_bert import SETTINGS as MLM_SETTINGS
from training.mlm_bert import new_encoder
from training.runlog import RunLog


class TinyGPT(TinyBert):
    """A decoder-only (GPT-style) model from TinyBert's blocks, position i attending to positions
    ≤ i only (lesson 10 §3.5)."""

    def position_mask(self, length: int, device=None):
        return torch.triu(torch.ones(length, length, dtype=torch.bool, device=device), diagonal=1)


def causal_lm_loss(model: TinyGPT, ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The mean NLL of every next piece (lesson 10 §3.5): position t predicts ``ids[:, t + 1]``;
    ids, attention_mask (B, L); padding is never a target. Returns a scalar tensor."""
    h = model(ids, attention_mask)[:, :-1]
    target = ids[:, 1:]
    real = attention_mask[:, 1:].bool()
    return F.cross_entropy(model.mlm_logits(h[real]).float(), target[real])


SHARED = ("vocab_size", "max_len", "dim", "n_layers", "n_heads", "ff_dim", "dropout", "batch_size",
          "lr", "weight_decay", "warmup", "w2v_init", "seed")         # the masked LM's settings
SETTINGS = dict({k: MLM_SETTINGS[k] for k in SHARED}, max_steps=1_600, eval_every=400,
                sample_pieces=14, temperature=0.8,
                prompts=["the bank", "the prime minister said", "in the second half",
                         "the new phone"])
WSD_SUPPORT, WSD_REPEATS, WSD_SEED = 3, 200, 0


def sentence_batches(seqs: list, pad_id: int, batch_size: int = 128) -> list:
    """Fixed (ids, attention_mask) tensor batches of ``seqs``, sorted by length."""
    order = np.argsort([len(s) for s in seqs], kind="stable")
    out = []
    for k in range(0, len(order), batch_size):
        ids, att = pad_batch([seqs[i] for i in order[k:k + batch_size]], pad_id)
        out.append((torch.as_tensor(ids), torch.as_tensor(att)))
    return out


@torch.no_grad()
def next_piece_scores(model: TinyGPT, batches: list) -> dict:
    """The mean NLL (nats) and top-1 accuracy of every next piece: {'nll', 'accuracy', 'n'}."""
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
    """The GPT's prediction of each masked piece of masked-once batches from the true pieces to
    its left: per sentence 'right' and 'count' (n,) int64 (sentences without a blank left out),
    and 'nll', 'accuracy' over all blanks."""
    model.eval()
    right, count, nll, n = [], [], 0.0, 0
    for b in masked_batches:
        chosen = b.labels != IGNORE
        ids = torch.as_tensor(np.where(chosen, b.labels, b.inputs))     # the original sentence
        h = model(ids, torch.as_tensor(b.attention_mask))
        rows, cols = np.nonzero(chosen)
        logits = model.mlm_logits(h[rows, cols - 1]).float()             # position t - 1 predicts t
        target = torch.as_tensor(b.labels[rows, cols])
        hits = np.zeros(len(b.labels), dtype=np.int64)
        np.add.at(hits, rows, (logits.argmax(-1) == target).numpy())
        nll += float(F.cross_entropy(logits, target, reduction="sum"))
        n += len(rows)
        per = chosen.sum(1)
        right.append(hits[per > 0])
        count.append(per[per > 0])
    right, count = np.concatenate(right), np.concatenate(count)
    return {"right": right, "count": count, "nll": nll / n,
            "accuracy": float(right.sum() / count.sum())}


@torch.no_grad()
def sample(model: TinyGPT, tok: BPETokenizer, prompt: str, pieces: int, temperature: float,
           seed: int) -> str:
    """``prompt`` and up to ``pieces`` pieces sampled at ``temperature`` (stopping at [SEP])."""
    model.eval()
    g = torch.Generator().manual_seed(seed)
    seq = list(encode_sentence(tok, prompt.split(), model.cfg.max_len)[:-1])   # [CLS] pieces
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
    """{word: (n_layers + 1, repeats)} nearest-sense accuracies per round (the lesson's draws)."""
    examples = load_wsd_sentences()
    out = {}
    for w in sorted({e.word for e in examples}):
        exs = [e for e in examples if e.word == w]
        senses = [e.sense for e in exs]
        rounds = []
        for layer in range(model.cfg.n_layers + 1):
            X = word_vectors(model, tok, [e.tokens for e in exs], [e.position for e in exs], layer)
            acc = nearest_sense_accuracy(X, senses, WSD_SUPPORT, make_rng(WSD_SEED), WSD_REPEATS)
            rounds.append(acc["per_round"])
        out[w] = np.stack(rounds)
    return out


def train(settings: dict, log: RunLog, max_steps: int | None = None, progress: bool = True, *,
          load=None) -> tuple[dict, dict, dict]:
    """Train the GPT of ``settings`` and measure it; return (arrays, meta, metrics). ``load(name)``
    returns a shipped model (the registry passes ``load_model``): the tokenizer is the shipped
    masked LM's. ``max_steps``: stop there (a replay of the first steps)."""
    if load is None:
        raise TypeError("gpt_contrast's train needs load=helpers.course.models.load_model")
    s = settings
    tok = load("mlm_bert").tok
    sents = mlm_sentences()
    train_seqs = encode_corpus(tok, sents["train"], s["max_len"])
    valid = sentence_batches(encode_corpus(tok, sents["valid"], s["max_len"]), tok.pad_id)
    model = new_encoder(TinyGPT, s, tok, train_seqs)
    opt = torch.optim.AdamW(model.parameters(), lr=s["lr"], weight_decay=s["weight_decay"],
                            betas=(0.9, 0.98))
    sched = warmup_linear_decay(opt, s["warmup"], s["max_steps"])
    rng, queue, lengths = make_rng(s["seed"]), [], [len(x) for x in train_seqs]
    c0 = time.process_time()

    def step(k):
        if not queue:
            queue.extend(length_bucketed_batches(lengths, s["batch_size"], rng))
        ids, att = pad_batch([train_seqs[i] for i in queue.pop()], tok.pad_id)
        loss = causal_lm_loss(model, torch.as_tensor(ids), torch.as_tensor(att))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        return loss.item()

    def evaluate(k):
        ev = next_piece_scores(model, valid)
        return {"valid_nll": ev["nll"], "valid_acc": ev["accuracy"],
                "lr": opt.param_groups[0]["lr"]}

    run = train_steps(step, s["max_steps"], log, evaluate=evaluate, eval_every=s["eval_every"],
                      eval_at_end=True, curve=("step", "valid_nll", "valid_acc", "train_loss"),
                      limit=max_steps, desc="GPT pre-training", progress=progress,
                      cap_reason=f"the step cap max_steps={s['max_steps']} (the learning rate "
                                 "reaches 0 there)")
    model.eval()
    metrics = {"steps": run.steps, "train_cpu_seconds": time.process_time() - c0}
    if max_steps is not None:
        return {}, {"settings": dict(s)}, metrics
    test_seqs = encode_corpus(tok, sents["test"], s["max_len"])
    test = next_piece_scores(model, sentence_batches(test_seqs, tok.pad_id))
    left = fill_from_the_left(model, fixed_eval_batches(tok, test_seqs, seed=TEST_SEED))
    samples = [sample(model, tok, p, s["sample_pieces"], s["temperature"], s["seed"] + k)
               for k, p in enumerate(s["prompts"])]
    arrays = {"fill/right": left["right"], "fill/count": left["count"],
              **{f"wsd/{w}": r for w, r in wsd_rounds(model, tok).items()},
              "samples": strings_to_array(samples),
              **{f"curve/{k}": np.asarray(v) for k, v in run.curve.items()}}
    metrics.update(test_nll=test["nll"], test_acc=test["accuracy"], fill_left_acc=left["accuracy"],
                   fill_left_nll=left["nll"], valid_nll=run.curve["valid_nll"][-1])
    meta = {"settings": dict(s), "config": asdict(model.cfg), "metrics": metrics,
            "valid_seed": VALID_SEED, "test_seed": TEST_SEED, "n_test_next_pieces": test["n"],
            "data": "the shipped masked LM's training sentences and tokenizer; validation and "
                    "test splits alike"}
    return arrays, meta, metrics


def subset_metric(result: GPTContrast) -> tuple[str, float]:
    """('fill_left_acc', the fill-from-the-left accuracy) from the stored per-sentence counts,
    which must give the recorded metric."""
    acc = float(result.fill_right.sum() / result.fill_count.sum())
    if abs(acc - result.metrics["fill_left_acc"]) > 1e-12:
        raise ValueError(f"the stored per-sentence counts give {acc}, the record says "
                         f"{result.metrics['fill_left_acc']}")
    return "fill_left_acc", acc
