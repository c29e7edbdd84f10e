"""A small on-disk cache for results that take longer than a notebook's minute.

Each entry is an artefact (:mod:`helpers.infra.artifacts`): ``<name>-<version>.npz`` with the
arrays and ``<name>-<version>.json`` with the metadata and the checksums, never a pickle. A
*codec* turns the value into arrays and back: :class:`~helpers.infra.artifacts.TreeCodec` (the
default) for nested dicts/lists of arrays and numbers, or any class with ``to_arrays()`` and
``from_arrays(arrays, meta)``, such as the course's result dataclasses.

An entry is rebuilt when it is missing, when its ``version`` string changes, or when it fails
its checksum or cannot be read; then one line says why, e.g. ``cache entry glove-course-v1-…:
…/glove-course-v1-….npz failed its checksum (expected 3f…, got 9a…): rebuilding``.

Where: ``$NLP_COURSE_CACHE`` if set, else the folder where this system keeps a user's caches
(``platformdirs.user_cache_dir``): ``~/.cache/nlp-from-scratch`` on Linux (``$XDG_CACHE_HOME``
when set), ``~/Library/Caches/nlp-from-scratch`` on macOS,
``%LOCALAPPDATA%\\nlp-from-scratch\\Cache`` on Windows. The variable must be an absolute folder;
set but empty, or relative, is an error (never the current folder), and so is a folder that
cannot be created or written, with a message naming the variable, the path, the cause (a file in
the way, no permission in the nearest folder that exists, a read-only or full disk) and what to do. While a process builds an entry it holds a lock on it (``filelock``: Linux, macOS,
Windows), so a second process that needs the same entry waits for it instead of building it
again.
"""
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

from helpers.infra.artifacts import (
    ArtifactError,
    TreeCodec,
    artifact_paths,
    load_artifact,
    save_artifact,
)

T = TypeVar("T")
ENV = "NLP_COURSE_CACHE"
APP = "nlp-from-scratch"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=,-]*$")


class CacheLocationError(OSError):
    """The cache folder is not usable: ``$NLP_COURSE_CACHE`` is empty or relative, or the folder
    cannot be created or written. The message names the variable, the path, the cause and what
    to do; ``fix`` holds the command alone (``make doctor`` prints it on its own line)."""

    def __init__(self, message: str, fix: str = ""):
        super().__init__(message)
        self.fix = fix


# ---------------------------------------------------------------- where
def default_folder() -> Path:
    """The course's folder in this system's cache folder (``platformdirs.user_cache_dir``):
    ``~/.cache/nlp-from-scratch`` on Linux, ``~/Library/Caches/nlp-from-scratch`` on macOS,
    ``%LOCALAPPDATA%\\nlp-from-scratch\\Cache`` on Windows."""
    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def set_variable(value: str) -> str:
    """The shell command that sets ``$NLP_COURSE_CACHE`` to ``value`` here (PowerShell on Windows)."""
    return f'$env:{ENV} = "{value}"' if os.name == "nt" else f"export {ENV}={value}"


def location() -> tuple[Path, str]:
    """(folder, how it was chosen), without creating it; CacheLocationError for an empty or
    relative ``$NLP_COURSE_CACHE``. "How" names ``$XDG_CACHE_HOME`` when that variable chose it."""
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
    existing = nearest_existing(folder)
    head = f"the cache folder {folder} ({how}) cannot be created"
    if isinstance(error, (FileExistsError, NotADirectoryError)) or not existing.is_dir():
        return CacheLocationError(f"{head}: {existing} is a file, in the way of the folder. Move that file, "
                                  f"or {other}", f"{set_variable('<a folder you can write>')}")
    if error.errno == errno.EROFS:
        return CacheLocationError(f"{head}: {existing} is on a read-only file system. {other[0].upper()}{other[1:]}",
                                  set_variable("<a folder on a writable disk>"))
    if error.errno == errno.ENOSPC:
        return CacheLocationError(f"{head}: the disk that holds {existing} is full. Free some space, or {other}",
                                  set_variable("<a folder on a disk with space>"))
    if isinstance(error, PermissionError):
        which = "the folder itself" if existing == folder else (
            "its parent" if existing == folder.parent else "the nearest folder of that path that exists")
        return CacheLocationError(f"{head}: you may not create folders in {existing} ({which}). "
                                  f"{other[0].upper()}{other[1:]}, e.g. one in your home folder",
                                  set_variable(str(Path.home() / ".cache" / APP)))
    return CacheLocationError(f"{head} ({error.strerror or error}). {other[0].upper()}{other[1:]}",
                              set_variable("<a folder you can write>"))


def cache_dir() -> Path:
    """The cache folder, created if needed and checked to be writable.

    Raises CacheLocationError naming ``$NLP_COURSE_CACHE``, the folder, the cause and the fix
    when the variable is empty or relative, when a file is in the way, when the nearest folder
    that exists may not be written, when the disk is read-only or full, or when the folder
    itself cannot be written."""
    folder, how = location()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _cannot_create(folder, how, e) from None
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
            pass
    except OSError as e:
        fix = f"chmod u+rwx {folder}" if os.name != "nt" else set_variable("<a folder you can write>")
        raise CacheLocationError(f"the cache folder {folder} ({how}) is not writable ({e.strerror or e}). "
                                 f"Run `{fix}`, or set {ENV} to a folder you can write", fix) from None
    return folder


def cache_path(name: str, version: str) -> Path:
    """Where the entry ``name``/``version`` is (or would be) stored: its .npz (the .json is beside it)."""
    for what, s in (("name", name), ("version", version)):
        if not isinstance(s, str) or not _SAFE_NAME.match(s):
            raise ValueError(f"a cache {what} must be letters, digits and . _ + = , - (starting with a "
                             f"letter or digit), got {s!r}")
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
def _codec_name(codec) -> str:
    return f"{codec.__module__}.{codec.__qualname__}"


@contextmanager
def _build_lock(path: Path, name: str, verbose: bool):
    """Hold an exclusive lock while the entry at ``path`` is built, so two processes (two
    notebooks open at once, or the test runner's workers) never build the same entry twice:
    the second one waits, then loads what the first stored. ``filelock`` works on Linux,
    macOS and Windows."""
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


def cached(name: str, version: str, build: Callable[[], T], codec=TreeCodec, verbose: bool = True) -> T:
    """Return the value of ``build()`` stored under ``name``/``version``, building it once.

    ``codec`` converts the value to arrays and back: :class:`TreeCodec` (default) for nested
    dicts/lists/tuples of arrays, tensors and numbers, or a class with ``to_arrays()`` (value
    -> (arrays, meta)) and ``from_arrays(arrays, meta)``. What is returned is always what the
    codec reads back, on the first run too. A damaged entry is rebuilt and one line (printed
    even when ``verbose`` is False) says why.
    """
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
