"""Benchmark: a training step of lesson 04's live NumPy Transformer against the same in PyTorch.

The live model of lesson 04 (section 8): :class:`helpers.lib.decoder.NumpyDecoderLM` with 2 Pre-LN
blocks, d = 64, 4 heads, learned positions, windows of 64 characters, batches of 16, float32. One
step is what the lesson's ``train_step`` does: a random batch of Shakespeare, the forward pass and
the cross-entropy, the hand-written backward pass, then clipping at 1 and an Adam update
(:func:`helpers.lib.optim.clip_global_norm`, :class:`helpers.lib.optim.Adam`). The PyTorch step is
the same model, :class:`helpers.lib.transformer.DecoderLM` (its weights copied into the NumPy model
with :meth:`NumpyDecoderLM.from_torch`), with autograd, ``clip_grad_norm_`` and
``torch.optim.Adam`` on the same shapes. :func:`benchmarks.step_timing.compare_steps` times both
on one thread, interleaved, and prints the medians and their ratio (target: NumPy at most 2x
PyTorch). The losses of the first step, from the same weights and batch, are the quality check.

Run:  python benchmarks/bench_live_step_04.py [--repeats N]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))      # step_timing sits beside this file
from step_timing import compare_steps  # noqa: E402

from helpers.course.char_live import live_split, random_batch  # noqa: E402
from helpers.lib.decoder import NumpyDecoderLM  # noqa: E402
from helpers.lib.optim import Adam, clip_global_norm  # noqa: E402
from helpers.lib.transformer import DecoderLM, TransformerConfig  # noqa: E402

SETTINGS = dict(d_model=64, n_heads=4, n_layers=2, max_len=64, norm="pre", positions="learned")
BATCH, CONTEXT, LR = 16, 64, 6e-3


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    split = live_split()
    torch_model = DecoderLM(TransformerConfig(split.V, **SETTINGS), seed=0)
    model = NumpyDecoderLM.from_torch(torch_model, dtype=np.float32)
    x0, y0 = random_batch(split.train, BATCH, CONTEXT, np.random.default_rng(1))
    first_np = model.loss(x0, y0)
    first_torch = F.cross_entropy(torch_model(torch.as_tensor(x0)).flatten(0, 1),
                                  torch.as_tensor(y0).flatten()).item()
    print(f"same weights, same batch: loss NumPy {first_np:.6f}, PyTorch {first_torch:.6f}")

    rng_np, rng_torch = np.random.default_rng(0), np.random.default_rng(0)
    numpy_opt = Adam(LR, beta2=0.99)

    def numpy_step():
        x, y = random_batch(split.train, BATCH, CONTEXT, rng_np)
        loss = model.loss(x, y)
        model.backward()
        clip_global_norm(model.grads, 1.0)
        numpy_opt.step(model.params, model.grads)
        return loss

    opt = torch.optim.Adam(torch_model.parameters(), lr=LR, betas=(0.9, 0.99))

    def torch_step():
        x, y = random_batch(split.train, BATCH, CONTEXT, rng_torch)
        logits = torch_model(torch.as_tensor(x)).flatten(0, 1)
        loss = F.cross_entropy(logits, torch.as_tensor(y).flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(torch_model.parameters(), 1.0)
        opt.step()
        return loss.item()

    return compare_steps("lesson 04 live Transformer (2 blocks, d=64, batch 16 x 64)", numpy_step,
                         torch_step, repeats=args.repeats)


if __name__ == "__main__":
    main()
