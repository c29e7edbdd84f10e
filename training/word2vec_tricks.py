"""What subsampling and the dynamic window do to skip-gram's vectors (``make models
NAME=wv_tricks``; lesson 07 reads it as :class:`helpers.course.vector_studies.TricksResult`).

gensim's skip-gram (one worker: deterministic) at the shipped word2vec settings, one factor
changed at a time:

- ``shipped``: subsampling threshold t = 1e-4, dynamic window (b drawn from 1..L per centre);
- ``no_subsampling``: t = 0, dynamic window;
- ``fixed_window``: t = 1e-4, every word within L (gensim's ``shrink_windows=False``).

Each run trains a fixed number of epochs (the rate decays over them), for three seeds. After
every epoch the vectors are scored on both halves of WordSim-353 and SimLex-999 and the epoch's
CPU seconds recorded; at the end the analogies too, and the report half's per-item results
(cosines of the rated pairs, 0/1 of each question) for paired comparisons. No vectors are kept.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from helpers.course.benchmarks import HALVES, benchmark_halves, evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.vector_studies import TricksResult
from helpers.infra.progress import progress_bar
from helpers.lib.metrics import analogy_hits, normalize_rows
from training.loop import timings_to_meta
from training.word_vector_models import epoch_alpha

VARIANTS = {"shipped": dict(sample=1e-4, dynamic_window=True),
            "no_subsampling": dict(sample=0.0, dynamic_window=True),
            "fixed_window": dict(sample=1e-4, dynamic_window=False)}
LABELS = {"shipped": "t = 1e-4, dynamic window (shipped)",
          "no_subsampling": "no subsampling, dynamic window",
          "fixed_window": "t = 1e-4, fixed window"}
# 10 epochs, not the shipped 20, to keep the 3 x 3 runs within make models' budget
SETTINGS = dict(model="skipgram", dim=100, window=5, negative=5, alpha=0.05, min_alpha=1e-4,
                min_count=5, epochs=10, seeds=[0, 1, 2],
                variants={k: dict(v) for k, v in VARIANTS.items()})
METRICS = ("wordsim", "simlex", "analogy")
_KEYS = ("model", "dim", "window", "negative", "alpha", "min_alpha", "min_count", "epochs", "seeds",
         "variants")


def check_settings(settings: dict) -> dict:
    """``settings`` checked: the keys of SETTINGS, positive sizes, a seed, variants with a
    sample >= 0 and a bool dynamic_window. Returns it."""
    unknown, missing = set(settings) - set(_KEYS), set(_KEYS) - set(settings)
    if unknown or missing:
        raise ValueError(f"word2vec-tricks settings: unknown {sorted(unknown)}, missing "
                         f"{sorted(missing)}; expected the keys {list(_KEYS)}")
    if settings["model"] != "skipgram":
        raise ValueError("model must be 'skipgram' (the tricks are measured on skip-gram), got "
                         f"{settings['model']!r}")
    for key in ("dim", "window", "negative", "epochs", "min_count"):
        if not isinstance(settings[key], (int, np.integer)) or settings[key] < 1:
            raise ValueError(f"{key} must be a positive integer, got {settings[key]!r}")
    if not settings["seeds"]:
        raise ValueError("seeds must list at least one seed, got an empty list")
    if not settings["variants"]:
        raise ValueError("variants must name at least one setting, got none")
    for name, v in settings["variants"].items():
        if set(v) != {"sample", "dynamic_window"}:
            raise ValueError(f"variant {name!r} must set exactly 'sample' and 'dynamic_window', "
                             f"got {sorted(v)}")
        sample = v["sample"]
        if isinstance(sample, bool) or not isinstance(sample, (int, float)) or not sample >= 0:
            raise ValueError(f"variant {name!r}: sample must be >= 0 (0 turns subsampling off), "
                             f"got {sample!r}")
        if not isinstance(v["dynamic_window"], bool):
            raise ValueError(f"variant {name!r}: dynamic_window must be True or False, "
                             f"got {v['dynamic_window']!r}")
    return settings


def gensim_model(settings: dict, variant: str, seed: int):
    """An untrained gensim skip-gram (negative sampling, one worker) for ``variant``."""
    from gensim.models import Word2Vec  # heavy optional import: loaded only to train
    if variant not in settings["variants"]:
        raise ValueError(f"unknown variant {variant!r}; the settings have "
                         f"{list(settings['variants'])}")
    v, s = settings["variants"][variant], settings
    return Word2Vec(vector_size=s["dim"], window=s["window"], negative=s["negative"],
                    sample=v["sample"], shrink_windows=v["dynamic_window"], alpha=s["alpha"],
                    min_alpha=s["min_alpha"], sg=1, hs=0, workers=1, seed=int(seed),
                    min_count=s["min_count"])


def _train_epoch(m, sents, s: dict, epoch: int) -> tuple[int, float]:
    """One epoch of the schedule: (words trained, gensim's summed loss)."""
    trained, _ = m.train(sents, total_examples=m.corpus_count, epochs=1, compute_loss=True,
                         start_alpha=epoch_alpha(s, epoch - 1, s["epochs"]),
                         end_alpha=epoch_alpha(s, epoch, s["epochs"]))
    return trained, float(m.get_latest_training_loss())


def report_items(W: np.ndarray, vocab) -> dict:
    """The report half's per-item results: cosines of the WordSim/SimLex pairs with both words
    known, in the half's order, and the 0/1 answers of the answerable analogy questions."""
    h, stoi, E = benchmark_halves()["report"], vocab.stoi, normalize_rows(W)
    out = {}
    for key in ("wordsim", "simlex"):
        known = [(stoi[a], stoi[b]) for a, b, _ in getattr(h, key) if a in stoi and b in stoi]
        i, j = np.array(known).T
        out[key] = np.einsum("nd,nd->n", E[i], E[j]).astype(np.float32)
    out["analogy"] = analogy_hits(W, vocab, h.analogies, "add").astype(np.uint8)
    return out


def report_gold(vocab) -> dict:
    """The human scores of the pairs :func:`report_items` scores: {'wordsim', 'simlex'}."""
    h, stoi = benchmark_halves()["report"], vocab.stoi
    return {key: np.array([g for a, b, g in getattr(h, key) if a in stoi and b in stoi],
                          dtype=np.float64) for key in ("wordsim", "simlex")}


def train_tricks(settings: dict, log, max_steps: int | None = None, progress: bool = True):
    """Train and score every run, seed by seed, the variants in order.

    A log step is one epoch of one run, its value gensim's loss per word trained; ``max_steps``
    stops after that many epochs in all. Arrays: per run (S seeds x V variants) the curves
    'curve/<half>/<wordsim|simlex>', 'curve/words_trained', 'curve/loss_sum' (S, V, E) (the CPU
    seconds go to the metadata: they do not replay), the final scores 'final/<half>/<metric>'
    (S, V), the report-half items 'items/<metric>' (S, V, n) and 'gold/<wordsim|simlex>'."""
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
    todo = [(k, v) for k in range(S) for v in names]
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
            raise RuntimeError(f"gensim kept {len(m.wv.index_to_key)} words, the course "
                               f"vocabulary has {len(corpus.vocab)}")
        order = np.array([m.wv.key_to_index[w] for w in corpus.vocab.itos])
        done = 0
        for epoch in range(1, E + 1):
            if step >= total:
                break
            t = time.process_time()
            trained, loss_sum = _train_epoch(m, sents, s, epoch)
            cpu = time.process_time() - t
            log.step(loss_sum / max(trained, 1))
            step, done = step + 1, epoch
            W = np.array(m.wv.vectors[order], dtype=np.float32)
            scores = {h: evaluate_vectors(W, corpus.vocab, h, analogies=False) for h in HALVES}
            at = (k, j, epoch - 1)
            curves["cpu_seconds"][at], curves["words_trained"][at] = cpu, trained
            curves["loss_sum"][at] = loss_sum
            for h in HALVES:
                for key in ("wordsim", "simlex"):
                    curves[f"{h}/{key}"][at] = scores[h][key]
            log.event("eval", variant=name, seed=s["seeds"][k], epoch=epoch, cpu_seconds=cpu,
                      words_trained=trained, loss_sum=loss_sum,
                      **{f"{h}_{key}": scores[h][key] for h in HALVES
                         for key in ("wordsim", "simlex")})
            bar.update(1)
        if done < E:
            continue                                  # a replay cut short: no final scores
        for h in HALVES:
            r = evaluate_vectors(W, corpus.vocab, h)
            for key in METRICS:
                final[f"{h}/{key}"][k, j] = r[key]
        for key, values in report_items(W, corpus.vocab).items():
            items[key][k][j] = values
        log.event("final", variant=name, seed=s["seeds"][k],
                  **{key: float(v[k, j]) for key, v in final.items()})
    bar.close()
    log.event("stop", reason=f"max_steps={max_steps}" if max_steps is not None else
              "every run trained for the fixed number of epochs (no early stopping: the epochs "
              "are part of the comparison)", steps=step)
    arrays = {**{f"curve/{key}": v for key, v in curves.items() if key != "cpu_seconds"},
              **{f"final/{key}": v for key, v in final.items()}}
    if max_steps is None:
        for key in METRICS:
            arrays[f"items/{key}"] = np.array(items[key])
        arrays.update({f"gold/{key}": v for key, v in report_gold(corpus.vocab).items()})
    meta = {"settings": dict(s), "variants": names, "labels": {n: LABELS.get(n, n) for n in names},
            "runs": len(todo), "steps": step,
            "cpu_seconds_training": float(np.nansum(curves["cpu_seconds"])),
            "timings": timings_to_meta({"curve/cpu_seconds": curves["cpu_seconds"]}),
            "scored_on": "validation and report halves of the benchmarks "
                         "(helpers.course.benchmarks); compare on the report half",
            "data": f"course corpus: {len(corpus.sentences):,} sentences, "
                    f"{len(corpus.vocab):,} words (min_count {s['min_count']})"}
    metrics = {"runs": len(todo)}      # no clock reading: a rebuild reproduces them exactly
    if max_steps is None:
        for j, name in enumerate(names):
            metrics[f"{name}_report_wordsim"] = float(final["report/wordsim"][:, j].mean())
    return arrays, meta, metrics


def retrain_first_epoch(settings: dict, variant: str = "shipped", seed_index: int = 0) -> dict:
    """One run's first epoch trained again from scratch, scored as the curves are:
    {'validation/wordsim', ..., 'report/simlex', 'words_trained', 'loss_sum'}."""
    s = check_settings(settings)
    corpus = course_corpus()
    logging.getLogger("gensim").setLevel(logging.ERROR)
    m = gensim_model(s, variant, s["seeds"][seed_index])
    sents = [list(x) for x in corpus.sentences]
    m.build_vocab(sents)
    trained, loss_sum = _train_epoch(m, sents, s, 1)
    W = np.array(m.wv.vectors[[m.wv.key_to_index[w] for w in corpus.vocab.itos]], dtype=np.float32)
    out = {"words_trained": int(trained), "loss_sum": loss_sum}
    for h in HALVES:
        r = evaluate_vectors(W, corpus.vocab, h, analogies=False)
        out.update({f"{h}/wordsim": r["wordsim"], f"{h}/simlex": r["simlex"]})
    return out


def tricks_subset_metric(result: TricksResult) -> tuple[str, float]:
    """The shipped run's (seed 0) first epoch trained again: its report-half WordSim-353 ρ, which
    must equal the stored curve's first point."""
    live = retrain_first_epoch(result.metadata["settings"], "shipped", 0)["report/wordsim"]
    stored = float(result.curves["report/wordsim"][0, result.index("shipped"), 0])
    if abs(live - stored) > 1e-9:
        raise ValueError(f"the first epoch retrained gives report-half WordSim ρ {live}, the file "
                         f"stores {stored}: rebuild with `make models NAME=wv_tricks`")
    return "wordsim_report_shipped_seed0_epoch1", float(live)
