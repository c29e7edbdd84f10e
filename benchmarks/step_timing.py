"""Timing one training step of a live NumPy model against the same model in PyTorch.

The ``bench_live_step_*.py`` benchmarks build, for one lesson's live model, a NumPy training step
and a PyTorch training step of the same shapes (forward, backward, optimiser update), and call
:func:`compare_steps`, which times both on one thread, interleaved (a busy machine slows both
alike), and prints the medians and their ratio against the target (NumPy at most 2× PyTorch).
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch
from threadpoolctl import threadpool_limits

TARGET_RATIO = 2.0


def median_seconds(fns: list[Callable[[], object]], repeats: int, warmup: int = 3) -> list[float]:
    """Median wall time of each function over ``repeats`` interleaved calls (a, b, a, b, ...)."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [float(np.median(ts)) for ts in times]


def compare_steps(name: str, numpy_step: Callable[[], object], torch_step: Callable[[], object],
                  repeats: int = 30, threads: int = 1) -> dict:
    """Time one training step of each on ``threads`` thread(s); print a line and return
    ``{"name", "numpy_s", "torch_s", "ratio", "target", "passed"}``."""
    torch.set_num_threads(threads)
    with threadpool_limits(limits=threads, user_api="blas"):
        t_np, t_torch = median_seconds([numpy_step, torch_step], repeats)
    ratio = t_np / t_torch
    row = {
        "name": name,
        "numpy_s": t_np,
        "torch_s": t_torch,
        "ratio": ratio,
        "target": TARGET_RATIO,
        "passed": ratio <= TARGET_RATIO,
    }
    print(
        f"{name}: NumPy {1e3 * t_np:.2f} ms/step, PyTorch {1e3 * t_torch:.2f} ms/step, ratio "
        f"{ratio:.2f}× (target ≤ {TARGET_RATIO:g}×: {'PASS' if row['passed'] else 'FAIL'}), "
        f"{threads} thread(s), median of {repeats}"
    )
    return row
