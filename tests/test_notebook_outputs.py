"""What helpers write into a notebook's outputs (issue 16): an explorer's static fallback beside
its live widget, text progress bars whose saved form is their final line, and the cleaning that
``make execute`` applies (tests/clean_notebooks.py), including nbval's sanitizer for the bars."""
from __future__ import annotations

import base64
import configparser
import io
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.infra import widgets  # noqa: E402
from helpers.infra.plotting import new_figure, set_labels  # noqa: E402
from helpers.infra.progress import in_notebook, progress_bar  # noqa: E402
from helpers.infra.training import train_loop  # noqa: E402
from helpers.infra.widgets import FALLBACK_CLASS, WIDGET_NOTE, Explorer, slider  # noqa: E402
from tests.clean_notebooks import (  # noqa: E402
    KERNELSPEC,
    clean,
    clean_outputs,
    main,
    terminal_text,
)

ROOT = Path(__file__).resolve().parents[1]


def _render(a):
    fig, ax = new_figure()
    ax.plot(np.arange(5), a * np.arange(5))
    set_labels(ax, "a line", "x", "y")
    return fig, f"slope {a}"


# ---------------------------------------------------------------- explorer fallback
def test_fallback_is_the_first_render_in_every_form():
    ex = Explorer(_render, {"a": slider(1, 0, 3, 1, "a")}, title="Slopes & <lines>")
    first = ex.png
    bundle = ex.fallback_bundle()
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    assert base64.b64decode(bundle["image/png"]) == first
    page = bundle["text/html"]
    assert f'class="{FALLBACK_CLASS} {ex.fallback_key}"' in page
    assert f'src="data:image/png;base64,{bundle["image/png"]}"' in page
    assert "Slopes &amp; &lt;lines&gt;" in page and "slope 1" in page        # escaped title, summary
    assert bundle["text/plain"] == "Slopes & <lines>\nslope 1"
    ex.controls["a"].value = 3                         # the fallback stays the first view
    assert ex.summary == "slope 3" and ex.fallback_bundle() == bundle


def test_widget_hides_only_its_own_fallback():
    ex = Explorer(_render, {"a": slider(1, 0, 3, 1, "a")})
    other = Explorer(_render, {"a": slider(2, 0, 3, 1, "a")})
    assert ex.fallback_key != other.fallback_key
    again = Explorer(_render, {"a": slider(1, 0, 3, 1, "a")})
    assert again.fallback_key == ex.fallback_key       # deterministic: a re-run names the same fallback
    styles = [w.value for w in ex.box.children if isinstance(w, widgets.widgets.HTML) and "<style>" in w.value]
    assert len(styles) == 1
    assert f".{FALLBACK_CLASS}.{ex.fallback_key} " in styles[0] and other.fallback_key not in styles[0]
    assert "display: none" in styles[0]


def test_displaying_an_explorer_writes_the_fallback_then_the_widget(monkeypatch):
    shown = []
    monkeypatch.setattr(widgets, "display", lambda obj, raw=False: shown.append((obj, raw)))
    ex = Explorer(_render, {"a": slider(1, 0, 3, 1, "a")})
    ex._ipython_display_()
    assert [raw for _, raw in shown] == [True, True]
    assert shown[0][0] == ex.fallback_bundle()
    widget = shown[1][0]
    assert widget["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.box.model_id
    assert widget["text/plain"] == WIDGET_NOTE and "VBox" not in widget["text/plain"]


def test_a_failed_first_render_has_a_fallback_without_an_image():
    def broken(a):
        raise ValueError("no data")

    ex = Explorer(broken, {"a": slider(1, 0, 3, 1, "a")})
    bundle = ex.fallback_bundle()
    assert "image/png" not in bundle and "<img" not in bundle["text/html"]
    assert "error: ValueError: no data" in bundle["text/plain"]


# ---------------------------------------------------------------- progress bars
class _KernelStdout(io.StringIO):
    """Looks like ipykernel's OutStream to helpers.infra.progress.in_notebook (and, like it, says UTF-8)."""

    encoding = "UTF-8"


_KernelStdout.__module__ = "ipykernel.iostream"


def test_progress_bar_in_a_notebook_is_text_on_stdout_ending_in_a_record(monkeypatch):
    out, err = _KernelStdout(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert in_notebook()
    for _ in progress_bar(range(7), desc="demo", unit="step", mininterval=0):
        pass
    assert err.getvalue() == ""
    saved = terminal_text(out.getvalue())
    assert "\r" in out.getvalue()                          # redrawn in place while it runs
    assert re.fullmatch(r"demo: 100%\|█+\| 7/7 \[[^\]]+step/s\]\n", saved), saved


def test_outside_a_notebook_the_bar_goes_to_stderr(monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert not in_notebook()
    for _ in progress_bar(range(3), desc="script"):
        pass
    assert out.getvalue() == "" and "script: 100%" in err.getvalue()


def test_training_loop_leaves_its_final_state(monkeypatch):
    out = _KernelStdout()
    monkeypatch.setattr(sys, "stdout", out)
    train_loop(lambda b: 0.5, lambda epoch: range(20), epochs=2, desc="toy model")
    lines = terminal_text(out.getvalue()).splitlines()
    assert len(lines) == 1 and lines[0].startswith("toy model: 40step [") and "loss=0.500" in lines[0]
    out2 = _KernelStdout()
    monkeypatch.setattr(sys, "stdout", out2)
    train_loop(lambda b: 0.5, lambda epoch: range(3), epochs=1, progress=False)
    assert out2.getvalue() == ""


def _sanitize(text: str) -> str:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "tests" / "nbval_sanitize.cfg", encoding="utf-8")
    for section in cfg.sections():
        text = re.sub(cfg[section]["regex"], cfg[section]["replace"], text)
    return text


def test_nbval_sanitizer_makes_two_runs_of_a_bar_equal():
    a = "LSA: 100%|██████████| 4/4 [00:11<00:00,  2.83s/it, truncated SVD (k=200)]\nk = 10\n"
    b = "LSA: 100%|██████████| 4/4 [00:09<00:00,  2.31s/it, truncated SVD (k=200)]\nk = 10\n"
    c = "toy: 40step [00:00, 1234.56step/s, epoch=2, loss=0.500]\n"
    d = "toy: 40step [00:01, 38.20step/s, epoch=2, loss=0.500]\n"
    assert _sanitize(a) == _sanitize(b) and "[PROGRESS]" in _sanitize(a)
    assert _sanitize(c) == _sanitize(d)
    assert _sanitize("4/4 done\n") != _sanitize("3/4 done\n")   # counts are still compared


# ---------------------------------------------------------------- cleaning executed notebooks
def test_terminal_text_applies_carriage_returns_and_backspaces():
    assert terminal_text("a:  0%|  | 0/4\ra: 50%| | 2/4\ra: 100%|#| 4/4\nnext\n") == "a: 100%|#| 4/4\nnext\n"
    assert terminal_text("abc\b\bX\n") == "aX\n"
    assert terminal_text("one\r\ntwo\n") == "one\ntwo\n"
    assert terminal_text("bar 1\rbar 2\r") == "bar 2"


def test_clean_outputs_merges_neighbouring_streams_only():
    outputs = [{"output_type": "stream", "name": "stdout", "text": ["x: 0%\r"]},
               {"output_type": "stream", "name": "stdout", "text": ["x: 100%\n", "done\n"]},
               {"output_type": "display_data", "data": {"text/plain": "plot"}, "metadata": {}},
               {"output_type": "stream", "name": "stdout", "text": "after\n"},
               {"output_type": "stream", "name": "stderr", "text": "   \r    \r"}]
    cleaned = clean_outputs(outputs)
    assert [o["output_type"] for o in cleaned] == ["stream", "display_data", "stream"]
    assert cleaned[0]["text"] == ["x: 100%\n", "done\n"] and cleaned[2]["text"] == ["after\n"]


def test_clean_removes_widget_state_and_timestamps(tmp_path, capsys):
    nb = {"metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5, "cells": [
        {"cell_type": "code", "execution_count": 1, "source": "", "outputs": [],
         "metadata": {"execution": {"iopub.status.busy": "2026-01-01T00:00:00Z"}, "tags": ["keep"]}}]}
    changes = clean(nb)
    assert "widget state" in changes and any("timestamps of 1 cells" in c for c in changes)
    assert nb["metadata"] == {"kernelspec": KERNELSPEC} and nb["cells"][0]["metadata"] == {"tags": ["keep"]}
    assert "kernel name" in changes
    assert clean(nb) == []                                        # idempotent
    path = tmp_path / "n.ipynb"
    import json

    path.write_text(json.dumps({**nb, "metadata": {"kernelspec": KERNELSPEC, "widgets": {}}}), encoding="utf-8")
    assert main(["--check", str(path)]) == 1 and "would clean widget state" in capsys.readouterr().out
    assert main([str(path)]) == 0 and main(["--check", str(path)]) == 0


def test_committed_notebooks_name_the_kernel_the_course_registers():
    """The kernel ipykernel registers (what JupyterLab writes on opening a notebook), so that
    opening a lesson changes nothing on disk; tests/clean_notebooks.py writes it."""
    from ipykernel.kernelspec import get_kernel_dict

    registered = get_kernel_dict()
    assert (KERNELSPEC["name"], KERNELSPEC["display_name"]) == ("python3", registered["display_name"])
    import json

    wrong = [p.name for p in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))
             if json.loads(p.read_text(encoding="utf-8"))["metadata"].get("kernelspec") != KERNELSPEC]
    assert not wrong, f"notebooks with another kernel name (run tests/clean_notebooks.py): {wrong}"


@pytest.mark.parametrize("target", ["execute"])
def test_make_execute_records_no_timestamps_and_cleans(target):
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    block = makefile.split(f"\n{target}: setup\n", 1)[1].split("\n\n", 1)[0]
    assert "--ExecutePreprocessor.record_timing=False" in block
    assert "tests/clean_notebooks.py" in block
