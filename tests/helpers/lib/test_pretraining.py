"""helpers.lib.pretraining: corpus, masked batches, the unigram baseline, steps, warm-up."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import pretraining as PT
from helpers.lib.bert import BertConfig, TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import IGNORE
from tests.props import budget, raises_naming
from training.mlm_bert import evaluate_mlm, mlm_update

SENTS = [s.split() for s in [
    "the bank raised its interest rates", "we sat on the river bank",
    "the bank lent money to the firm", "the river flooded the bank",
    "she keeps her money in the bank", "fish swim in the river"]] * 6
TOK = BPETokenizer.train([w for s in SENTS for w in s], vocab_size=60)
CFG = BertConfig(vocab_size=len(TOK), dim=16, n_layers=2, n_heads=2, ff_dim=32, max_len=16,
                 dropout=0.0)


def pretrain(seqs, steps, seed=0):
    """``steps`` masked-LM steps as the shipped recipe takes them; returns (model, losses)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TinyBert(CFG, TOK.pad_id).train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01, betas=(0.9, 0.98))
    sched = PT.warmup_linear_decay(opt, 5, steps)
    rng, queue, lengths = np.random.default_rng(seed), [], [len(s) for s in seqs]
    losses = [mlm_update(model, opt, sched,
                            PT.next_masked_batch(seqs, lengths, queue, 16, TOK, rng))
              for _ in range(steps)]
    return model, losses


@budget(0.5)
@given(seed=st.integers(0, 3), max_len=st.integers(3, 8))
def test_held_out_batches_are_masked_once_and_the_unigram_baseline_counts_by_hand(seed, max_len):
    seqs = PT.encode_corpus(TOK, SENTS[:6], max_len)
    assert all(len(s) <= max_len and s[0] == TOK.cls_id for s in seqs)
    batches = PT.fixed_eval_batches(TOK, seqs, seed=seed, batch_size=2)
    assert sum(b.inputs.shape[0] for b in batches) == len(seqs)
    assert all(np.all(b.inputs[b.chosen] == TOK.mask_id) for b in batches)     # all [MASK]
    raises_naming(lambda: PT.unigram_baseline(TOK, [], batches), "empty", ValueError)
    if not any(b.chosen.any() for b in batches):
        raises_naming(lambda: PT.unigram_baseline(TOK, seqs, batches), "masked", ValueError)
        return
    base = PT.unigram_baseline(TOK, seqs, batches)
    targets = np.concatenate([b.labels[b.labels != IGNORE] for b in batches])
    counts = np.bincount(np.concatenate(seqs), minlength=len(TOK))
    counts[TOK.special_ids] = 0
    assert base["accuracy"] == np.mean(targets == counts.argmax())
    assert base["n_masked"] == len(targets) and base["nll"] > 0
    m = evaluate_mlm(TinyBert(CFG, TOK.pad_id), batches)
    assert 0 <= m["accuracy"] <= 1 and math.isfinite(m["nll"]) and m["n_masked"] == len(targets)
    x, y, att = PT.batch_to_torch(batches[0])
    assert x.dtype == torch.int64 and att.dtype == torch.bool
    raises_naming(lambda: PT.encode_corpus(TOK, [], max_len), "corpus", ValueError)


def test_a_few_steps_learn_and_the_same_seed_gives_the_same_steps():
    seqs = PT.encode_corpus(TOK, SENTS, 16)
    model, losses = pretrain(seqs, 60)
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.5
    held_out = PT.fixed_eval_batches(TOK, seqs[:16], seed=1)
    assert evaluate_mlm(model, held_out)["accuracy"] > \
        PT.unigram_baseline(TOK, seqs, held_out)["accuracy"]
    assert pretrain(seqs, 6)[1] == pretrain(seqs, 6)[1] != pretrain(seqs, 6, seed=1)[1]


def test_a_training_batch_is_masked_80_10_10_and_refuses_empty_sentences():
    seqs = PT.encode_corpus(TOK, SENTS[:4], 16)
    queue = []
    b = PT.next_masked_batch(seqs, [len(s) for s in seqs], queue, 2, TOK, np.random.default_rng(0))
    assert b.inputs.shape[0] == 2 and len(queue) == 1 and b.chosen.any()
    assert np.all(b.labels[~b.attention_mask] == IGNORE)
    empty = [np.array([TOK.cls_id, TOK.sep_id])] * 2
    with pytest.raises(ValueError, match="hold no ordinary token"):
        PT.next_masked_batch(empty, [2, 2], [], 2, TOK, np.random.default_rng(0))


def test_the_schedule_warms_up_then_decays_to_zero():
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    sched = PT.warmup_linear_decay(opt, 4, 12)
    lrs = []
    for _ in range(12):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[:4] == [0.25, 0.5, 0.75, 1.0] and lrs[4] == 1.0 and lrs[-1] == 1 / 8
    assert opt.param_groups[0]["lr"] == 0.0
