"""Thread limits for small, step-by-step NumPy computations."""
from __future__ import annotations

from functools import wraps

from threadpoolctl import threadpool_limits  # installed with scikit-learn


def single_thread_blas(fn):
    """Decorator: run ``fn`` with NumPy's BLAS limited to one thread. For the recurrent
    experiments of lessons 02-03, which multiply tiny matrices step by step: BLAS threads only
    add synchronisation there (measured: 16x more CPU time on a busy 2-core machine for the
    long-range task of lesson 03)."""
    @wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper
