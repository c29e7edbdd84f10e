"""The library's argument checks, in one place, so the same bad input gets the same message.
Arrays may be NumPy arrays, lists or PyTorch tensors; a float mask is refused."""
from __future__ import annotations

import math
import numbers

import numpy as np


class IdOutOfRangeError(ValueError, IndexError):
    """An id outside the table it indexes: a ValueError, and an IndexError (lesson 01 §3)."""


def _is_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "device")


def _kind(x) -> str:
    """'bool', 'int', 'float' or 'other' for the dtype of an array or a tensor."""
    if _is_tensor(x):
        if str(x.dtype) == "torch.bool":
            return "bool"
        return "float" if x.dtype.is_floating_point else "other" if x.dtype.is_complex else "int"
    if x.dtype == np.bool_:
        return "bool"
    return "int" if np.issubdtype(x.dtype, np.integer) else \
        "float" if np.issubdtype(x.dtype, np.floating) else "other"


def _as_array(x):
    """A tensor or a SciPy sparse matrix as it is; anything else as an ndarray."""
    return x if _is_tensor(x) or hasattr(x, "tocsr") else np.asarray(x)


def _numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy() if _is_tensor(x) else np.asarray(x)


def describe_offending(values, bad, what: str, shown: int = 3) -> str:
    """'-1 at index (0, 2), 7 at index 4 (2 of 8 labels)': the offending entries (lesson 01 §3)."""
    values, bad = _numpy(values), _numpy(bad)
    if np.ndim(values) == 0:
        return repr(np.asarray(values).item())
    where = np.argwhere(bad)
    items = []
    for index in where[:shown]:
        at = int(index[0]) if len(index) == 1 else tuple(int(i) for i in index)
        items.append(f"{values[tuple(index)].item()!r} at index {at}")
    more = ", ..." if len(where) > shown else ""
    return f"{', '.join(items)}{more} ({len(where)} of {values.size} {what})"


def check_integers(values, name: str, where: str, what: str = "integers"):
    """``values`` as an integer array (a tensor stays one), refusing bool and float (lesson 01 §3).
    """
    values = _as_array(values)
    kind = _kind(values)
    if kind == "int":
        return values
    if not _is_tensor(values) and values.size == 0:
        return values.astype(np.int64)
    hint = {"float": "; a float would be truncated (1.7 -> 1): convert whole numbers with "
                     ".astype(np.int64)",
            "bool": "; True/False are not numbers here (positions of a mask: np.flatnonzero(mask))"}
    raise TypeError(f"{where}: {name} must be {what}, got dtype {values.dtype}{hint.get(kind, '')}")


def check_ids(ids, n: int, name: str, where: str, ignore: int | None = None, noun: str = "ids"):
    """``ids`` (any shape) checked: integer ids in [0, n), or ``ignore`` (lesson 01 §3)."""
    ids = check_integers(ids, name, where, f"integer {noun}")
    if (ids.numel() if _is_tensor(ids) else ids.size) == 0:
        return ids
    if int(ids.min()) >= 0 and int(ids.max()) < n:
        return ids
    bad = (ids < 0) | (ids >= n)
    if ignore is not None:
        bad = bad & (ids != ignore)
    if bool(bad.any()):
        allowed = f"[0, {n})" + ("" if ignore is None else f" (or {ignore}, ignored)")
        raise IdOutOfRangeError(f"{where}: {name} must be {noun} in {allowed}, got "
                                + describe_offending(ids, bad, name))
    return ids


def check_class_ids(ids, k: int, where: str, what: str = "targets", ignore: int | None = None):
    """``ids`` checked to be class ids in [0, k), named ``what`` in messages (lesson 01 §3)."""
    return check_ids(ids, k, what, where, ignore, noun="class ids")


def check_whole(value, name: str, where: str, minimum: int | None = None,
                maximum: int | None = None) -> int:
    """A count or size as a Python int, within [minimum, maximum] (lesson 01 §3)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name} must be a whole number (an int), got "
                        f"{type(value).__name__} {value!r}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = [f"{op} {v}" for op, v in ((">=", minimum), ("<=", maximum)) if v is not None]
        raise ValueError(f"{where}: {name} must be {' and '.join(bounds)}, got {value}")
    return value


def check_mask(mask, name: str, where: str, meaning: str = "attend"):
    """A mask as booleans: bool, or integers all 0 or 1 (True = ``meaning``) (lesson 04 §4)."""
    mask = _as_array(mask)
    kind = _kind(mask)
    if kind == "bool":
        return mask
    if kind == "int":
        bad = (mask != 0) & (mask != 1)
        if bool(bad.any()):
            raise ValueError(f"{where}: {name} must hold only 0 and 1 (or True and False; True = "
                             f"{meaning}), got " + describe_offending(mask, bad, "entries"))
        return mask != 0
    if kind == "float":
        raise TypeError(
            f"{where}: {name} must be boolean (True = {meaning}) or 0/1 integers, got dtype "
            f"{mask.dtype}. A float mask is ambiguous: PyTorch adds a float attn_mask to the "
            "scores (0 keeps, -inf hides), the opposite of a 0/1 mask. Convert a 0/1 float mask "
            f"with `{name} == 1`, an additive one with `{name} == 0`")
    raise TypeError(f"{where}: {name} must be boolean (True = {meaning}) or 0/1 integers, "
                    f"got dtype {mask.dtype}")


def all_finite(x) -> bool:
    """True when ``x`` (array, tensor, sparse matrix, number) holds no nan or inf (lesson 01 §3)."""
    if hasattr(x, "tocsr") and hasattr(x, "data"):
        x = x.data
    if _is_tensor(x):
        return not (x.dtype.is_floating_point or x.dtype.is_complex) or bool(x.isfinite().all())
    if isinstance(x, numbers.Real):
        return math.isfinite(x)
    x = np.asarray(x)
    if x.size == 0 or x.dtype.kind not in "fc":
        return True
    if x.dtype.kind == "c":
        return bool(np.all(np.isfinite(x)))
    return bool(np.isfinite(x.min()) and np.isfinite(x.max()))   # nan propagates through both


def check_finite(x, name: str, where: str,
                 hint: str = "did training diverge? (try a smaller learning rate)"):
    """``x`` unchanged, or a ValueError naming ``name`` and its first nan or inf (lesson 01 §3)."""
    if all_finite(x):
        return x
    values = x.data if hasattr(x, "tocsr") else x
    bad = ~np.isfinite(_numpy(values))
    raise ValueError(f"{where}: {name} holds nan or inf ("
                     + describe_offending(values, bad, "values")
                     + f"); every result computed from it would be nan; {hint}")


def check_log_base(base, where: str) -> float:
    """A logarithm base: a finite number > 0 and != 1 (lesson 05 §2)."""
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, numbers.Real):
        raise TypeError(f"{where}: base must be a number, got {type(base).__name__} {base!r}")
    if not (math.isfinite(base) and base > 0 and base != 1):
        why = "; log base 1 divides by log 1 = 0" if base == 1 else ""
        raise ValueError(f"{where}: the logarithm base must be a finite number > 0 and != 1 "
                         f"(2, e or 10), got {base}{why}")
    return float(base)
