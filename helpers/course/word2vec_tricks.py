"""What subsampling and the dynamic window do to skip-gram's vectors: the measurement of lesson 07.

Lesson 07 counts what the two tricks do to one epoch's training pairs. This module measures what
they do to the **vectors**: gensim's skip-gram (one worker, so deterministic) trained on the
course corpus at the shipped settings (:data:`helpers.course.word_vector_models.WORD2VEC`:
d = 100, window L = 5, k = 5 negatives, alpha 0.05 decaying linearly to 1e-4, min_count 5),
changing **one factor at a time** from the shipped setting:

- ``shipped``: subsampling threshold t = 1e-4, dynamic window (b drawn from 1..L per centre);
- ``no_subsampling``: t = 0 (every token kept), dynamic window;
- ``fixed_window``: t = 1e-4, every word within L (gensim's ``shrink_windows=False``).

Every run trains the same fixed number of epochs (``epochs``; the learning rate decays over
those epochs), for each of three seeds. After every epoch the vectors are scored on WordSim-353
and SimLex-999 (both halves of the benchmarks, :mod:`helpers.course.benchmarks`) and the CPU
seconds of that epoch's training are recorded: a curve of quality against training time per run.
At the end the analogy accuracy is added, and the report half's per-item results (cosines of the
rated pairs, 0/1 of each analogy question) are stored for paired comparisons between settings
(:func:`paired_setting_difference`). No vectors are kept (scores only, like
:mod:`helpers.course.scaling_grid`). ``make models NAME=wv_tricks`` trains it.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from helpers.course.benchmarks import HALVES, benchmark_halves, evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.word_vector_models import epoch_alpha
from helpers.infra.artifacts import timings_from_meta, timings_to_meta
from helpers.infra.progress import progress_bar
from helpers.lib.metrics import Interval, analogy_hits, normalize_rows

# The variants: one factor changed at a time from the shipped setting (the first).
VARIANTS = {"shipped": dict(sample=1e-4, dynamic_window=True),
            "no_subsampling": dict(sample=0.0, dynamic_window=True),
            "fixed_window": dict(sample=1e-4, dynamic_window=False)}
LABELS = {"shipped": "t = 1e-4, dynamic window (shipped)", "no_subsampling": "no subsampling, dynamic window",
          "fixed_window": "t = 1e-4, fixed window"}
# 10 epochs, not the shipped run's 20: measured on this machine, one epoch of the three variants
# costs 3.4 + 6.4 + 5.4 CPU seconds (gensim, one worker), so 3 seeds x 20 epochs would take ~15
# CPU-minutes, over the 12 the course's `make models` budget gives this grid; 10 take ~8.
SETTINGS = dict(model="skipgram", dim=100, window=5, negative=5, alpha=0.05, min_alpha=1e-4, min_count=5,
                epochs=10, seeds=[0, 1, 2], variants={k: dict(v) for k, v in VARIANTS.items()})
METRICS = {"wordsim": "WordSim-353 ρ", "simlex": "SimLex-999 ρ", "analogy": "analogy accuracy (3CosAdd)"}
_KEYS = ("model", "dim", "window", "negative", "alpha", "min_alpha", "min_count", "epochs", "seeds", "variants")


def check_settings(settings: dict) -> dict:
    """``settings`` checked: every key of :data:`SETTINGS` and no other, positive sizes, at least
    one seed, variants with a sample >= 0 and a bool dynamic_window. Returns it."""
    unknown, missing = set(settings) - set(_KEYS), set(_KEYS) - set(settings)
    if unknown or missing:
        raise ValueError(f"word2vec-tricks settings: unknown {sorted(unknown)}, missing {sorted(missing)}; "
                         f"expected the keys {list(_KEYS)}")
    if settings["model"] != "skipgram":
        raise ValueError(f"model must be 'skipgram' (the tricks are measured on skip-gram), got {settings['model']!r}")
    for key in ("dim", "window", "negative", "epochs", "min_count"):
        if not isinstance(settings[key], (int, np.integer)) or settings[key] < 1:
            raise ValueError(f"{key} must be a positive integer, got {settings[key]!r}")
    if not settings["seeds"]:
        raise ValueError("seeds must list at least one seed, got an empty list")
    if not settings["variants"]:
        raise ValueError("variants must name at least one setting, got none")
    for name, v in settings["variants"].items():
        if set(v) != {"sample", "dynamic_window"}:
            raise ValueError(f"variant {name!r} must set exactly 'sample' and 'dynamic_window', got {sorted(v)}")
        if isinstance(v["sample"], bool) or not isinstance(v["sample"], (int, float)) or not v["sample"] >= 0:
            raise ValueError(f"variant {name!r}: sample must be >= 0 (0 turns subsampling off), got {v['sample']!r}")
        if not isinstance(v["dynamic_window"], bool):
            raise ValueError(f"variant {name!r}: dynamic_window must be True or False, got {v['dynamic_window']!r}")
    return settings


def runs(settings: dict) -> list[tuple[int, str]]:
    """(seed index, variant) of every run in training order: seed by seed, the variants in order."""
    return [(k, v) for k in range(len(settings["seeds"])) for v in settings["variants"]]


def gensim_model(settings: dict, variant: str, seed: int):
    """An untrained gensim ``Word2Vec`` (skip-gram, negative sampling, one worker) for ``variant``."""
    # heavy optional import: gensim is loaded only to train
    from gensim.models import Word2Vec
    if variant not in settings["variants"]:
        raise ValueError(f"unknown variant {variant!r}; the settings have {list(settings['variants'])}")
    v, s = settings["variants"][variant], settings
    return Word2Vec(vector_size=s["dim"], window=s["window"], negative=s["negative"], sample=v["sample"],
                    shrink_windows=v["dynamic_window"], alpha=s["alpha"], min_alpha=s["min_alpha"], sg=1, hs=0,
                    workers=1, seed=int(seed), min_count=s["min_count"])


def _report_items(W: np.ndarray, vocab) -> dict:
    """The report half's per-item results: cosines of the WordSim/SimLex pairs with both words
    known (in the half's order) and the 0/1 answers of the answerable analogy questions."""
    h, stoi, E = benchmark_halves()["report"], vocab.stoi, normalize_rows(W)
    out = {}
    for key in ("wordsim", "simlex"):
        known = [(stoi[a], stoi[b]) for a, b, _ in getattr(h, key) if a in stoi and b in stoi]
        i, j = np.array(known).T
        out[key] = np.einsum("nd,nd->n", E[i], E[j]).astype(np.float32)
    out["analogy"] = analogy_hits(W, vocab, h.analogies, "add").astype(np.uint8)
    return out


def report_gold(vocab) -> dict:
    """The human scores of the report-half pairs :func:`_report_items` scores: {'wordsim', 'simlex'}."""
    h, stoi = benchmark_halves()["report"], vocab.stoi
    return {key: np.array([g for a, b, g in getattr(h, key) if a in stoi and b in stoi], dtype=np.float64)
            for key in ("wordsim", "simlex")}


def train_tricks(settings: dict, log, max_steps: int | None = None, progress: bool = True):
    """Train and score every run (``make models NAME=wv_tricks``; see the module docstring).

    A log step is one epoch of one run (runs in :func:`runs` order), its value gensim's training
    loss of that epoch per word trained. ``max_steps`` stops after that many epochs in all (the
    replay test). Returns (arrays, meta, metrics): per run (S seeds x V variants) the curves
    (S, V, E) 'curve/<half>/<wordsim|simlex>', 'curve/words_trained', 'curve/loss_sum' (the CPU
    seconds of every epoch, 'curve/cpu_seconds', go to the metadata: times are not reproducible
    bit for bit); the final scores (S, V) 'final/<half>/<metric>'; the report half's per-item
    results 'items/<metric>' (S, V, n) and their gold scores 'gold/<wordsim|simlex>'."""
    s = check_settings(settings)
    corpus = course_corpus()
    sents = [list(x) for x in corpus.sentences]
    logging.getLogger("gensim").setLevel(logging.ERROR)
    names, E, S = list(s["variants"]), s["epochs"], len(s["seeds"])
    shape = (S, len(names), E)
    curves = {f"{h}/{m}": np.full(shape, np.nan) for h in HALVES for m in ("wordsim", "simlex")}
    curves.update(cpu_seconds=np.full(shape, np.nan), words_trained=np.zeros(shape, np.int64),
                  loss_sum=np.full(shape, np.nan))
    final = {f"{h}/{m}": np.full(shape[:2], np.nan) for h in HALVES for m in METRICS}
    items: dict[str, list] = {m: [[None] * len(names) for _ in range(S)] for m in METRICS}
    todo = runs(s)
    total = len(todo) * E if max_steps is None else min(max_steps, len(todo) * E)
    bar = progress_bar(total=total, desc="word2vec tricks", unit="epoch", disable=not progress)
    step = 0
    for k, name in todo:
        if step >= total:
            break
        j = names.index(name)
        m = gensim_model(s, name, s["seeds"][k])
        m.build_vocab(sents)
        if len(m.wv.index_to_key) != len(corpus.vocab):
            raise RuntimeError(f"gensim kept {len(m.wv.index_to_key)} words, the course vocabulary has {len(corpus.vocab)}")
        order = np.array([m.wv.key_to_index[w] for w in corpus.vocab.itos])
        done = 0
        for epoch in range(1, E + 1):
            if step >= total:
                break
            t = time.process_time()
            trained, _ = m.train(sents, total_examples=m.corpus_count, epochs=1, start_alpha=epoch_alpha(s, epoch - 1, s["epochs"]),
                                 end_alpha=epoch_alpha(s, epoch, s["epochs"]), compute_loss=True)
            cpu = time.process_time() - t
            loss_sum = float(m.get_latest_training_loss())
            log.step(loss_sum / max(trained, 1))
            step, done = step + 1, epoch
            W = np.array(m.wv.vectors[order], dtype=np.float32)
            scores = {h: evaluate_vectors(W, corpus.vocab, h, analogies=False) for h in HALVES}
            c = curves
            c["cpu_seconds"][k, j, epoch - 1], c["words_trained"][k, j, epoch - 1] = cpu, trained
            c["loss_sum"][k, j, epoch - 1] = loss_sum
            for h in HALVES:
                for key in ("wordsim", "simlex"):
                    c[f"{h}/{key}"][k, j, epoch - 1] = scores[h][key]
            log.event("eval", variant=name, seed=s["seeds"][k], epoch=epoch, cpu_seconds=cpu, words_trained=trained,
                      loss_sum=loss_sum, **{f"{h}_{key}": scores[h][key] for h in HALVES for key in ("wordsim", "simlex")})
            bar.update(1)
        if done < E:
            continue                                  # a replay cut short: no final scores
        for h in HALVES:
            r = evaluate_vectors(W, corpus.vocab, h)
            for key in METRICS:
                final[f"{h}/{key}"][k, j] = r[key]
        for key, values in _report_items(W, corpus.vocab).items():
            items[key][k][j] = values
        log.event("final", variant=name, seed=s["seeds"][k], **{key: float(v[k, j]) for key, v in final.items()})
    bar.close()
    log.event("stop", reason=f"max_steps={max_steps}" if max_steps is not None else
              "every run trained for the fixed number of epochs (no early stopping: the epochs are part of the "
              "comparison)", steps=step)
    arrays = {**{f"curve/{key}": v for key, v in curves.items() if key != "cpu_seconds"},
              **{f"final/{key}": v for key, v in final.items()}}
    if max_steps is None:
        for key in METRICS:
            arrays[f"items/{key}"] = np.array(items[key])
        arrays.update({f"gold/{key}": v for key, v in report_gold(corpus.vocab).items()})
    meta = {"settings": dict(s), "variants": names, "labels": {n: LABELS.get(n, n) for n in names},
            "runs": len(todo), "steps": step, "cpu_seconds_training": float(np.nansum(curves["cpu_seconds"])),
            "timings": timings_to_meta({"curve/cpu_seconds": curves["cpu_seconds"]}),
            "scored_on": "validation and report halves of the benchmarks (helpers.course.benchmarks); compare on the "
                         "report half", "data": f"course corpus: {len(corpus.sentences):,} sentences, "
                                                f"{len(corpus.vocab):,} words (min_count {s['min_count']})"}
    metrics = {"runs": len(todo)}      # no clock reading among the metrics: a rebuild reproduces them exactly
    if max_steps is None:
        for name in names:
            j = names.index(name)
            metrics[f"{name}_report_wordsim"] = float(final["report/wordsim"][:, j].mean())
    return arrays, meta, metrics


# ---------------------------------------------------------------- the shipped result
@dataclass
class TricksResult:
    """The shipped measurement (``load_model("wv_tricks")``).

    variants  : names in order (V), labels {name: label}
    seeds     : (S,)
    curves    : {'validation/wordsim', 'report/simlex', ..., 'cpu_seconds', 'words_trained', 'loss_sum'}: (S, V, E)
    final     : {'report/wordsim', 'validation/analogy', ...}: (S, V), after the last epoch
    items     : {'wordsim', 'simlex': cosines (S, V, n); 'analogy': 0/1 (S, V, n)} on the report half
    gold      : {'wordsim', 'simlex'}: the human scores of the pairs in ``items`` (n,)
    metadata  : settings, training record"""

    variants: list
    labels: dict
    seeds: list
    curves: dict
    final: dict
    items: dict
    gold: dict
    metadata: dict

    def index(self, variant: str) -> int:
        """Position of ``variant`` in :attr:`variants`; an unknown name is an error listing them."""
        if variant not in self.variants:
            raise ValueError(f"unknown variant {variant!r}; the measurement has {self.variants}")
        return self.variants.index(variant)

    def cpu_seconds(self) -> np.ndarray:
        """Training CPU seconds of every run (S, V): the sum over its epochs."""
        return self.curves["cpu_seconds"].sum(axis=2)


def load_tricks(artifact) -> TricksResult:
    """The results stored by :func:`train_tricks` (through :func:`helpers.course.models.load_model`)."""
    a, meta = artifact.arrays, artifact.meta

    def part(prefix):
        return {k[len(prefix):]: a[k] for k in a if k.startswith(prefix)}

    curves = part("curve/") | {"cpu_seconds": timings_from_meta(meta["timings"])["curve/cpu_seconds"]}
    return TricksResult(list(meta["variants"]), dict(meta["labels"]), list(meta["settings"]["seeds"]),
                        curves, part("final/"), part("items/"), part("gold/"), meta)


def _spearman_rows(x: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Spearman ρ of each row of x (..., n) with gold (..., n) (average ranks for ties)."""
    rx, rg = rankdata(x, axis=-1), rankdata(gold, axis=-1)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    rg = rg - rg.mean(axis=-1, keepdims=True)
    return (rx * rg).sum(axis=-1) / np.sqrt((rx ** 2).sum(axis=-1) * (rg ** 2).sum(axis=-1))


def paired_setting_difference(result: TricksResult, metric: str, a: str, b: str, n_boot: int = 2000,
                              seed: int = 0, level: float = 0.95) -> Interval:
    """Variant a minus variant b on the report half's ``metric`` ('wordsim', 'simlex' (Spearman ρ)
    or 'analogy' (accuracy)), averaged over the seeds, with a paired two-level percentile
    bootstrap: each resample draws the test items with replacement (the same items for both
    variants) **and** the seeds with replacement (the same seeds for both: a seed fixes the
    initial vectors), so the interval holds the noise of the test set and of training. An
    interval that contains 0 is a tie. Returns an :class:`~helpers.lib.metrics.Interval`."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {list(METRICS)}")
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
    for r in range(n_boot):                              # the seeds, then the items: the draws of one resample
        ks[r], idx[r] = rng.integers(0, S, S), rng.integers(0, n, n)
    boot = np.empty(n_boot)
    chunk = max(1, 2_000_000 // (S * n))                 # resamples scored at once (memory bound)
    for r in range(0, n_boot, chunk):
        k, i = ks[r:r + chunk, :, None], idx[r:r + chunk, None, :]                  # (c, S, 1), (c, 1, n)
        if metric == "analogy":
            boot[r:r + chunk] = (xa[k, i] - xb[k, i]).mean(axis=(1, 2))
        else:
            g = result.gold[metric][idx[r:r + chunk]][:, None]                      # (c, 1, n)
            boot[r:r + chunk] = (_spearman_rows(xa[k, i], g) - _spearman_rows(xb[k, i], g)).mean(axis=1)
    if metric == "analogy":
        est = float((xa - xb).mean())
    else:
        gold = result.gold[metric]
        est = float((_spearman_rows(xa, gold[None]) - _spearman_rows(xb, gold[None])).mean())
    boot = boot[np.isfinite(boot)]
    lo, hi = np.percentile(boot, [50 * (1 - level), 50 * (1 + level)])
    return Interval(est, float(lo), float(hi), level, n, n_boot)


def retrain_first_epoch(settings: dict, variant: str = "shipped", seed_index: int = 0) -> dict:
    """One epoch of one run trained again from scratch, scored as the curves are:
    {'validation/wordsim', ..., 'report/simlex', 'words_trained', 'loss_sum'} (the subset metric, the tests)."""
    s = check_settings(settings)
    corpus = course_corpus()
    logging.getLogger("gensim").setLevel(logging.ERROR)
    m = gensim_model(s, variant, s["seeds"][seed_index])
    sents = [list(x) for x in corpus.sentences]
    m.build_vocab(sents)
    trained, _ = m.train(sents, total_examples=m.corpus_count, epochs=1, start_alpha=epoch_alpha(s, 0, s["epochs"]),
                         end_alpha=epoch_alpha(s, 1, s["epochs"]), compute_loss=True)
    W = np.array(m.wv.vectors[[m.wv.key_to_index[w] for w in corpus.vocab.itos]], dtype=np.float32)
    out = {"words_trained": int(trained), "loss_sum": float(m.get_latest_training_loss())}
    for h in HALVES:
        r = evaluate_vectors(W, corpus.vocab, h, analogies=False)
        out.update({f"{h}/wordsim": r["wordsim"], f"{h}/simlex": r["simlex"]})
    return out


def tricks_subset_metric(result: TricksResult) -> tuple[str, float]:
    """The shipped run's (seed 0) first epoch trained again from scratch: its report-half
    WordSim-353 ρ, which must equal the stored curve's first point (checked here)."""
    live = retrain_first_epoch(result.metadata["settings"], "shipped", 0)["report/wordsim"]
    stored = float(result.curves["report/wordsim"][0, result.index("shipped"), 0])
    if abs(live - stored) > 1e-9:
        raise ValueError(f"the first epoch retrained gives report-half WordSim ρ {live}, the file stores {stored}: "
                         "rebuild with `make models NAME=wv_tricks`")
    return "wordsim_report_shipped_seed0_epoch1", float(live)
