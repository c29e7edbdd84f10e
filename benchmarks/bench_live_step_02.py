"""One training step of lesson 02's live model, NumPy against PyTorch, same run.

The model: lesson 02's character RNN language model (``helpers.lib.recurrent.NumpyLM``, kind
'rnn': embedding 64 -> tanh RNN 128 with the hand-written ``rnn_bptt`` -> linear over the 84
characters -> softmax cross-entropy), trained as the lesson trains it: a batch of 32 windows of 64
characters, the forward pass, the backward pass through time, global-norm clipping at 1, an Adam
step (learning rate 3e-3). The PyTorch step is the same model (``nn.Embedding``, ``nn.RNN``,
``nn.Linear``, ``clip_grad_norm_``, ``torch.optim.Adam``) on the same batch, float32 both, one
thread, interleaved (:func:`benchmarks.step_timing.compare_steps`). The two start from the same
weights and their first losses are checked equal before timing. Target: NumPy at most 2x PyTorch.

Run:  python benchmarks/bench_live_step_02.py [--repeats 30]
"""
from __future__ import annotations

import argparse

import numpy as np
import torch
from step_timing import compare_steps  # benchmarks/ is the script's folder, so on sys.path

from helpers.lib.optim import Adam, clip_global_norm
from helpers.lib.recurrent import NumpyLM


def steps(kind: str = "rnn", V=84, D=64, H=128, B=32, T=64, lr=3e-3, clip=1.0):
    """(numpy_step, torch_step) of the same model on the same batch, from the same weights."""
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))
    torch.manual_seed(0)
    embed, rnn = (
        torch.nn.Embedding(V, D),
        {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM}[kind](D, H, batch_first=True),
    )
    out = torch.nn.Linear(H, V)
    module = torch.nn.Module()
    module.embed, module.rnn, module.out = embed, rnn, out
    ours = NumpyLM.from_torch(module)                      # the same weights, float32
    params = list(module.parameters())
    opt_t, opt_np = torch.optim.Adam(params, lr=lr), Adam(lr)
    xt, yt = torch.as_tensor(x), torch.as_tensor(y)

    def numpy_step():
        loss = ours.train_loss(x, y)
        clip_global_norm(ours.grads, clip)
        opt_np.step(ours.params, ours.grads)
        return loss

    def torch_step():
        h, _ = rnn(embed(xt))
        loss = torch.nn.functional.cross_entropy(out(h).reshape(-1, V), yt.reshape(-1))
        opt_t.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, clip)
        opt_t.step()
        return loss.item()

    first_np = ours.loss(x, y)
    with torch.no_grad():
        h, _ = rnn(embed(xt))
        first_t = float(torch.nn.functional.cross_entropy(out(h).reshape(-1, V), yt.reshape(-1)))
    if not np.isclose(first_np, first_t, rtol=1e-5):
        raise AssertionError(
            f"the NumPy and PyTorch models differ before timing: {first_np} vs {first_t}"
        )
    return numpy_step, torch_step


def main(repeats: int = 30) -> dict:
    numpy_step, torch_step = steps("rnn")
    return compare_steps("lesson 02, character RNN LM (batch 32 x 64, H 128), one training step",
                         numpy_step, torch_step, repeats=repeats)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    main(parser.parse_args().repeats)
