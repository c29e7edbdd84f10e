"""Optimisers and regularisers for parameter lists (NumPy, updated in place).

All optimisers share ``step(params, grads)``: ``params[i] -= (update from grads[i])``.
State (velocities, moment estimates) is kept per parameter position.
"""
from __future__ import annotations

import numpy as np


class SGD:
    """Plain stochastic gradient descent. Taught in lesson 01, section 5.

    theta <- theta - lr * g"""

    def __init__(self, lr: float = 0.1):
        self.lr = lr

    def step(self, params, grads):
        for p, g in zip(params, grads):
            p -= self.lr * g


class Momentum:
    """Gradient descent with (heavy-ball) momentum. Taught in lesson 01, section 5.

    v <- beta v - lr g;  theta <- theta + v   (heavy-ball momentum)"""

    def __init__(self, lr: float = 0.05, beta: float = 0.9):
        self.lr, self.beta, self.v = lr, beta, None

    def step(self, params, grads):
        if self.v is None:
            self.v = [np.zeros_like(p) for p in params]
        for p, g, v in zip(params, grads, self.v):
            v *= self.beta
            v -= self.lr * g
            p += v


class RMSProp:
    """RMSProp: steps scaled by a running root mean square of the gradient. Taught in lesson 01, section 5.

    s <- rho s + (1 - rho) g^2;  theta <- theta - lr g / (sqrt(s) + eps)"""

    def __init__(self, lr: float = 1e-3, rho: float = 0.9, eps: float = 1e-8):
        self.lr, self.rho, self.eps, self.s = lr, rho, eps, None

    def step(self, params, grads):
        if self.s is None:
            self.s = [np.zeros_like(p) for p in params]
        for p, g, s in zip(params, grads, self.s):
            s *= self.rho
            s += (1 - self.rho) * g * g
            p -= self.lr * g / (np.sqrt(s) + self.eps)


class Adam:
    """Adam (Kingma & Ba 2015): momentum on g and RMSProp on g^2, both bias-corrected. Taught in lesson 01, section 5.

    m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;
    theta <- theta - lr * m_hat / (sqrt(v_hat) + eps), with m_hat = m/(1-b1^t), v_hat = v/(1-b2^t).
    """

    def __init__(self, lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, beta1, beta2, eps
        self.m = self.v = None
        self.t = 0

    def step(self, params, grads):
        if self.m is None:
            self.m = [np.zeros_like(p) for p in params]
            self.v = [np.zeros_like(p) for p in params]
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


OPTIMIZERS = {"SGD": SGD, "Momentum": Momentum, "RMSProp": RMSProp, "Adam": Adam}


def add_weight_penalty(weights, grads, l1: float = 0.0, l2: float = 0.0) -> float:
    """Add L1/L2 penalties on ``weights`` to the loss and their gradients to ``grads``. Taught in lesson 01, section 6.

    penalty = l1 * sum|w| + l2 * sum w^2; gradient l1 * sign(w) + 2 * l2 * w, added in
    place to the gradient array paired with each weight. Returns the penalty value.
    ``weights`` and ``grads`` are parallel lists (the same arrays the optimiser sees).
    """
    total = 0.0
    for w, g in zip(weights, grads):
        if l1:
            total += l1 * np.abs(w).sum()
            g += l1 * np.sign(w)
        if l2:
            total += l2 * (w * w).sum()
            g += 2 * l2 * w
    return float(total)


def clip_global_norm(grads, max_norm: float) -> float:
    """Scale all gradients together so their joint L2 norm is at most ``max_norm``. Taught in lesson 02, section 5.

    Returns the norm before clipping. The direction of the update is unchanged, only its
    length; this tames exploding gradients but cannot revive vanished ones.
    """
    if max_norm <= 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
    if norm > max_norm:
        for g in grads:
            g *= max_norm / (norm + 1e-12)
    return norm
