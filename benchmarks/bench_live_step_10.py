"""Lesson 10's live model: one training step of the NumPy encoder against the same model in PyTorch.

The model of lesson 10's live training (:class:`helpers.lib.encoder_numpy.NumpyEncoder`: one
block, d = 64, two heads, feed-forward 128, the shipped tokenizer's 4,000 pieces, tied output layer,
float32), one step = forward, the hand-written backward, clipping at 1 and lesson 01's Adam (as the
lesson's live training); in PyTorch the same :class:`helpers.lib.bert.TinyBert` (no dropout),
autograd, ``clip_grad_norm_`` and ``torch.optim.Adam``. Both read the same real masked batch of 64
training sentences. Checked before timing: the two give the same loss.

Run:  python benchmarks/bench_live_step_10.py [--repeats 30]
"""
from __future__ import annotations

import argparse

import numpy as np
import torch
from step_timing import compare_steps  # the benchmarks' shared timer, beside this file

from helpers.course.mlm_model import mlm_sentences
from helpers.course.models import load_model
from helpers.lib.bert import BertConfig, TinyBert, masked_lm_loss
from helpers.lib.encoder_numpy import NumpyEncoder
from helpers.lib.mlm import IGNORE
from helpers.lib.optim import Adam, clip_global_norm
from helpers.lib.pretraining import encode_corpus, next_masked_batch

DIM, HEADS, FF, BATCH, LR = 64, 2, 128, 64, 1e-2


def main(repeats: int = 30) -> dict:
    tok = load_model("mlm_bert").tok
    train = encode_corpus(tok, mlm_sentences()["train"][:5000], 64)
    lengths, rng = [len(s) for s in train], np.random.default_rng(0)
    batch = next_masked_batch(train, lengths, [], BATCH, tok, rng)
    cfg = BertConfig(vocab_size=len(tok), dim=DIM, n_layers=1, n_heads=HEADS, ff_dim=FF, max_len=64,
                     dropout=0.0)
    torch.manual_seed(0)
    tmodel = TinyBert(cfg, tok.pad_id)
    model = NumpyEncoder.from_torch(tmodel, dtype=np.float32)
    ids, labels, att = (torch.as_tensor(a)
                        for a in (batch.inputs, batch.labels, batch.attention_mask))

    loss = model.masked_lm_step(batch.inputs, batch.labels, batch.attention_mask)
    t_loss = masked_lm_loss(tmodel, ids, labels, att).item()
    assert abs(loss - t_loss) < 1e-4, (loss, t_loss)

    adam = Adam(lr=LR)

    def numpy_step():
        model.masked_lm_step(batch.inputs, batch.labels, batch.attention_mask)
        clip_global_norm(model.grads, 1.0)
        adam.step(model.params, model.grads)

    opt = torch.optim.Adam(tmodel.parameters(), lr=LR)

    def torch_step():
        opt.zero_grad(set_to_none=True)
        masked_lm_loss(tmodel, ids, labels, att).backward()
        torch.nn.utils.clip_grad_norm_(tmodel.parameters(), 1.0)
        opt.step()

    print(f"batch: {BATCH} sentences, {int(batch.attention_mask.sum())} pieces, "
          f"{int((batch.labels != IGNORE).sum())} masked; "
          f"model: V = {len(tok)}, d = {DIM}, float32")
    return compare_steps("lesson 10 NumPy encoder (1 block, d 64)", numpy_step, torch_step,
                         repeats=repeats)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    main(ap.parse_args().repeats)
