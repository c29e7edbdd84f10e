"""How many epochs should each word2vec trainer get, and how many buckets fastText? The study
on the validation half, and the rule that turns it into the shipped setting.

    python -m training.word2vec_budget      # runs RUNS, writes data/models/logs/wv_budget.json

Every trainer's learning rate falls linearly to almost zero over a schedule of ``max_epochs``
epochs, so its last epoch is nearly always its best: only a run on a longer schedule shows
whether a longer schedule is better. Each run trains a model's shipped settings with
``max_epochs`` (or fastText's ``buckets``) changed, one worker, seed 0, scored on the validation
half after every epoch (gensim keeps its best epoch, the course's skip-grams their last). Each
run's kept vectors are compared with the same model's 20-epoch run by a paired bootstrap over
the validation WordSim-353 pairs. :func:`chosen_schedule` takes the shortest schedule within
TOLERANCE of the best; the course's PyTorch and NumPy skip-grams share one (SHARED). Lessons 07
and 08 read the record (:func:`helpers.course.study_records.load_budget`).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from helpers.course.benchmarks import benchmark_halves
from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir, model_info
from helpers.course.shipped_vectors import NAMES, load_word_vectors
from helpers.course.study_records import load_budget
from helpers.lib.metrics import paired_similarity_difference
from training.runlog import RunLog
from training.word_vector_models import SETTINGS, TRAIN

FILE = "logs/wv_budget.json"
REFERENCE_EPOCHS = 20     # the schedule the other runs are compared with
TOLERANCE = 0.005         # a longer schedule must add more validation rho than this
SCHEDULES = {"wv_gensim_skipgram": (10, 20, 30, 40, 60, 80),
             "wv_gensim_fasttext": (20, 30, 40, 60), "wv_torch_skipgram": (10, 20, 40),
             "wv_numpy_skipgram": (10, 20, 40), "wv_gensim_cbow": (10, 20, 30, 40, 60)}
RUNS = ([(name, dict(max_epochs=e)) for name, epochs in SCHEDULES.items() for e in epochs]
        + [("wv_gensim_fasttext", dict(max_epochs=REFERENCE_EPOCHS, buckets=b))
           for b in (5_000, 100_000)])
# the course's two skip-grams share their settings, so one schedule, chosen on their mean
SHARED = {"wv_torch_skipgram": ("wv_torch_skipgram", "wv_numpy_skipgram"),
          "wv_numpy_skipgram": ("wv_torch_skipgram", "wv_numpy_skipgram")}
SHIPPED_NAME = {model: short for short, model in NAMES.items() if model in SCHEDULES}


def paired_wordsim_difference(A: np.ndarray, B: np.ndarray, vocab, n_boot: int = 2000,
                              seed: int = 0) -> list[float]:
    """Validation-half WordSim-353 ρ of A minus that of B (V, D, one vocabulary), with a 95 %
    paired bootstrap interval over the pairs: [estimate, low, high]."""
    iv = paired_similarity_difference(A, B, vocab, benchmark_halves()["validation"].wordsim,
                                      n_boot=n_boot, seed=seed)
    return [iv.estimate, iv.low, iv.high]


def budget_settings(name: str, change: dict) -> dict:
    """The shipped settings of ``name`` with ``change`` (``max_epochs``, or fastText's
    ``buckets``); every run runs its whole schedule."""
    if name not in SHIPPED_NAME:
        raise ValueError(f"budget runs are for {sorted(SHIPPED_NAME)}, got {name!r}")
    unknown = set(change) - {"max_epochs", "buckets"}
    if unknown:
        raise ValueError(f"a budget run changes max_epochs or buckets, got {sorted(unknown)}")
    if "buckets" in change and name != "wv_gensim_fasttext":
        raise ValueError(f"only fastText has buckets, not {name!r}")
    s = dict(SETTINGS[name], **change)
    if s["impl"] == "gensim" or s.get("keep") == "last":
        s["patience"] = s["max_epochs"]
    return s


def _run_record(name, change, s, curve, kept, cpu) -> dict:
    return {"model": name, "change": change, "settings": s, **curve,
            "best_epoch": int(curve["epoch"][kept]),
            "best_valid_wordsim": curve["valid_wordsim"][kept], "cpu_seconds": cpu}


def budget_run(name: str, change: dict) -> tuple[dict, np.ndarray]:
    """One run: ({'model', 'change', 'settings', 'epoch', 'valid_wordsim', 'valid_simlex' (per
    epoch), 'best_epoch', 'best_valid_wordsim' (of the epoch kept), 'cpu_seconds'}, the kept
    epoch's W (V, D) float32)."""
    s = budget_settings(name, change)
    t0 = time.process_time()
    # max_steps: the schedule's end, without a shipped run's final report-half records
    arrays, _, _ = TRAIN[s["impl"]](s, RunLog(), max_steps=s["max_epochs"], progress=False)
    cpu = time.process_time() - t0
    curve = {k: [float(x) for x in arrays[f"curve/{k}"]]
             for k in ("epoch", "valid_wordsim", "valid_simlex")}
    kept = (len(curve["epoch"]) - 1 if s.get("keep") == "last"
            else int(np.argmax(curve["valid_wordsim"])))
    return _run_record(name, change, s, curve, kept, cpu), arrays["W"]


def is_reference(run: dict) -> bool:
    """Whether ``run`` is its model's 20-epoch run."""
    return run["change"] == {"max_epochs": REFERENCE_EPOCHS}


def add_comparisons(runs: list[dict], vectors: list[np.ndarray]) -> None:
    """Set each run's 'vs_20': its kept validation WordSim-353 ρ minus that of the same model's
    20-epoch run (float16, as shipped), [estimate, low, high], or None for that run itself."""
    vocab = course_corpus().vocab
    reference = {r["model"]: W.astype(np.float16).astype(np.float32)
                 for r, W in zip(runs, vectors) if is_reference(r)}
    for r, W in zip(runs, vectors):
        r["vs_20"] = (None if is_reference(r) else
                      paired_wordsim_difference(W, reference[r["model"]], vocab))


def chosen_schedule(runs: list[dict], model: str, tolerance: float = TOLERANCE) -> int:
    """The shortest ``max_epochs`` of ``model`` whose kept validation WordSim-353 ρ is within
    ``tolerance`` of the best schedule's (runs that change only ``max_epochs``). For a model of
    SHARED, a schedule's score is the mean over the models sharing it, counted only where every
    one of them has a run."""
    group = SHARED.get(model, (model,))
    scores: dict[int, dict[str, float]] = {}
    for r in runs:
        if r["model"] in group and set(r["change"]) == {"max_epochs"}:
            scores.setdefault(r["change"]["max_epochs"], {})[r["model"]] = r["best_valid_wordsim"]
    schedules = {e: float(np.mean(list(v.values()))) for e, v in scores.items()
                 if len(v) == len(group)}
    if not schedules:
        raise ValueError(f"no schedule of {model!r} in the record")
    best = max(schedules.values())
    return min(e for e, v in schedules.items() if v >= best - tolerance)


def write_budget(runs: list[dict]) -> None:
    """Write the record of ``runs`` (each with its 'vs_20')."""
    record = {"what": "word2vec trainers on schedules of several lengths, and fastText with fewer "
                      "and more buckets, one change from the shipped settings at a time: "
                      "validation-half scores per epoch, one worker, seed 0; vs_20 is the "
                      "validation WordSim-353 rho minus that of the same model's 20-epoch run "
                      "(float16), 95 % paired bootstrap over pairs; chosen = the shortest schedule "
                      f"within {TOLERANCE} of the best (for the course's PyTorch and NumPy "
                      "skip-grams, which share their settings: of the best mean of the two)",
              "command": "python -m training.word2vec_budget", "tolerance": TOLERANCE,
              "chosen": {m: chosen_schedule(runs, m) for m in SCHEDULES}, "runs": runs}
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def shipped_reference_run(name: str) -> tuple[dict, np.ndarray]:
    """The 20-epoch run of ``name`` read from its shipped training (the same settings, one
    worker, seed 0) instead of trained again; returns what :func:`budget_run` does."""
    change = {"max_epochs": REFERENCE_EPOCHS}
    s = budget_settings(name, change)
    sv = load_word_vectors(SHIPPED_NAME[name])
    if sv.metadata["settings"] != s:
        raise ValueError(f"the shipped {name} was not trained with the 20-epoch budget settings: "
                         "retrain it first")
    curve = {k: [float(x) for x in sv.metadata["curve"][k]]
             for k in ("epoch", "valid_wordsim", "valid_simlex")}
    kept = curve["epoch"].index(sv.metadata["best_epoch"])
    return (_run_record(name, change, s, curve, kept, model_info(name)["cpu_seconds"]),
            np.asarray(sv.W, dtype=np.float32))


def rerun(models: list[str], jobs: int) -> list[dict]:
    """Re-measure the runs of ``models`` only, keeping the other models' runs of the record;
    their 20-epoch run is the shipped training. Returns the new runs."""
    def key(model, change):
        return model, json.dumps(change, sort_keys=True)

    old = {key(r["model"], r["change"]): r for r in load_budget()["runs"]}
    todo = [(m, c) for m, c in RUNS if m in models and c != {"max_epochs": REFERENCE_EPOCHS}]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        fresh = {key(m, c): result for (m, c), result in
                 zip(todo, pool.map(budget_run, *zip(*todo, strict=True)), strict=True)}
    for m in models:
        fresh[key(m, {"max_epochs": REFERENCE_EPOCHS})] = shipped_reference_run(m)
    runs, remeasured, vectors = [], [], []
    for m, c in RUNS:
        if m in models:
            r, W = fresh[key(m, c)]
            remeasured.append(r)
            vectors.append(W)
        else:
            r = old[key(m, c)]
        runs.append(r)
    add_comparisons(remeasured, vectors)
    return runs


def main() -> None:
    """Every run; ``--only wv_torch_skipgram wv_numpy_skipgram`` re-measures those models."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(SCHEDULES),
                        help="re-measure these models only")
    args = parser.parse_args()
    jobs = int(os.environ.get("NLP_COURSE_WORKERS", os.cpu_count() or 1))
    if args.only:
        runs = rerun(args.only, jobs)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(budget_run, *zip(*RUNS, strict=True)))
        runs, vectors = [r for r, _ in results], [W for _, W in results]
        add_comparisons(runs, vectors)
    for r in runs:
        print(r["model"], r["change"], f"best epoch {r['best_epoch']}, validation WordSim "
              f"{r['best_valid_wordsim']:.3f}, minus the 20-epoch run {r['vs_20']}", flush=True)
    write_budget(runs)


if __name__ == "__main__":
    main()
