"""NumPy layers with one protocol, forward and backward written by hand.

Every layer has
- ``params``: list of arrays (the learnable parameters),
- ``grads``:  list of arrays of the same shapes, filled *in place* by ``backward``,
- ``forward(x)``: computes the output and caches what backward needs,
- ``backward(dout)``: takes dL/d(output), fills ``grads``, returns dL/d(input).

Shapes below use N for the batch, D_in/D_out for feature sizes, K for classes.
Parameters are float64 by default (gradient checks need it); pass dtype=np.float32
for speed.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import (  # noqa: F401  (check_class_ids, describe_offending: used here and re-exported)
    all_finite,
    check_class_ids,
    check_finite,
    check_ids,
    describe_offending,
)


# ---------------------------------------------------------------- functions
def sigmoid(z: np.ndarray) -> np.ndarray:
    """Logistic sigmoid 1 / (1 + e^-z), computed without overflow for large |z|. Taught in lesson 01, section 2."""
    z = np.asarray(z)
    out = np.empty_like(z, dtype=np.result_type(z, np.float32))
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def _softmax_input(z, axis: int, where: str) -> np.ndarray:
    """``z`` as an array with a non-empty ``axis`` (a softmax over no scores is 0/0)."""
    z = np.asarray(z)
    if z.ndim == 0:
        raise ValueError(f"{where}: z is a single number; a softmax needs an axis of scores (pass an array)")
    if not -z.ndim <= axis < z.ndim:
        raise ValueError(f"{where}: axis {axis} is out of range for z of shape {z.shape}")
    if z.shape[axis] == 0:
        raise ValueError(f"{where}: axis {axis} of z (shape {z.shape}) is empty; a softmax over no scores is "
                         "undefined (0/0)")
    return z


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``. Taught in lesson 01, section 3.

    Numerically stable softmax: subtracting the max changes nothing mathematically
    but keeps exp() from overflowing."""
    z = _softmax_input(z, axis, "softmax")
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """log softmax(z), stable: z - max - log(sum(exp(z - max))). Taught in lesson 01, section 3."""
    z = _softmax_input(z, axis, "log_softmax")
    z = z - np.max(z, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def relu(z: np.ndarray) -> np.ndarray:
    """ReLU, max(0, z), element-wise. Taught in lesson 01, section 2."""
    return np.maximum(z, 0)


ACTIVATIONS = {
    # name: (f(z), f'(z) written in terms of z)
    "sigmoid": (sigmoid, lambda z: sigmoid(z) * (1 - sigmoid(z))),
    "tanh": (np.tanh, lambda z: 1 - np.tanh(z) ** 2),
    "relu": (relu, lambda z: (z > 0).astype(np.float64)),
}


# ---------------------------------------------------------------- layers
def _output_shapes(out) -> list[tuple]:
    """The shape of each of forward's outputs: one for an array or a number, one per element of a
    tuple (LSTMCell returns (h, c))."""
    return [np.shape(o) for o in out] if isinstance(out, tuple) else [np.shape(out)]


class Layer:
    """Base class of the NumPy layers: ``params``, ``grads``, a train/eval switch, and backward's check.

    A layer's ``forward`` ends with ``return self.remember(out)``, and its ``backward`` starts
    with ``self.check_dout(dout=dout)``: backward then refuses to run before forward, and refuses
    an upstream gradient whose shape differs from the output it belongs to (a wrong shape would
    broadcast into wrong gradients without a word) or that holds nan or inf (lesson 01 §4).

    ``dout_may_add_batch_axes = True`` (a position table, added to every sequence of a batch)
    also accepts gradients with extra leading axes, summed over by its backward.
    """

    params: list
    grads: list
    training: bool = True
    dout_may_add_batch_axes: bool = False
    out_shapes: list | None = None

    def __init__(self):
        self.params, self.grads = [], []

    def remember(self, out):
        """Keep the shape of each output for :meth:`check_dout`; return ``out``."""
        self.out_shapes = _output_shapes(out)
        return out

    def check_dout(self, **douts) -> None:
        """Raise unless forward has run and each upstream gradient (named, in the order of
        forward's outputs) has its output's shape and is finite."""
        where = f"{type(self).__name__}.backward"
        if self.out_shapes is None:
            raise RuntimeError(f"{where} was called before forward: call forward before backward "
                               "(backward uses what forward computed)")
        for k, ((name, dout), expected) in enumerate(zip(douts.items(), self.out_shapes, strict=False), 1):  # noqa: B905
            if dout is None:
                raise ValueError(f"{where}: {name} must have shape {expected}, got None")
            got = np.shape(dout)
            extra_axes = (self.dout_may_add_batch_axes and len(got) > len(expected)
                          and got[len(got) - len(expected):] == expected)
            if got != expected and not extra_axes:
                output = "the forward output" if len(self.out_shapes) == 1 else f"forward's output {k}"
                if expected == ():
                    raise ValueError(f"{where}: {name} must be a number like {output} (a scalar loss), "
                                     f"got an array of shape {got}")
                raise ValueError(f"{where}: {name} must have shape {expected} like {output}, got {got}")
            if not all_finite(dout):
                check_finite(dout, name, where)

    def train(self, mode: bool = True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)


class Linear(Layer):
    """Affine map y = x W + b. Taught in lesson 01, section 4.

    W: (D_in, D_out), b: (D_out,). x: (N, D_in) dense array or SciPy sparse matrix
    (bag-of-words input); y: (N, D_out). Xavier/Glorot-normal initialisation.
    """

    def __init__(self, d_in: int, d_out: int, rng: np.random.Generator, dtype=np.float64):
        super().__init__()
        W = rng.standard_normal((d_in, d_out)) * np.sqrt(2.0 / (d_in + d_out))
        self.params = [W.astype(dtype), np.zeros(d_out, dtype)]
        self.grads = [np.zeros_like(p) for p in self.params]

    def forward(self, x):
        W, b = self.params
        if x.ndim != 2 or x.shape[1] != W.shape[0]:
            raise ValueError(f"Linear expects input (N, {W.shape[0]}), got {x.shape}")
        check_finite(x, "x", "Linear.forward")
        self.x = x
        return self.remember(np.asarray(x @ W) + b)

    def backward(self, dout):
        self.check_dout(dout=dout)
        W, _ = self.params
        self.grads[0][...] = self.x.T @ dout
        self.grads[1][...] = dout.sum(axis=0)
        return dout @ W.T


class LayerNorm(Layer):
    """Layer normalisation over the last axis, forward and backward. Taught in lesson 04, section 7.

    y = γ ⊙ (x − μ) / sqrt(σ² + eps) + β, with μ and σ² the mean and the (biased) variance of each
    row over its last axis of size d — every position is normalised on its own features, as
    ``torch.nn.LayerNorm(d)``. x: (..., d) float; γ, β: (d,) (γ = 1, β = 0 at the start).
    Backward, with x̂ = (x − μ)/σ and g = dy ⊙ γ:  dx = (g − mean(g) − x̂ ⊙ mean(g ⊙ x̂)) / σ,
    dγ = Σ dy ⊙ x̂, dβ = Σ dy (sums over every axis but the last).
    """

    def __init__(self, d: int, eps: float = 1e-5, dtype=np.float64):
        super().__init__()
        if d < 1:
            raise ValueError(f"LayerNorm needs a feature size d >= 1, got {d}")
        self.eps = float(eps)
        self.params = [np.ones(d, dtype), np.zeros(d, dtype)]
        self.grads = [np.zeros_like(p) for p in self.params]

    def forward(self, x):
        gamma, beta = self.params
        x = np.asarray(x)
        if x.shape[-1:] != gamma.shape:
            raise ValueError(f"LayerNorm({gamma.shape[0]}) expects input (..., {gamma.shape[0]}), got {x.shape}")
        check_finite(x, "x", "LayerNorm.forward")
        mu = x.mean(axis=-1, keepdims=True)
        self.sigma = np.sqrt(x.var(axis=-1, keepdims=True) + self.eps)
        self.xhat = (x - mu) / self.sigma
        return self.remember(gamma * self.xhat + beta)

    def backward(self, dout):
        self.check_dout(dout=dout)
        gamma, _ = self.params
        axes = tuple(range(dout.ndim - 1))
        self.grads[0][...] = np.sum(dout * self.xhat, axis=axes)
        self.grads[1][...] = np.sum(dout, axis=axes)
        g = dout * gamma
        return (g - g.mean(axis=-1, keepdims=True)
                - self.xhat * np.mean(g * self.xhat, axis=-1, keepdims=True)) / self.sigma


class Activation(Layer):
    """Element-wise non-linearity: 'sigmoid', 'tanh' or 'relu'. Any shape in, same out. Taught in lesson 01, section 4."""

    def __init__(self, name: str):
        super().__init__()
        if name not in ACTIVATIONS:
            raise ValueError(f"unknown activation {name!r}; choose one of {sorted(ACTIVATIONS)}")
        self.name = name

    def forward(self, z):
        self.out = ACTIVATIONS[self.name][0](z)
        self.z = z
        return self.remember(self.out)

    def backward(self, dout):
        # derivatives from the cached output where that is cheaper
        self.check_dout(dout=dout)
        if self.name == "sigmoid":
            return dout * self.out * (1 - self.out)
        if self.name == "tanh":
            return dout * (1 - self.out ** 2)
        return dout * (self.z > 0)


class Dropout(Layer):
    """Inverted dropout, as a layer. Taught in lesson 01, section 7.

    Inverted dropout: in training each unit is zeroed with probability ``rate`` and the
    survivors are scaled by 1/(1-rate), so inference needs no change at all."""

    def __init__(self, rate: float, rng: np.random.Generator):
        super().__init__()
        if not 0 <= rate < 1:
            raise ValueError(f"dropout rate must be in [0, 1), got {rate}")
        self.rate, self.rng = rate, rng

    def forward(self, x):
        if not self.training or self.rate == 0:
            self.mask = None
            return self.remember(x)
        self.mask = (self.rng.random(x.shape) >= self.rate) / (1 - self.rate)
        return self.remember(x * self.mask)

    def backward(self, dout):
        self.check_dout(dout=dout)
        return dout if self.mask is None else dout * self.mask


class Sequential(Layer):
    """Layers applied in order, as one layer. Taught in lesson 01, section 4.

    Layers applied in order; params/grads are the layers' lists concatenated
    (the very same arrays, so optimisers update the layers in place)."""

    def __init__(self, *layers: Layer):
        super().__init__()
        self.layers = list(layers)
        self.params = [p for layer in self.layers for p in layer.params]
        self.grads = [g for layer in self.layers for g in layer.grads]

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return self.remember(x)

    def backward(self, dout):
        self.check_dout(dout=dout)
        for layer in reversed(self.layers):
            dout = layer.backward(dout)
        return dout

    def train(self, mode: bool = True):
        self.training = mode
        for layer in self.layers:
            layer.train(mode)
        return self

    def weights(self) -> list[np.ndarray]:
        """The weight matrices only (biases are usually not regularised)."""
        return [layer.params[0] for layer in self.layers if isinstance(layer, Linear)]

    def weight_grads(self) -> list[np.ndarray]:
        """The gradient arrays of :meth:`weights`, in the same order."""
        return [layer.grads[0] for layer in self.layers if isinstance(layer, Linear)]


def mlp(sizes: list[int], rng: np.random.Generator, activation: str = "tanh",
        dropout: float = 0.0, dtype=np.float64) -> Sequential:
    """A multi-layer perceptron: Linear -> activation (-> Dropout) ... -> Linear (logits). Taught in lesson 01, section 4.

    ``sizes = [D_in, H_1, ..., K]``. The last layer has no activation: pair it with
    :class:`SoftmaxCrossEntropy`.
    """
    if len(sizes) < 2:
        raise ValueError(f"need at least input and output sizes, got {sizes}")
    layers: list[Layer] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(Linear(a, b, rng, dtype))
        if i < len(sizes) - 2:
            layers.append(Activation(activation))
            if dropout > 0:
                layers.append(Dropout(dropout, rng))
    return Sequential(*layers)


# ---------------------------------------------------------------- losses
class SoftmaxCrossEntropy(Layer):
    """Softmax over K classes plus mean negative log-likelihood. Taught in lesson 01, section 3.

    forward(logits (N, K), targets (N,) int) -> scalar mean loss;
    backward(dout=1.0) -> dL/dlogits = (softmax - onehot) / N, shape (N, K).
    """

    def forward(self, logits, targets):
        logits, targets = np.asarray(logits), np.asarray(targets)
        if logits.ndim != 2:
            raise ValueError(f"SoftmaxCrossEntropy: logits must be (N, K), got shape {logits.shape}")
        n = logits.shape[0]
        if n == 0:
            raise ValueError("SoftmaxCrossEntropy: the batch is empty (logits of shape "
                             f"{logits.shape}); a mean loss over no examples is undefined")
        if targets.shape != (n,):
            raise ValueError(f"SoftmaxCrossEntropy: targets must have shape ({n},), got {targets.shape}")
        check_finite(logits, "logits", "SoftmaxCrossEntropy.forward")
        self.targets = check_class_ids(targets, logits.shape[1], "SoftmaxCrossEntropy")
        logp = log_softmax(logits)
        self.probs = np.exp(logp)
        return self.remember(float(-logp[np.arange(len(self.targets)), self.targets].mean()))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        n = len(self.targets)
        d = self.probs.copy()
        d[np.arange(n), self.targets] -= 1
        return d * (dout / n)


class SigmoidCrossEntropy(Layer):
    """Sigmoid plus binary cross-entropy, averaged over all elements. Taught in lesson 07, section 3.

    forward(scores (any shape), labels (same shape, 0/1)) -> scalar mean loss;
    backward(dout=1.0) -> dL/dscores = (sigmoid(scores) - labels) / n  (the famous y - t).
    """


    def forward(self, scores, labels):
        scores, labels = np.asarray(scores), np.asarray(labels)
        if labels.shape != scores.shape:
            raise ValueError(f"SigmoidCrossEntropy: labels shape {labels.shape} != scores shape {scores.shape}")
        if scores.size == 0:
            raise ValueError(f"SigmoidCrossEntropy: the batch is empty (scores of shape {scores.shape}); "
                             "a mean loss over no examples is undefined")
        check_finite(scores, "scores", "SigmoidCrossEntropy.forward")
        bad = (labels != 0) & (labels != 1)
        if bad.any():
            raise ValueError("SigmoidCrossEntropy: labels must be 0 or 1 (binary cross-entropy), got "
                             + describe_offending(labels, bad, "labels")
                             + "; for labels -1/+1 pass (labels + 1) / 2")
        self.y, self.t = sigmoid(scores), labels
        # log(1 + e^-s) written stably: softplus(-s) for t=1, softplus(s) for t=0
        loss = np.logaddexp(0, -scores) * labels + np.logaddexp(0, scores) * (1 - labels)
        return self.remember(float(loss.mean()))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        return (self.y - self.t) * (dout / self.t.size)


class Embedding(Layer):
    """A learnable lookup table: row ``i`` of W is the vector of token ``i``. Taught in lesson 07, section 2.

    W: (V, D). forward(ids (any int shape)) -> vectors (*ids.shape, D).
    backward accumulates the gradient of repeated ids (``np.add.at``; plain indexed
    assignment would keep only the last). Row ``padding_idx`` stays zero and gets no
    gradient. ``scatter='sparse'`` does the same accumulation with a SciPy sparse
    product, which is several times faster for large batches.

    ``scatter='rows'`` is for training with a large vocabulary: backward leaves the dense
    ``grads`` alone and stores only the rows that were used, ``row_grad = (rows (U,),
    grad (U, D))`` (same sums as 'sparse'), so an SGD step touches U rows instead of V
    (``W[rows] -= lr * grad``).
    """

    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator,
                 padding_idx: int | None = None, scatter: str = "add.at", dtype=np.float64, scale: float = 0.01):
        super().__init__()
        if scatter not in ("add.at", "sparse", "rows"):
            raise ValueError(f"scatter must be 'add.at', 'sparse' or 'rows', got {scatter!r}")
        if padding_idx is not None and not 0 <= padding_idx < vocab_size:
            raise ValueError(f"padding_idx {padding_idx} is outside [0, {vocab_size})")
        W = (rng.standard_normal((vocab_size, dim)) * scale).astype(dtype)
        if padding_idx is not None:
            W[padding_idx] = 0
        self.params, self.grads = [W], [np.zeros_like(W)]
        self.padding_idx, self.scatter = padding_idx, scatter

    def forward(self, ids):
        ids = check_ids(ids, self.params[0].shape[0], "ids", "Embedding.forward", noun="token ids")
        self.ids = ids
        return self.remember(np.take(self.params[0], ids, axis=0))          # = W[ids], about twice as fast for 2-D ids

    def backward(self, dout):
        self.check_dout(dout=dout)
        dW = self.grads[0]
        D = dW.shape[1]
        flat_ids, flat_d = self.ids.reshape(-1), dout.reshape(-1, D)
        if self.scatter == "add.at":
            dW[...] = 0
            np.add.at(dW, flat_ids, flat_d)
        elif self.scatter == "sparse":
            onehot_T = sp.csr_matrix((np.ones(len(flat_ids), dW.dtype), (flat_ids, np.arange(len(flat_ids)))),
                                     shape=(dW.shape[0], len(flat_ids)))
            dW[...] = onehot_T @ flat_d
        else:  # 'rows': the same sums, one per distinct id
            used = np.zeros(dW.shape[0], dtype=bool)
            used[flat_ids] = True
            rows = np.flatnonzero(used)                       # distinct ids, sorted (no sort needed)
            slot_of = np.empty(dW.shape[0], dtype=np.intp)
            slot_of[rows] = np.arange(len(rows))
            slot = slot_of[flat_ids]                          # position of each id among the rows
            # the same one-hot matrix, built column by column: column i has a single 1, in row
            # slot[i], so the compressed-column format needs no sorting (indptr = 0, 1, 2, ...)
            n = len(flat_ids)
            onehot_T = sp.csc_matrix((np.ones(n, dW.dtype), slot, np.arange(n + 1)), shape=(len(rows), n))
            grad = onehot_T @ flat_d
            if self.padding_idx is not None:
                keep = rows != self.padding_idx
                rows, grad = rows[keep], grad[keep]
            self.row_grad = (rows, grad)
            return None
        if self.padding_idx is not None:
            dW[self.padding_idx] = 0
        return None  # ids are not differentiable
