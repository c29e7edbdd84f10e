"""The shipped word-level LMs of lessons 02 and 03, looked into: how much gradient reaches far
back in a trained recurrent layer (the same windows in both lessons), and the paired
block-bootstrap comparison of two models on the same test tokens."""
from __future__ import annotations

import numpy as np

from helpers.infra.plotting import COLOURS, log_axis, new_figure, set_labels
from helpers.lib.metrics import Interval, bootstrap_interval
from helpers.lib.rnn_lm import RecurrentLM, to_numpy_layers


def trained_gradient_flow(model: RecurrentLM, ids: np.ndarray, T: int = 60, windows: int = 256,
                          warm_up: int = 60, seed: int = 0) -> np.ndarray:
    """How much of the gradient reaches k words back in a *trained* model, window by window.

    ``windows`` windows of ``T`` words from ``ids`` (random starts, seeded: every model given the
    same ``ids`` and ``seed`` reads the same windows); the loss is the cross-entropy of the word
    after each window, backpropagated through the NumPy copy of the trained recurrent layer
    (:func:`helpers.lib.rnn_lm.to_numpy_layers`). Before each window the layer reads the
    ``warm_up`` words that precede it, so the window starts from a state like the ones the model
    meets in running text (as in training and evaluation) rather than from zeros.
    Returns (windows, T) float64: ||dL/dh_{T-k}|| / ||dL/dh_T|| for k = 0..T-1 (column 0 is 1)."""
    if T < 2 or windows < 2 or warm_up < 0:
        raise ValueError(f"need T >= 2, windows >= 2 and warm_up >= 0, got {T}, {windows}, "
                         f"{warm_up}")
    if len(ids) < warm_up + T + 2:
        raise ValueError(f"the text has {len(ids)} tokens, too few for windows of {warm_up} + {T} "
                         "+ 1")
    E, layer, W_out, b_out = to_numpy_layers(model)
    rng = np.random.default_rng(seed)
    starts = rng.integers(warm_up, len(ids) - T - 1, windows)
    x = np.stack([ids[s:s + T] for s in starts])
    y = np.asarray(ids)[starts + T]
    layer.stateful = True                         # the warm-up's last state starts the window
    layer.reset_state()
    if warm_up:
        layer.forward(E[np.stack([ids[s - warm_up:s] for s in starts])])
    hs = layer.forward(E[x])
    logits = hs[:, -1] @ W_out.T + b_out
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(windows), y] -= 1                                # dL/dlogits of the cross-entropy
    dhs = np.zeros_like(hs)
    dhs[:, -1] = p @ W_out
    layer.backward(dhs)
    norms = np.linalg.norm(layer.dh_all, axis=2)[:, ::-1]        # (windows, T), k = 0 first
    return norms / norms[:, :1]


def flow_at(ratios: np.ndarray, k: int, n_boot: int = 2000) -> Interval:
    """The typical share of the gradient that reaches ``k`` words back: the geometric mean over
    the windows of :func:`trained_gradient_flow`'s ratios, with a 95 % bootstrap interval over the
    windows. (The ratios span orders of magnitude, so a plain mean is the few largest windows.)"""
    logs = np.log10(np.asarray(ratios)[:, k])
    iv = bootstrap_interval(np.mean, logs, n_boot=n_boot)
    return Interval(10 ** iv.estimate, 10 ** iv.low, 10 ** iv.high, iv.level, iv.n_items, iv.n_boot)


def flow_ratio(ratios_a: np.ndarray, ratios_b: np.ndarray, k: int, n_boot: int = 2000) -> Interval:
    """How many times more gradient model a keeps ``k`` words back than model b, on the same
    windows: 10 ** (mean over windows of log10 a - log10 b), with a 95 % paired bootstrap
    interval (each resample draws windows, both models' values of a window together)."""
    a, b = np.log10(np.asarray(ratios_a)[:, k]), np.log10(np.asarray(ratios_b)[:, k])
    if a.shape != b.shape:
        raise ValueError(f"the two models must be measured on the same windows, got {a.shape} and "
                         f"{b.shape}")
    iv = bootstrap_interval(lambda u, v: float(np.mean(u - v)), a, b, n_boot=n_boot)
    return Interval(10 ** iv.estimate, 10 ** iv.low, 10 ** iv.high, iv.level, iv.n_items, iv.n_boot)


def plot_gradient_flow(flows: dict[str, np.ndarray], title: str,
                       styles: dict[str, tuple[str, str]] | None = None):
    """The typical share of the gradient reaching k words back (geometric mean over windows, with
    its 95 % interval as a band), one curve per model: ``flows`` name -> (windows, T) ratios."""
    fig, ax = new_figure(width=7.5)
    for i, (name, r) in enumerate(flows.items()):
        marker, colour = (styles or {}).get(name, ("o", list(COLOURS.values())[i]))
        ks = np.arange(r.shape[1])
        logs = np.log10(r)
        centre = 10 ** logs.mean(axis=0)
        half = 1.96 * logs.std(axis=0, ddof=1) / np.sqrt(len(r))
        ax.plot(ks, centre, marker=marker, markevery=10, color=colour, label=name)
        ax.fill_between(ks, 10 ** (np.log10(centre) - half), 10 ** (np.log10(centre) + half),
                        color=colour, alpha=0.2)
    log_axis(ax, "y")
    set_labels(ax, title, "k (words back from the prediction)",
               r"$\|\partial L/\partial h_{T-k}\| \;/\; \|\partial L/\partial h_T\|$ (log scale)")
    ax.legend()
    return fig


def block_bootstrap_diff(nll_a: np.ndarray, nll_b: np.ndarray, block: int = 500, n_boot: int = 2000,
                         seed: int = 0) -> tuple[float, float, float]:
    """Mean per-token NLL difference a - b (nats) over the same tokens, with a 95 % bootstrap
    interval that resamples contiguous blocks of ``block`` tokens (neighbouring tokens are not
    independent). Returns (difference, low, high)."""
    a, b = np.asarray(nll_a, np.float64), np.asarray(nll_b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"expected two 1-d arrays over the same tokens, got shapes {a.shape} and "
                         f"{b.shape}")
    d = a - b
    n_blocks = len(d) // block
    if n_blocks < 2:
        raise ValueError(f"need at least two blocks of {block} tokens, got {len(d)} tokens")
    means = d[:n_blocks * block].reshape(n_blocks, block).mean(axis=1)
    rng = np.random.default_rng(seed)
    boot = means[rng.integers(0, n_blocks, (n_boot, n_blocks))].mean(axis=1)
    return float(means.mean()), float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))
