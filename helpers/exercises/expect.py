"""The expectations a checker's checks use: compare the student's output with the right one and
raise :class:`ExerciseFailed` with an "expected ..., got ..." message (values, shapes, gradients
against PyTorch autograd and against finite differences)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch

from helpers.lib.gradcheck import numerical_gradient, relative_error


class ExerciseFailed(AssertionError):
    """One check of an exercise failed; the message says expected vs got."""


def as_array(v: Any) -> np.ndarray:
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu().numpy()
    return np.asarray(v)


def short_repr(v: Any, n: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= n else text[:n - 3] + "..."


# ----------------------------------------------------------------------------- expectations for checks
def expect_close(got, expected, what: str, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """Fail unless ``got`` equals ``expected`` (arrays or numbers) within tolerance; the message
    names ``what`` and says expected vs got (shapes first)."""
    got_a, exp_a = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if got_a.shape != exp_a.shape:
        raise ExerciseFailed(f"{what}: expected shape {exp_a.shape}, got {got_a.shape}")
    if not np.all(np.isfinite(got_a)):
        raise ExerciseFailed(f"{what}: expected finite numbers, got {np.array2string(got_a, precision=4)}")
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
    """Fail unless ``got`` is a tuple (or list) of ``len(names)`` values, named in the message."""
    if not isinstance(got, (tuple, list)) or len(got) != len(names):
        what = f"{type(got).__name__} of length {len(got)}" if isinstance(got, (tuple, list)) else type(got).__name__
        raise ExerciseFailed(f"return a tuple of {len(names)} values ({', '.join(names)}), got a {what}")


# ----------------------------------------------------------------------------- gradients
def torch_gradients(forward: Callable[..., torch.Tensor], inputs: Sequence[np.ndarray],
                    dout: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """The output of a PyTorch computation and its gradients with respect to each input.

    ``forward(*tensors) -> tensor`` is the forward pass the student differentiates by hand, written
    with torch operations. Floating ``inputs`` become float64 tensors that require gradients,
    integer ones (token ids) int64 tensors. The scalar differentiated is ``sum(output * dout)``
    (``dout`` has the output's shape), or the output itself when ``dout`` is None (a scalar loss).
    Returns (output as a float64 array, [gradient array of each input's shape, None for integers]).
    """
    tensors = []
    for a in inputs:
        a = np.asarray(a)
        if a.dtype.kind == "f":
            tensors.append(torch.tensor(a, dtype=torch.float64, requires_grad=True))
        else:
            tensors.append(torch.tensor(a, dtype=torch.int64))
    out = forward(*tensors)
    scalar = out if dout is None else (out * torch.as_tensor(np.asarray(dout), dtype=torch.float64)).sum()
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


def numerical_gradients(loss: Callable[..., float], inputs: Sequence[np.ndarray], h: float = 1e-5) -> list[np.ndarray | None]:
    """Centred finite-difference gradients of the scalar ``loss(*inputs)`` with respect to each
    floating input (None for integer inputs); float64 copies are perturbed, never the inputs."""
    arrays = [np.array(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else np.asarray(a) for a in inputs]
    grads = []
    for a in arrays:
        grads.append(numerical_gradient(lambda: float(loss(*arrays)), a, h) if a.dtype.kind == "f" else None)
    return grads


def expect_gradients(got: Sequence, expected: Sequence, names: Sequence[str], against: str,
                     tol: float = 1e-6) -> None:
    """Fail unless each ``got[i]`` equals ``expected[i]`` (skipped where expected is None): shape
    first (saying when it is the transpose), then a relative error below ``tol``. ``against``
    names the source of the expected values in the message ("PyTorch", "finite differences")."""
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
            raise ExerciseFailed(f"{name}: expected finite numbers, got {np.array2string(g, precision=4)}")
        err = relative_error(g, e)
        if err > tol:
            raise ExerciseFailed(f"{name}: relative error {err:.1e} against {against} (tolerance {tol:.0e}); "
                                 f"expected {np.array2string(np.asarray(e), precision=4, threshold=12)}, "
                                 f"got {np.array2string(g, precision=4, threshold=12)}")


def expect_gradients_match_torch(got: Sequence, forward: Callable[..., torch.Tensor], inputs: Sequence[np.ndarray],
                                 names: Sequence[str], dout: np.ndarray | None = None, tol: float = 1e-6) -> None:
    """Fail unless the student's gradients ``got`` (one per input, same order) equal PyTorch
    autograd's for ``forward`` (see :func:`torch_gradients`). Integer inputs are skipped."""
    _, expected = torch_gradients(forward, inputs, dout)
    expect_gradients(got, expected, names, "PyTorch autograd", tol)


def expect_gradients_match_numerical(got: Sequence, loss: Callable[..., float], inputs: Sequence[np.ndarray],
                                     names: Sequence[str], tol: float = 1e-6) -> None:
    """Fail unless the student's gradients ``got`` (one per input, same order) equal the centred
    finite differences of the scalar ``loss(*inputs)`` (see :func:`numerical_gradients`)."""
    expect_gradients(got, numerical_gradients(loss, inputs), names, "finite differences", tol)
