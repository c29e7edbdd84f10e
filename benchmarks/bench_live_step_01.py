"""Lesson 01's live NumPy models: one training step against the same model in PyTorch.

    python benchmarks/bench_live_step_01.py

Two models, as the lesson trains them live, each step = forward, backward, Adam update:
- the topic classifier: 32 BBC articles as sparse word counts (5,000 features) -> Linear(64) -> tanh
  -> Linear(5) -> softmax cross-entropy (PyTorch: the same batch as a sparse COO tensor);
- the feed-forward LM: 256 windows of 4 Wikipedia token ids -> embeddings (48) -> Linear(128) ->
  tanh -> Linear(2001) -> softmax cross-entropy, dropout 0.2.
One thread, interleaved, median of repeats; the ratio is NumPy / PyTorch (target at most 2×).
"""
from __future__ import annotations

import numpy as np
import torch
from step_timing import compare_steps  # benchmarks/step_timing.py, beside this script

from helpers.course.bbc_topics import bbc_topic_data
from helpers.course.ffnn_lm import ffnn_lm_data
from helpers.lessons.lesson01 import featurize
from helpers.lib.feedforward_lm import NumpyFeedForwardLM
from helpers.lib.language_models import FeedForwardLM
from helpers.lib.layers import SoftmaxCrossEntropy, mlp
from helpers.lib.optim import Adam


def classifier_steps():
    data = bbc_topic_data(seed=0)
    X_train, _, _ = featurize(data, "counts", max_features=5000)
    y_train = data.labels[data.train]
    idx = np.random.default_rng(0).permutation(len(y_train))[:32]
    Xb, yb = X_train[idx], y_train[idx]
    net = mlp([X_train.shape[1], 64, 5], np.random.default_rng(0), activation="tanh", dtype=np.float32)
    loss_fn, opt = SoftmaxCrossEntropy(), Adam(lr=1e-3)

    def numpy_step():
        loss_fn.forward(net.forward(Xb), yb)
        net.backward(loss_fn.backward())
        opt.step(net.params, net.grads)

    coo = Xb.tocoo()
    Xt = torch.sparse_coo_tensor(np.vstack([coo.row, coo.col]), coo.data, coo.shape, dtype=torch.float32)
    yt = torch.from_numpy(yb)
    model = torch.nn.Sequential(torch.nn.Linear(X_train.shape[1], 64), torch.nn.Tanh(), torch.nn.Linear(64, 5))
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
    lm = NumpyFeedForwardLM(V, 4, 48, 128, np.random.default_rng(0), dropout=0.2)
    loss_fn, opt = SoftmaxCrossEntropy(), Adam(lr=3e-3)

    def numpy_step():
        loss_fn.forward(lm.forward(Xb), yb)
        lm.backward(loss_fn.backward())
        opt.step(lm.params, lm.grads)

    model = FeedForwardLM(V, 4, 48, 128, dropout=0.2)
    topt = torch.optim.Adam(model.parameters(), lr=3e-3)
    Xt, yt = torch.from_numpy(Xb), torch.from_numpy(yb)

    def torch_step():
        loss = torch.nn.functional.cross_entropy(model(Xt), yt)
        topt.zero_grad()
        loss.backward()
        topt.step()

    return numpy_step, torch_step


if __name__ == "__main__":
    compare_steps("lesson 01 topic classifier (32 articles, 5000 -> 64 -> 5)", *classifier_steps(), repeats=50)
    compare_steps("lesson 01 feed-forward LM (256 windows, V = 2001)", *language_model_steps(), repeats=30)
