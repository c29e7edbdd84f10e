"""A small on-disk cache for slow results, in ``$NLP_COURSE_CACHE`` or the system's cache folder."""
from __future__ import annotations

import errno
import os
import re
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, TypeVar

import platformdirs
from filelock import FileLock, Timeout

from helpers.infra.artifacts import ArtifactError, artifact_paths, load_artifact, save_artifact

T = TypeVar("T")
ENV = "NLP_COURSE_CACHE"
APP = "nlp-from-scratch"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=,-]*$")


class CacheLocationError(OSError):
    """The cache folder is not usable; ``fix`` holds the command that fixes it."""

    def __init__(self, message: str, fix: str = ""):
        super().__init__(message)
        self.fix = fix


# ---------------------------------------------------------------- where
def default_folder() -> Path:
    """The course's folder in this system's cache folder (``~/.cache/nlp-from-scratch``)."""
    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def set_variable(value: str) -> str:
    """The shell command that sets ``$NLP_COURSE_CACHE`` to ``value`` (PowerShell on Windows)."""
    return f'$env:{ENV} = "{value}"' if os.name == "nt" else f"export {ENV}={value}"


def location() -> tuple[Path, str]:
    """(folder, how it was chosen), without creating it; CacheLocationError for a bad variable."""
    value = os.environ.get(ENV)
    if value is None:
        folder, xdg = default_folder(), os.environ.get("XDG_CACHE_HOME", "")
        chosen = (f", and XDG_CACHE_HOME={xdg} chose it"
                  if xdg and Path(xdg).expanduser() in folder.parents else "")
        return folder, f"this system's cache folder; {ENV} is not set{chosen}"
    if not value.strip():
        unset = f"Remove-Item Env:{ENV}" if os.name == "nt" else f"unset {ENV}"
        raise CacheLocationError(
            f"{ENV} is set but empty. Set it to an absolute folder you can write, e.g. "
            f"`{set_variable(default_folder())}`, or unset it (`{unset}`) to use "
            f"the default {default_folder()}", unset)
    folder = Path(value).expanduser()
    if not folder.is_absolute():
        fix = set_variable(Path(value).absolute())
        raise CacheLocationError(
            f"{ENV}={value!r} is a relative path, which would put the cache wherever a notebook "
            f"happens to run. Set it to an absolute folder, e.g. `{fix}`", fix)
    return folder, f"{ENV}={value}"


def nearest_existing(folder: Path) -> Path:
    """``folder`` itself or the nearest of its parents that exists (at worst its drive or ``/``)."""
    return next((p for p in (folder, *folder.parents) if p.exists()), Path(folder.anchor))


def _cannot_create(folder: Path, how: str, error: OSError) -> CacheLocationError:
    """The error for a cache folder that ``mkdir`` refused, with the cause it really has."""
    other = f"set {ENV} to a folder you can write (`{set_variable('/path/to/folder')}`)"
    other_capital = other[0].upper() + other[1:]
    existing = nearest_existing(folder)
    head = f"the cache folder {folder} ({how}) cannot be created"
    if isinstance(error, (FileExistsError, NotADirectoryError)) or not existing.is_dir():
        return CacheLocationError(f"{head}: {existing} is a file, in the way of the folder. "
                                  f"Move that file, or {other}",
                                  set_variable("<a folder you can write>"))
    if error.errno == errno.EROFS:
        return CacheLocationError(f"{head}: {existing} is on a read-only file system. "
                                  f"{other_capital}",
                                  set_variable("<a folder on a writable disk>"))
    if error.errno == errno.ENOSPC:
        return CacheLocationError(f"{head}: the disk that holds {existing} is full. "
                                  f"Free some space, or {other}",
                                  set_variable("<a folder on a disk with space>"))
    if isinstance(error, PermissionError):
        which = ("the folder itself" if existing == folder else "its parent"
                 if existing == folder.parent else "the nearest folder of that path that exists")
        return CacheLocationError(f"{head}: you may not create folders in {existing} ({which}). "
                                  f"{other_capital}, e.g. one in your home folder",
                                  set_variable(str(Path.home() / ".cache" / APP)))
    return CacheLocationError(f"{head} ({error.strerror or error}). {other_capital}",
                              set_variable("<a folder you can write>"))


def cache_dir() -> Path:
    """The cache folder, created if needed and checked to be writable (else CacheLocationError)."""
    folder, how = location()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _cannot_create(folder, how, e) from None
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
            pass
    except OSError as e:
        fix = (f"chmod u+rwx {folder}" if os.name != "nt"
               else set_variable("<a folder you can write>"))
        raise CacheLocationError(f"the cache folder {folder} ({how}) is not writable "
                                 f"({e.strerror or e}). Run `{fix}`, or set {ENV} to a folder "
                                 "you can write", fix) from None
    return folder


def cache_path(name: str, version: str) -> Path:
    """The .npz of the entry ``name``/``version`` (the .json is beside it)."""
    for what, s in (("name", name), ("version", version)):
        if not isinstance(s, str) or not _SAFE_NAME.match(s):
            raise ValueError(f"a cache {what} must be letters, digits and . _ + = , - "
                             f"(starting with a letter or digit), got {s!r}")
    return cache_dir() / f"{name}-{version}.npz"


def _check(path: Path, codec) -> tuple[str, object]:
    """('ok', value) | ('missing', None) | ('damaged', why) for the entry at ``path``."""
    npz, meta = artifact_paths(path)
    if not npz.exists() and not meta.exists():
        return "missing", None
    try:
        art = load_artifact(path)
    except ArtifactError as e:
        return "damaged", str(e)
    stored = art.meta.get("codec")
    if stored != _codec_name(codec):
        return "damaged", f"was stored by codec {stored!r}, this call reads {_codec_name(codec)!r}"
    try:
        return "ok", codec.from_arrays(art.arrays, art.meta["value"])
    except (KeyError, TypeError, ValueError) as e:   # checksum fine: written by older code
        return "damaged", f"cannot be decoded by {_codec_name(codec)} ({e!r})"


# ---------------------------------------------------------------- settings -> versions
def settings_version(settings: dict, prefix: str = "v1") -> str:
    """A cache version naming every setting, sorted: ``'v1-alpha0.75-dim100-...'``."""
    return prefix + "-" + "-".join(f"{k}{v}" for k, v in sorted(settings.items()))


# ---------------------------------------------------------------- the cache
class ArraysCodec:
    """The default codec: a value that is a dict {name: ndarray}, stored as it is."""

    @staticmethod
    def to_arrays(value: dict) -> tuple[dict, dict]:
        return value, {}

    @staticmethod
    def from_arrays(arrays: dict, meta: dict) -> dict:
        return dict(arrays)


def _codec_name(codec) -> str:
    return f"{codec.__module__}.{codec.__qualname__}"


@contextmanager
def _build_lock(path: Path, name: str, verbose: bool):
    """Hold the entry's lock while it is built: a second process waits, then loads it."""
    lock = FileLock(str(path.with_suffix(".lock")))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if verbose:
            print(f"another process is building {name}; waiting for it ...", flush=True)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def cached(name: str, version: str, build: Callable[[], T], codec=ArraysCodec,
           verbose: bool = True) -> T:
    """The value of ``build()`` stored under ``name``/``version``, built once (a damaged entry is
    rebuilt); ``codec`` turns it into arrays and back (:class:`ArraysCodec` by default)."""
    path = cache_path(name, version)
    label = f"{name}-{version}"
    status, value = _check(path, codec)
    if status == "ok":
        if verbose:
            print(f"loaded {name} from the cache ({path.parent})")
        return value
    with _build_lock(path, name, verbose):
        status, value = _check(path, codec)        # built by another process meanwhile?
        if status == "ok":
            if verbose:
                print(f"loaded {name} from the cache ({path.parent}), built by another process")
            return value
        if status == "damaged":
            print(f"cache entry {label}: {value}: rebuilding", flush=True)
        elif verbose:
            print(f"{name} is not cached yet: building it (this runs once) ...", flush=True)
        t0 = time.perf_counter()
        built = build()
        seconds = time.perf_counter() - t0
        arrays, meta = codec.to_arrays(built)
        save_artifact(path, arrays, {"name": name, "version": version, "codec": _codec_name(codec),
                                     "build_seconds": seconds, "value": meta})
        stored = load_artifact(path)                # what every later call will read
        return codec.from_arrays(stored.arrays, stored.meta["value"])
