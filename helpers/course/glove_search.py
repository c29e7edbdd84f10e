"""GloVe's settings, chosen on the validation half with the same kind of search and budget as the
skip-gram's, logged.

    python -m helpers.course.glove_search      # runs the search, writes data/models/logs/wv_glove_search.json

The skip-gram's settings were chosen one change at a time from its reference code's defaults
(gensim's), each run trained until its validation score stopped improving; the length of its
schedule was chosen the same way (:mod:`helpers.course.word2vec_budget`). GloVe gets the same:

- **start** from the reference code's defaults (glove.c: learning rate 0.05, x_max 100, α 0.75),
  the paper's window (10 words each side, 1/d weighting) and the course's 100 dimensions;
- **stages**, one setting at a time (:data:`STAGES`): the learning rate, then x_max from the best
  learning rate, then the learning rate again around its value at the chosen x_max (the two
  interact); then the window and the dimension, each varied from that base (side by side), the
  chosen settings combining both (that combination is trained too, ``combined``, unless it is the
  base itself). A stage whose best value is at an end of its grid is extended one value further in
  that direction, until the best lies inside the grid (or the grid reaches :data:`LIMITS`), so no
  choice sits at an edge;
- **every run is the shipped trainer** (:func:`helpers.course.word_vector_models.train_glove_vectors`,
  the reference code's per-pair AdaGrad in batches of 1,024 pairs) with that setting, for up to
  ``max_epochs`` = 50 epochs (the paper's number for fewer than 300 dimensions), scored on the
  **validation half** after every epoch and stopped when its WordSim-353 ρ has not improved for 8
  epochs (its best epoch kept) — not the two or three epochs of a short run, which favour settings
  that learn fast: glove.c's learning rate of 0.05 gets the same 50 epochs as the others;
- **the choice**: the value with the best validation WordSim-353 ρ; for the dimension, the smallest
  within :data:`TOLERANCE` of the best (a larger model must earn its size; the same rule as the
  skip-gram's schedule). Each run is compared with its stage's best by a paired bootstrap over the
  validation pairs (``vs_best``). The report half is never read.

One thread per run (``NLP_COURSE_WORKERS`` runs of a stage at once), seeded: a rerun on the same
kind of processor writes the same numbers. Finished runs
are kept in ``$NLP_COURSE_CACHE/glove_search/`` so an interrupted search resumes where it stopped.
The shipped model (``make models NAME=wv_glove``) has the chosen settings
(``tests/test_glove_search.py`` checks that they are the record's choice); lesson 08 plots the
record (:func:`load_search`, :func:`helpers.lessons.lesson08.plot_glove_search`).
"""
from __future__ import annotations

import json
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from filelock import FileLock

from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir
from helpers.course.word2vec_budget import paired_wordsim_difference
from helpers.course.word_vector_models import GLOVE, train_glove_vectors
from helpers.infra.cache import cache_dir
from helpers.infra.runlog import RunLog

FILE = "logs/wv_glove_search.json"
TOLERANCE = 0.005          # a larger dimension must add more validation rho than this
START = dict(GLOVE, lr=0.05, x_max=100.0, window=10, dim=100, max_epochs=50, patience=8)
# None: the grid around the value the stages before chose (x0.5, x1, x2), extended as any other
STAGES = [("lr", [0.05, 0.1, 0.2]), ("x_max", [100.0, 30.0, 10.0]), ("lr", None), ("window", [5, 10, 15]),
          ("dim", [50, 100, 200])]
SEQUENTIAL = 3             # the first three one after the other; the window and the dimension side by side
# how a grid is extended past an end (x2 or /2 for lr and x_max, ±5 words for the window), and how far
EXTEND = {"lr": (lambda v: v / 2, lambda v: v * 2), "x_max": (lambda v: v / 3, lambda v: v * 3),
          "window": (lambda v: v - 5, lambda v: v + 5)}
# x_max below 1/window (0.1 for window 10, the smallest harmonic count) would weight every pair 1
LIMITS = {"lr": (0.01, 0.8), "x_max": (0.1, 1000.0), "window": (2, 20)}
TUNED = ("lr", "x_max", "window", "dim")


def run_settings(**change) -> dict:
    """The settings of one run: :data:`START` with ``change`` (any of lr, x_max, window, dim)."""
    unknown = set(change) - set(TUNED)
    if unknown:
        raise ValueError(f"a search run changes {TUNED}, got {sorted(unknown)}")
    return dict(START, **change)


def _key(s: dict) -> str:
    return "_".join(f"{k}{s[k]:g}" for k in TUNED)


def search_run(settings: dict) -> tuple[dict, np.ndarray | None]:
    """One run of the shipped trainer with ``settings``: ({'settings' (the tuned four), 'epoch',
    'valid_wordsim', 'valid_simlex', 'train_loss' (per epoch), 'best_epoch', 'best_valid_wordsim',
    'epochs_run', 'stopped_by', 'diverged', 'cpu_seconds'}, the best epoch's W + W~ (V, D) float32,
    or None when it diverged in its first epoch). Finished runs are read back from the cache."""
    folder = cache_dir() / "glove_search"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_key(settings)}.json"
    with FileLock(str(path.with_suffix(".lock"))):      # another process training this run: wait for it
        if path.exists():
            record = json.loads(path.read_text(encoding="utf-8"))
            W = np.load(folder / f"{_key(settings)}.npy") if record["best_epoch"] is not None else None
            return record, W
        t0 = time.process_time()
        arrays, meta, _ = train_glove_vectors(settings, RunLog(), max_steps=settings["max_epochs"], progress=True)
        cpu = time.process_time() - t0
        curve = {k: [round(float(x), 5) for x in arrays[f"curve/{k}"]] for k in ("valid_wordsim", "valid_simlex",
                                                                                 "train_loss")}
        scores = curve["valid_wordsim"]
        best = int(np.argmax(scores)) if scores else None
        record = {"settings": {k: settings[k] for k in TUNED}, **curve,
                  "best_epoch": None if best is None else best + 1,
                  "best_valid_wordsim": None if best is None else scores[best],
                  "epochs_run": meta["epochs_run"], "diverged": meta["diverged"],
                  "stopped_by": ("diverged" if meta["diverged"] else "early stopping"
                                 if len(scores) < settings["max_epochs"] else f"the limit of {settings['max_epochs']} epochs"),
                  "cpu_seconds": round(cpu, 1)}
        W = arrays["W"]
        if W is not None:
            np.save(folder / f"{_key(settings)}.npy", W)
        path.write_text(json.dumps(record), encoding="utf-8")
    return record, W


def _best(runs: list[dict]) -> dict:
    fine = [r for r in runs if r["best_valid_wordsim"] is not None]
    if not fine:
        raise RuntimeError("every run of the stage diverged")
    return max(fine, key=lambda r: r["best_valid_wordsim"])


def choose(name: str, runs: list[dict], tolerance: float = TOLERANCE) -> float:
    """The chosen value of setting ``name`` among one stage's ``runs``: the best validation
    WordSim-353 ρ; for the dimension, the smallest within ``tolerance`` of the best."""
    best = _best(runs)
    if name != "dim":
        return best["settings"][name]
    return min(r["settings"]["dim"] for r in runs
               if r["best_valid_wordsim"] is not None and r["best_valid_wordsim"] >= best["best_valid_wordsim"] - tolerance)


def run_stage(name: str, grid: list, base: dict, log=print) -> tuple[list[dict], list]:
    """Train every value of ``grid`` for setting ``name`` from ``base``, extending the grid past
    an end while the best value is there (see the module docstring). Returns (runs, vectors)."""
    grid = sorted(grid)
    done: dict = {}
    jobs = int(os.environ.get("NLP_COURSE_WORKERS", "1"))
    while True:
        todo = [v for v in grid if v not in done]
        if jobs > 1 and len(todo) > 1:          # the runs of a stage are independent
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
                results = list(pool.map(search_run, [dict(base, **{name: v}) for v in todo]))
        else:
            results = [search_run(dict(base, **{name: v})) for v in todo]
        for v, result in zip(todo, results, strict=True):
            done[v] = result
            r = result[0]
            log(f"{name} = {v:g}: best epoch {r['best_epoch']}, validation WordSim {r['best_valid_wordsim']}, "
                f"{r['epochs_run']} epochs ({r['stopped_by']}), {r['cpu_seconds']:.0f} CPU-s")
        runs = [done[v][0] for v in grid]
        best = _best(runs)["settings"][name]
        if name not in EXTEND:
            break
        lo, hi = LIMITS[name]
        down, up = EXTEND[name]
        if math.isclose(best, grid[0]) and lo <= down(best) < best:
            grid.insert(0, type(best)(down(best)))
        elif math.isclose(best, grid[-1]) and best < up(best) <= hi:
            grid.append(type(best)(up(best)))
        else:
            break
    return [done[v][0] for v in grid], [done[v][1] for v in grid]


def _finish_stage(name: str, runs: list[dict], vectors: list, vocab) -> dict:
    best = _best(runs)
    W_best = vectors[runs.index(best)].astype(np.float16).astype(np.float32)     # as shipped
    for r, W in zip(runs, vectors, strict=True):
        r["vs_best"] = (None if r is best or W is None else
                        [round(x, 4) for x in paired_wordsim_difference(W, W_best, vocab)])
    return {"setting": name, "chosen": choose(name, runs), "runs": runs}


def search(log=print) -> dict:
    """The whole search (every stage); returns the record :func:`main` writes. The learning rate,
    x_max and the learning rate again are searched one after the other (they interact: x_max sets
    the size of the weights f the learning rate multiplies, so the rate is checked again at the
    chosen x_max); the window and the dimension are then each varied from that base, side by side,
    and the chosen settings combine the two."""
    vocab = course_corpus().vocab
    base, stages = dict(START), []
    sequential, side_by_side = STAGES[:SEQUENTIAL], STAGES[SEQUENTIAL:]
    for name, grid in sequential:
        if grid is None:
            grid = [base[name] / 2, base[name], base[name] * 2]
        runs, vectors = run_stage(name, grid, base, log)
        stages.append(_finish_stage(name, runs, vectors, vocab))
        base = dict(base, **{name: stages[-1]["chosen"]})
        log(f"stage {name}: chosen {stages[-1]['chosen']:g}")
    jobs = int(os.environ.get("NLP_COURSE_WORKERS", "1"))
    if jobs > 1:                 # start every first run of the side-by-side stages at once
        todo = [dict(base, **{name: v}) for name, grid in side_by_side for v in grid if v != base[name]]
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
            list(pool.map(search_run, todo))
    chosen = dict(base)
    for name, grid in side_by_side:
        runs, vectors = run_stage(name, grid, base, log)
        stages.append(_finish_stage(name, runs, vectors, vocab))
        chosen[name] = stages[-1]["chosen"]
        log(f"stage {name}: chosen {stages[-1]['chosen']:g}")
    final = None
    if any(chosen[k] != base[k] for k in TUNED):
        final, _ = search_run(chosen)              # the combination the search chose, as shipped
    base = chosen
    return {"what": "GloVe's learning rate, x_max, window and dimension chosen on the validation half, one setting "
                    "at a time from glove.c's defaults (each stage from the best of the one before; a grid extended "
                    "while its best is at an end): every run the shipped trainer for up to "
                    f"{START['max_epochs']} epochs, early stopping with patience {START['patience']}, best epoch kept; "
                    "vs_best = its validation WordSim-353 rho minus that of its stage's best run (float16), "
                    f"95 % paired bootstrap over pairs; dimension: the smallest within {TOLERANCE} of the best",
            "command": "python -m helpers.course.glove_search", "start": {k: START[k] for k in TUNED},
            "fixed": {k: START[k] for k in ("alpha", "batch_size", "max_epochs", "patience", "min_count", "seed")},
            "tolerance": TOLERANCE, "chosen": {k: base[k] for k in TUNED}, "combined": final, "stages": stages,
            "runs": len({_key(r["settings"]) for st in stages for r in st["runs"]} | ({_key(final["settings"])} if final else set())),
            "cpu_seconds": round(sum({_key(r["settings"]): r["cpu_seconds"] for st in stages for r in st["runs"]}.values())
                                 + (final["cpu_seconds"] if final else 0.0), 1)}


def chosen_settings(record: dict | None = None) -> dict:
    """The tuned settings the record chose: {'lr', 'x_max', 'window', 'dim'}."""
    return dict((record or load_search())["chosen"])


def all_runs(record: dict | None = None) -> list[dict]:
    """Every run of the record, each with its 'stage' (the setting it varies)."""
    return [dict(r, stage=st["setting"]) for st in (record or load_search())["stages"] for r in st["runs"]]


def chosen_run(record: dict | None = None) -> dict:
    """The run of the record with the chosen settings (the shipped model's training): the combined
    run, or the run of the last stage at the base when the search kept it."""
    record = record or load_search()
    if record["combined"] is not None:
        return record["combined"]
    chosen = chosen_settings(record)
    return next(r for r in all_runs(record) if r["settings"] == chosen)


def load_search() -> dict:
    """The record written by :func:`main` (``data/models/logs/wv_glove_search.json``)."""
    return json.loads((model_dir() / FILE).read_text(encoding="utf-8"))


def write_search(record: dict) -> None:
    """Write ``record`` compactly: one line per run."""
    stages = record["stages"]
    head = json.dumps({k: v for k, v in record.items() if k != "stages"}, indent=1)[:-2]
    parts = []
    for st in stages:
        runs = ",\n   ".join(json.dumps(r) for r in st["runs"])
        parts.append(f'  {{"setting": {json.dumps(st["setting"])}, "chosen": {json.dumps(st["chosen"])}, '
                     f'"runs": [\n   {runs}]}}')
    text = head + ',\n "stages": [\n' + ",\n".join(parts) + "\n ]\n}\n"
    json.loads(text)                                   # still valid JSON
    (model_dir() / FILE).write_text(text, encoding="utf-8")


def main() -> None:
    record = search(log=lambda line: print(line, flush=True))
    write_search(record)
    print(f"chosen: {record['chosen']} ({record['cpu_seconds'] / 60:.0f} CPU-min)")


if __name__ == "__main__":
    main()
