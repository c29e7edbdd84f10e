"""Refuse an exercise answer that calls the course's own implementation instead of being one.

An exercise asks the student to write, say, a stable softmax. ``helpers.lib.layers.softmax``
already computes it, and a function ``lambda z: softmax(z)`` would pass every numerical check. A
checker therefore looks at the *code* of the answer before running it:
:func:`library_shortcut` returns the name of the first forbidden object the answer uses — the
object itself, a function whose code refers to it (by a global name, a module attribute such as
``layers.softmax``, or a closure), or a class it instantiates — following the student's own
helper functions (functions defined in the notebook) to any depth.

This reads names, it does not run the code: ``getattr(layers, "soft" + "max")`` would slip
through. It is a guard against the honest shortcut, not a sandbox.
"""
from __future__ import annotations

import functools
import inspect
import sys
import types
from typing import Any, Callable, Iterable


def _qualified(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    return f"{module}.{name}" if module else name


def _unwrap(obj: Any) -> Any:
    """The function behind a partial, a bound method or a staticmethod/classmethod."""
    for _ in range(10):
        if isinstance(obj, functools.partial):
            obj = obj.func
        elif isinstance(obj, (types.MethodType, staticmethod, classmethod)):
            obj = obj.__func__
        else:
            return obj
    return obj


def _is_forbidden(obj: Any, forbidden: list[Any]) -> bool:
    obj = _unwrap(obj)
    return any(obj is f for f in forbidden)


def _code_names(code: types.CodeType) -> set[str]:
    """Every global and attribute name a code object (and the code nested in it) refers to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _is_students_own(fn: Any) -> bool:
    """True for a plain function written outside the course package (the notebook's own code)."""
    module = getattr(fn, "__module__", None) or ""
    return inspect.isfunction(fn) and not module.startswith(("helpers", "numpy", "scipy", "torch"))


def _through_module(module: types.ModuleType, names: set[str], forbidden: list[Any], depth: int = 5) -> str | None:
    """A forbidden object reached from ``module`` by attribute names the code uses
    (``helpers.lib.layers.softmax`` is helpers -> lib -> layers -> softmax)."""
    level, seen = [module], {id(module)}
    for _ in range(depth):
        below = []
        for mod in level:
            for attr in names:
                sub = getattr(mod, attr, None)
                if sub is None:
                    continue
                if _is_forbidden(sub, forbidden):
                    return _qualified(_unwrap(sub))
                if isinstance(sub, types.ModuleType) and id(sub) not in seen:
                    seen.add(id(sub))
                    below.append(sub)
        level = below
    return None


def library_shortcut(candidate: Callable, forbidden: Iterable[Any] = ()) -> str | None:
    """The qualified name of the first forbidden object ``candidate`` is or uses, else None.

    ``forbidden``: the course objects the exercise must not call (functions, classes, methods).
    The student's own functions that ``candidate`` calls are followed too.
    """
    forbidden = [_unwrap(f) for f in forbidden]
    seen: set[int] = set()
    todo = [candidate]
    while todo:
        fn = _unwrap(todo.pop())
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if _is_forbidden(fn, forbidden):
            return _qualified(fn)
        if inspect.isclass(fn) and not (fn.__module__ or "").startswith("helpers"):
            todo.extend(v for v in vars(fn).values() if inspect.isfunction(_unwrap(v)))
            continue
        if (getattr(fn, "__module__", None) or "").startswith("helpers."):
            continue   # the course's own code (a checker's typical wrong answer): only its identity counts
        if not inspect.isfunction(fn):
            call = vars(type(fn)).get("__call__")     # a callable object of the student's class
            if call is not None and _is_students_own(call):
                todo.append(call)
            continue
        names = _code_names(fn.__code__)
        scope = dict(fn.__globals__)
        for cell_name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                scope[cell_name] = cell.cell_contents
                names.add(cell_name)
            except ValueError:          # an empty closure cell
                pass
        for name in sorted(names):
            if name in scope:
                value = scope[name]
            elif name in sys.modules:      # `from helpers.lib.layers import softmax` inside the function
                value = sys.modules[name]
            else:
                continue
            if _is_forbidden(value, forbidden):
                return _qualified(_unwrap(value))
            if isinstance(value, types.ModuleType):
                found = _through_module(value, names, forbidden)
                if found:
                    return found
            elif _is_students_own(_unwrap(value)) or (inspect.isclass(value)
                                                      and not (value.__module__ or "").startswith("helpers")):
                todo.append(value)
    return None
