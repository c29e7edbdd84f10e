"""The committed records of the word-vector studies, as lessons 07-09 read them.

The studies themselves run in ``training/`` (``make models`` or ``python -m training.<study>``);
a lesson reads what they wrote:

- ``data/models/logs/wv_settings.json``: gensim's defaults against one change at a time
  (:func:`load_settings_record`, lesson 07);
- ``logs/wv_budget.json``: schedule lengths of every word2vec trainer (:func:`load_budget`,
  lessons 07-08);
- ``logs/wv_glove_search.json``: GloVe's staged search (:func:`load_search`, :func:`chosen_run`,
  lesson 08);
- the shipped ``wv_tricks`` (subsampling and the dynamic window, :class:`TricksResult`, lesson 07)
  and ``wv_count_records`` (LSA's and PPMI-SVD's records, lesson 09), read through
  :func:`helpers.course.models.load_model`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from helpers.course.models import model_dir
from helpers.infra.artifacts import Artifact, timings_from_meta
from helpers.lib.stats import Interval, spearman_rows


def _read_log(name: str) -> dict:
    return json.loads((model_dir() / "logs" / name).read_text(encoding="utf-8"))


def load_settings_record() -> dict:
    """The record of word2vec's ``sample`` and ``alpha`` (``logs/wv_settings.json``)."""
    return _read_log("wv_settings.json")


def load_budget() -> dict:
    """The record of the word2vec trainers' schedule lengths (``logs/wv_budget.json``)."""
    return _read_log("wv_budget.json")


def load_search() -> dict:
    """The record of GloVe's settings search (``logs/wv_glove_search.json``)."""
    return _read_log("wv_glove_search.json")


def chosen_run(record: dict | None = None) -> dict:
    """The search's run at the chosen settings (the shipped GloVe's training): the combined run,
    or the run of a stage at the base when the search kept it."""
    record = record or load_search()
    if record["combined"] is not None:
        return record["combined"]
    runs = [r for st in record["stages"] for r in st["runs"]]
    return next(r for r in runs if r["settings"] == record["chosen"])


def load_count_records(artifact: Artifact) -> dict:
    """{method: records} of LSA and PPMI-SVD (``wv_count_records``)."""
    return artifact.meta["records"]


# ---------------------------------------------------------------- subsampling and the window
@dataclass
class TricksResult:
    """The shipped study of subsampling and the dynamic window (``load_model("wv_tricks")``).

    variants : names (V), labels {name: label}; seeds (S,)
    curves   : {'validation/wordsim', 'report/simlex', ..., 'cpu_seconds', 'words_trained',
               'loss_sum'}: (S, V, E), one value per epoch
    final    : {'report/wordsim', 'validation/analogy', ...}: (S, V) after the last epoch
    items    : report-half items, {'wordsim', 'simlex': cosines, 'analogy': 0/1}: (S, V, n)
    gold     : {'wordsim', 'simlex'}: the human scores of those pairs (n,)
    metadata : settings, training record"""

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
        """Training CPU seconds of every run (S, V)."""
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


def paired_setting_difference(result: TricksResult, metric: str, a: str, b: str, n_boot: int = 2000,
                              seed: int = 0, level: float = 0.95) -> Interval:
    """Variant a minus variant b on the report half's ``metric`` ('wordsim', 'simlex' or
    'analogy'), mean over the seeds, with a paired two-level percentile bootstrap: each resample
    draws the items and the seeds with replacement, the same for both variants. An interval that
    holds 0 is a tie."""
    if metric not in result.items:
        raise ValueError(f"unknown metric {metric!r}; expected one of {list(result.items)}")
    ia, ib = result.index(a), result.index(b)
    if ia == ib:
        raise ValueError(f"compare two different variants, got {a!r} twice")
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"need n_boot >= 1 and 0 < level < 1, got n_boot={n_boot}, level={level}")
    X = result.items[metric].astype(np.float64)          # (S, V, n)
    xa, xb = X[:, ia], X[:, ib]
    S, n = xa.shape
    rng = np.random.default_rng(seed)
    ks, idx = np.empty((n_boot, S), np.int64), np.empty((n_boot, n), np.int64)
    for r in range(n_boot):                              # the seeds, then the items
        ks[r], idx[r] = rng.integers(0, S, S), rng.integers(0, n, n)
    boot = np.empty(n_boot)
    chunk = max(1, 2_000_000 // (S * n))                 # resamples scored at once
    for r in range(0, n_boot, chunk):
        k, i = ks[r:r + chunk, :, None], idx[r:r + chunk, None, :]          # (c, S, 1), (c, 1, n)
        if metric == "analogy":
            boot[r:r + chunk] = (xa[k, i] - xb[k, i]).mean(axis=(1, 2))
        else:
            g = result.gold[metric][idx[r:r + chunk]][:, None]              # (c, 1, n)
            boot[r:r + chunk] = (spearman_rows(xa[k, i], g)
                                 - spearman_rows(xb[k, i], g)).mean(axis=1)
    if metric == "analogy":
        est = float((xa - xb).mean())
    else:
        gold = result.gold[metric][None]
        est = float((spearman_rows(xa, gold) - spearman_rows(xb, gold)).mean())
    boot = boot[np.isfinite(boot)]
    lo, hi = np.percentile(boot, [50 * (1 - level), 50 * (1 + level)])
    return Interval(est, float(lo), float(hi), level, n, n_boot)
