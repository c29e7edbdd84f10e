"""NumPy layers with one protocol: ``params`` and ``grads``; ``forward(x)``; ``backward(dout)``
fills ``grads`` and returns dL/d(input). N batch, D features, K classes."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from helpers.lib.checks import check_class_ids, check_finite, check_ids, describe_offending


# ---------------------------------------------------------------- functions
def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-z), without overflow for large |z| (lesson 01 §2)."""
    z = np.asarray(z)
    out = np.empty_like(z, dtype=np.result_type(z, np.float32))
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def _scores(z, axis: int, where: str) -> np.ndarray:
    """``z`` as an array with a non-empty ``axis`` (a softmax over no scores is 0/0)."""
    z = np.asarray(z)
    if z.ndim == 0 or not -z.ndim <= axis < z.ndim or z.shape[axis] == 0:
        raise ValueError(f"{where}: z (shape {z.shape}) needs a non-empty axis {axis} of scores")
    return z


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``, the maximum subtracted first: no overflow (lesson 01 §3)."""
    z = _scores(z, axis, "softmax")
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """log softmax(z) = z - max - log(sum(exp(z - max))) (lesson 01 §3)."""
    z = _scores(z, axis, "log_softmax")
    z = z - np.max(z, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def relu(z: np.ndarray) -> np.ndarray:
    """max(0, z), element-wise (lesson 01 §2)."""
    return np.maximum(z, 0)


ACTIVATIONS = {   # name: (f(z), f'(z))
    "sigmoid": (sigmoid, lambda z: sigmoid(z) * (1 - sigmoid(z))),
    "tanh": (np.tanh, lambda z: 1 - np.tanh(z) ** 2),
    "relu": (relu, lambda z: (z > 0).astype(np.float64)),
}


# ---------------------------------------------------------------- layers
class Layer:
    """What every layer shares: params, grads, train/eval, backward's check (lesson 01 §4):
    ``forward`` ends with ``self.remember(out)``, ``backward`` starts with ``self.check_dout``."""

    training: bool = True
    dout_may_add_batch_axes: bool = False
    out_shapes: list | None = None

    def __init__(self):
        self.params, self.grads = [], []

    def remember(self, out):
        """Keep the shape of each output (one per element of a tuple) for :meth:`check_dout`."""
        self.out_shapes = [np.shape(o) for o in out] if isinstance(out, tuple) else [np.shape(out)]
        return out

    def check_dout(self, **douts) -> None:
        """Raise unless forward has run and each dout is finite with its output's shape."""
        where = f"{type(self).__name__}.backward"
        if self.out_shapes is None:
            raise RuntimeError(f"{where} was called before forward: call forward before backward "
                               "(backward uses what forward computed)")
        outputs = zip(douts.items(), self.out_shapes, strict=False)  # a layer may take fewer douts
        for k, ((name, dout), want) in enumerate(outputs, 1):
            got = None if dout is None else np.shape(dout)
            extra_axes = (self.dout_may_add_batch_axes and got is not None and len(got) > len(want)
                          and got[len(got) - len(want):] == want)
            if got != want and not extra_axes:
                several = len(self.out_shapes) > 1
                output = f"forward's output {k}" if several else "the forward output"
                if want == ():
                    got = "None" if got is None else f"an array of shape {got}"
                    raise ValueError(f"{where}: {name} must be a number like {output} (a scalar "
                                     f"loss), got {got}")
                raise ValueError(f"{where}: {name} must have shape {want} like {output}, got {got}")
            check_finite(dout, name, where)

    def train(self, mode: bool = True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)


class Linear(Layer):
    """Affine map y = x W + b; W (D_in, D_out) Xavier-initialised, b (D_out,) zeros (lesson 01 §4).
    x: (N, D_in), dense or SciPy sparse; y: (N, D_out)."""

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
        self.grads[0][...] = self.x.T @ dout
        self.grads[1][...] = dout.sum(axis=0)
        return dout @ self.params[0].T


class LayerNorm(Layer):
    """Layer normalisation over the last axis, as ``torch.nn.LayerNorm(d)`` (lesson 04 §7):
    y = γ ⊙ (x − μ) / sqrt(σ² + eps) + β; with x̂ = (x − μ)/σ and g = dy ⊙ γ,
    dx = (g − mean(g) − x̂ ⊙ mean(g ⊙ x̂)) / σ, dγ = Σ dy ⊙ x̂, dβ = Σ dy."""

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
            raise ValueError(f"LayerNorm({gamma.shape[0]}) expects input (..., {gamma.shape[0]}), "
                             f"got {x.shape}")
        check_finite(x, "x", "LayerNorm.forward")
        self.sigma = np.sqrt(x.var(axis=-1, keepdims=True) + self.eps)
        self.xhat = (x - x.mean(axis=-1, keepdims=True)) / self.sigma
        return self.remember(gamma * self.xhat + beta)

    def backward(self, dout):
        self.check_dout(dout=dout)
        axes = tuple(range(dout.ndim - 1))
        self.grads[0][...] = np.sum(dout * self.xhat, axis=axes)
        self.grads[1][...] = np.sum(dout, axis=axes)
        g = dout * self.params[0]
        return (g - g.mean(axis=-1, keepdims=True)
                - self.xhat * np.mean(g * self.xhat, axis=-1, keepdims=True)) / self.sigma


class Activation(Layer):
    """Element-wise 'sigmoid', 'tanh' or 'relu'; any shape (lesson 01 §4)."""

    def __init__(self, name: str):
        super().__init__()
        if name not in ACTIVATIONS:
            raise ValueError(f"unknown activation {name!r}; choose one of {sorted(ACTIVATIONS)}")
        self.name = name

    def forward(self, z):
        self.z, self.out = z, ACTIVATIONS[self.name][0](z)
        return self.remember(self.out)

    def backward(self, dout):
        self.check_dout(dout=dout)
        if self.name == "sigmoid":
            return dout * self.out * (1 - self.out)
        if self.name == "tanh":
            return dout * (1 - self.out ** 2)
        return dout * (self.z > 0)


class Dropout(Layer):
    """Inverted dropout: in training each unit is zeroed with probability ``rate`` and the
    survivors scaled by 1/(1 - rate); at inference nothing changes (lesson 01 §10)."""

    def __init__(self, rate: float, rng: np.random.Generator):
        super().__init__()
        if not 0 <= rate < 1:
            raise ValueError(f"dropout rate must be in [0, 1), got {rate}")
        self.rate, self.rng = rate, rng

    def forward(self, x):
        self.mask = None
        if self.training and self.rate > 0:
            self.mask = (self.rng.random(x.shape) >= self.rate) / (1 - self.rate)
            x = x * self.mask
        return self.remember(x)

    def backward(self, dout):
        self.check_dout(dout=dout)
        return dout if self.mask is None else dout * self.mask


class Sequential(Layer):
    """Layers applied in order, as one layer; its params and grads are theirs (lesson 01 §4)."""

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
        """The weight matrices of the Linear layers (biases are usually not regularised)."""
        return [layer.params[0] for layer in self.layers if isinstance(layer, Linear)]

    def weight_grads(self) -> list[np.ndarray]:
        """The gradient arrays of :meth:`weights`, in the same order."""
        return [layer.grads[0] for layer in self.layers if isinstance(layer, Linear)]


def mlp(sizes: list[int], rng: np.random.Generator, activation: str = "tanh",
        dropout: float = 0.0, dtype=np.float64) -> Sequential:
    """Linear, activation (Dropout), ..., Linear, for sizes [D_in, H_1, ..., K] (lesson 01 §4)."""
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
    """Softmax over K classes and the mean negative log-likelihood (lesson 01 §3):
    forward(logits (N, K), targets (N,) int) -> mean loss; backward(dout=1) -> (P - onehot) / N."""

    def forward(self, logits, targets):
        logits, targets = np.asarray(logits), np.asarray(targets)
        if logits.ndim != 2 or logits.shape[0] == 0:
            raise ValueError(f"SoftmaxCrossEntropy: logits must be (N, K) with N >= 1 (a mean over "
                             f"no examples is undefined), got shape {logits.shape}")
        if targets.shape != logits.shape[:1]:
            raise ValueError(f"SoftmaxCrossEntropy: targets must have shape ({logits.shape[0]},), "
                             f"got {targets.shape}")
        check_finite(logits, "logits", "SoftmaxCrossEntropy.forward")
        self.targets = check_class_ids(targets, logits.shape[1], "SoftmaxCrossEntropy")
        logp = log_softmax(logits)
        self.probs = np.exp(logp)
        return self.remember(float(-logp[np.arange(len(targets)), self.targets].mean()))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        d = self.probs.copy()
        d[np.arange(len(self.targets)), self.targets] -= 1
        return d * (dout / len(self.targets))


class SigmoidCrossEntropy(Layer):
    """Sigmoid and binary cross-entropy, averaged over all elements (lesson 07 §3):
    forward(scores, labels 0/1, same shape) -> mean loss; backward -> (σ(scores) - labels) / n."""


    def forward(self, scores, labels):
        scores, labels = np.asarray(scores), np.asarray(labels)
        if labels.shape != scores.shape:
            raise ValueError(f"SigmoidCrossEntropy: labels shape {labels.shape} != scores shape "
                             f"{scores.shape}")
        if scores.size == 0:
            raise ValueError(f"SigmoidCrossEntropy: the batch is empty (scores of shape "
                             f"{scores.shape}); a mean loss over no examples is undefined")
        check_finite(scores, "scores", "SigmoidCrossEntropy.forward")
        bad = (labels != 0) & (labels != 1)
        if bad.any():
            raise ValueError("SigmoidCrossEntropy: labels must be 0 or 1 (binary cross-entropy), "
                             "got " + describe_offending(labels, bad, "labels")
                             + "; for labels -1/+1 pass (labels + 1) / 2")
        self.y, self.t = sigmoid(scores), labels
        # -log sigmoid(s) = log(1 + e^-s), written stably with logaddexp
        loss = np.logaddexp(0, -scores) * labels + np.logaddexp(0, scores) * (1 - labels)
        return self.remember(float(loss.mean()))

    def backward(self, dout=1.0):
        self.check_dout(dout=dout)
        return (self.y - self.t) * (dout / self.t.size)


class Embedding(Layer):
    """A learnable lookup table W (V, D), forward(ids) -> (*ids.shape, D) (lesson 07 §2); repeated
    ids' gradients add up, ``padding_idx`` gets none, ``scatter='rows'`` keeps ``row_grad``."""


    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator,
                 padding_idx: int | None = None, scatter: str = "add.at", dtype=np.float64,
                 scale: float = 0.01):
        super().__init__()
        if scatter not in ("add.at", "rows"):
            raise ValueError(f"scatter must be 'add.at' or 'rows', got {scatter!r}")
        if padding_idx is not None and not 0 <= padding_idx < vocab_size:
            raise ValueError(f"padding_idx {padding_idx} is outside [0, {vocab_size})")
        W = (rng.standard_normal((vocab_size, dim)) * scale).astype(dtype)
        if padding_idx is not None:
            W[padding_idx] = 0
        self.params, self.grads = [W], [np.zeros_like(W)]
        self.padding_idx, self.scatter = padding_idx, scatter

    def forward(self, ids):
        self.ids = check_ids(ids, len(self.params[0]), "ids", "Embedding.forward", noun="token ids")
        return self.remember(np.take(self.params[0], self.ids, axis=0))

    def backward(self, dout):
        self.check_dout(dout=dout)
        dW = self.grads[0]
        flat_ids, flat_d = self.ids.reshape(-1), dout.reshape(-1, dW.shape[1])
        if self.scatter == "add.at":
            dW[...] = 0
            np.add.at(dW, flat_ids, flat_d)
            if self.padding_idx is not None:
                dW[self.padding_idx] = 0
            return None                                  # ids are not differentiable
        rows, slot = np.unique(flat_ids, return_inverse=True)
        n = len(flat_ids)           # the one-hot (U, n) matrix: column i has a 1 in row slot[i]
        grad = sp.csc_matrix((np.ones(n, dW.dtype), slot.ravel(), np.arange(n + 1)),
                             shape=(len(rows), n)) @ flat_d
        keep = rows != self.padding_idx
        self.row_grad = (rows[keep], grad[keep])
        return None
