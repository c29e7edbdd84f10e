import numpy as np
import pytest

from helpers.exercises import ExerciseFailed, expect_close, run_checks
from helpers.infra.cache import CacheJob, build_missing, cached, is_cached
from helpers.infra.plotting import new_figure
from helpers.infra.widgets import Explorer, dropdown, slider


def _render(freq, kind="sin"):
    fig, ax = new_figure()
    x = np.linspace(0, 6, 100)
    ax.plot(x, np.sin(freq * x) if kind == "sin" else np.cos(freq * x))
    return fig, f"{kind} at frequency {freq}"


def test_explorer_redraws_when_a_slider_moves():
    ex = Explorer(_render, {"freq": slider(1.0, 0.5, 3.0, 0.5, "f"), "kind": dropdown(["sin", "cos"], "sin", "k")})
    assert ex.renders == 1 and ex.summary == "sin at frequency 1.0" and ex.png.startswith(b"\x89PNG")
    first = ex.png
    ex.controls["freq"].value = 2.0
    assert ex.renders == 2 and ex.summary == "sin at frequency 2.0" and ex.png != first
    ex.controls["kind"].value = "cos"
    assert ex.summary == "cos at frequency 2.0"
    assert "course-explorer" in ex.box._dom_classes


def test_explorer_with_button_waits_for_the_click_and_shows_errors():
    def render(x):
        if x > 2:
            raise ValueError("x too large")
        return _render(x)
    ex = Explorer(render, {"x": slider(1, 0, 5, 1, "x")}, run_button="Train")
    ex.controls["x"].value = 2
    assert ex.renders == 1 and ex.summary == "sin at frequency 1"
    ex.button.click()
    assert ex.renders == 2 and ex.summary == "sin at frequency 2"
    ex.controls["x"].value = 4
    ex.button.click()
    assert ex.summary == "error: ValueError: x too large"


def test_exercise_checks_report_expected_and_got(capsys):
    def check(f):
        expect_close(f(2.0), 4.0, "square of 2")
    assert run_checks("square", lambda x: x * x, [check])
    assert not run_checks("square", lambda x: x + x + 1, [check])
    assert "expected 4., got 5." in capsys.readouterr().out
    def stub(x):
        raise NotImplementedError
    assert not run_checks("square", stub, [check])
    assert "not attempted yet" in capsys.readouterr().out
    with pytest.raises(ExerciseFailed, match=r"expected shape \(2,\), got \(3,\)"):
        expect_close([1, 2, 3], [1, 2], "v")


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


@pytest.mark.parametrize("workers", [1, 2])
def test_build_missing_fills_only_missing_entries(tmp_path, monkeypatch, capsys, workers):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    fill_cache_entry("a", "v1", "old")
    jobs = [CacheJob(label, label, "v1", fill_cache_entry, {"name": label, "version": "v1", "value": label.upper()})
            for label in ("a", "b", "c")]
    assert is_cached("a", "v1") and not is_cached("b", "v1")
    built = build_missing(jobs, workers=workers)
    assert sorted(built) == ["b", "c"] and all(s >= 0 for s in built.values())
    assert "2 of 3 results are not cached yet" in capsys.readouterr().out
    assert fill_cache_entry("b", "v1", None) == "B" and fill_cache_entry("a", "v1", None) == "old"
    assert build_missing(jobs, workers=workers) == {}
    assert "all 3 results are in the cache" in capsys.readouterr().out


def test_build_missing_names_the_job_that_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    jobs = [CacheJob("broken model", "x", "v1", fail_to_build),
            CacheJob("fine", "y", "v1", fill_cache_entry, {"name": "y", "version": "v1", "value": 1})]
    with pytest.raises(RuntimeError, match="building 'broken model' for the cache failed: OSError"):
        build_missing(jobs, workers=2, verbose=False)


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
    # two jobs for one entry, run at the same time in two worker processes
    jobs = [CacheJob(f"copy {i}", "shared", "v1", slow_counted_fill,
                     {"name": "shared", "version": "v1", "log": str(log)}) for i in range(2)]
    built = build_missing(jobs, workers=2, verbose=False)
    assert sorted(built) == ["copy 0", "copy 1"]
    assert log.read_text(encoding="utf-8").count("built") == 1          # the second process waited and loaded
    assert slow_counted_fill("shared", "v1", str(log)) == 42


def test_worker_count_from_the_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))
    jobs = [CacheJob(x, x, "v1", fill_cache_entry, {"name": x, "version": "v1", "value": 1}) for x in "ab"]
    monkeypatch.setenv("NLP_COURSE_WORKERS", "1")
    build_missing(jobs)
    assert "(1 at a time" in capsys.readouterr().out
    monkeypatch.setenv("NLP_COURSE_WORKERS", "two")
    with pytest.raises(ValueError, match="NLP_COURSE_WORKERS must be a positive integer, got 'two'"):
        build_missing([CacheJob("c", "c", "v1", fill_cache_entry, {"name": "c", "version": "v1", "value": 1})])

