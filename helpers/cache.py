"""A small on-disk cache for results that take longer than a notebook's minute.

Files live in ``$NLP_COURSE_CACHE`` or ``~/.cache/nlp-from-scratch``. A cached result is
rebuilt when missing, when its ``version`` string changes, or when the file is unreadable.
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def cache_dir() -> Path:
    """The cache folder (created if needed)."""
    d = Path(os.environ.get("NLP_COURSE_CACHE", Path.home() / ".cache" / "nlp-from-scratch"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def cached(name: str, version: str, build: Callable[[], T], verbose: bool = True) -> T:
    """Return the cached value of ``build()`` stored under ``name``/``version``.

    The value must be picklable (NumPy arrays, dicts, torch state_dicts ...).
    """
    path = cache_dir() / f"{name}-{version}.pkl"
    if path.exists():
        try:
            with open(path, "rb") as f:
                value = pickle.load(f)
            if verbose:
                print(f"loaded {name} from the cache ({path})")
            return value
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError) as e:
            print(f"cache file {path} is unreadable ({e}); rebuilding")
    if verbose:
        print(f"{name} is not cached yet: building it (this runs once) ...")
    value = build()
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)  # atomic: a crash never leaves a half-written cache file
    return value
