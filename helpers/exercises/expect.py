"""What a checker's checks expect: values, shapes, and gradients against PyTorch autograd and
finite differences, each failing with :class:`ExerciseFailed` "expected ..., got ..."."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch

from helpers.lib.gradcheck import numerical_gradient, relative_error


class ExerciseFailed(AssertionError):
    """One check of an exercise failed; the message says expected vs got."""


def as_array(v: Any) -> np.ndarray:
    """``v`` (a tensor, array, number or list) as a NumPy array."""
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu().numpy()
    return np.asarray(v)


def short_repr(v: Any, n: int = 60) -> str:
    """``repr(v)``, cut to ``n`` characters."""
    text = repr(v)
    return text if len(text) <= n else text[:n - 3] + "..."


# ---------------------------------------------------------------- values
def expect_close(got, expected, what: str, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """Fail unless ``got`` equals ``expected`` within tolerance (shapes first)."""
    got_a, exp_a = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if got_a.shape != exp_a.shape:
        raise ExerciseFailed(f"{what}: expected shape {exp_a.shape}, got {got_a.shape}")
    if not np.all(np.isfinite(got_a)):
        raise ExerciseFailed(f"{what}: expected finite numbers, "
                             f"got {np.array2string(got_a, precision=4)}")
    if not np.allclose(got_a, exp_a, rtol=rtol, atol=atol):
        raise ExerciseFailed(f"{what}: expected {np.array2string(exp_a, precision=4)}, "
                             f"got {np.array2string(got_a, precision=4)}")


def expect_equal(got, expected, what: str) -> None:
    """Fail unless ``got == expected`` (exact; arrays compared element-wise, shapes first)."""
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        ok = np.shape(got) == np.shape(expected) and np.array_equal(got, expected)
    else:
        ok = got == expected
    if not ok:
        raise ExerciseFailed(f"{what}: expected {expected!r}, got {got!r}")


def expect_tuple(got, names: Sequence[str]) -> None:
    """Fail unless ``got`` is a tuple (or list) of ``len(names)`` values."""
    if not isinstance(got, (tuple, list)) or len(got) != len(names):
        what = type(got).__name__
        if isinstance(got, (tuple, list)):
            what += f" of length {len(got)}"
        raise ExerciseFailed(f"return a tuple of {len(names)} values ({', '.join(names)}), "
                             f"got a {what}")


# ---------------------------------------------------------------- gradients
def torch_gradients(forward: Callable[..., torch.Tensor], inputs: Sequence[np.ndarray],
                    dout: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """(output, [gradient of each input]) of ``forward(*tensors)`` by PyTorch autograd, in float64
    (integer inputs: None), of ``sum(output * dout)`` or of the output when ``dout`` is None."""
    tensors = []
    for a in inputs:
        a = np.asarray(a)
        if a.dtype.kind == "f":
            tensors.append(torch.tensor(a, dtype=torch.float64, requires_grad=True))
        else:
            tensors.append(torch.tensor(a, dtype=torch.int64))
    out = forward(*tensors)
    if dout is None:
        scalar = out
    else:
        scalar = (out * torch.as_tensor(np.asarray(dout), dtype=torch.float64)).sum()
    if scalar.requires_grad:                   # False when the output depends on no input
        scalar.backward()
    grads = []
    for t in tensors:
        if not t.requires_grad:
            grads.append(None)
        elif t.grad is None:                   # the output does not depend on this input
            grads.append(np.zeros(tuple(t.shape)))
        else:
            grads.append(t.grad.numpy().copy())
    return out.detach().numpy().astype(np.float64), grads


def numerical_gradients(loss: Callable[..., float], inputs: Sequence[np.ndarray],
                        h: float = 1e-5) -> list[np.ndarray | None]:
    """Centred finite-difference gradients of ``loss(*inputs)`` for each floating input (None for
    integer ones), perturbing float64 copies, never the inputs."""
    arrays = [np.array(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else np.asarray(a)
              for a in inputs]
    return [numerical_gradient(lambda: float(loss(*arrays)), a, h) if a.dtype.kind == "f" else None
            for a in arrays]


def expect_gradients(got: Sequence, expected: Sequence, names: Sequence[str], against: str,
                     tol: float = 1e-6) -> None:
    """Fail unless each ``got[i]`` matches ``expected[i]`` (None: skipped): shape first (naming a
    transpose), then relative error below ``tol``; ``against`` names where expected came from."""
    for name, g, e in zip(names, got, expected, strict=True):
        if e is None:
            continue
        try:
            g = as_array(g).astype(float)
        except (TypeError, ValueError):
            raise ExerciseFailed(f"{name}: expected an array of numbers of shape {np.shape(e)}, "
                                 f"got {short_repr(g)}") from None
        if g.shape != np.shape(e):
            transposed = g.ndim == 2 and g.shape == np.shape(e)[::-1]
            raise ExerciseFailed(f"{name}: expected shape {np.shape(e)}, got {g.shape}"
                                 + (" (the transpose)" if transposed else ""))
        if not np.all(np.isfinite(g)):
            raise ExerciseFailed(f"{name}: expected finite numbers, "
                                 f"got {np.array2string(g, precision=4)}")
        err = relative_error(g, e)
        if err > tol:
            raise ExerciseFailed(
                f"{name}: relative error {err:.1e} against {against} (tolerance {tol:.0e}); "
                f"expected {np.array2string(np.asarray(e), precision=4, threshold=12)}, "
                f"got {np.array2string(g, precision=4, threshold=12)}")


def expect_gradients_match_torch(got: Sequence, forward: Callable[..., torch.Tensor],
                                 inputs: Sequence[np.ndarray], names: Sequence[str],
                                 dout: np.ndarray | None = None, tol: float = 1e-6) -> None:
    """Fail unless the gradients ``got`` (one per input) equal autograd's for ``forward``."""
    _, expected = torch_gradients(forward, inputs, dout)
    expect_gradients(got, expected, names, "PyTorch autograd", tol)


def expect_gradients_match_numerical(got: Sequence, loss: Callable[..., float],
                                     inputs: Sequence[np.ndarray], names: Sequence[str],
                                     tol: float = 1e-6) -> None:
    """Fail unless the gradients ``got`` (one per input) equal finite differences of ``loss``."""
    expect_gradients(got, numerical_gradients(loss, inputs), names, "finite differences", tol)
