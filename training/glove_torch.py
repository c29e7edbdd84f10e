"""GloVe's trainers in PyTorch: glove.c's per-pair AdaGrad in batches (:func:`train_pairwise`,
the trainer of the shipped ``wv_glove``; lesson 08's NumPy trainer takes the same steps) and AdaGrad
on each batch's summed gradient with ``torch.optim.Adagrad`` (:func:`train_torch`, the benchmarks').

:func:`train_torch` sums a row's gradients over a batch *before* AdaGrad divides by sqrt(G), so a
frequent word's first steps have length about lr in every coordinate: it needs a larger rate (0.5).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from helpers.infra.progress import progress_bar
from helpers.infra.seeding import choose_device
from helpers.lib.checks import check_ids, check_whole
from helpers.lib.glove import cooccurrence_entries, glove_init, glove_weight


@dataclass
class GloVeVectors:
    """A trained GloVe model.

    W, W~ (V, D) float32, biases b, b~ (V,), the vocabulary (or None), seconds of training, the
    loss J / P of each epoch, the hyperparameters, and any metrics recorded per epoch."""

    W: np.ndarray
    W_tilde: np.ndarray
    b: np.ndarray
    b_tilde: np.ndarray
    vocab: object = None
    seconds: float = 0.0
    epoch_loss: list = field(default_factory=list)
    config: dict = field(default_factory=dict)
    epoch_metrics: list = field(default_factory=list)

    def vectors(self, which: str = "W+W~") -> np.ndarray:
        """'W+W~' (the paper's choice) or 'W' (word vectors alone): (V, D) float32."""
        if which in ("W+W~", "W+C", "sum"):
            return self.W + self.W_tilde
        if which == "W":
            return self.W
        raise ValueError(f"which must be 'W+W~' or 'W', got {which!r}")


class GloVeTorch(torch.nn.Module):
    """GloVe's loss in PyTorch (the benchmarks' trainer).

    W, W~ (V, D) and b, b~ (V, 1) as ``nn.Embedding``; ``forward(rows (P,), cols (P,), log_x (P,),
    f (P,)) -> J``, Σ f e² over the batch."""

    def __init__(self, vocab_size: int, dim: int, sparse: bool = False):
        super().__init__()
        self.W = torch.nn.Embedding(vocab_size, dim, sparse=sparse)
        self.W_tilde = torch.nn.Embedding(vocab_size, dim, sparse=sparse)
        self.b = torch.nn.Embedding(vocab_size, 1, sparse=sparse)
        self.b_tilde = torch.nn.Embedding(vocab_size, 1, sparse=sparse)

    def load_numpy(self, params):
        """Copy the NumPy arrays [W, W~, b, b~] in."""
        params = list(params)
        if len(params) != 4:
            raise ValueError(f"load_numpy expects the four arrays [W, W~, b, b~], got "
                             f"{len(params)}")
        with torch.no_grad():
            for emb, p in zip((self.W, self.W_tilde, self.b, self.b_tilde), params, strict=True):
                emb.weight.copy_(torch.as_tensor(np.asarray(p).reshape(emb.weight.shape)))
        return self

    def forward(self, rows, cols, log_x, f):
        V = self.W.num_embeddings
        rows = check_ids(rows, V, "rows", "GloVeTorch.forward", noun="word ids")
        cols = check_ids(cols, V, "cols", "GloVeTorch.forward", noun="word ids")
        e = ((self.W(rows) * self.W_tilde(cols)).sum(1) + self.b(rows)[:, 0]
             + self.b_tilde(cols)[:, 0] - log_x)
        return (f * e * e).sum()


def pairwise_step_torch(params, G, r, c, log_x, f, lr: float) -> float:
    """One batch of glove.c's AdaGrad, in place (lesson 08 §4 does the same in NumPy).

    Every pair (r[p], c[p]) takes glove.c's step from the parameters and sums at the batch's
    start; a row's steps (and squared steps) add. params = (W, W~, b, b~) and G (their AdaGrad
    sums): float32 tensors; r, c (m,) int64; log_x, f (m,) float32. Returns the batch's Σ f e²."""
    W, Wt, b, bt = params
    wr, wc = W[r], Wt[c]
    e = (wr * wc).sum(1) + b[r] + bt[c] - log_x
    fdiff = lr * f * e                                               # (m,): glove.c's lr·f·e
    for param, acc, ids, step in ((W, G[0], r, fdiff[:, None] * wc),
                                  (Wt, G[1], c, fdiff[:, None] * wr),
                                  (b, G[2], r, fdiff), (bt, G[3], c, fdiff)):
        scaled = step / torch.sqrt(acc[ids])                    # each pair: its own AdaGrad step
        param.index_add_(0, ids, -scaled)
        acc.index_add_(0, ids, step * step)
    return float((f * e * e).sum())


def train_pairwise(counts, dim: int = 100, epochs: int = 10, lr: float = 0.05,
                   x_max: float = 100.0, alpha: float = 0.75, batch_size: int = 4096, seed: int = 0,
                   vocab=None, progress: bool = True, epoch_end=None, checkpoint=None,
                   checkpoint_every: int = 0) -> GloVeVectors:
    """GloVe with glove.c's per-pair AdaGrad, in batches: the trainer of the shipped GloVe.

    glove.c visits the pairs one by one: with fdiff = lr f(x) e it steps
    w_i -= fdiff w~_j / sqrt(G_wi), then G_wi += (fdiff w~_j)^2 (elementwise; the same for w~_j,
    b_i, b~_j, every accumulator started at 1). Here each pair of a batch takes exactly that step
    from the parameters and sums at the batch's start, and a row's steps add: with
    ``batch_size=1`` this is glove.c. The initialisation (:func:`helpers.lib.glove.glove_init`, from
    ``np.random.default_rng(seed)``) and each epoch's order (``torch.randperm`` from
    ``torch.Generator().manual_seed(seed)``) are seeded, so lesson 08's NumPy trainer visits the
    pairs in the same order.

    ``epoch_end(epoch, W + W~, J / P) -> bool`` runs after each epoch, ``checkpoint(pairs_seen,
    W + W~) -> bool`` every ``checkpoint_every`` pairs; True stops training. Returns a
    :class:`GloVeVectors` (epoch_loss: J / P of each finished epoch)."""
    check_whole(dim, "dim", "train_pairwise", minimum=1)
    check_whole(epochs, "epochs", "train_pairwise", minimum=1)
    check_whole(batch_size, "batch_size", "train_pairwise", minimum=1)
    if not (lr > 0 and np.isfinite(lr)):
        raise ValueError(f"the learning rate must be positive, got {lr}")
    rows, cols, x = cooccurrence_entries(counts)
    if vocab is not None and len(vocab) != counts.shape[0]:
        raise ValueError(f"train_pairwise: vocab has {len(vocab)} words but counts is "
                         f"{counts.shape[0]} x {counts.shape[1]}; row i of the co-occurrence "
                         "matrix is word i of the vocabulary (build both from the same Vocab)")
    if checkpoint is not None and checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be a positive number of pairs, got "
                         f"{checkpoint_every}")
    V = counts.shape[0]
    init = glove_init(V, dim, np.random.default_rng(seed))
    W, Wt, b, bt = (torch.from_numpy(p) for p in init)
    G = [torch.ones_like(p) for p in (W, Wt, b, bt)]
    r_all, c_all = torch.from_numpy(rows), torch.from_numpy(cols)
    logx = torch.from_numpy(np.log(x).astype(np.float32))
    f_all = torch.from_numpy(glove_weight(x, x_max, alpha).astype(np.float32))
    gen = torch.Generator().manual_seed(seed)
    P = len(x)
    bar = progress_bar(total=epochs * P, desc="GloVe pairwise", unit="pair", unit_scale=True,
                       disable=not progress)
    epoch_loss, t0, seen, stop = [], time.perf_counter(), 0, False
    with torch.no_grad():
        for epoch in range(1, epochs + 1):
            order = torch.randperm(P, generator=gen)
            total = 0.0
            for s in range(0, P, batch_size):
                idx = order[s:s + batch_size]
                total += pairwise_step_torch((W, Wt, b, bt), G, r_all[idx], c_all[idx],
                                             logx[idx], f_all[idx], lr)
                bar.update(len(idx))
                seen += len(idx)
                every = checkpoint_every
                if checkpoint is not None and seen // every > (seen - len(idx)) // every:
                    stop = bool(checkpoint(seen, (W + Wt).numpy()))
                    if stop:
                        break
            if stop:
                break
            epoch_loss.append(total / P)
            bar.set_postfix(loss=f"{epoch_loss[-1]:.4f}")
            if epoch_end is not None and epoch_end(epoch, (W + Wt).numpy(), epoch_loss[-1]):
                break
    bar.close()
    cfg = dict(impl="pairwise", dim=dim, epochs=epochs, lr=lr, x_max=x_max, alpha=alpha,
               batch_size=batch_size, seed=seed)
    return GloVeVectors(W.numpy().copy(), Wt.numpy().copy(), b.numpy().copy(), bt.numpy().copy(),
                        vocab, time.perf_counter() - t0, epoch_loss, cfg)


def train_torch(counts, dim: int = 100, epochs: int = 10, lr: float = 0.5, x_max: float = 100.0,
                alpha: float = 0.75, batch_size: int = 65536, seed: int = 0, vocab=None,
                device: str | None = None, progress: bool = True, threads: int | None = None,
                evaluate=None) -> GloVeVectors:
    """GloVe fitted to ``counts`` (V, V) by AdaGrad on each batch's summed gradient.

    Same objective and initialisation as :func:`train_pairwise`; AdaGrad's sums
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
    init = glove_init(V, dim, np.random.default_rng(seed))
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
