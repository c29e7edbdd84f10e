"""How the gradient travels back through time in the NumPy recurrent layers.

A loss read at the last step of a sequence sends a gradient back to every earlier hidden
state; these functions measure its norm k steps back, for random layers whose recurrent
matrix has a chosen scale and for trained language models.
"""
from __future__ import annotations

import numpy as np

from helpers.infra.threads import single_thread_blas
from helpers.lib.layers import softmax
from helpers.lib.optim import clip_global_norm
from helpers.lib.recurrent import TimeGRU, TimeLSTM, TimeRNN

TIME_LAYERS = {"rnn": TimeRNN, "lstm": TimeLSTM, "gru": TimeGRU}


def random_recurrent_layer(kind: str, scale: float, input_size: int = 16, hidden: int = 64,
                           seed: int = 0, forget_bias: float = 0.0):
    """A random NumPy recurrent layer whose recurrent matrix has a chosen scale. Taught in lesson 02, section 6.

    A NumPy recurrent layer whose recurrent matrix (each gate block) is ``scale`` times a
    random orthogonal matrix, so ``scale`` is exactly its largest singular value.
    Input weights ~ N(0, 1/input_size), biases 0 (LSTM forget gate: ``forget_bias``)."""
    rng = np.random.default_rng(seed)
    layer = TIME_LAYERS[kind](input_size, hidden, rng)
    Wx, Wh, b = layer.params[:3]
    for g in range(Wh.shape[1] // hidden):
        Wh[:, g * hidden:(g + 1) * hidden] = scale * np.linalg.qr(rng.standard_normal((hidden, hidden)))[0]
    Wx[...] = rng.standard_normal(Wx.shape) / np.sqrt(input_size)
    b[...] = 0
    if kind == "lstm":
        b[hidden:2 * hidden] = forget_bias
    return layer


@single_thread_blas
def gradient_norms_through_time(layer, T: int = 60, batch: int = 8, seed: int = 0) -> np.ndarray:
    """The norm of the gradient reaching each step back from the loss. Taught in lesson 02, section 6.

    ||dL/dh_{T-k}|| for k = 0..T-1 (mean over the batch), for a loss read at the last
    step only: L = <v, h_T> with v a random vector of norm about 1. Shape (T,)."""
    rng = np.random.default_rng(seed + 1)
    H = layer.hidden_size
    layer.forward(rng.standard_normal((batch, T, layer.input_size)))
    dhs = np.zeros((batch, T, H))
    dhs[:, -1] = rng.standard_normal((batch, H)) / np.sqrt(H)
    layer.backward(dhs)
    return np.linalg.norm(layer.dh_all, axis=2).mean(axis=0)[::-1]


def clipped_profile(layer, max_norm: float, T: int = 60) -> tuple[np.ndarray, np.ndarray, float]:
    """Gradient norms through time before and after global-norm clipping. Taught in lesson 02, section 6.

    Per-step gradient norms before and after global-norm clipping of dL/dh_t (all steps
    together, as :func:`helpers.lib.optim.clip_global_norm` does). Returns (before, after, norm)."""
    before = gradient_norms_through_time(layer, T)
    grads = [layer.dh_all.copy()]
    norm = clip_global_norm(grads, max_norm)
    after = np.linalg.norm(grads[0], axis=2).mean(axis=0)[::-1]
    return before, after, norm


@single_thread_blas
def lm_gradient_flow(E: np.ndarray, layer, W_out: np.ndarray, b_out: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The gradient reaching each step back in a trained language model. Taught in lesson 03, section 6.

    ||dL/dh_{T-k}|| (mean over rows) for k = 0..T-1, where L is the language-model loss of
    the *last* position only: the words ids[:, :T] are read and ids[:, T] is predicted.
    ``E`` (V, D), ``layer`` a NumPy Time* layer, ``W_out`` (V, H), ``b_out`` (V,); ids (B, T+1)."""
    ids = np.asarray(ids)
    hs = layer.forward(E[ids[:, :-1]])
    p = softmax(hs[:, -1] @ W_out.T + b_out)
    p[np.arange(len(ids)), ids[:, -1]] -= 1            # dL/dlogits = softmax - onehot
    dhs = np.zeros_like(hs)
    dhs[:, -1] = p @ W_out
    layer.backward(dhs)
    return np.linalg.norm(layer.dh_all, axis=2).mean(axis=0)[::-1]
