"""GloVe's settings, chosen on the validation half with the same kind of search and budget as
the skip-gram's.

    python -m training.glove_search    # writes data/models/logs/wv_glove_search.json

- **start** from glove.c's defaults (learning rate 0.05, x_max 100, α 0.75), the paper's window
  (10 words each side, 1/d weighting) and the course's 100 dimensions;
- **stages**, one setting at a time (STAGES): the learning rate, x_max from the best rate, the
  rate again at the chosen x_max (the two interact); then the window and the dimension, each
  varied from that base, the chosen settings combining both (that combination is trained too).
  A stage whose best value is at an end of its grid is extended one value further that way,
  until the best lies inside (or the grid reaches LIMITS);
- **every run is the shipped trainer** (:func:`training.word_vector_models.train_glove_vectors`)
  for up to 50 epochs, scored on the validation half after every epoch and stopped when
  WordSim-353 has not improved for 8 epochs, its best epoch kept;
- **the choice**: the best validation WordSim-353 ρ; for the dimension the smallest within
  TOLERANCE of the best. Each run is compared with its stage's best by a paired bootstrap.

One thread per run (``NLP_COURSE_WORKERS`` runs of a stage at once), seeded. Finished runs are
kept in ``$NLP_COURSE_CACHE/glove_search/``, so an interrupted search resumes. Lesson 08 reads
the record (read with :func:`helpers.course.study_records.read_log`).
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
from helpers.infra.cache import cache_dir
from training.runlog import RunLog
from training.word2vec_budget import paired_wordsim_difference
from training.word_vector_models import GLOVE, train_glove_vectors

FILE = "logs/wv_glove_search.json"
TOLERANCE = 0.005          # a larger dimension must add more validation rho than this
START = dict(GLOVE, lr=0.05, x_max=100.0, window=10, dim=100, max_epochs=50, patience=8)
# None: the grid around the value the stages before chose (x0.5, x1, x2)
STAGES = [("lr", [0.05, 0.1, 0.2]), ("x_max", [100.0, 30.0, 10.0]), ("lr", None),
          ("window", [5, 10, 15]), ("dim", [50, 100, 200])]
SEQUENTIAL = 3             # the first three one after the other, the rest side by side
# how a grid is extended past an end, and how far
EXTEND = {"lr": (lambda v: v / 2, lambda v: v * 2), "x_max": (lambda v: v / 3, lambda v: v * 3),
          "window": (lambda v: v - 5, lambda v: v + 5)}
# x_max below 1/window (the smallest harmonic count) would weight every pair 1
LIMITS = {"lr": (0.01, 0.8), "x_max": (0.1, 1000.0), "window": (2, 20)}
TUNED = ("lr", "x_max", "window", "dim")


def run_settings(**change) -> dict:
    """START with ``change`` (any of lr, x_max, window, dim)."""
    unknown = set(change) - set(TUNED)
    if unknown:
        raise ValueError(f"a search run changes {TUNED}, got {sorted(unknown)}")
    return dict(START, **change)


def _key(s: dict) -> str:
    return "_".join(f"{k}{s[k]:g}" for k in TUNED)


def search_run(settings: dict) -> tuple[dict, np.ndarray | None]:
    """One run of the shipped trainer: ({'settings' (the tuned four), 'valid_wordsim',
    'valid_simlex', 'train_loss' (per epoch), 'best_epoch', 'best_valid_wordsim', 'epochs_run',
    'stopped_by', 'diverged', 'cpu_seconds'}, the best epoch's W + W~ or None when it diverged
    in its first epoch). Finished runs are read back from the cache."""
    folder = cache_dir() / "glove_search"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_key(settings)}.json"
    with FileLock(str(path.with_suffix(".lock"))):      # another process training it: wait
        if path.exists():
            record = json.loads(path.read_text(encoding="utf-8"))
            if record["best_epoch"] is None:
                return record, None
            return record, np.load(folder / f"{_key(settings)}.npy")
        t0 = time.process_time()
        arrays, meta, _ = train_glove_vectors(settings, RunLog(), max_steps=settings["max_epochs"],
                                              progress=True)
        cpu = time.process_time() - t0
        curve = {k: [round(float(x), 5) for x in arrays[f"curve/{k}"]]
                 for k in ("valid_wordsim", "valid_simlex", "train_loss")}
        scores = curve["valid_wordsim"]
        best = int(np.argmax(scores)) if scores else None
        stopped = ("diverged" if meta["diverged"] else "early stopping"
                   if len(scores) < settings["max_epochs"]
                   else f"the limit of {settings['max_epochs']} epochs")
        record = {"settings": {k: settings[k] for k in TUNED}, **curve,
                  "best_epoch": None if best is None else best + 1,
                  "best_valid_wordsim": None if best is None else scores[best],
                  "epochs_run": meta["epochs_run"], "diverged": meta["diverged"],
                  "stopped_by": stopped, "cpu_seconds": round(cpu, 1)}
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
    """The chosen value of setting ``name`` among a stage's ``runs``: the best validation
    WordSim-353 ρ; for the dimension, the smallest within ``tolerance`` of the best."""
    best = _best(runs)
    if name != "dim":
        return best["settings"][name]
    return min(r["settings"]["dim"] for r in runs if r["best_valid_wordsim"] is not None
               and r["best_valid_wordsim"] >= best["best_valid_wordsim"] - tolerance)


def run_stage(name: str, grid: list, base: dict, log=print) -> tuple[list[dict], list]:
    """Train every value of ``grid`` for setting ``name`` from ``base``, extending the grid past
    an end while its best value is there. Returns (runs, vectors)."""
    grid = sorted(grid)
    done: dict = {}
    jobs = int(os.environ.get("NLP_COURSE_WORKERS", "1"))
    while True:
        todo = [v for v in grid if v not in done]
        if jobs > 1 and len(todo) > 1:
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
                results = list(pool.map(search_run, [dict(base, **{name: v}) for v in todo]))
        else:
            results = [search_run(dict(base, **{name: v})) for v in todo]
        for v, result in zip(todo, results, strict=True):
            done[v] = result
            r = result[0]
            log(f"{name} = {v:g}: best epoch {r['best_epoch']}, validation WordSim "
                f"{r['best_valid_wordsim']}, {r['epochs_run']} epochs ({r['stopped_by']}), "
                f"{r['cpu_seconds']:.0f} CPU-s")
        best = _best([done[v][0] for v in grid])["settings"][name]
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
    """The whole search; returns the record :func:`main` writes."""
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
    if jobs > 1:                 # every first run of the side-by-side stages at once
        todo = [dict(base, **{name: v}) for name, grid in side_by_side for v in grid
                if v != base[name]]
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
        final, _ = search_run(chosen)              # the combination the search chose
    every = {_key(r["settings"]): r["cpu_seconds"] for st in stages for r in st["runs"]}
    keys = set(every) | ({_key(final["settings"])} if final else set())
    cpu = sum(every.values()) + (final["cpu_seconds"] if final else 0.0)
    return {"what": "GloVe's learning rate, x_max, window and dimension chosen on the validation "
                    "half, one setting at a time from glove.c's defaults (each stage from the best "
                    "of the one before; a grid extended while its best is at an end): every run "
                    f"the shipped trainer for up to {START['max_epochs']} epochs, early stopping "
                    f"with patience {START['patience']}, best epoch kept; vs_best = its validation "
                    "WordSim-353 rho minus that of its stage's best run (float16), 95 % paired "
                    f"bootstrap over pairs; dimension: the smallest within {TOLERANCE} of the best",
            "command": "python -m training.glove_search", "start": {k: START[k] for k in TUNED},
            "fixed": {k: START[k] for k in ("alpha", "batch_size", "max_epochs", "patience",
                                            "min_count", "seed")},
            "tolerance": TOLERANCE, "chosen": {k: chosen[k] for k in TUNED}, "combined": final,
            "stages": stages, "runs": len(keys), "cpu_seconds": round(cpu, 1)}


def write_search(record: dict) -> None:
    """Write ``record`` compactly: one line per run."""
    head = json.dumps({k: v for k, v in record.items() if k != "stages"}, indent=1)[:-2]
    parts = []
    for st in record["stages"]:
        runs = ",\n   ".join(json.dumps(r) for r in st["runs"])
        parts.append(f'  {{"setting": {json.dumps(st["setting"])}, '
                     f'"chosen": {json.dumps(st["chosen"])}, "runs": [\n   {runs}]}}')
    text = head + ',\n "stages": [\n' + ",\n".join(parts) + "\n ]\n}\n"
    json.loads(text)                                   # still valid JSON
    (model_dir() / FILE).write_text(text, encoding="utf-8")


def main() -> None:
    record = search(log=lambda line: print(line, flush=True))
    write_search(record)
    print(f"chosen: {record['chosen']} ({record['cpu_seconds'] / 60:.0f} CPU-min)")


if __name__ == "__main__":
    main()
