"""The first-run cache (helpers.infra.cache): damaged entries are rebuilt, with one line saying
why; the cache folder is chosen and checked with clear errors; builds are locked across
processes."""
import errno
import multiprocessing
import os
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import platformdirs
import pytest

from helpers.infra import cache


def cached(*args, **kwargs):
    return cache.cached(*args, **kwargs)


def cache_dir():
    return cache.cache_dir()


def value():
    rng = np.random.default_rng(0)
    return {"W": rng.standard_normal((40, 8)).astype(np.float32), "vocab": ["the", "of", "Zürich"],
            "loss": [float(x) for x in rng.random(12)], "steps": 120, "kind": "lstm"}


def same(a, b) -> bool:
    return (np.array_equal(a["W"], b["W"]) and a["W"].dtype == b["W"].dtype
            and [a[k] for k in ("vocab", "loss", "steps", "kind")] == [b[k] for k in ("vocab", "loss", "steps", "kind")])


def entry_files(folder, name="m", version="v1"):
    """The entry's files (whatever the format), largest first; no lock or temporary files."""
    files = [p for p in folder.glob(f"{name}-{version}*") if p.suffix not in (".lock", ".tmp")]
    return sorted(files, key=lambda p: (-p.stat().st_size, p.name))


def flip_at(fraction):
    def corrupt(path):
        data = bytearray(path.read_bytes())
        data[min(int(fraction * len(data)), len(data) - 1)] ^= 0x01     # one bit
        path.write_bytes(bytes(data))
    corrupt.__name__ = f"flip a bit at {fraction:.0%}"
    return corrupt


def truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def garbage(path):
    path.write_bytes(b"this is not what the cache wrote\n" * 3)


def delete(path):
    path.unlink()


CORRUPTIONS = [truncate, garbage, *(flip_at(f) for f in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0))]
CASES = [(which, c) for which in ("largest", "smallest") for c in CORRUPTIONS] + [("smallest", delete)]


@pytest.mark.parametrize("which,corrupt", CASES, ids=[f"{w} file: {c.__name__}" for w, c in CASES])
def test_a_damaged_entry_is_rebuilt_and_says_why_once(tmp_path, monkeypatch, capsys, which, corrupt):
    """For the new cache: 'largest' is the .npz (the arrays), 'smallest' the .json (metadata)."""
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    builds = []

    def build():
        builds.append(1)
        return value()
    assert same(cached("m", "v1", build, verbose=False), value())
    files = entry_files(tmp_path)
    corrupt(files[0] if which == "largest" else files[-1])
    capsys.readouterr()
    got = cached("m", "v1", build, verbose=False)          # must neither crash nor load silently
    out = capsys.readouterr().out
    assert same(got, value()) and len(builds) == 2, "the damaged entry was not rebuilt"
    lines = [line for line in out.splitlines() if "rebuilding" in line]
    assert len(lines) == 1, f"expected one line saying why, got {out!r}"
    assert same(cached("m", "v1", build, verbose=False), value()) and len(builds) == 2
    assert capsys.readouterr().out == ""                  # the rebuilt entry loads quietly


def test_the_message_names_the_entry_and_both_checksums(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    cached("m", "v1", value, verbose=False)
    npz = tmp_path / "m-v1.npz"
    flip_at(0.5)(npz)
    cached("m", "v1", value, verbose=False)
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"cache entry m-v1: {npz} failed its checksum (expected ")
    assert ", got " in line and line.endswith("): rebuilding")


def test_nothing_is_pickled(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    cached("m", "v1", value, verbose=False)
    assert sorted(p.suffix for p in entry_files(tmp_path)) == [".json", ".npz"]
    with np.load(tmp_path / "m-v1.npz", allow_pickle=False) as npz:
        assert npz["value/W"].shape == (40, 8)


def test_a_value_the_codec_cannot_store_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    with pytest.raises(TypeError, match="cannot store value/model: .*give the cache a codec"):
        cached("m", "v1", lambda: {"model": object()}, verbose=False)
    with pytest.raises(ValueError, match="a cache version must be letters, digits"):
        cached("m", "v1/../x", value, verbose=False)


class Point:
    """A class that is its own codec (to_arrays / from_arrays), like the course's result dataclasses."""

    def __init__(self, xy, label):
        self.xy, self.label = xy, label

    def to_arrays(self):
        return {"xy": self.xy}, {"label": self.label}

    @classmethod
    def from_arrays(cls, arrays, meta):
        return cls(arrays["xy"], meta["label"])


def test_a_class_with_to_arrays_and_from_arrays_is_a_codec(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    p = cached("p", "v1", lambda: Point(np.arange(3.0), "three"), codec=Point, verbose=False)
    assert isinstance(p, Point) and p.label == "three" and p.xy.tolist() == [0, 1, 2]
    # read with another codec: the entry says which codec wrote it, so it is rebuilt, not misread
    cached("p", "v1", lambda: {"xy": np.arange(3.0)}, verbose=False)
    assert "test_cache.Point', this call reads 'helpers.infra.artifacts.TreeCodec'" in capsys.readouterr().out


# ---------------------------------------------------------------- where the cache lives
def test_default_folder_is_the_systems_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("NLP_COURSE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    expected = Path(platformdirs.user_cache_dir("nlp-from-scratch", appauthor=False))
    assert cache_dir() == expected and expected.is_dir()
    if sys.platform.startswith("linux"):
        assert expected == tmp_path / ".cache" / "nlp-from-scratch"
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))   # the XDG convention is followed
        assert cache_dir() == tmp_path / "xdg" / "nlp-from-scratch"
        assert cache.location()[1].endswith(f"and XDG_CACHE_HOME={tmp_path / 'xdg'} chose it")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))
        monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path / "mine"))
        assert cache.location() == (tmp_path / "mine", f"NLP_COURSE_CACHE={tmp_path / 'mine'}")


def test_default_folder_asks_platformdirs(monkeypatch):
    """On macOS and Windows the folder is that system's, not Linux's ~/.cache."""
    monkeypatch.delenv("NLP_COURSE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)       # platformdirs reads it on macOS too
    calls = []
    monkeypatch.setattr(platformdirs, "user_cache_dir",
                        lambda *a, **k: calls.append((a, k)) or "/Users/ada/Library/Caches/nlp-from-scratch")
    assert cache.default_folder() == Path("/Users/ada/Library/Caches/nlp-from-scratch")
    assert calls == [(("nlp-from-scratch",), {"appauthor": False})]
    from platformdirs.macos import MacOS

    mac = MacOS("nlp-from-scratch", appauthor=False).user_cache_dir
    assert mac.endswith("/Library/Caches/nlp-from-scratch"), mac


@pytest.mark.parametrize("setting", ["", "   "])
def test_an_empty_variable_is_an_error_and_nothing_is_written_here(tmp_path, monkeypatch, setting):
    monkeypatch.setenv("NLP_COURSE_CACHE", setting)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError, match="NLP_COURSE_CACHE is set but empty.*unset NLP_COURSE_CACHE"):
        cached("m", "v1", value, verbose=False)
    assert list(tmp_path.iterdir()) == []


def test_a_relative_folder_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", "my-cache")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError, match="NLP_COURSE_CACHE='my-cache' is a relative path"):
        cache_dir()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("inside", [False, True], ids=["the folder is a file", "its parent is a file"])
def test_a_file_in_the_way(tmp_path, monkeypatch, inside):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder", encoding="utf-8")
    folder = a_file / "cache" if inside else a_file
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))
    with pytest.raises(OSError) as e:
        cache_dir()
    msg = str(e.value)
    assert (f"the cache folder {folder} (NLP_COURSE_CACHE={folder}) cannot be created: {a_file} is a file, "
            "in the way of the folder. Move that file") in msg
    assert "set NLP_COURSE_CACHE to a folder you can write" in msg
    assert isinstance(e.value, cache.CacheLocationError)   # an OSError: make doctor reports those


@pytest.mark.parametrize("depth", [1, 3], ids=["its parent exists", "only a grandparent exists"])
def test_no_permission_names_the_nearest_folder_that_exists(tmp_path, monkeypatch, depth):
    """The folder that refuses is the nearest one that exists, which need not be the parent."""
    existing = tmp_path / "locked"
    existing.mkdir()
    folder = existing.joinpath(*[f"level{i}" for i in range(depth)])
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)     # root may write anywhere: simulate
    with pytest.raises(cache.CacheLocationError) as e:
        cache_dir()
    which = "its parent" if depth == 1 else "the nearest folder of that path that exists"
    assert f"cannot be created: you may not create folders in {existing} ({which})" in str(e.value)
    assert "parent's permissions" not in str(e.value)
    assert e.value.fix.startswith("export NLP_COURSE_CACHE=") or os.name == "nt"


@pytest.mark.parametrize("code, cause", [(errno.EROFS, "is on a read-only file system"),
                                         (errno.ENOSPC, "is full. Free some space")])
def test_a_read_only_or_full_disk_is_named(tmp_path, monkeypatch, code, cause):
    folder = tmp_path / "cache"
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))

    def refuse(self, *args, **kwargs):
        raise OSError(code, os.strerror(code), str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(cache.CacheLocationError, match=cause) as e:
        cache_dir()
    assert str(tmp_path) in str(e.value)


def test_a_folder_that_cannot_be_written(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse)     # root may write anywhere: simulate
    with pytest.raises(OSError, match=rf"the cache folder {tmp_path} \(NLP_COURSE_CACHE=.*\) is not "
                                                 rf"writable \(Permission denied\). Run `chmod u\+rwx {tmp_path}`"):
        cached("m", "v1", value, verbose=False)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write into any folder")
def test_a_read_only_folder_for_real(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))
    try:
        with pytest.raises(OSError, match="is not writable"):
            cache_dir()
    finally:
        folder.chmod(0o755)


def test_the_lock_is_filelock_not_fcntl():
    assert "fcntl" not in vars(cache) and cache.FileLock.__module__.startswith("filelock")


def test_a_second_caller_waits_for_the_lock_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    acquired, release = threading.Event(), threading.Event()

    def other_builder():                       # holds the entry's lock for a while, as a build would
        with cache.FileLock(str(tmp_path / "m-v1.lock")):
            acquired.set()
            release.wait(10)
    t = threading.Thread(target=other_builder)
    t.start()
    acquired.wait(10)
    threading.Timer(0.3, release.set).start()
    assert same(cached("m", "v1", value), value())
    t.join()
    assert "another process is building m; waiting for it" in capsys.readouterr().out


def test_cache_builds_once_and_rebuilds_on_version_or_corruption(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    calls = []
    build = lambda: calls.append(1) or {"w": np.arange(3)}  # noqa: E731
    assert cached("m", "v1", build, verbose=False)["w"].tolist() == [0, 1, 2]
    assert cached("m", "v1", build, verbose=False)["w"].tolist() == [0, 1, 2]
    assert len(calls) == 1
    cached("m", "v2", build, verbose=False)
    assert len(calls) == 2
    (tmp_path / "m-v2.npz").write_bytes(b"garbage")   # a damaged entry is rebuilt
    cached("m", "v2", build, verbose=False)
    assert len(calls) == 3


def fill_cache_entry(name: str, version: str, value):
    """A cache job for the tests (module level, so a worker process can import it)."""
    return cached(name, version, lambda: value, verbose=False)


def fail_to_build():
    raise OSError("disk full")


def slow_counted_fill(name: str, version: str, log: str):
    """Build an entry slowly, recording every build in ``log`` (for the locking test)."""
    import time

    def build():
        with open(log, "a", encoding="utf-8") as f:
            f.write("built\n")
        time.sleep(1.0)
        return 42
    return cached(name, version, build, verbose=False)


def test_two_processes_never_build_the_same_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    log = tmp_path / "builds.log"
    with multiprocessing.get_context("spawn").Pool(2) as pool:         # both at once
        values = pool.starmap(slow_counted_fill, [("shared", "v1", str(log))] * 2)
    assert values == [42, 42]
    assert log.read_text(encoding="utf-8").count("built") == 1          # the second waited and loaded
