"""Lesson 08's live training step: the NumPy GloVe trainer against the same step in PyTorch.

One step is one batch of 1,024 co-occurring pairs of the course corpus (window 10, 4.7M pairs,
15,824 words, 100 dimensions), each pair taking glove.c's AdaGrad step:

- NumPy: :meth:`helpers.lib.glove.PairwiseGloVe.step`, the code lesson 08 trains live
  (with the course's cell gradient and AdaGrad step, the functions the student's replace);
- PyTorch: :func:`training.glove_torch.pairwise_step_torch`, one batch of the trainer of the shipped
  model (``make models NAME=wv_glove``), on the same pairs in the same order.

Both on one thread, interleaved, median of repeats (:func:`benchmarks.step_timing.compare_steps`;
target: NumPy at most 2x PyTorch).

    python benchmarks/bench_live_step_08.py
"""
from __future__ import annotations

import numpy as np
import torch
from step_timing import compare_steps  # benchmarks/ (the script's folder) is on the path

from helpers.course.models import model_info
from helpers.course.word_vectors import glove_counts
from helpers.lib.glove import PairwiseGloVe, glove_weight
from training.glove_torch import pairwise_step_torch


def main() -> dict:
    s = model_info("wv_glove")["settings"]            # the shipped GloVe's
    counts = glove_counts(s["window"])
    model = PairwiseGloVe(counts, dim=s["dim"], lr=s["lr"], x_max=s["x_max"], alpha=s["alpha"],
                          batch_size=s["batch_size"], seed=s["seed"])
    params = [torch.from_numpy(p.copy()) for p in model.params]
    G = [torch.ones_like(p) for p in params]
    rows, cols = torch.from_numpy(model.rows), torch.from_numpy(model.cols)
    log_x = torch.from_numpy(np.log(model.x))
    f = torch.from_numpy(glove_weight(model.x, s["x_max"], s["alpha"]).astype(np.float32))
    order = torch.from_numpy(model.order.copy())
    position = [0]

    def torch_step():
        idx = order[position[0]:position[0] + s["batch_size"]]
        position[0] = (position[0] + s["batch_size"]) % (len(order) - s["batch_size"])
        with torch.no_grad():
            return pairwise_step_torch(params, G, rows[idx], cols[idx], log_x[idx], f[idx], s["lr"])

    print(f"GloVe, {counts.nnz:,} pairs, {counts.shape[0]:,} words, {s['dim']} dimensions, "
          f"batches of {s['batch_size']:,} pairs (lr {s['lr']:g}, x_max {s['x_max']:g})")
    return compare_steps(
        "lesson 08 live GloVe step (NumPy PairwiseGloVe vs PyTorch pairwise_step_torch)",
        model.step,
        torch_step,
        repeats=200,
    )


if __name__ == "__main__":
    main()
