"""The trained word-level LMs of lessons 02 and 03 (:mod:`helpers.course.word_lms`), looked into: the gradient that reaches far back
in a trained recurrent layer, a live training beside the shipped run's curve, and the paired
block-bootstrap comparison of two models on the same test tokens. Shared by both lessons (02: the
RNN; 03: the GRU and the LSTM beside it).

``render_live_training`` is pure: ``(**control values) -> (Figure, summary str)``; the notebooks
wrap it in :class:`helpers.infra.widgets.Explorer` and the tests call it directly.
"""
from __future__ import annotations

import numpy as np
import torch

from helpers.course.word_lms import SETTINGS
from helpers.infra.plotting import COLOURS, GREY_DARK, log_axis, new_figure, set_labels
from helpers.lib.language_models import perplexity
from helpers.lib.rnn_lm import (
    LMData,
    RecurrentLM,
    detach_state,
    endless_batches,
    evaluate_nll,
    to_numpy_layers,
)


# ---------------------------------------------------------------- the trained model, looked into
def trained_gradient_flow(model: RecurrentLM, ids: np.ndarray, T: int = 60, batch: int = 32,
                          seed: int = 0) -> np.ndarray:
    """||dL/dh_{T-k}|| for k = 0..T-1 in the *trained* model on real text: ``batch`` windows of
    ``T`` tokens from ``ids`` (random starts, seeded), the loss the cross-entropy of the word after
    the last one, backpropagated through the NumPy copy of the trained layer
    (:func:`helpers.lib.rnn_lm.to_numpy_layers`). Mean over the windows, shape (T,)."""
    E, layer, W_out, b_out = to_numpy_layers(model)
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(ids) - T - 1, batch)
    x = np.stack([ids[s:s + T] for s in starts])
    y = np.array([ids[s + T] for s in starts])
    hs = layer.forward(E[x])
    logits = hs[:, -1] @ W_out.T + b_out
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(batch), y] -= 1                                  # dL/dlogits of the summed cross-entropy
    dhs = np.zeros_like(hs)
    dhs[:, -1] = p @ W_out
    layer.backward(dhs)
    return np.linalg.norm(layer.dh_all, axis=2).mean(axis=0)[::-1]


def render_live_training(steps: int = 40, *, data: LMData, shipped_curve: dict, eval_every: int = 20,
                         kind: str = "rnn"):
    """Explorer: train the shipped ``kind`` LM's architecture ('rnn', 'gru', 'lstm') from scratch
    for ``steps`` steps with the shipped settings (same data, batches and seed, so the first steps
    are the shipped run's), measuring the whole-validation perplexity every ``eval_every`` steps,
    drawn over the shipped run's validation curve (same evaluation data)."""
    s = SETTINGS[kind]
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = RecurrentLM(len(data.vocab), kind, s["emb_dim"], s["hidden"], seed=s["seed"]).train()
        opt = torch.optim.Adam(model.parameters(), lr=s["lr"])
        stream, state, live = endless_batches(data.train, s["batch_size"], s["seq_len"]), None, {"step": [], "valid_ppl": []}
        for step in range(1, steps + 1):
            x, y, fresh = next(stream)
            logits, state = model(torch.as_tensor(x), None if fresh else detach_state(state))
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.as_tensor(y).reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), s["clip"])
            opt.step()
            if step % eval_every == 0 or step == steps:
                live["step"].append(step)
                live["valid_ppl"].append(perplexity(evaluate_nll(model, data.valid)))
                model.train()
    finally:
        torch.set_num_threads(before)
    fig, ax = new_figure()
    ax.plot(shipped_curve["step"], shipped_curve["valid_ppl"], "o-", color=GREY_DARK, label="shipped run (make models)")
    ax.plot(live["step"], live["valid_ppl"], "s--", color=COLOURS["vermillion"], label=f"live run, {steps} steps")
    log_axis(ax, "y", ticks=[60, 80, 100, 150, 200, 300, 500, 1000, 2000])
    set_labels(ax, f"Validation perplexity of the {kind.upper()} LM (whole validation split)", "training step",
               "validation perplexity (log scale)")
    ax.legend()
    return fig, (f"live run: validation perplexity {live['valid_ppl'][-1]:.1f} after {steps} steps "
                 f"(the shipped run: {shipped_curve['valid_ppl'][0]:.1f} after {shipped_curve['step'][0]} steps)")


def block_bootstrap_diff(nll_a: np.ndarray, nll_b: np.ndarray, block: int = 500, n_boot: int = 2000,
                         seed: int = 0) -> tuple[float, float, float]:
    """Mean per-token NLL difference a - b (nats) over the same tokens, with a 95 % bootstrap
    interval that resamples contiguous blocks of ``block`` tokens (neighbouring tokens are not
    independent). Returns (difference, low, high)."""
    a, b = np.asarray(nll_a, np.float64), np.asarray(nll_b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"expected two 1-d arrays over the same tokens, got shapes {a.shape} and {b.shape}")
    d = a - b
    n_blocks = len(d) // block
    if n_blocks < 2:
        raise ValueError(f"need at least two blocks of {block} tokens, got {len(d)} tokens")
    means = d[:n_blocks * block].reshape(n_blocks, block).mean(axis=1)
    rng = np.random.default_rng(seed)
    boot = means[rng.integers(0, n_blocks, (n_boot, n_blocks))].mean(axis=1)
    return float(means.mean()), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))
