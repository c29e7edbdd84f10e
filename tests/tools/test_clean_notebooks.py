"""The cleaning ``make execute`` applies to executed notebooks (tools/clean_notebooks.py), and
nbval's sanitizer for progress bars (tests/nbval_sanitize.cfg)."""
import configparser
import json
import re
from pathlib import Path

from tests.lesson_text import NOTEBOOKS, SOLUTIONS, load
from tools.clean_notebooks import KERNELSPEC, clean, clean_outputs, main, terminal_text

ROOT = Path(__file__).resolve().parents[2]


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


def test_terminal_text_applies_carriage_returns_and_backspaces():
    bar = "a:  0%|  | 0/4\ra: 50%| | 2/4\ra: 100%|#| 4/4\nnext\n"
    assert terminal_text(bar) == "a: 100%|#| 4/4\nnext\n"
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
    stamp = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    nb = {"metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5, "cells": [
        {"cell_type": "code", "execution_count": 1, "source": "", "outputs": [],
         "metadata": {"execution": stamp, "tags": ["keep"]}}]}
    changes = clean(nb)
    assert "widget state" in changes and any("timestamps of 1 cells" in c for c in changes)
    assert nb["metadata"] == {"kernelspec": KERNELSPEC}
    assert nb["cells"][0]["metadata"] == {"tags": ["keep"]}
    assert "kernel name" in changes
    assert clean(nb) == []                                        # idempotent
    path = tmp_path / "n.ipynb"
    nb["metadata"]["widgets"] = {}
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert main(["--check", str(path)]) == 1
    assert "would clean widget state" in capsys.readouterr().out
    assert main([str(path)]) == 0 and main(["--check", str(path)]) == 0


def test_committed_notebooks_are_clean_and_name_the_kernel_the_course_registers():
    """The kernel is ipykernel's (what JupyterLab writes on opening a notebook, so that opening a
    lesson changes nothing on disk); no widget state, timestamps or overwritten stream text."""
    from ipykernel.kernelspec import get_kernel_dict
    assert (KERNELSPEC["name"], KERNELSPEC["display_name"]) == ("python3",
                                                                get_kernel_dict()["display_name"])
    changes = {p.name: clean(load(p)) for p in NOTEBOOKS + sorted(SOLUTIONS.glob("*.ipynb"))}
    dirty = {name: c for name, c in changes.items() if c}
    assert not dirty, f"run tools/clean_notebooks.py on: {dirty}"


def test_make_execute_records_no_timestamps_and_cleans():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    block = makefile.split("\nexecute: setup\n", 1)[1].split("\n\n", 1)[0]
    assert "--ExecutePreprocessor.record_timing=False" in block
    assert "tools/clean_notebooks.py" in block
