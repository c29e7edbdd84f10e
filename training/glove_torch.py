"""GloVe fitted with PyTorch autograd and ``torch.optim.Adagrad`` (the benchmarks' trainer).

The shipped GloVe is trained pair by pair (:func:`helpers.lib.glove.train_pairwise`). This
trainer sums a row's gradients over a batch *before* AdaGrad divides by sqrt(G), so a frequent
word's first steps have length about lr in every coordinate: it needs a larger rate (0.5).
"""
from __future__ import annotations

import time

import numpy as np
import torch

from helpers.infra.progress import progress_bar
from helpers.infra.seeding import choose_device
from helpers.lib.glove import (
    GloVeNumpy,
    GloVeTorch,
    GloVeVectors,
    cooccurrence_entries,
    glove_weight,
)


def train_torch(counts, dim: int = 100, epochs: int = 10, lr: float = 0.5, x_max: float = 100.0,
                alpha: float = 0.75, batch_size: int = 65536, seed: int = 0, vocab=None,
                device: str | None = None, progress: bool = True, threads: int | None = None,
                evaluate=None) -> GloVeVectors:
    """GloVe fitted to ``counts`` (V, V) by AdaGrad on each batch's summed gradient.

    Same objective and initialisation as :class:`helpers.lib.glove.GloVeNumpy`; AdaGrad's sums
    start at 1, as in glove.c. Every epoch visits all X_ij > 0 in a seeded order. ``threads``:
    torch's CPU threads (default 1, restored after). ``evaluate(W + W~) -> dict`` runs after every
    epoch outside the timed training; its results go to ``epoch_metrics``."""
    rows, cols, x = cooccurrence_entries(counts)
    if vocab is not None and len(vocab) != counts.shape[0]:
        raise ValueError(f"vocab has {len(vocab)} words but counts is {counts.shape[0]} x "
                         f"{counts.shape[1]}: build both from the same Vocab")
    if not (lr > 0 and np.isfinite(lr)) or dim < 1 or epochs < 1:
        raise ValueError(f"need lr > 0, dim >= 1 and epochs >= 1, got {lr}, {dim}, {epochs}")
    V = counts.shape[0]
    dev = choose_device(device)
    rng = np.random.default_rng(seed)
    init = GloVeNumpy(V, dim, rng, x_max, alpha, dtype=np.float32).params
    model = GloVeTorch(V, dim).load_numpy(init).to(dev)
    opt = torch.optim.Adagrad(model.parameters(), lr=lr, initial_accumulator_value=1.0, eps=1e-10)
    r_t, c_t = torch.from_numpy(rows).to(dev), torch.from_numpy(cols).to(dev)
    logx_t = torch.from_numpy(np.log(x).astype(np.float32)).to(dev)
    f_t = torch.from_numpy(glove_weight(x, x_max, alpha).astype(np.float32)).to(dev)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    P = len(x)
    old_threads = torch.get_num_threads()
    if threads is None and dev.type == "cpu":
        threads = 1
    if threads is not None:
        torch.set_num_threads(threads)
    bar = progress_bar(total=epochs * P, desc="GloVe PyTorch", unit="pair", unit_scale=True,
                       disable=not progress)
    epoch_loss, metrics, t0, t_eval = [], [], time.perf_counter(), 0.0
    try:
        for _ in range(epochs):
            order = torch.randperm(P, generator=gen).to(dev)
            total = 0.0
            for s in range(0, P, batch_size):
                idx = order[s:s + batch_size]
                J = model(r_t[idx], c_t[idx], logx_t[idx], f_t[idx])
                opt.zero_grad(set_to_none=True)
                J.backward()
                opt.step()
                total += float(J.detach())
                bar.update(len(idx))
            epoch_loss.append(total / P)
            bar.set_postfix(loss=f"{epoch_loss[-1]:.4f}")
            if evaluate is not None:
                te = time.perf_counter()
                with torch.no_grad():
                    vectors = (model.W.weight + model.W_tilde.weight).cpu().numpy()
                    metrics.append(dict(evaluate(vectors)))
                t_eval += time.perf_counter() - te
    finally:
        torch.set_num_threads(old_threads)
        bar.close()

    def get(emb):
        return emb.weight.detach().cpu().numpy().copy()

    cfg = dict(impl="torch", dim=dim, epochs=epochs, lr=lr, x_max=x_max, alpha=alpha,
               batch_size=batch_size, seed=seed, device=str(dev))
    return GloVeVectors(get(model.W), get(model.W_tilde), get(model.b)[:, 0],
                        get(model.b_tilde)[:, 0], vocab, time.perf_counter() - t0 - t_eval,
                        epoch_loss, cfg, metrics)
