"""Progress bars (helpers.infra.progress): text on stdout in a notebook, whose saved form is
their final line; on stderr outside one."""
import io
import re
import sys

from helpers.infra.progress import in_notebook, progress_bar
from helpers.infra.training import train_loop
from tools.clean_notebooks import terminal_text


class _KernelStdout(io.StringIO):
    """Looks like ipykernel's OutStream to ``in_notebook`` (and, like it, says UTF-8)."""

    encoding = "UTF-8"


_KernelStdout.__module__ = "ipykernel.iostream"


def test_in_a_notebook_the_bar_is_text_on_stdout_ending_in_a_record(monkeypatch):
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


def test_the_training_loop_s_bar_leaves_its_final_state(monkeypatch):
    out = _KernelStdout()
    monkeypatch.setattr(sys, "stdout", out)
    train_loop(lambda b: 0.5, lambda epoch: range(20), epochs=2, desc="toy model")
    lines = terminal_text(out.getvalue()).splitlines()
    assert len(lines) == 1 and lines[0].startswith("toy model: 40step [")
    assert "loss=0.500" in lines[0]
    out2 = _KernelStdout()
    monkeypatch.setattr(sys, "stdout", out2)
    train_loop(lambda b: 0.5, lambda epoch: range(3), epochs=1, progress=False)
    assert out2.getvalue() == ""
