"""Exercise checkers that tell a student exactly what is wrong.

Each lesson module (``helpers.exercises.lesson01`` ...) defines ``check_*`` functions
built on :func:`run_checks`. A checker prints one line per outcome and returns True
only when every check passes. A stub that still raises ``NotImplementedError`` is
reported as "not attempted yet" (so the notebook still runs top to bottom).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


class ExerciseFailed(AssertionError):
    """One check of an exercise failed; the message says expected vs got."""


def expect_close(got, expected, what: str, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """Fail unless ``got`` equals ``expected`` (arrays or numbers) within tolerance."""
    got_a, exp_a = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    if got_a.shape != exp_a.shape:
        raise ExerciseFailed(f"{what}: expected shape {exp_a.shape}, got {got_a.shape}")
    if not np.all(np.isfinite(got_a)):
        raise ExerciseFailed(f"{what}: expected finite numbers, got {np.array2string(got_a, precision=4)}")
    if not np.allclose(got_a, exp_a, rtol=rtol, atol=atol):
        raise ExerciseFailed(f"{what}: expected {np.array2string(exp_a, precision=4)}, "
                             f"got {np.array2string(got_a, precision=4)}")


def expect_equal(got, expected, what: str) -> None:
    """Fail unless ``got == expected`` (exact; arrays compared element-wise)."""
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        ok = np.shape(got) == np.shape(expected) and np.array_equal(got, expected)
    else:
        ok = got == expected
    if not ok:
        raise ExerciseFailed(f"{what}: expected {expected!r}, got {got!r}")


def run_checks(title: str, candidate: Callable, checks: Sequence[Callable[[Callable], None]]) -> bool:
    """Run each ``check(candidate)``; print a verdict line; return True if all passed."""
    for i, check in enumerate(checks, 1):
        try:
            check(candidate)
        except NotImplementedError:
            print(f"… {title}: not attempted yet — replace the `raise NotImplementedError` in the stub.")
            return False
        except ExerciseFailed as e:
            print(f"✗ {title} (check {i} of {len(checks)}): {e}")
            return False
        except Exception as e:  # the student's code crashed: say where, not just that it failed
            print(f"✗ {title} (check {i} of {len(checks)}): your code raised {type(e).__name__}: {e}")
            return False
    print(f"✓ {title}: all {len(checks)} checks passed.")
    return True
