"""helpers.infra.cache: entries built once, damaged ones rebuilt with one line saying why, the
folder chosen and checked with clear errors, builds locked across processes."""
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
from helpers.infra.cache import cache_dir, cached


def value():
    rng = np.random.default_rng(0)
    return {"W": rng.standard_normal((40, 8)).astype(np.float32), "ids": np.arange(12)}


def same(a, b) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    return tmp_path


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


CORRUPTIONS = [truncate, garbage, *(flip_at(f) for f in (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0))]
CASES = [(s, c) for s in (".npz", ".json") for c in CORRUPTIONS] + [(".json", Path.unlink)]


@pytest.mark.parametrize("suffix,corrupt", CASES, ids=[f"{s}: {c.__name__}" for s, c in CASES])
def test_a_damaged_entry_is_rebuilt_and_says_why_once(here, capsys, suffix, corrupt):
    builds = []

    def build():
        builds.append(1)
        return value()
    assert same(cached("m", "v1", build, verbose=False), value())
    corrupt(here / f"m-v1{suffix}")
    capsys.readouterr()
    got = cached("m", "v1", build, verbose=False)          # neither a crash nor a silent load
    lines = [line for line in capsys.readouterr().out.splitlines() if "rebuilding" in line]
    assert same(got, value()) and len(builds) == 2 and len(lines) == 1, lines
    assert same(cached("m", "v1", build, verbose=False), value()) and len(builds) == 2
    assert capsys.readouterr().out == ""                  # the rebuilt entry loads quietly


def test_built_once_rebuilt_for_a_new_version_never_pickled_and_the_why_names_both_checksums(
        here, capsys):
    calls = []
    build = lambda: calls.append(1) or value()  # noqa: E731
    cached("m", "v1", build, verbose=False)
    cached("m", "v1", build, verbose=False)
    cached("m", "v2", build, verbose=False)
    assert len(calls) == 2
    files = sorted(p.name for p in here.glob("m-v1*") if p.suffix != ".lock")
    assert files == ["m-v1.json", "m-v1.npz"]
    with np.load(here / "m-v1.npz", allow_pickle=False) as npz:
        assert npz["W"].shape == (40, 8)
    flip_at(0.5)(here / "m-v1.npz")
    capsys.readouterr()
    cached("m", "v1", value, verbose=False)
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"cache entry m-v1: {here / 'm-v1.npz'} failed its checksum (expected ")
    assert ", got " in line and line.endswith("): rebuilding")


def test_a_value_the_codec_cannot_store_or_a_bad_version_is_a_clear_error(here):
    with pytest.raises(TypeError, match="array 'model' is a object, expected a NumPy array"):
        cached("m", "v1", lambda: {"model": object()}, verbose=False)
    with pytest.raises(ValueError, match="a cache version must be letters, digits"):
        cached("m", "v1/../x", value, verbose=False)


class Point:
    """A class that is its own codec, like the course's result dataclasses."""

    def __init__(self, xy, label):
        self.xy, self.label = xy, label

    def to_arrays(self):
        return {"xy": self.xy}, {"label": self.label}

    @classmethod
    def from_arrays(cls, arrays, meta):
        return cls(arrays["xy"], meta["label"])


def test_a_class_with_to_arrays_and_from_arrays_is_a_codec(here, capsys):
    p = cached("p", "v1", lambda: Point(np.arange(3.0), "three"), codec=Point, verbose=False)
    assert isinstance(p, Point) and p.label == "three" and p.xy.tolist() == [0, 1, 2]
    cached("p", "v1", lambda: {"xy": np.arange(3.0)}, verbose=False)   # another codec: rebuilt
    assert ("test_cache.Point', this call reads 'helpers.infra.cache.ArraysCodec'"
            in capsys.readouterr().out)


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
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert cache_dir() == tmp_path / "xdg" / "nlp-from-scratch"
        assert cache.location()[1].endswith(f"and XDG_CACHE_HOME={tmp_path / 'xdg'} chose it")
        monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path / "mine"))
        assert cache.location() == (tmp_path / "mine", f"NLP_COURSE_CACHE={tmp_path / 'mine'}")


@pytest.mark.parametrize("setting, message", [
    ("", "NLP_COURSE_CACHE is set but empty.*unset NLP_COURSE_CACHE"),
    ("   ", "NLP_COURSE_CACHE is set but empty"),
    ("my-cache", "NLP_COURSE_CACHE='my-cache' is a relative path")])
def test_an_empty_or_relative_variable_is_an_error_and_nothing_is_written_here(
        tmp_path, monkeypatch, setting, message):
    monkeypatch.setenv("NLP_COURSE_CACHE", setting)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(cache.CacheLocationError, match=message):
        cached("m", "v1", value, verbose=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("inside", [False, True], ids=["the folder is a file", "its parent is"])
def test_a_file_in_the_way(tmp_path, monkeypatch, inside):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder", encoding="utf-8")
    folder = a_file / "cache" if inside else a_file
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))
    with pytest.raises(cache.CacheLocationError) as e:
        cache_dir()
    assert (f"the cache folder {folder} (NLP_COURSE_CACHE={folder}) cannot be created: {a_file} "
            "is a file, in the way of the folder. Move that file") in str(e.value)
    assert "set NLP_COURSE_CACHE to a folder you can write" in str(e.value)


def refuse_mkdir(monkeypatch, code, message):
    def refuse(self, *args, **kwargs):
        raise (PermissionError if code == errno.EACCES else OSError)(code, message, str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)     # root may write anywhere: simulate


@pytest.mark.parametrize("depth", [1, 3], ids=["its parent exists", "a grandparent exists"])
def test_no_permission_names_the_nearest_folder_that_exists(tmp_path, monkeypatch, depth):
    existing = tmp_path / "locked"
    existing.mkdir()
    monkeypatch.setenv("NLP_COURSE_CACHE", str(existing.joinpath(*[f"l{i}" for i in range(depth)])))
    refuse_mkdir(monkeypatch, errno.EACCES, "Permission denied")
    with pytest.raises(cache.CacheLocationError) as e:
        cache_dir()
    which = "its parent" if depth == 1 else "the nearest folder of that path that exists"
    assert f"you may not create folders in {existing} ({which})" in str(e.value)
    assert e.value.fix.startswith("export NLP_COURSE_CACHE=") or os.name == "nt"


@pytest.mark.parametrize("code, cause", [(errno.EROFS, "is on a read-only file system"),
                                         (errno.ENOSPC, "is full. Free some space")])
def test_a_read_only_or_full_disk_is_named(tmp_path, monkeypatch, code, cause):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path / "cache"))
    refuse_mkdir(monkeypatch, code, os.strerror(code))
    with pytest.raises(cache.CacheLocationError, match=cause) as e:
        cache_dir()
    assert str(tmp_path) in str(e.value)


def test_a_folder_that_cannot_be_written(here, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse)     # root may write anywhere
    with pytest.raises(OSError, match=rf"the cache folder {here} \(NLP_COURSE_CACHE=.*\) is "
                                      r"not writable \(Permission denied\). Run "
                                      rf"`chmod u\+rwx {here}`"):
        cached("m", "v1", value, verbose=False)


# ---------------------------------------------------------------- locking
def test_a_second_caller_waits_for_the_lock_and_says_so(here, capsys):
    acquired, release = threading.Event(), threading.Event()

    def other_builder():                       # holds the entry's lock, as a build would
        with cache.FileLock(str(here / "m-v1.lock")):
            acquired.set()
            release.wait(10)
    t = threading.Thread(target=other_builder)
    t.start()
    acquired.wait(10)
    threading.Timer(0.3, release.set).start()
    assert same(cached("m", "v1", value), value())
    t.join()
    assert "another process is building m; waiting for it" in capsys.readouterr().out


def slow_counted_fill(name: str, version: str, log: str):
    """Build an entry slowly, logging every build (module level: spawn imports it)."""
    import time
    def build():
        with open(log, "a", encoding="utf-8") as f:
            f.write("built\n")
        time.sleep(1.0)
        return {"x": np.array(42)}
    return int(cached(name, version, build, verbose=False)["x"])


def test_two_processes_never_build_the_same_entry(here):
    log = here / "builds.log"
    with multiprocessing.get_context("spawn").Pool(2) as pool:         # both at once
        values = pool.starmap(slow_counted_fill, [("shared", "v1", str(log))] * 2)
    assert values == [42, 42]
    assert log.read_text(encoding="utf-8").count("built") == 1          # the second one waited
