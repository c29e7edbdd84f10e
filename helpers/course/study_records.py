"""The committed records of the word-vector studies, as lessons 07-09 read them.

The studies run in ``training/`` (``make models`` or ``python -m training.<study>``); a lesson reads
what they wrote: the JSON records in ``data/models/logs/`` (:func:`read_log`), the shipped
``wv_tricks`` (subsampling and the dynamic window, :class:`TricksResult`) and ``wv_count_records``
(LSA's and PPMI-SVD's scores), read through :func:`helpers.course.models.load_model`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from helpers.course.models import model_dir
from helpers.infra.artifacts import Artifact, timings_from_meta


def read_log(name: str) -> dict:
    """The record ``data/models/logs/<name>`` (e.g. 'wv_budget.json')."""
    path = model_dir() / "logs" / name
    if not path.exists():
        raise FileNotFoundError(f"no study record {path}; the study that writes it is in training/")
    return json.loads(path.read_text(encoding="utf-8"))


def load_budget() -> dict:
    """The record of the word2vec trainers' schedule lengths (``logs/wv_budget.json``)."""
    return read_log("wv_budget.json")


def load_count_records(artifact: Artifact) -> dict:
    """{method: records} of LSA and PPMI-SVD (``wv_count_records``)."""
    return artifact.meta["records"]


@dataclass
class TricksResult:
    """The shipped study of subsampling and the dynamic window (``load_model("wv_tricks")``).

    variants, labels {variant: label}, seeds; curves {'report/wordsim', ..., 'cpu_seconds',
    'words_trained'}: (seeds, variants, epochs); final {'report/wordsim', ...}: (seeds, variants)
    after the last epoch; items and gold: the report-half items; metadata: settings and record.
    """

    variants: list
    labels: dict
    seeds: list
    curves: dict
    final: dict
    items: dict
    gold: dict
    metadata: dict

    def index(self, variant: str) -> int:
        """Position of ``variant`` in :attr:`variants`."""
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r}; the measurement has {self.variants}")
        return self.variants.index(variant)

    def cpu_seconds(self) -> np.ndarray:
        """Training CPU seconds of every run (seeds, variants)."""
        return self.curves["cpu_seconds"].sum(axis=2)


def load_tricks(artifact: Artifact) -> TricksResult:
    """The ``wv_tricks`` artefact as a :class:`TricksResult`."""
    a, meta = artifact.arrays, artifact.meta

    def part(prefix):
        return {k[len(prefix):]: a[k] for k in a if k.startswith(prefix)}

    cpu = timings_from_meta(meta["timings"])["curve/cpu_seconds"]
    return TricksResult(list(meta["variants"]), dict(meta["labels"]), list(meta["settings"]["seeds"]),
                        part("curve/") | {"cpu_seconds": cpu}, part("final/"), part("items/"), part("gold/"), meta)
