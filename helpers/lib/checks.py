"""The library's argument checks, in one place: token ids, masks, whole numbers, finite values.

Every function of :mod:`helpers.lib` that takes ids or a mask checks it here, so the same input
gets the same answer (and the same message) everywhere. The rules:

- **Ids** (token ids, class ids, positions in a table) have an integer dtype. A float id would
  be truncated (1.7 -> 1) and a bool would be read as 0/1, so both raise TypeError naming the
  argument. An id outside [0, n) raises :class:`IdOutOfRangeError` (a ValueError, and an
  IndexError for code that catches NumPy's) naming the range and the offending values: a
  negative id would otherwise silently pick a row from the end, one >= n fail deep inside NumPy.
- **Masks** are boolean, True meaning "attend" / "a real token" / "chosen". An integer array that
  holds only 0 and 1 is accepted and converted (Hugging Face's ``attention_mask`` is 0/1
  int64); any other integer raises ValueError naming the argument. A float mask raises
  TypeError: PyTorch *adds* a float ``attn_mask`` to the scores (0 keeps a key, -inf hides it),
  the opposite of what a 0/1 float would mean, so a float mask has no single meaning.
- **Counts and sizes** (k, T, a window, a length) are whole numbers: an int or a NumPy integer,
  never a bool or a float.
- **NaN and inf** are refused where a number is read or trained on (layers, losses, metrics,
  optimisers): a ValueError naming the argument and where the first one is, since every result
  computed from it would be nan too.

Arrays may be NumPy arrays, lists, or PyTorch tensors (for the PyTorch models); a tensor is
checked without leaving its device except to write the error message.
"""
from __future__ import annotations

import math
import numbers

import numpy as np


class IdOutOfRangeError(ValueError, IndexError):
    """An id outside the table it indexes: a ValueError, and an IndexError like NumPy's. Taught in lesson 01, section 3."""


# ---------------------------------------------------------------- dtypes of NumPy arrays and torch tensors
def _is_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "dtype") and hasattr(x, "device")


def _kind(x) -> str:
    """'bool', 'int', 'float' or 'other' for the dtype of an array or tensor."""
    if _is_tensor(x):
        dt = x.dtype
        if str(dt) == "torch.bool":
            return "bool"
        if dt.is_floating_point:
            return "float"
        if dt.is_complex:
            return "other"
        return "int"
    dt = x.dtype
    if dt == np.bool_:
        return "bool"
    if np.issubdtype(dt, np.integer):
        return "int"
    if np.issubdtype(dt, np.floating):
        return "float"
    return "other"


def _as_array(x):
    """A tensor stays a tensor; a scipy.sparse matrix stays sparse; anything else becomes an ndarray."""
    if _is_tensor(x) or hasattr(x, "tocsr"):
        return x
    return np.asarray(x)


def _numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy() if _is_tensor(x) else np.asarray(x)


def describe_offending(values, bad, what: str, shown: int = 3) -> str:
    """Name the offending entries: "-1 at index (0, 2), 2 at index (1, 0) (2 of 8 labels)". Taught in lesson 01, section 3.

    ``values`` any shape (an array or a tensor), ``bad`` a bool mask of the same shape; the first
    ``shown`` offending values are listed with their index, then how many there are in all."""
    values, bad = _numpy(values), _numpy(bad)
    if np.ndim(values) == 0:
        return repr(np.asarray(values).item())
    where = np.argwhere(bad)
    items = []
    for idx in where[:shown]:
        idx = tuple(int(i) for i in idx)
        items.append(f"{values[idx].item()!r} at index {idx[0] if len(idx) == 1 else idx}")
    more = ", ..." if len(where) > shown else ""
    return f"{', '.join(items)}{more} ({len(where)} of {values.size} {what})"


# ---------------------------------------------------------------- ids
def check_integers(values, name: str, where: str, what: str = "integers"):
    """``values`` (any shape) as an integer array (a tensor stays a tensor), refusing bool and float. Taught in lesson 01, section 3.

    For integers that are not ids (lengths, counts per row): the dtype half of :func:`check_ids`.
    An empty list becomes an empty int64 array."""
    values = _as_array(values)
    kind = _kind(values)
    if kind == "int":
        return values
    if not _is_tensor(values) and values.size == 0:      # [] or np.array([]): no value can be wrong
        return values.astype(np.int64)
    hint = {"float": "; a float would be truncated (1.7 -> 1): round and convert whole numbers with "
                     ".astype(np.int64)",
            "bool": "; True/False are not numbers here (to select positions with a boolean mask use "
                    "np.flatnonzero(mask))"}.get(kind, "")
    raise TypeError(f"{where}: {name} must be {what}, got dtype {values.dtype}{hint}")


def check_ids(ids, n: int, name: str, where: str, ignore: int | None = None, noun: str = "ids"):
    """Check that ``ids`` are integer ids in [0, n) (``ignore`` also allowed). Taught in lesson 01, section 3.

    ``ids``: any shape, a list, an array or a tensor. Returns it as an array (a tensor stays a
    tensor); an empty list becomes an empty int64 array. Raises TypeError for a bool or float
    dtype and :class:`IdOutOfRangeError` naming the range and the first offending ids."""
    ids = check_integers(ids, name, where, f"integer {noun}")
    if _is_tensor(ids):
        if ids.numel() == 0:
            return ids
        lo, hi = int(ids.min()), int(ids.max())
    else:
        if ids.size == 0:
            return ids
        lo, hi = ids.min(), ids.max()
    if lo >= 0 and hi < n:
        return ids
    bad = (ids < 0) | (ids >= n)
    if ignore is not None:
        bad = bad & (ids != ignore)
    if bool(bad.any()):
        allowed = f"[0, {n})" + ("" if ignore is None else f" (or {ignore}, ignored)")
        raise IdOutOfRangeError(f"{where}: {name} must be {noun} in {allowed}, got "
                                + describe_offending(ids, bad, name))
    return ids


def check_class_ids(ids, k: int, where: str, what: str = "targets", ignore: int | None = None) -> np.ndarray:
    """Check that ``ids`` are integer class ids in [0, k) (``ignore`` also allowed). Taught in lesson 01, section 3.

    :func:`check_ids` with the class count ``k`` and the argument's name ``what``; returns ``ids``
    as an array."""
    return check_ids(ids, k, what, where, ignore, noun="class ids")


def check_whole(value, name: str, where: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """A count or size (k, T, a window, a length) as a Python int, checked. Taught in lesson 01, section 3.

    Accepts an int or a NumPy integer (or a 0-d integer array); refuses a bool or a float with
    TypeError (a float size would be truncated or fail inside NumPy) and a value outside
    [minimum, maximum] with ValueError naming the argument."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name} must be a whole number (an int), got {type(value).__name__} {value!r}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        lo = "" if minimum is None else f">= {minimum}"
        hi = "" if maximum is None else f"<= {maximum}"
        raise ValueError(f"{where}: {name} must be {' and '.join(x for x in (lo, hi) if x)}, got {value}")
    return value


# ---------------------------------------------------------------- masks
def check_mask(mask, name: str, where: str, meaning: str = "attend"):
    """A mask as booleans, following the rule of this module. Taught in lesson 04, section 4.

    ``mask``: any shape, a list, an array or a tensor; bool, or integers that are all 0 or 1
    (converted, True = 1). ``meaning`` says what True means in the messages ("attend",
    "a real token", "chosen"). Returns a bool array (a bool tensor for a tensor). Raises
    ValueError for other integers and TypeError for floats and other dtypes, naming ``name``."""
    mask = _as_array(mask)
    kind = _kind(mask)
    if kind == "bool":
        return mask
    if kind == "int":
        bad = (mask != 0) & (mask != 1)
        if bool(bad.any()):
            raise ValueError(f"{where}: {name} must hold only 0 and 1 (or True and False; True = {meaning}), "
                             "got " + describe_offending(mask, bad, "entries"))
        return mask != 0
    if kind == "float":
        raise TypeError(
            f"{where}: {name} must be boolean (True = {meaning}) or 0/1 integers, got dtype {mask.dtype}. A float "
            "mask is ambiguous: PyTorch adds a float attn_mask to the scores (0 keeps, -inf hides), the opposite "
            f"of a 0/1 mask. Convert a 0/1 float mask with `{name} == 1`, an additive one with `{name} == 0`")
    raise TypeError(f"{where}: {name} must be boolean (True = {meaning}) or 0/1 integers, got dtype {mask.dtype}")


# ---------------------------------------------------------------- finite numbers
def all_finite(x) -> bool:
    """True when the float array (tensor, sparse matrix) ``x`` holds no nan or inf; True for ints. Taught in lesson 01, section 3.

    Two reductions (min and max, which nan propagates through), no temporary array."""
    if hasattr(x, "tocsr") and hasattr(x, "data"):      # scipy.sparse: the stored values
        x = x.data
    if _is_tensor(x):
        if not (x.dtype.is_floating_point or x.dtype.is_complex) or x.numel() == 0:
            return True
        return bool(x.isfinite().all())
    if not isinstance(x, np.ndarray):
        if isinstance(x, numbers.Real):
            return math.isfinite(x)
        x = np.asarray(x)
    if x.size == 0 or not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.complexfloating)):
        return True
    if np.issubdtype(x.dtype, np.complexfloating):
        return bool(np.all(np.isfinite(x)))
    return bool(np.isfinite(x.min()) and np.isfinite(x.max()))


def check_finite(x, name: str, where: str, hint: str = "did training diverge? (try a smaller learning rate)"):
    """Raise ValueError naming ``name`` and its first nan or inf; return ``x`` unchanged. Taught in lesson 01, section 3."""
    if all_finite(x):
        return x
    values = x.data if hasattr(x, "tocsr") and hasattr(x, "data") else x
    values = np.asarray(values) if not _is_tensor(values) else values
    bad = ~np.isfinite(_numpy(values))
    raise ValueError(f"{where}: {name} holds nan or inf (" + describe_offending(values, bad, "values")
                     + f"); every result computed from it would be nan; {hint}")


def check_log_base(base, where: str) -> float:
    """A logarithm base: a finite number > 0 and != 1 (log base 1 divides by log 1 = 0). Taught in lesson 05, section 2."""
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real):
        raise TypeError(f"{where}: base must be a number, got {type(base).__name__} {base!r}")
    if not (math.isfinite(base) and base > 0 and base != 1):
        raise ValueError(f"{where}: the logarithm base must be a finite number > 0 and != 1 (2, e or 10), got {base}"
                         + ("; log base 1 divides by log 1 = 0" if base == 1 else ""))
    return float(base)
