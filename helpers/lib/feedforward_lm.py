"""The feed-forward (Bengio-style) language model in NumPy, from the lesson's own layers.

The same architecture as :class:`helpers.lib.language_models.FeedForwardLM` (PyTorch): the
embeddings of the previous n tokens, concatenated, a tanh hidden layer, scores over the vocabulary
— with dropout on the concatenated embeddings and on the hidden layer in training mode. Built from
:class:`~helpers.lib.layers.Embedding`, :class:`~helpers.lib.layers.Dropout`,
:class:`~helpers.lib.layers.Linear` and :class:`~helpers.lib.layers.Activation`, with their
hand-written backward passes, so the weights of the shipped PyTorch model load straight into it.
"""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import check_ids
from helpers.lib.layers import (
    Activation,
    Dropout,
    Embedding,
    Layer,
    Linear,
    SoftmaxCrossEntropy,
    softmax,
)


class NumpyFeedForwardLM(Layer):
    """The feed-forward LM from the lesson's layers, forward and backward. Taught in lesson 01, section 10.

    ids (B, n) -> E[ids] (B, n, d) -> concatenated (B, n·d) -> tanh(x W1 + b1) (B, h) -> scores h W2 + b2 (B, V).
    ``params`` = [E, W1, b1, W2, b2] (E: (V, d), W1: (n·d, h), b1: (h,), W2: (h, V), b2: (V,)),
    ``grads`` the same shapes, filled by :meth:`backward`. ``dropout`` zeroes units of the
    concatenated embeddings and of the hidden layer in training mode only (``train()``/``eval()``).
    """

    def __init__(self, vocab_size: int, context: int, emb_dim: int, hidden: int, rng: np.random.Generator,
                 dropout: float = 0.0, dtype=np.float32):
        super().__init__()
        self.context, self.dtype = int(context), np.dtype(dtype)
        self.embed = Embedding(vocab_size, emb_dim, rng, dtype=dtype, scatter="sparse")   # sums repeated ids
        self.drop_in, self.drop_hidden = Dropout(dropout, rng), Dropout(dropout, rng)
        self.hidden, self.tanh = Linear(context * emb_dim, hidden, rng, dtype), Activation("tanh")
        self.out = Linear(hidden, vocab_size, rng, dtype)
        self.layers = [self.embed, self.drop_in, self.hidden, self.tanh, self.drop_hidden, self.out]
        self.params = [p for layer in self.layers for p in layer.params]
        self.grads = [g for layer in self.layers for g in layer.grads]

    def forward(self, ids):
        ids = np.asarray(ids)
        if ids.ndim != 2 or ids.shape[1] != self.context:
            raise ValueError(f"expected context ids of shape (B, {self.context}), got {ids.shape}")
        e = self.embed.forward(ids)                                   # (B, n, d)
        self.e_shape = e.shape
        x = self._own(self.drop_in.forward(e.reshape(len(ids), -1)))  # (B, n·d): the n vectors side by side
        h = self._own(self.drop_hidden.forward(self.tanh.forward(self.hidden.forward(x))))
        return self.remember(self.out.forward(h))

    def backward(self, dout):
        self.check_dout(dout=dout)
        dh = self.tanh.backward(self._own(self.drop_hidden.backward(self.out.backward(self._own(dout)))))
        dx = self._own(self.drop_in.backward(self.hidden.backward(dh)))
        self.embed.backward(dx.reshape(self.e_shape))                 # ids get no gradient
        return None

    def _own(self, a):
        """``a`` in the model's dtype (a dropout mask is float64: without this a float32 model would
        compute in float64, at twice the cost)."""
        return a.astype(self.dtype, copy=False)

    def train(self, mode: bool = True):
        self.training = mode
        for layer in self.layers:
            layer.train(mode)
        return self

    def load_torch(self, model) -> "NumpyFeedForwardLM":
        """Copy the weights of a :class:`helpers.lib.language_models.FeedForwardLM` (PyTorch) into this
        model, in place. ``torch.nn.Linear`` stores W as (out, in): it is transposed on the way."""
        state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        new = [state["embed.weight"], state["hidden.weight"].T, state["hidden.bias"],
               state["out.weight"].T, state["out.bias"]]
        for p, value in zip(self.params, new, strict=True):
            if p.shape != value.shape:
                raise ValueError(f"load_torch: a weight of shape {value.shape} does not fit this model's {p.shape} "
                                 "(vocabulary, context, embedding or hidden size differ)")
            p[...] = value
        return self


def mean_nll_numpy(model: NumpyFeedForwardLM, X: np.ndarray, y: np.ndarray, batch_size: int = 2048) -> float:
    """Mean cross-entropy (nats) of a NumPy LM over a split, in inference mode. Taught in lesson 01, section 10.

    ``X`` (N, n) context ids, ``y`` (N,) targets; batches of ``batch_size``; the model's mode is restored."""
    if len(X) != len(y) or len(y) == 0:
        raise ValueError(f"mean_nll_numpy: need as many targets as windows, at least one; got {len(X)} and {len(y)}")
    was_training = model.training
    model.eval()
    loss, total = SoftmaxCrossEntropy(), 0.0
    for s in range(0, len(y), batch_size):
        total += loss.forward(model.forward(X[s:s + batch_size]), y[s:s + batch_size]) * len(y[s:s + batch_size])
    model.train(was_training)
    return total / len(y)


def sample_text(model: NumpyFeedForwardLM, context_ids, n_tokens: int, rng: np.random.Generator,
                temperature: float = 1.0, banned=()) -> list[int]:
    """Generate text: ``n_tokens`` ids drawn one at a time. Taught in lesson 01, section 10.

    Each id is drawn from softmax(scores / temperature) given the previous n ids (``context_ids``: at
    least n ids to start from). ``banned``: ids never drawn (their probability set to 0 before the
    draw). Returns the drawn ids (list of int)."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    ids = [int(i) for i in context_ids]
    if len(ids) < model.context:
        raise ValueError(f"need at least {model.context} ids to start from, got {len(ids)}")
    V = model.out.params[0].shape[1]
    banned = check_ids(np.asarray(list(banned)).reshape(-1), V, "banned", "sample_text")   # -1: the last id
    if np.unique(banned).size == V:
        raise ValueError("sample_text: banned holds every id of the vocabulary: nothing is left to draw")
    was_training = model.training
    model.eval()
    out = []
    for _ in range(int(n_tokens)):
        scores = model.forward(np.array([ids[-model.context:]])).astype(np.float64)[0] / temperature
        scores[banned] = -np.inf
        nxt = int(rng.choice(len(scores), p=softmax(scores)))
        ids.append(nxt)
        out.append(nxt)
    model.train(was_training)
    return out
