"""Lesson 01's live NumPy models: one training step against the same model in PyTorch.

    python benchmarks/bench_live_step_01.py

Two models, as the lesson trains them live (the student's MLP forward/backward and Adam step; here
the checkers' reference answers), each step = forward, backward, Adam update:
- the topic classifier: 32 BBC articles as sparse word counts (5,000 features) -> Linear(64) -> tanh
  -> Linear(5) -> softmax cross-entropy (PyTorch: the same batch as a sparse COO tensor);
- the feed-forward LM: 256 windows of 4 Wikipedia token ids -> embeddings (48) -> Linear(128) ->
  tanh -> Linear(2001) -> softmax cross-entropy.
One thread, interleaved, median of repeats; the ratio is NumPy / PyTorch (target at most 2×).
"""
from __future__ import annotations

import numpy as np
import torch
from step_timing import compare_steps  # benchmarks/step_timing.py, beside this script

from helpers.course.bbc_topics import bbc_topic_data
from helpers.course.ffnn_lm import ffnn_lm_data
from helpers.exercises.lesson01 import check_adam_update, check_mlp_backward
from helpers.lessons.lesson01 import featurize
from helpers.lib.layers import Embedding, mlp
from training.ffnn_lm import FeedForwardLM

backward, adam = check_mlp_backward.reference, check_adam_update.reference


def adam_steps(params, lr):
    """The student's Adam step on each array of the list."""
    m, v, t = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params], [0]

    def step(grads):
        t[0] += 1
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            p[...], m[i], v[i] = adam(p, g, m[i], v[i], t[0], lr)
    return step


def classifier_steps():
    data = bbc_topic_data(seed=0)
    X_train, _, _ = featurize(data, "counts", max_features=5000)
    y_train = data.labels[data.train]
    idx = np.random.default_rng(0).permutation(len(y_train))[:32]
    Xb, yb = X_train[idx], y_train[idx]
    params = mlp([X_train.shape[1], 64, 5], np.random.default_rng(0), dtype=np.float32).params
    update = adam_steps(params, 1e-3)

    def numpy_step():
        _, (_, *grads) = backward(Xb, yb, *params)
        update(grads)

    coo = Xb.tocoo()
    Xt = torch.sparse_coo_tensor(np.vstack([coo.row, coo.col]), coo.data, coo.shape,
                                 dtype=torch.float32)
    yt = torch.from_numpy(yb)
    model = torch.nn.Sequential(torch.nn.Linear(X_train.shape[1], 64), torch.nn.Tanh(),
                                torch.nn.Linear(64, 5))
    topt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def torch_step():
        loss = torch.nn.functional.cross_entropy(model(Xt), yt)
        topt.zero_grad()
        loss.backward()
        topt.step()

    return numpy_step, torch_step


def language_model_steps():
    data = ffnn_lm_data(2000, 4)
    idx = np.random.default_rng(0).integers(0, len(data.y_train), 256)
    Xb, yb = data.X_train[idx], data.y_train[idx]
    V = len(data.vocab)
    rng = np.random.default_rng(0)
    emb = Embedding(V, 48, rng, dtype=np.float32, scale=0.1)
    params = [emb.params[0]] + mlp([4 * 48, 128, V], rng, dtype=np.float32).params
    update = adam_steps(params, 3e-3)

    def numpy_step():
        loss, (dX, *grads) = backward(emb.forward(Xb).reshape(len(Xb), -1), yb, *params[1:])
        emb.backward(dX.reshape(len(Xb), 4, 48))
        update([emb.grads[0], *grads])

    model = FeedForwardLM(V, 4, 48, 128)
    topt = torch.optim.Adam(model.parameters(), lr=3e-3)
    Xt, yt = torch.from_numpy(Xb), torch.from_numpy(yb)

    def torch_step():
        loss = torch.nn.functional.cross_entropy(model(Xt), yt)
        topt.zero_grad()
        loss.backward()
        topt.step()

    return numpy_step, torch_step


if __name__ == "__main__":
    compare_steps("lesson 01 topic classifier (32 articles, 5000 -> 64 -> 5)", *classifier_steps(),
                  repeats=50)
    compare_steps("lesson 01 feed-forward LM (256 windows, V = 2001)", *language_model_steps(),
                  repeats=30)
