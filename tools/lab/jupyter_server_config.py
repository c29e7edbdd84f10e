"""Jupyter server settings for the course: `make lab` copies this file into .venv/etc/jupyter/.

A notebook records the kernel and the Python version it last ran with (``metadata.kernelspec``,
``metadata.language_info``). JupyterLab rewrites both when it opens a notebook with a Python of
another version, and its autosave would then change a lesson that the student never edited (and
``git pull`` could refuse to update it). This pre-save hook keeps, in a notebook that already
exists, the kernel and language metadata written in the file; everything else is saved as usual.
"""
import json
import os
import warnings


def keep_recorded_kernel(model, path, contents_manager, **kwargs):
    """Pre-save hook: the notebook ``model`` keeps the kernelspec and language_info of its file."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    try:
        with open(os.path.join(contents_manager.root_dir, path), encoding="utf-8") as f:
            recorded = json.load(f).get("metadata", {})
    except (OSError, ValueError):          # a new notebook, or a file that is not one
        return
    metadata = model["content"].setdefault("metadata", {})
    for key in ("kernelspec", "language_info"):
        if key in recorded:
            metadata[key] = recorded[key]


# Jupyter reads this file for the server and again for JupyterLab: the second assignment of the
# same hook is not worth the warning traitlets would print
warnings.filterwarnings("ignore", message="Overriding existing pre_save_hook")
c.ContentsManager.pre_save_hook = keep_recorded_kernel  # noqa: F821 (c: the config Jupyter passes)
