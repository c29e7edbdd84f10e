"""A small on-disk cache for results that take longer than a notebook's minute.

Files live in ``$NLP_COURSE_CACHE`` or ``~/.cache/nlp-from-scratch``. A cached result is
rebuilt when missing, when its ``version`` string changes, or when the file is unreadable.
While a process builds an entry it holds a lock on it, so a second process that needs the same
entry waits for it instead of building it again. :func:`build_missing` builds several entries
side by side, one per CPU core.
"""
from __future__ import annotations

import os
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Callable, Sequence, TypeVar

try:
    import fcntl  # POSIX file locks; absent on Windows, where builds are not locked
except ImportError:
    fcntl = None

T = TypeVar("T")


def cache_dir() -> Path:
    """The cache folder (created if needed)."""
    d = Path(os.environ.get("NLP_COURSE_CACHE", Path.home() / ".cache" / "nlp-from-scratch"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def cache_path(name: str, version: str) -> Path:
    """Where the entry ``name``/``version`` is (or would be) stored."""
    return cache_dir() / f"{name}-{version}.pkl"


def is_cached(name: str, version: str) -> bool:
    """True if the entry ``name``/``version`` exists (it may still turn out unreadable)."""
    return cache_path(name, version).exists()


def with_overrides(defaults: dict, overrides: dict, what: str = "") -> dict:
    """``defaults`` updated by ``overrides``; a key that is not among the defaults is an
    error naming it (``what`` says whose settings they are)."""
    unknown = set(overrides) - set(defaults)
    if unknown:
        label = f"{what} settings" if what else "settings"
        raise ValueError(f"unknown {label} {sorted(unknown)}; choose from {sorted(defaults)}")
    return {**defaults, **overrides}


def settings_version(settings: dict, prefix: str = "v1") -> str:
    """A cache version naming every setting, sorted: ``'v1-alpha0.75-dim100-...'``."""
    return prefix + "-" + "-".join(f"{k}{v}" for k, v in sorted(settings.items()))


def _load(path: Path, name: str, verbose: bool) -> tuple[bool, object]:
    """(True, value) if ``path`` holds a readable entry, else (False, None)."""
    if not path.exists():
        return False, None
    try:
        with open(path, "rb") as f:
            value = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError) as e:
        print(f"cache file {path} is unreadable ({e}); rebuilding")
        return False, None
    if verbose:
        print(f"loaded {name} from the cache ({path})")
    return True, value


@contextmanager
def _build_lock(path: Path, name: str, verbose: bool):
    """Hold an exclusive lock while the entry at ``path`` is built, so two processes (two
    notebooks open at once, or the test runner's workers) never build the same entry twice:
    the second one waits, then loads what the first stored. POSIX only; elsewhere no lock
    (at worst both build, and the atomic rename keeps the file whole)."""
    if fcntl is None:
        yield
        return
    with open(path.with_suffix(".lock"), "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if verbose:
                print(f"another process is building {name}; waiting for it ...", flush=True)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached(name: str, version: str, build: Callable[[], T], verbose: bool = True) -> T:
    """Return the cached value of ``build()`` stored under ``name``/``version``.

    The value must be picklable (NumPy arrays, dicts, torch state_dicts ...).
    """
    path = cache_path(name, version)
    found, value = _load(path, name, verbose)
    if found:
        return value
    with _build_lock(path, name, verbose):
        found, value = _load(path, name, verbose)      # built by another process meanwhile?
        if found:
            return value
        if verbose:
            print(f"{name} is not cached yet: building it (this runs once) ...")
        value = build()
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # atomic: a crash never leaves a half-written cache file
    return value


# ---------------------------------------------------------------- several entries side by side
@dataclass(frozen=True)
class CacheJob:
    """One cache entry and the course function that fills it.

    ``function(**kwargs)`` must be a module-level function (so a worker process can import
    it) that loads the entry ``name``/``version`` or, when it is missing, builds and stores it.
    ``label`` names the job in messages."""

    label: str
    name: str
    version: str
    function: Callable
    kwargs: dict = field(default_factory=dict)


def _quiet_worker() -> None:
    # a worker's progress bars and messages would interleave in the notebook: the parent
    # reports instead (errors still come back as exceptions)
    sys.stdout = sys.stderr = open(os.devnull, "w")


def _run_job(function: Callable, kwargs: dict) -> float:
    t = time.perf_counter()
    function(**kwargs)   # fills the cache; the value stays in the worker
    return time.perf_counter() - t


def _default_workers() -> int:
    """``$NLP_COURSE_WORKERS`` if set (``make test`` sets 1: it already runs two notebooks at
    a time), else the number of CPU cores."""
    env = os.environ.get("NLP_COURSE_WORKERS", "").strip()
    if env:
        if not env.isdigit() or int(env) < 1:
            raise ValueError(f"NLP_COURSE_WORKERS must be a positive integer, got {env!r}")
        return int(env)
    return os.cpu_count() or 1


def build_missing(jobs: Sequence[CacheJob], workers: int | None = None, verbose: bool = True) -> dict:
    """Build the entries of ``jobs`` that are not cached yet, ``workers`` at a time in
    separate processes (default: ``$NLP_COURSE_WORKERS`` or one per CPU core; at most one per
    job). Every job is single-threaded and seeded, so running them side by side gives the same
    results as one after the other, just sooner. List the longest jobs first: they start first.

    Returns {label: seconds} for the jobs that were built (empty when all were cached).
    The values themselves are then read from the cache by the usual calls."""
    missing = [j for j in jobs if not is_cached(j.name, j.version)]
    if not missing:
        if verbose:
            print(f"all {len(jobs)} results are in the cache ({cache_dir()})")
        return {}
    workers = max(1, min(workers or _default_workers(), len(missing)))
    if verbose:
        print(f"{len(missing)} of {len(jobs)} results are not cached yet: building them "
              f"({workers} at a time; this runs once) ...", flush=True)
    t0, done = time.perf_counter(), {}
    if workers == 1:
        for job in missing:
            done[job.label] = _run_job(job.function, job.kwargs)
            if verbose:
                print(f"  {job.label}: built in {done[job.label]:.0f} s", flush=True)
    else:
        # 'spawn': a fresh interpreter per worker (forking a process that already ran
        # PyTorch's thread pool can hang)
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_quiet_worker) as pool:
            futures = {pool.submit(_run_job, j.function, j.kwargs): j for j in missing}
            for fut in as_completed(futures):
                job = futures[fut]
                try:
                    done[job.label] = fut.result()
                except Exception as e:
                    raise RuntimeError(f"building {job.label!r} for the cache failed: {e!r}") from e
                if verbose:
                    print(f"  {job.label}: built in {done[job.label]:.0f} s "
                          f"({time.perf_counter() - t0:.0f} s since the start)", flush=True)
    if verbose:
        print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)
    return done
