"""How many epochs should each word2vec trainer get, and how many buckets fastText? Measured on
the validation half, logged, and the rule that turns the measurement into the shipped setting.

    python -m helpers.course.word2vec_budget      # runs RUNS, writes data/models/logs/wv_budget.json

Why it is needed: the learning rate of every word2vec trainer here falls linearly to almost zero
over a *schedule* of ``max_epochs`` epochs. On such a schedule the last epoch is nearly always the
best (the rate is smallest there), so "best epoch 20 of 20" cannot say whether a longer schedule
would be better: only a run on a longer schedule can. The schedule's length is therefore a
hyperparameter, chosen here on validation data:

- each run trains a model's shipped settings with ``max_epochs`` (or fastText's ``buckets``)
  changed and scores the vectors on the **validation half** after every epoch. gensim's models
  run the whole schedule and keep the best epoch; the course's PyTorch and NumPy trainers run the
  whole schedule and keep its **last** epoch (``keep="last"``, see
  :data:`helpers.course.word_vector_models.COURSE_SKIPGRAM`), so a run's score is that of its
  last epoch. One worker, seed 0: deterministic. The report half is never read;
- each run's best vectors are compared with those of the same model's 20-epoch run (the schedule
  every model shipped with before this study; float16, as shipped) by a paired bootstrap over the
  validation WordSim-353 pairs (:func:`paired_wordsim_difference`);
- :func:`chosen_schedule`: the shortest schedule whose kept epoch's validation ρ is within ``TOLERANCE``
  (0.005, half a point of ρ) of the best schedule measured. Longer schedules add less than that:
  the validation score has stopped rising. The course's PyTorch and NumPy skip-grams are one model
  with one set of settings (:data:`helpers.course.word_vector_models.COURSE_SKIPGRAM`), so their
  schedule is chosen once, on the mean of the two implementations' scores (:data:`SHARED`). The
  shipped models use this number of epochs (``tests/test_word2vec_budget.py`` checks it).

Lessons 07 and 08 print the record (:func:`load_budget`).
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
from helpers.course.word_vector_models import NAMES, SETTINGS, TRAIN
from helpers.course.word_vectors import load_word_vectors
from helpers.infra.runlog import RunLog
from helpers.lib.metrics import paired_similarity_difference

FILE = "logs/wv_budget.json"
REFERENCE_EPOCHS = 20          # every model's schedule before this study: the runs are compared with it
TOLERANCE = 0.005              # a longer schedule must add more validation rho than this to be chosen
SCHEDULES = {"wv_gensim_skipgram": (10, 20, 30, 40, 60, 80), "wv_gensim_fasttext": (20, 30, 40, 60),
             "wv_torch_skipgram": (10, 20, 40), "wv_numpy_skipgram": (10, 20, 40),
             "wv_gensim_cbow": (10, 20, 30, 40, 60)}
RUNS = ([(name, dict(max_epochs=e)) for name, epochs in SCHEDULES.items() for e in epochs]
        + [("wv_gensim_fasttext", dict(max_epochs=REFERENCE_EPOCHS, buckets=b)) for b in (5_000, 100_000)])
# The course's two skip-gram trainers share their settings (COURSE_SKIPGRAM): one schedule for both,
# chosen on the mean of their validation scores (each alone would pick another from scores whose
# differences are all within their intervals: lesson 07's folded record says which)
SHARED = {"wv_torch_skipgram": ("wv_torch_skipgram", "wv_numpy_skipgram"),
          "wv_numpy_skipgram": ("wv_torch_skipgram", "wv_numpy_skipgram")}
SHIPPED_NAME = {model: short for short, model in NAMES.items() if model in SCHEDULES}   # e.g. 'fasttext'


def paired_wordsim_difference(A: np.ndarray, B: np.ndarray, vocab, n_boot: int = 2000, seed: int = 0) -> list[float]:
    """Validation-half WordSim-353 ρ of A minus that of B (V, D, same vocabulary), with a 95 % paired
    bootstrap interval over the pairs (:func:`helpers.lib.metrics.paired_similarity_difference`):
    [estimate, low, high]."""
    iv = paired_similarity_difference(A, B, vocab, benchmark_halves()["validation"].wordsim, n_boot=n_boot, seed=seed)
    return [iv.estimate, iv.low, iv.high]


def budget_settings(name: str, change: dict) -> dict:
    """The settings of one run: the shipped settings of ``name`` with ``change`` (``max_epochs``,
    or ``buckets`` for fastText); gensim runs the whole schedule (patience = max_epochs)."""
    if name not in SHIPPED_NAME:
        raise ValueError(f"budget runs are for {sorted(SHIPPED_NAME)}, got {name!r}")
    unknown = set(change) - {"max_epochs", "buckets"}
    if unknown:
        raise ValueError(f"a budget run changes max_epochs or buckets, got {sorted(unknown)}")
    if "buckets" in change and name != "wv_gensim_fasttext":
        raise ValueError(f"only fastText has buckets, not {name!r}")
    s = dict(SETTINGS[name], **change)
    if s["impl"] == "gensim" or s.get("keep") == "last":
        s["patience"] = s["max_epochs"]      # the whole schedule (as the shipped runs)
    return s


def budget_run(name: str, change: dict) -> tuple[dict, np.ndarray]:
    """One run. Returns ({'model', 'change', 'settings', 'epoch', 'valid_wordsim', 'valid_simlex'
    (per epoch), 'best_epoch', 'best_valid_wordsim' (the epoch kept: the best one, or the last with
    ``keep="last"``), 'cpu_seconds'}, the kept epoch's W (V, D) float32)."""
    s = budget_settings(name, change)
    t0 = time.process_time()
    # max_steps: stop at the schedule's end without the final report-half records of a shipped run
    arrays, _meta, _metrics = TRAIN[s["impl"]](s, RunLog(), max_steps=s["max_epochs"], progress=False)
    cpu = time.process_time() - t0
    curve = {k: [float(x) for x in arrays[f"curve/{k}"]] for k in ("epoch", "valid_wordsim", "valid_simlex")}
    best = len(curve["epoch"]) - 1 if s.get("keep") == "last" else int(np.argmax(curve["valid_wordsim"]))
    return ({"model": name, "change": change, "settings": s, **curve, "best_epoch": int(curve["epoch"][best]),
             "best_valid_wordsim": curve["valid_wordsim"][best], "cpu_seconds": cpu}, arrays["W"])


def is_reference(run: dict) -> bool:
    """Whether ``run`` is its model's 20-epoch run (the one the others are compared with)."""
    return run["change"] == {"max_epochs": REFERENCE_EPOCHS}


def add_comparisons(runs: list[dict], vectors: list[np.ndarray]) -> None:
    """Set each run's 'vs_20': its best validation WordSim-353 ρ minus that of the same model's
    20-epoch run (float16, as shipped), [estimate, low, high] (None for the 20-epoch run itself)."""
    vocab = course_corpus().vocab                               # every model has the course vocabulary
    reference = {r["model"]: W.astype(np.float16).astype(np.float32) for r, W in zip(runs, vectors) if is_reference(r)}
    for r, W in zip(runs, vectors):
        r["vs_20"] = None if is_reference(r) else paired_wordsim_difference(W, reference[r["model"]], vocab)


def chosen_schedule(runs: list[dict], model: str, tolerance: float = TOLERANCE) -> int:
    """The shortest schedule (``max_epochs``) of ``model`` whose best validation WordSim-353 ρ is
    within ``tolerance`` of the best schedule's, over the runs that change only ``max_epochs``. For a
    model of :data:`SHARED`, a schedule's score is the mean over the models that share it (a schedule
    counts only where every one of them has a run)."""
    group = SHARED.get(model, (model,))
    scores: dict[int, dict[str, float]] = {}
    for r in runs:
        if r["model"] in group and set(r["change"]) == {"max_epochs"}:
            scores.setdefault(r["change"]["max_epochs"], {})[r["model"]] = r["best_valid_wordsim"]
    schedules = {e: float(np.mean(list(v.values()))) for e, v in scores.items() if len(v) == len(group)}
    if not schedules:
        raise ValueError(f"no schedule of {model!r} in the record")
    best = max(schedules.values())
    return min(e for e, v in schedules.items() if v >= best - tolerance)


def load_budget() -> dict:
    """The record written by :func:`main` (``data/models/logs/wv_budget.json``)."""
    return json.loads((model_dir() / FILE).read_text(encoding="utf-8"))


def write_budget(runs: list[dict]) -> None:
    """Write the record of ``runs`` (each with its 'vs_20')."""
    record = {"what": "word2vec trainers on schedules of several lengths, and fastText with fewer and more buckets, "
                      "one change from the shipped settings at a time: validation-half scores per epoch, one worker, "
                      "seed 0; vs_20 is the validation WordSim-353 rho minus that of the same model's 20-epoch run "
                      "(float16), 95 % paired bootstrap over pairs; chosen = the shortest schedule within "
                      f"{TOLERANCE} of the best (for the course's PyTorch and NumPy skip-grams, which share their "
                      "settings: of the best mean of the two)",
              "command": "python -m helpers.course.word2vec_budget", "tolerance": TOLERANCE,
              "chosen": {m: chosen_schedule(runs, m) for m in SCHEDULES}, "runs": runs}
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def shipped_reference_run(name: str) -> tuple[dict, np.ndarray]:
    """The 20-epoch run of ``name`` read from its shipped training instead of trained again: the
    shipped settings are ``budget_settings(name, {"max_epochs": 20})`` (checked here), one worker,
    seed 0, so the training is the same (``tests/test_word2vec_budget.py`` compares the curves).
    Returns what :func:`budget_run` returns, the shipped W (float16) as float32."""
    change = {"max_epochs": REFERENCE_EPOCHS}
    s = budget_settings(name, change)
    sv = load_word_vectors(SHIPPED_NAME[name])
    if sv.metadata["settings"] != s:
        raise ValueError(f"the shipped {name} was not trained with the 20-epoch budget settings: retrain it first")
    curve = {k: [float(x) for x in sv.metadata["curve"][k]] for k in ("epoch", "valid_wordsim", "valid_simlex")}
    kept = curve["epoch"].index(sv.metadata["best_epoch"])
    return ({"model": name, "change": change, "settings": s, **curve, "best_epoch": int(curve["epoch"][kept]),
             "best_valid_wordsim": curve["valid_wordsim"][kept], "cpu_seconds": model_info(name)["cpu_seconds"]},
            np.asarray(sv.W, dtype=np.float32))


def rerun(models: list[str], jobs: int) -> list[dict]:
    """Re-measure the runs of ``models`` only (after a change to their trainers), keeping every other
    model's runs from the record: their schedules other than 20 epochs are trained again, the
    20-epoch run is the shipped training (:func:`shipped_reference_run`). Returns the new runs."""
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
    """``python -m helpers.course.word2vec_budget`` runs every run; ``... --only wv_torch_skipgram
    wv_numpy_skipgram`` re-measures those models' runs and keeps the rest of the record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(SCHEDULES), help="re-measure these models only")
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
        print(r["model"], r["change"], f"best epoch {r['best_epoch']}, validation WordSim {r['best_valid_wordsim']:.3f},"
              f" minus the 20-epoch run {r['vs_20']}", flush=True)
    write_budget(runs)


if __name__ == "__main__":
    main()
