"""Optimisers and weight penalties for lists of NumPy arrays, updated in place (lesson 01):
``step(params, grads)`` moves ``params[i]`` against ``grads[i]``."""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import all_finite


def array_list(arrays, where: str, what: str = "gradient") -> list[np.ndarray]:
    """``arrays`` as a list of NumPy arrays; one bare array is refused (lesson 01 §5)."""
    if isinstance(arrays, np.ndarray):
        raise TypeError(f"{where}: the {what}s must be a list of arrays, got one array of shape "
                        f"{arrays.shape}; wrap it in a list: [array]")
    arrays = list(arrays)
    for i, x in enumerate(arrays):
        if not isinstance(x, np.ndarray):
            raise TypeError(f"{where}: {what} {i} is a {type(x).__name__}, not a NumPy array "
                            "(arrays are updated in place)")
    return arrays


def check_parallel(params, grads, where: str, names: tuple[str, str] = ("parameter", "gradient")):
    """Two lists of arrays that pair up, in length and shapes (lesson 01 §5)."""
    a, b = names
    params, grads = array_list(params, where, a), array_list(grads, where, b)
    if len(params) != len(grads):
        raise ValueError(f"{where}: {len(params)} {a}s but {len(grads)} {b}s; the two lists must "
                         f"be parallel ({b} i belongs to {a} i)")
    for i, (p, g) in enumerate(zip(params, grads, strict=True)):
        if p.shape != g.shape:
            raise ValueError(f"{where}: {b} {i} has shape {g.shape}, but {a} {i} has shape "
                             f"{p.shape}")
    return params, grads


class Optimizer:
    """What every optimiser shares: the checks of ``step``, and its state's arrays (lesson 01 §5).
    """

    def __init__(self, lr: float, **decays: float):
        name = type(self).__name__
        if not (lr > 0 and np.isfinite(lr)):
            raise ValueError(f"{name}: the learning rate must be a positive number, got {lr}")
        for key, value in decays.items():
            if not 0 <= value < 1:
                raise ValueError(f"{name}: {key} must lie in [0, 1), got {value}")
        self.lr, self.state_params = lr, None

    def step(self, params, grads) -> None:
        where = f"{type(self).__name__}.step"
        params, grads = check_parallel(params, grads, where)
        for i, g in enumerate(grads):
            if not all_finite(g):
                raise ValueError(f"{where}: gradient {i} (shape {g.shape}) holds inf or nan; "
                                 "training has diverged (try a smaller learning rate)")
        if len({id(p) for p in params}) != len(params):
            raise ValueError(f"{where}: an array is listed twice and would be updated twice; "
                             "list a shared (tied) array once, with the sum of its gradients")
        self.update(params, grads)

    def update(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        raise NotImplementedError

    def first_step(self, params: list[np.ndarray]) -> bool:
        """True on the first step (create the state now); later, refuse other arrays than then."""
        if self.state_params is None:
            self.state_params = list(params)
            return True
        if len(params) != len(self.state_params) or any(
                new is not old for new, old in zip(params, self.state_params, strict=True)):
            raise ValueError(f"{type(self).__name__}.step: these are not the arrays the state was "
                             "made for (one was added, removed or replaced by a new array); update "
                             "parameters in place (p[...] = ...), or make a new optimiser")
        return False


class SGD(Optimizer):
    """Plain gradient descent, θ ← θ − η g (lesson 01 §5)."""

    def __init__(self, lr: float = 0.1):
        super().__init__(lr)

    def update(self, params, grads):
        for p, g in zip(params, grads, strict=True):
            p -= self.lr * g


class Momentum(Optimizer):
    """Heavy-ball momentum: v ← βv − ηg, θ ← θ + v (lesson 01 §5)."""

    def __init__(self, lr: float = 0.05, beta: float = 0.9):
        super().__init__(lr, beta=beta)
        self.beta = beta

    def update(self, params, grads):
        if self.first_step(params):
            self.v = [np.zeros_like(p) for p in params]
        for p, g, v in zip(params, grads, self.v, strict=True):
            v *= self.beta
            v -= self.lr * g
            p += v


class RMSProp(Optimizer):
    """s ← ρs + (1 − ρ)g², θ ← θ − η g / (√s + ε): a step size per parameter (lesson 01 §5)."""

    def __init__(self, lr: float = 1e-3, rho: float = 0.9, eps: float = 1e-8):
        super().__init__(lr, rho=rho)
        self.rho, self.eps = rho, eps

    def update(self, params, grads):
        if self.first_step(params):
            self.s = [np.zeros_like(p) for p in params]
        for p, g, s in zip(params, grads, self.s, strict=True):
            s *= self.rho
            s += (1 - self.rho) * g * g
            p -= self.lr * g / (np.sqrt(s) + self.eps)


def adam_update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int,
                lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
    """One Adam step for one array, as a pure function: the new ``(p, m, v)`` (lesson 01 §5):
    m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g², p ← p − η m̂ / (√v̂ + ε), m̂ = m/(1 − β₁ᵗ),
    v̂ = v/(1 − β₂ᵗ) at step ``t`` (from 1), as ``torch.optim.Adam``."""
    if int(t) != t or t < 1:
        raise ValueError(f"adam_update: t is the number of the step, counted from 1; got {t!r}")
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    return p - lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps), m, v


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015), :func:`adam_update` on every array of the list (lesson 01 §5)."""

    def __init__(self, lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8):
        super().__init__(lr, beta1=beta1, beta2=beta2)
        self.betas, self.eps, self.t = (beta1, beta2), eps, 0     # t: the steps taken so far

    def update(self, params, grads):
        if self.first_step(params):
            self.m, self.v = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params]
            self.t = 0
        self.t += 1
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            p[...], self.m[i], self.v[i] = adam_update(p, g, self.m[i], self.v[i], self.t, self.lr,
                                                       *self.betas, self.eps)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019) (lesson 01 §10): θ ← (1 − η λ) θ,
    then the Adam step on the loss's gradient alone, as ``torch.optim.AdamW``."""

    def __init__(self, lr: float = 1e-3, weight_decay: float = 1e-2, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8):
        if not (np.isfinite(weight_decay) and weight_decay >= 0):
            raise ValueError(f"weight_decay must be finite and >= 0, got {weight_decay}")
        super().__init__(lr, beta1, beta2, eps)
        self.weight_decay = weight_decay

    def update(self, params, grads):
        for p in params:
            p *= 1 - self.lr * self.weight_decay
        super().update(params, grads)


def add_weight_penalty(weights, grads, l1: float = 0.0, l2: float = 0.0) -> float:
    """Add the gradient of l1·Σ|w| + l2·Σw² to ``grads``; return the penalty (lesson 01 §10)."""
    if not (l1 >= 0 and l2 >= 0 and np.isfinite(l1) and np.isfinite(l2)):
        raise ValueError(f"the penalty strengths must be finite and >= 0, got l1={l1}, l2={l2}")
    weights, grads = check_parallel(weights, grads, "add_weight_penalty", ("weight", "gradient"))
    total = 0.0
    for w, g in zip(weights, grads, strict=True):
        if l1:
            total += l1 * np.abs(w).sum()
            g += l1 * np.sign(w)
        if l2:
            total += l2 * (w * w).sum()
            g += 2 * l2 * w
    return float(total)


def clip_global_norm(grads, max_norm: float) -> float:
    """Scale all gradients together, in place, to a joint L2 norm of at most ``max_norm``; returns
    the norm before clipping (lesson 02 §5)."""
    if not max_norm > 0:
        raise ValueError(f"max_norm must be positive, got {max_norm}")
    grads = array_list(grads, "clip_global_norm")
    for i, g in enumerate(grads):
        if not all_finite(g):
            raise ValueError(f"clip_global_norm: gradient {i} (shape {g.shape}) holds inf or nan; "
                             "training has diverged (try a smaller learning rate)")
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads)))
    if norm > max_norm:
        for g in grads:
            g *= max_norm / (norm + 1e-12)
    return norm


def clip_adam_step(params, grads, m, v, t: int, lr: float, max_norm: float = 1.0,
                   beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
    """Clip the gradients' global norm (as ``torch.nn.utils.clip_grad_norm_``), then
    :func:`adam_update`, as a pure function on lists: new (params, m, v) (lesson 04 §8)."""
    params, grads = check_parallel(params, grads, "clip_adam_step")
    if not (isinstance(t, (int, np.integer)) and t >= 1):
        raise ValueError(f"clip_adam_step: t counts the steps from 1, got {t!r}")
    norm = float(np.sqrt(sum(float(np.sum(np.square(g))) for g in grads)))
    scale = max_norm / (norm + 1e-6) if norm > max_norm else 1.0
    steps = [adam_update(p, g * scale, m_, v_, t, lr, beta1, beta2, eps)
             for p, g, m_, v_ in zip(params, grads, m, v, strict=True)]
    return [s[0] for s in steps], [s[1] for s in steps], [s[2] for s in steps]
