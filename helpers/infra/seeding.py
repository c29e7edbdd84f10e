"""Explicit randomness and device choice. No function here touches global state:
callers create generators and pass them on, so the same seed gives the same numbers."""
from __future__ import annotations

import numpy as np
import torch


def make_rng(seed: int) -> np.random.Generator:
    """A NumPy generator for ``seed`` (PCG64)."""
    return np.random.default_rng(seed)


def choose_device(device: str | None = None) -> torch.device:
    """The torch device: ``"cpu"`` or None, ``"cuda"`` (error if none), ``"auto"`` (GPU if any)."""
    if device in (None, "cpu"):
        return torch.device("cpu")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} was asked for, but PyTorch sees no CUDA GPU")
    return torch.device(device)
