"""Lesson 09's grid of word2vec quality against corpus size and dimension (§7): gensim's CBOW
on nested samples of the corpus x dimensions x seeds, and the control with equal updates, as
``make models NAME=wv_scaling_grid`` (:mod:`training.scaling_grid`) shipped them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.infra.artifacts import Artifact, timings_from_meta

METRICS = {"analogy": "analogy accuracy (3CosAdd)", "wordsim353": "WordSim-353 ρ",
           "simlex999": "SimLex-999 ρ"}


@dataclass
class ScalingGrid:
    """Scores of a fractions x dims grid of runs: tokens (F,) of each sample, scores {metric:
    (S, F, D)} over S seeds, seconds, n_scored {metric: items scored}, n_words, config."""

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
