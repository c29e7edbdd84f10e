"""The committed records of the word-vector studies (``data/models/logs/``, written by the
studies in ``training/``) as lessons 07-08 read them."""
from __future__ import annotations

import json

from helpers.course.models import model_dir


def read_log(name: str) -> dict:
    """The record ``data/models/logs/<name>`` (e.g. 'wv_budget.json')."""
    path = model_dir() / "logs" / name
    if not path.exists():
        raise FileNotFoundError(f"no study record {path}; the study that writes it is in training/")
    return json.loads(path.read_text(encoding="utf-8"))


def load_budget() -> dict:
    """The record of the word2vec trainers' schedule lengths (``logs/wv_budget.json``)."""
    return read_log("wv_budget.json")
