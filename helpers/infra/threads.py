"""Thread limits for small, step-by-step NumPy computations."""
from __future__ import annotations

from functools import wraps

from threadpoolctl import threadpool_limits  # installed with scikit-learn


def single_thread_blas(fn):
    """Decorator: run ``fn`` with NumPy's BLAS on one thread (tiny matrices, step by step)."""
    @wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper
