"""Watch what a student's answer runs, and refuse the shortcuts an exercise forbids (autograd,
optimisers, ``forbidden``), however reached; a refusal raises :class:`Refused`."""
from __future__ import annotations

import inspect
import os
import sys
import threading
import types
from typing import Any, Iterable

# (folder or file inside site-packages, why it is refused); "/" separators
LIBRARY_SHORTCUTS = (
    ("torch/autograd/", "PyTorch's autograd computes the gradient for you"),
    ("torch/_functorch/", "torch.func computes the gradient for you"),
    ("torch/func/", "torch.func computes the gradient for you"),
    ("torch/optim/", "a PyTorch optimiser takes the step for you"),
    ("torch/nn/utils/clip_grad.py", "PyTorch's clipping clips for you"),
    ("scipy/optimize/", "SciPy's optimisers and numerical derivatives do the work for you"),
    ("scipy/differentiate/", "SciPy's differentiation computes the derivative for you"),
    ("autograd/", "an autodiff library computes the gradient for you"),
    ("jax/", "JAX computes the gradient for you"),
)
# library files that do no differentiation (``with torch.no_grad():`` is fine)
HARMLESS = {"torch/autograd/grad_mode.py"}
# C functions behind autograd, reached without the Python wrappers
BUILTIN_SHORTCUTS = {"run_backward": "PyTorch's autograd computes the gradient for you",
                     "_fused_adam_": "a PyTorch optimiser takes the step for you",
                     "_fused_adamw_": "a PyTorch optimiser takes the step for you"}


class Refused(BaseException):
    """The student's answer called something the exercise forbids; the message says what and why."""


def _code_objects(obj: Any) -> list[types.CodeType]:
    """The code objects of a function, method, property or class, nested ones included."""
    if isinstance(obj, (staticmethod, classmethod, types.MethodType)):
        obj = obj.__func__
    if isinstance(obj, property):
        return [c for f in (obj.fget, obj.fset) if f is not None for c in _code_objects(f)]
    if inspect.isclass(obj):
        return [c for value in vars(obj).values() for c in _code_objects(value)]
    code = getattr(inspect.unwrap(obj) if callable(obj) else obj, "__code__", None)
    return _walk(code) if isinstance(code, types.CodeType) else []


def _walk(code: types.CodeType) -> list[types.CodeType]:
    return [code] + [inner for c in code.co_consts if isinstance(c, types.CodeType)
                     for inner in _walk(c)]


def _where(code: types.CodeType) -> tuple[str, int, str]:
    """A code object's file, first line and name: the same after a module is reloaded."""
    return os.path.realpath(code.co_filename), code.co_firstlineno, code.co_name


def _name(obj: Any) -> str:
    module = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj)))
    return f"{module}.{name}".lstrip(".")


def _library_shortcut(code: types.CodeType) -> str | None:
    """Why a call into this library code is refused, or None."""
    path = code.co_filename.replace(os.sep, "/")
    if "site-packages/" not in path:
        return None
    inside = path.split("site-packages/")[-1]
    if inside in HARMLESS:
        return None
    if inside == "torch/_tensor.py" and code.co_name == "backward":
        return "PyTorch's autograd computes the gradient for you (Tensor.backward)"
    for where, why in LIBRARY_SHORTCUTS:
        if inside.startswith(where):
            return f"{why} ({code.co_name} in {inside})"
    return None


class Watch:
    """A context manager that refuses calls into ``forbidden`` (functions, classes, methods)
    while its block runs; ``refusal`` is then the first refusal's reason, or None."""


    def __init__(self, forbidden: Iterable[Any] = ()):
        self.course: dict[tuple, str] = {}
        self.builtins: dict[int, str] = {}
        for obj in forbidden:
            codes = _code_objects(obj)
            self.course.update({_where(c): _name(obj) for c in codes})
            if not codes and callable(obj):
                self.builtins[id(obj)] = _name(obj)
        self.seen: dict[types.CodeType, str | None] = {}
        self.refusal: str | None = None
        self._before = None

    def _why(self, code: types.CodeType) -> str | None:
        if code not in self.seen:
            name = self.course.get(_where(code))
            self.seen[code] = (_library_shortcut(code) if name is None else
                               f"it uses the course's own {name}, which is what the exercise asks "
                               "you to write")
        return self.seen[code]

    def _refuse(self, why: str) -> None:
        if self.refusal is None:
            self.refusal = why
        raise Refused(why)

    def _profile(self, frame, event, arg):
        if event == "call":
            why = self._why(frame.f_code)
        elif event == "c_call":
            name = self.builtins.get(id(arg))
            why = (f"it calls {name}, which does the exercise's work for you" if name else
                   BUILTIN_SHORTCUTS.get(getattr(arg, "__name__", "")))
        else:
            return
        if why is not None:
            self._refuse(why)

    def __enter__(self) -> "Watch":
        self._before = sys.getprofile()
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc) -> bool:
        sys.setprofile(self._before)
        threading.setprofile(None)
        return False
