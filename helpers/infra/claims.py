"""One readable line per checked claim of the prose: ``claim(lstm_loss < trigram_loss, "the
LSTM beats the trigram")`` prints ``✓ <statement>`` or raises :class:`ClaimFailed`."""
from __future__ import annotations

import math


class ClaimFailed(AssertionError):
    """A claim the lesson makes did not hold on this run; the message says which and why."""


def _number(x, what: str) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {type(x).__name__} {x!r}") from None
    return value


def claim(condition, statement: str, measured: str | None = None, show: bool = True) -> None:
    """Print ``✓ statement`` (``measured`` in brackets) if ``condition``, else raise ClaimFailed."""
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError("claim needs a statement: the sentence of the lesson that this checks")
    try:
        ok = bool(condition)
    except ValueError as e:   # an array of several booleans: ambiguous
        raise TypeError(f"claim {statement!r}: the condition must be one truth value, got an "
                        "array (use .all() or .any())") from e
    detail = f" ({measured})" if measured else ""
    if not ok:
        raise ClaimFailed(f"✗ {statement}{detail}: this no longer holds on this run — the prose "
                          "and the result disagree")
    if show:
        print(f"✓ {statement}{detail}")


def claim_close(value, target: float, statement: str, rtol: float = 1e-6, atol: float = 0.0,
                fmt: str = ".6g", show: bool = True) -> None:
    """``claim(|value - target| <= atol + rtol·|target|, ...)``, with both numbers shown."""
    v, t = _number(value, "value"), _number(target, "target")
    if rtol < 0 or atol < 0:
        raise ValueError(f"claim_close {statement!r}: tolerances must be ≥ 0, "
                         f"got rtol={rtol}, atol={atol}")
    ok = math.isfinite(v) and abs(v - t) <= atol + rtol * abs(t)
    claim(ok, statement, f"{v:{fmt}} vs {t:{fmt}}", show)
