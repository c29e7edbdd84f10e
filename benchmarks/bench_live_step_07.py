"""Lesson 07's live training step, NumPy against PyTorch: one SGD step of skip-gram with negative
sampling on a batch of 1,024 pairs (k = 5 noise words, d = 100, the course vocabulary's size),
gradients written out in both (no autograd, as in the course's PyTorch trainer).

    python benchmarks/bench_live_step_07.py

NumPy: :func:`helpers.lib.sgns.sgd_step` with :func:`helpers.lib.sgns.ns_loss_and_gradients`, the
course's versions of the lesson's Exercises 3 and 4 (gather, gradients, sparse scatter, update).
PyTorch: the same step as :func:`training.word2vec_trainers.train_torch` takes it (``index_select``,
``sigmoid(s) − t``, ``index_add_``). Both start from the same tables and draw their ids from the
same Zipf distribution; each call trains on the next of 64 fixed batches, so the tables move as in
a real run. Also printed: the step with ``np.add.at`` in place of the sparse scatter (what a student
is likely to write), and the quality side, the loss both steps reach on the same batches.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_timing import compare_steps  # noqa: E402

from helpers.lib import sgns  # noqa: E402

V, D, B, K, LR, N_BATCHES = 15_824, 100, 1024, 5, 0.025, 64


def _batches(seed: int = 0):
    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, V + 1)
    zipf /= zipf.sum()
    return [
        (
            rng.choice(V, B, p=zipf),
            rng.choice(V, B, p=zipf),
            rng.choice(V, (B, K), p=zipf**0.75 / (zipf**0.75).sum()),
        )
        for _ in range(N_BATCHES)
    ]


def _add_at_step(W, C, centers, contexts, negatives, lr, gradients):
    loss, dv, du_o, dU_neg = gradients(W[centers], C[contexts], C[negatives])
    np.add.at(W, centers, -lr * dv)
    np.add.at(C, np.concatenate([contexts, negatives.reshape(-1)]),
              -lr * np.concatenate([du_o, dU_neg.reshape(len(centers) * negatives.shape[1], -1)]))
    return float(np.mean(loss)), W, C


def main() -> None:
    rng = np.random.default_rng(1)
    W0 = ((rng.random((V, D)) - 0.5) / D).astype(np.float32)
    C0 = (rng.standard_normal((V, D)) * 0.1).astype(np.float32)
    batches = _batches()
    tb = [tuple(torch.from_numpy(a.astype(np.int64)) for a in b) for b in batches]

    state = {"W": W0.copy(), "C": C0.copy(), "i": 0, "W_add": W0.copy(), "C_add": C0.copy(), "j": 0}
    Wt, Ct = torch.from_numpy(W0.copy()), torch.from_numpy(C0.copy())
    count = {"t": 0}

    def numpy_step():
        c, o, n = batches[state["i"] % N_BATCHES]
        state["i"] += 1
        return sgns.sgd_step(state["W"], state["C"], c, o, n, LR, sgns.ns_loss_and_gradients)

    def add_at_step():
        c, o, n = batches[state["j"] % N_BATCHES]
        state["j"] += 1
        return _add_at_step(state["W_add"], state["C_add"], c, o, n, LR, sgns.ns_loss_and_gradients)

    def torch_step():
        c, o, n = tb[count["t"] % N_BATCHES]
        count["t"] += 1
        with torch.no_grad():
            targets = torch.cat([o[:, None], n], dim=1)                       # (B, 1 + k)
            v = Wt.index_select(0, c)                                         # (B, D)
            u = Ct.index_select(0, targets.reshape(-1)).view(B, 1 + K, D)     # (B, 1 + k, D)
            s = (u * v[:, None, :]).sum(2)
            loss = (
                torch.nn.functional.softplus(-s[:, 0])
                + torch.nn.functional.softplus(s[:, 1:]).sum(1)
            ).mean()
            g = torch.sigmoid(s)
            g[:, 0] -= 1                                                      # dL/ds = σ(s) − t
            g *= -LR
            Wt.index_add_(0, c, (g[:, :, None] * u).sum(1))
            Ct.index_add_(0, targets.reshape(-1), (g[:, :, None] * v[:, None, :]).view(-1, D))
            return float(loss)

    row = compare_steps(
        "lesson 07 skip-gram step (B=1024, k=5, d=100, |V|=15,824)",
        numpy_step,
        torch_step,
        repeats=60,
    )
    compare_steps(
        "   the same NumPy step with np.add.at for the scatter", add_at_step, torch_step, repeats=30
    )

    # the quality side: the same 64 batches once more from the start, both steps, mean loss of the
    # last 16
    W, C = W0.copy(), C0.copy()
    Wt.copy_(torch.from_numpy(W0))
    Ct.copy_(torch.from_numpy(C0))
    count["t"], losses_np, losses_t = 0, [], []
    for c, o, n in batches * 4:
        losses_np.append(sgns.sgd_step(W, C, c, o, n, LR, sgns.ns_loss_and_gradients)[0])
        losses_t.append(torch_step())
    print(
        f"mean loss of the last 16 of {4 * N_BATCHES} steps: NumPy {np.mean(losses_np[-16:]):.4f}, "
        f"PyTorch {np.mean(losses_t[-16:]):.4f}; largest |table difference| "
        f"{max(np.abs(W - Wt.numpy()).max(), np.abs(C - Ct.numpy()).max()):.1e}"
    )
    return row


if __name__ == "__main__":
    main()
