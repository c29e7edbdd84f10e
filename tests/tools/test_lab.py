"""The JupyterLab files ``make lab`` installs (tools/lab/): the pre-save hook and the settings."""
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "tools" / "lab"


@pytest.fixture
def hook():
    """The pre-save hook, as Jupyter reads the config file (it runs it with ``c`` defined)."""
    c = Config()
    exec(compile((LAB / "jupyter_server_config.py").read_text(encoding="utf-8"),
                 "jupyter_server_config.py", "exec"), {"c": c})
    return c.ContentsManager.pre_save_hook


def _notebook(version: str, display: str = "Python 3 (ipykernel)") -> dict:
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "x"}],
            "metadata": {"kernelspec": {"display_name": display, "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python", "version": version}},
            "nbformat": 4, "nbformat_minor": 5}


def test_the_hook_keeps_the_recorded_kernel_and_language(tmp_path, hook):
    (tmp_path / "01_a.ipynb").write_text(json.dumps(_notebook("3.11.7")), encoding="utf-8")
    manager = SimpleNamespace(root_dir=str(tmp_path))
    opened = _notebook("3.12.1", display="Python 3")            # what JupyterLab would save
    opened["cells"][0]["source"] = "edited"
    model = {"type": "notebook", "content": opened}
    hook(model=model, path="01_a.ipynb", contents_manager=manager)
    assert model["content"]["metadata"] == _notebook("3.11.7")["metadata"]
    assert model["content"]["cells"][0]["source"] == "edited"    # the student's work is saved


def test_the_hook_leaves_new_notebooks_and_other_files_alone(tmp_path, hook):
    manager = SimpleNamespace(root_dir=str(tmp_path))
    model = {"type": "notebook", "content": _notebook("3.12.1")}
    hook(model=model, path="new.ipynb", contents_manager=manager)
    assert model["content"]["metadata"]["language_info"]["version"] == "3.12.1"
    text = {"type": "file", "content": "plain text"}
    hook(model=text, path="notes.txt", contents_manager=manager)
    assert text == {"type": "file", "content": "plain text"}


def test_the_settings_turn_off_the_news_with_jupyterlabs_own_keys():
    overrides = json.loads((LAB / "overrides.json").read_text(encoding="utf-8"))
    plugin = "@jupyterlab/apputils-extension:notification"
    assert overrides == {plugin: {"fetchNews": "false", "checkForUpdates": False}}
    schema_path = (Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
                   / "@jupyterlab" / "apputils-extension" / "notification.json")
    schema = json.loads(schema_path.read_text(encoding="utf-8"))["properties"]
    assert {"const": "false", "title": "Never"} in schema["fetchNews"]["oneOf"]
    assert schema["checkForUpdates"]["type"] == "boolean"


def test_make_lab_installs_both_files_and_opens_the_students_copies():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lab = makefile.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert "$(LAB_FILES)" in lab and "--LabApp.default_url=/lab/tree/student" in lab
    assert "tools/make_student.py" in lab and "student/01_feedforward.ipynb" in lab
    for name in ("overrides.json", "jupyter_server_config.py"):
        assert f"tools/lab/{name}" in makefile
