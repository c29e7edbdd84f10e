"""Checking hand-written gradients: finite differences (float64) and PyTorch (lesson 01)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """max |a − b| / max(|a| + |b|), 0 when both are zero; shapes must match (lesson 01 §4)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    denom = np.max(np.abs(a) + np.abs(b)) if a.size else 0.0
    return 0.0 if denom == 0 else float(np.max(np.abs(a - b)) / denom)


def numerical_gradient(f: Callable[[], float], x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Centred finite differences of the scalar ``f()`` with respect to ``x``, perturbed in place
    (lesson 01 §4); a loss that samples must re-seed inside ``f``."""
    if x.dtype != np.float64:
        raise TypeError(f"finite differences need float64 arrays, got {x.dtype}")
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        f_plus = f()
        x[i] = old - h
        f_minus = f()
        x[i] = old
        grad[i] = (f_plus - f_minus) / (2 * h)
    return grad


@dataclass
class GradReport:
    """Relative errors of hand-written against numerical gradients, by name (lesson 01 §4)."""

    errors: dict[str, float] = field(default_factory=dict)
    tol: float = 1e-6

    @property
    def ok(self) -> bool:
        return all(e < self.tol for e in self.errors.values())

    def __str__(self) -> str:
        lines = [f"{'OK ' if e < self.tol else 'BAD'} {name:>12s}: relative error {e:.2e}"
                 for name, e in self.errors.items()]
        return "\n".join(lines + [f"(tolerance {self.tol:.0e})"])


def check_layer(layer, *inputs: np.ndarray, dout: np.ndarray | None = None,
                rng: np.random.Generator | None = None, reset: Callable[[], None] | None = None,
                h: float = 1e-5, tol: float = 1e-6) -> GradReport:
    """Gradient-check a layer's parameters and first input by finite differences (lesson 01 §4),
    on ``sum(forward(*inputs) * dout)``; ``reset()`` runs before every forward."""
    if len(layer.params) != len(layer.grads):
        raise ValueError(f"{type(layer).__name__} has {len(layer.params)} params but "
                         f"{len(layer.grads)} grads; every parameter needs its gradient array")

    def forward():
        if reset is not None:
            reset()
        return layer.forward(*inputs)

    out = forward()
    if dout is None:
        dout = (rng or np.random.default_rng(0)).standard_normal(np.shape(out))
    dx = layer.backward(dout)
    wrt, analytic = list(layer.params), [g.copy() for g in layer.grads]
    names = [f"param[{k}]" for k in range(len(wrt))]
    if inputs and np.issubdtype(np.asarray(inputs[0]).dtype, np.floating):
        wrt, analytic, names = wrt + [inputs[0]], analytic + [dx], names + ["input"]
    return check_function(lambda: float(np.sum(forward() * dout)), wrt, analytic, names, h, tol)


def check_function(f: Callable[[], float], wrt: Sequence[np.ndarray],
                   analytic: Sequence[np.ndarray], names: Sequence[str] | None = None,
                   h: float = 1e-5, tol: float = 1e-6) -> GradReport:
    """Gradient-check ``analytic``, the gradients of the scalar ``f()`` with respect to the
    arrays ``wrt``, against finite differences (lesson 02 §3)."""
    names = names or [f"arg[{i}]" for i in range(len(wrt))]
    if not len(names) == len(wrt) == len(analytic):
        raise ValueError(f"check_function: {len(wrt)} arrays (wrt), {len(analytic)} analytic "
                         f"gradients and {len(names)} names; they must pair up")
    report = GradReport(tol=tol)
    for name, x, g in zip(names, wrt, analytic, strict=True):
        if np.shape(g) != np.shape(x):
            raise ValueError(f"gradient for {name} has shape {np.shape(g)}, expected {np.shape(x)}")
        report.errors[name] = relative_error(g, numerical_gradient(f, x, h))
    return report


def assert_close_to_torch(ours: np.ndarray, theirs, name: str, rtol: float = 1e-5,
                          atol: float = 1e-7) -> None:
    """Assert a NumPy result equals a PyTorch tensor or array, saying where not (lesson 01 §4)."""
    if hasattr(theirs, "detach"):
        theirs = theirs.detach().cpu().numpy()
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if ours.shape != theirs.shape:
        raise AssertionError(f"{name}: expected shape {theirs.shape} (PyTorch), got {ours.shape}")
    if not np.allclose(ours, theirs, rtol=rtol, atol=atol):
        diff = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
        where = np.unravel_index(np.argmax(diff), diff.shape)
        raise AssertionError(f"{name}: differs from PyTorch by up to {diff.max():.3e} at index "
                             f"{tuple(int(i) for i in where)} (expected {theirs[where]!r}, got "
                             f"{ours[where]!r}; rtol={rtol}, atol={atol})")
