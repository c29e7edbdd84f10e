"""Optimisers and weight penalties for parameter lists (NumPy, updated in place).

All optimisers share ``step(params, grads)``: ``params[i] -= (update from grads[i])``.
``params`` and ``grads`` are parallel lists of arrays (a model's ``params`` and ``grads``).
State (velocities, moment estimates) is kept per parameter position, so a stateful
optimiser remembers the arrays it was first stepped with and refuses a different list later
(a parameter added, removed or replaced): its state would belong to the wrong array, or the
new array would never be updated. Make a new optimiser, or call ``reset()``, when the model
changes.
"""
from __future__ import annotations

import numpy as np

from helpers.lib.checks import all_finite


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def array_list(arrays, where: str, what: str = "gradient") -> list[np.ndarray]:
    """``arrays`` as a list, checked: a list of NumPy arrays, not one array. Taught in lesson 01, section 5.

    Raises TypeError when ``arrays`` is itself an array (iterating it would give rows or
    scalars, and a scalar cannot be updated in place) or an entry is not an array. ``what``
    names one entry in the message ("parameter", "gradient", ...).
    """
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
    """Check that two lists of arrays pair up: same length, each pair the same shape. Taught in lesson 01, section 5.

    Returns both as lists (so a generator may be passed). Raises TypeError as
    :func:`array_list` does, and ValueError naming the first length or shape that differs:
    ``zip`` would silently drop the extra entries, which would then never be updated.
    """
    a, b = names
    params, grads = array_list(params, where, a), array_list(grads, where, b)
    if len(params) != len(grads):
        raise ValueError(f"{where}: {_count(len(params), a)} but {_count(len(grads), b)}; the two lists must "
                         f"be parallel ({b} i belongs to {a} i)")
    for i, (p, g) in enumerate(zip(params, grads, strict=True)):
        if p.shape != g.shape:
            raise ValueError(f"{where}: {b} {i} has shape {g.shape}, but {a} {i} has shape {p.shape}")
    return params, grads


class Optimizer:
    """What every optimiser shares: checking ``step``'s lists, and the state's arrays. Taught in lesson 01, section 5.

    The learning rate must be a positive number and each decay rate (momentum, the running
    averages) lie in [0, 1). ``step(params, grads)`` checks the two lists with :func:`check_parallel` and refuses
    a gradient holding nan or inf (a step would spread it), then calls the
    subclass's ``update(params, grads)``. A stateful subclass calls :meth:`first_step` in
    ``update`` to know when to create its state; from then on every step must be given the
    very same arrays (checked by identity, in order). :meth:`reset` forgets the state.
    """

    def __init__(self, lr: float, **decays: float):
        name = type(self).__name__
        if not (lr > 0 and np.isfinite(lr)):
            raise ValueError(f"{name}: the learning rate must be a positive number, got {lr}")
        for key, value in decays.items():            # momentum and averaging rates: in [0, 1)
            if not 0 <= value < 1:
                raise ValueError(f"{name}: {key} must lie in [0, 1), got {value}")
        self.lr = lr
        self.state_params: list[np.ndarray] | None = None   # the arrays the state belongs to

    def step(self, params, grads) -> None:
        where = f"{type(self).__name__}.step"
        params, grads = check_parallel(params, grads, where)
        for i, g in enumerate(grads):       # the gradients only: a parameter turns nan through one of them
            if not all_finite(g):
                raise ValueError(f"{where}: gradient {i} (shape {g.shape}) holds inf or nan; training has "
                                 "diverged (try a smaller learning rate, or clip the gradients): a step "
                                 "would spread the nan to every parameter it updates")
        seen = {}
        for i, p in enumerate(params):
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}.step: parameters {seen[id(p)]} and {i} are the same "
                                 "array, which would be updated twice; list a shared (tied) array once, "
                                 "with the sum of its gradients")
            seen[id(p)] = i
        self.update(params, grads)

    def update(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        raise NotImplementedError

    def first_step(self, params: list[np.ndarray]) -> bool:
        """True on the first step (create the state now); later, check ``params`` are the same arrays."""
        name = type(self).__name__
        if self.state_params is None:
            self.state_params = list(params)
            return True
        if len(params) != len(self.state_params):
            change = "added" if len(params) > len(self.state_params) else "removed"
            raise ValueError(f"{name}.step: the optimiser's state was made for "
                             f"{_count(len(self.state_params), 'parameter')}, but it is now given "
                             f"{len(params)} (a parameter was {change}). "
                             "Make a new optimiser, or call reset(), when the model changes")
        for i, (old, new) in enumerate(zip(self.state_params, params, strict=True)):
            if new is not old:
                raise ValueError(f"{name}.step: parameter {i} (shape {new.shape}) is not the array the "
                                 f"optimiser's state was made for (shape {old.shape}): it was replaced "
                                 "by a new array. Update parameters in place (p[...] = ...), or make a "
                                 "new optimiser (or call reset())")
        return False

    def reset(self) -> None:
        """Forget the state (velocities, moments, step count): the next step starts afresh."""
        self.state_params = None


class SGD(Optimizer):
    """Plain stochastic gradient descent. Taught in lesson 01, section 5.

    theta <- theta - lr * g   (no state)"""

    def __init__(self, lr: float = 0.1):
        super().__init__(lr)

    def update(self, params, grads):
        for p, g in zip(params, grads, strict=True):
            p -= self.lr * g


class Momentum(Optimizer):
    """Gradient descent with (heavy-ball) momentum. Taught in lesson 01, section 5.

    v <- beta v - lr g;  theta <- theta + v   (heavy-ball momentum)"""

    def __init__(self, lr: float = 0.05, beta: float = 0.9):
        super().__init__(lr, beta=beta)
        self.beta, self.v = beta, None

    def update(self, params, grads):
        if self.first_step(params):
            self.v = [np.zeros_like(p) for p in params]
        for p, g, v in zip(params, grads, self.v, strict=True):
            v *= self.beta
            v -= self.lr * g
            p += v


class RMSProp(Optimizer):
    """RMSProp: steps scaled by a running root mean square of the gradient. Taught in lesson 01, section 5.

    s <- rho s + (1 - rho) g^2;  theta <- theta - lr g / (sqrt(s) + eps)"""

    def __init__(self, lr: float = 1e-3, rho: float = 0.9, eps: float = 1e-8):
        super().__init__(lr, rho=rho)
        self.rho, self.eps, self.s = rho, eps, None

    def update(self, params, grads):
        if self.first_step(params):
            self.s = [np.zeros_like(p) for p in params]
        for p, g, s in zip(params, grads, self.s, strict=True):
            s *= self.rho
            s += (1 - self.rho) * g * g
            p -= self.lr * g / (np.sqrt(s) + self.eps)


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015): momentum on g and RMSProp on g^2, both bias-corrected. Taught in lesson 01, section 5.

    m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;
    theta <- theta - lr * m_hat / (sqrt(v_hat) + eps), with m_hat = m/(1-b1^t), v_hat = v/(1-b2^t).
    """

    def __init__(self, lr: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
        super().__init__(lr, beta1=beta1, beta2=beta2)
        self.b1, self.b2, self.eps = beta1, beta2, eps
        self.m = self.v = None
        self.t = 0

    def update(self, params, grads):
        if self.first_step(params):
            self.m = [np.zeros_like(p) for p in params]
            self.v = [np.zeros_like(p) for p in params]
            self.t = 0
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for p, g, m, v in zip(params, grads, self.m, self.v, strict=True):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


def adam_update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int, lr: float = 1e-3,
                beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
    """One Adam step for one parameter array, as a pure function. Taught in lesson 01, section 5.

    ``p``, ``g``, ``m``, ``v``: the parameter, its gradient and the two moment estimates, all of one
    shape; ``t``: the number of this step, from 1. Returns the new ``(p, m, v)`` (new arrays; the
    inputs are not changed): m <- b1 m + (1-b1) g, v <- b2 v + (1-b2) g², then
    p <- p - lr m̂ / (√v̂ + eps) with m̂ = m/(1-b1^t), v̂ = v/(1-b2^t) — the same arithmetic as
    :class:`Adam` (and ``torch.optim.Adam``).
    """
    if int(t) != t or t < 1:
        raise ValueError(f"adam_update: t is the number of the step, counted from 1; got {t!r}")
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
    return p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019). Taught in lesson 01, section 7.

    theta <- theta - lr * weight_decay * theta, then the Adam step on the loss gradient alone —
    the order and the form of ``torch.optim.AdamW``. Unlike an L2 penalty added to the gradient
    (which Adam divides by sqrt(v_hat), so weights with large gradients are barely decayed), every
    weight shrinks by the same factor (1 - lr * weight_decay) per step.
    """

    def __init__(self, lr: float = 1e-3, weight_decay: float = 1e-2, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8):
        if not (np.isfinite(weight_decay) and weight_decay >= 0):
            raise ValueError(f"weight_decay must be finite and >= 0, got {weight_decay}")
        super().__init__(lr, beta1, beta2, eps)
        self.weight_decay = weight_decay

    def update(self, params, grads):
        for p in params:
            p *= 1 - self.lr * self.weight_decay
        super().update(params, grads)


OPTIMIZERS = {"SGD": SGD, "Momentum": Momentum, "RMSProp": RMSProp, "Adam": Adam, "AdamW": AdamW}


def add_weight_penalty(weights, grads, l1: float = 0.0, l2: float = 0.0) -> float:
    """Add L1/L2 penalties on ``weights`` to the loss and their gradients to ``grads``. Taught in lesson 01, section 7.

    penalty = l1 * sum|w| + l2 * sum w^2; gradient l1 * sign(w) + 2 * l2 * w, added in
    place to the gradient array paired with each weight. Returns the penalty value.
    ``weights`` and ``grads`` are parallel lists (the same arrays the optimiser sees);
    a length or shape that differs raises (see :func:`check_parallel`).
    """
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
    """Scale all gradients together so their joint L2 norm is at most ``max_norm``. Taught in lesson 02, section 5.

    Returns the norm before clipping. The direction of the update is unchanged, only its
    length; this tames exploding gradients but cannot revive vanished ones. ``grads`` is a
    list of arrays, scaled in place; a gradient holding inf or nan raises (no rescaling
    could repair it: the step before diverged).
    """
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


def clip_adam_step(params, grads, m, v, t: int, lr: float, max_norm: float = 1.0, beta1: float = 0.9,
                   beta2: float = 0.999, eps: float = 1e-8):
    """One training update as a function: clip the gradients' global norm, then an Adam step. Taught in lesson 04, section 8.

    ``params``, ``grads``, ``m``, ``v``: parallel lists of arrays (the first and second moments start
    at zero); ``t``: the step number, counted from 1. If the joint L2 norm of all gradients exceeds
    ``max_norm`` every gradient is scaled by max_norm / norm (as ``torch.nn.utils.clip_grad_norm_``,
    with its 1e-6 in the denominator); then m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g²,
    p ← p − lr · m̂ / (√v̂ + ε) with m̂ = m/(1 − β₁ᵗ), v̂ = v/(1 − β₂ᵗ) — :class:`Adam`'s update.
    Returns new lists (params, m, v); the arrays passed in are left unchanged.
    """
    params, grads = check_parallel(params, grads, "clip_adam_step")
    if not (isinstance(t, (int, np.integer)) and t >= 1):
        raise ValueError(f"clip_adam_step: t counts the steps from 1, got {t!r}")
    norm = float(np.sqrt(sum(float(np.sum(np.square(g))) for g in grads)))
    scale = max_norm / (norm + 1e-6) if norm > max_norm else 1.0
    new_p, new_m, new_v = [], [], []
    for p, g, m_, v_ in zip(params, grads, m, v, strict=True):
        g = g * scale
        m_ = beta1 * m_ + (1 - beta1) * g
        v_ = beta2 * v_ + (1 - beta2) * g * g
        new_p.append(p - lr * (m_ / (1 - beta1 ** t)) / (np.sqrt(v_ / (1 - beta2 ** t)) + eps))
        new_m.append(m_)
        new_v.append(v_)
    return new_p, new_m, new_v
