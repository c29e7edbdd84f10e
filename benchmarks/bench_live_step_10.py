"""Lesson 10's live model: one training step of the NumPy masked LM against the same model in
PyTorch.

The model of lesson 10's live training (:class:`helpers.lib.bert.NumpyMaskedLM`, window 2, d = 64,
the shipped tokenizer's 4,000 pieces, tied output layer, float32), one step = forward, the
hand-written backward, clipping at 1 and lesson 01's AdamW (as the lesson's live training); in
PyTorch the same forward (:func:`helpers.lib.bert.numpy_mlm_torch_reference`'s computation,
float32), autograd, ``clip_grad_norm_`` and ``torch.optim.AdamW``. Both read the same real masked
batch of 64 training sentences. Checked before timing: the two give the same loss and gradients.

Run:  python benchmarks/bench_live_step_10.py [--repeats 30]
"""
from __future__ import annotations

import argparse

import numpy as np
import torch
from step_timing import compare_steps  # the benchmarks' shared timer, beside this file
from torch.nn import functional as F

from helpers.course.mlm_model import mlm_sentences
from helpers.course.models import load_model
from helpers.lib.bert import NumpyMaskedLM, numpy_mlm_torch_reference
from helpers.lib.mlm import IGNORE
from helpers.lib.optim import AdamW, clip_global_norm
from helpers.lib.pretraining import encode_corpus, next_masked_batch

DIM, WINDOW, BATCH, LR = 64, 2, 64, 1e-2


def torch_loss(params, ids, labels, att, window):
    """The NumPy model's forward in torch (float32): window, context mean, tanh, tied output."""
    E, W, b, b_out = params
    m = att[..., None].to(E.dtype)
    x = E[ids] * m
    c = x.sum(1) / m.sum(1)
    rows, cols = torch.nonzero(labels != IGNORE, as_tuple=True)
    xp = F.pad(x, (0, 0, window, window))
    z = torch.cat(
        [xp[rows, cols + window + o] for o in range(-window, window + 1)] + [c[rows]], dim=1
    )
    h = torch.tanh(z @ W + b)
    return F.cross_entropy(F.linear(h, E, b_out), labels[rows, cols])


def main(repeats: int = 30) -> dict:
    tok = load_model("mlm_bert").tok
    train = encode_corpus(tok, mlm_sentences()["train"][:5000], 64)
    batch = next_masked_batch(
        train, [len(s) for s in train], [], BATCH, tok, np.random.default_rng(0)
    )
    model = NumpyMaskedLM(
        len(tok), DIM, np.random.default_rng(0), dtype=np.float32, window=WINDOW, embed_scale=0.1
    )

    # the same numbers first (float64 reference of the NumPy computation)
    loss = model.forward(batch.inputs, batch.labels, batch.attention_mask)
    model.backward()
    t_loss, t_params = numpy_mlm_torch_reference(
        [p.astype(np.float64) for p in model.params],
        batch.inputs,
        batch.labels,
        batch.attention_mask,
        window=WINDOW,
    )
    assert abs(loss - t_loss.item()) < 1e-4, (loss, t_loss.item())
    for g, p in zip(model.grads, t_params, strict=True):
        assert np.allclose(g, p.grad.numpy(), rtol=1e-3, atol=1e-6)

    adamw = AdamW(lr=LR, weight_decay=0.01, beta2=0.98)

    def numpy_step():
        model.forward(batch.inputs, batch.labels, batch.attention_mask)
        model.backward()
        clip_global_norm(model.grads, 1.0)
        adamw.update(model.params, model.grads)

    tparams = [torch.tensor(p.copy(), requires_grad=True) for p in model.params]
    opt = torch.optim.AdamW(tparams, lr=LR, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01)
    ids, labels, att = (
        torch.as_tensor(a) for a in (batch.inputs, batch.labels, batch.attention_mask)
    )

    def torch_step():
        opt.zero_grad(set_to_none=True)
        torch_loss(tparams, ids, labels, att, WINDOW).backward()
        torch.nn.utils.clip_grad_norm_(tparams, 1.0)
        opt.step()

    print(
        f"batch: {BATCH} sentences, {int(batch.attention_mask.sum())} pieces, "
        f"{int((batch.labels != IGNORE).sum())} masked; model: V = {len(tok)}, d = {DIM}, window "
        f"{WINDOW}, float32"
    )
    return compare_steps(
        "lesson 10 NumPy masked LM (window 2, d 64)", numpy_step, torch_step, repeats=repeats
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    main(ap.parse_args().repeats)
