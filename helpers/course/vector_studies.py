"""The shipped word-vector studies of lessons 07-09: ``wv_tricks``, ``wv_count_records`` and
``wv_scaling_grid`` (lesson 09 §7)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.infra.artifacts import Artifact, timings_from_meta

METRICS = {"analogy": "analogy accuracy (3CosAdd)", "wordsim353": "WordSim-353 ρ",
           "simlex999": "SimLex-999 ρ"}


# ---------------------------------------------------------------- subsampling and the window
@dataclass
class TricksResult:
    """The shipped study of subsampling and the dynamic window: ``curves`` (seeds, variants,
    epochs), ``final`` (seeds, variants), the report half's items and gold."""

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
    return TricksResult(list(meta["variants"]), dict(meta["labels"]),
                        list(meta["settings"]["seeds"]), part("curve/") | {"cpu_seconds": cpu},
                        part("final/"), part("items/"), part("gold/"), meta)


def load_count_records(artifact: Artifact) -> dict:
    """{method: records} of LSA and PPMI-SVD (``wv_count_records``)."""
    return artifact.meta["records"]


# ---------------------------------------------------------------- the scaling grid
@dataclass
class ScalingGrid:
    """Scores of a fractions x dims grid of gensim CBOW runs: tokens (F,) of each sample, scores
    {metric: (S, F, D)} over S seeds, seconds, n_scored {metric: items scored}, n_words, config."""

    fractions: tuple
    dims: tuple
    tokens: np.ndarray
    scores: dict
    seconds: np.ndarray
    n_scored: dict
    n_words: int
    config: dict


@dataclass
class ShippedGrid:
    """The shipped ``grid``, its equal-updates ``control`` (and epochs per sample), the metadata."""

    grid: ScalingGrid
    control: ScalingGrid
    control_epochs: tuple
    metadata: dict


def cell_epochs(s: dict, fraction: float, control: bool) -> int:
    """A cell's epochs: ``epochs``, or ``round(epochs / fraction)`` in the control."""
    return int(round(s["epochs"] / fraction)) if control else int(s["epochs"])


def load_grid_artifact(artifact: Artifact) -> ShippedGrid:
    """The ``wv_scaling_grid`` artefact as a :class:`ShippedGrid`."""
    a, meta = artifact.arrays, artifact.meta
    s = meta["settings"]
    cfg = {k: v for k, v in s.items() if k not in ("fractions", "dims")}
    seconds = timings_from_meta(meta["timings"])

    def part(name, epochs):
        scores = {m: a[f"scores/{name}/{m}"] for m in METRICS}
        return ScalingGrid(tuple(s["fractions"]), tuple(s["dims"]), a["tokens"], scores,
                           seconds[f"seconds/{name}"],
                           dict(meta["n_scored"]), int(meta["n_words"]),
                           {**cfg, "epochs": epochs, "part": name})

    ep = tuple(cell_epochs(s, f, True) for f in s["fractions"])
    return ShippedGrid(part("grid", [s["epochs"]] * len(ep)), part("control", list(ep)), ep, meta)
