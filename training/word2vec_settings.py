"""Why the word2vec models use ``sample=1e-4`` and ``alpha=0.05``: the run that makes the record.

    python -m training.word2vec_settings     # runs RUNS, writes data/models/logs/wv_settings.json

Every word2vec model of the course (:data:`training.word_vector_models.WORD2VEC`) starts from
gensim's defaults for skip-gram with negative sampling (d = 100, window 5, k = 5, min_count 5,
``sample=1e-3``, ``alpha=0.025``, 5 epochs) and changes the subsampling threshold and the initial
learning rate. This study measures that one change at a time on the **validation half**: gensim's
skip-gram (one worker: deterministic), two seeds per setting, scored after the last epoch, each
setting compared with the defaults on the same pairs by a paired bootstrap, seed by seed. Lesson
07 reads the record (with :func:`helpers.course.study_records.read_log`).
"""
from __future__ import annotations

import json
import logging
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.corpus import course_corpus
from helpers.course.models import model_dir
from training.word2vec_budget import paired_wordsim_difference

FILE = "logs/wv_settings.json"
DEFAULTS = dict(dim=100, window=5, negative=5, min_count=5, sample=1e-3, alpha=0.025,
                min_alpha=1e-4, epochs=5)
CHANGES = {"gensim defaults": {}, "sample 1e-4": dict(sample=1e-4),
           "sample 1e-5": dict(sample=1e-5), "alpha 0.05": dict(alpha=0.05),
           "alpha 0.0125": dict(alpha=0.0125),
           "sample 1e-4, alpha 0.05": dict(sample=1e-4, alpha=0.05)}
SEEDS = (0, 1)
RUNS = [(name, seed) for name in CHANGES for seed in SEEDS]


def run_settings(name: str) -> dict:
    """gensim's defaults with the change ``name`` of CHANGES."""
    if name not in CHANGES:
        raise ValueError(f"unknown setting {name!r}; the study has {list(CHANGES)}")
    return dict(DEFAULTS, **CHANGES[name])


def settings_run(name: str, seed: int) -> tuple[dict, np.ndarray]:
    """gensim skip-gram (one worker) at ``run_settings(name)`` with ``seed``, its last epoch
    scored on the validation half: ({'setting', 'seed', 'settings', 'valid_wordsim',
    'valid_simlex', 'cpu_seconds'}, W (V, D) float32 in the course vocabulary's order)."""
    from gensim.models import Word2Vec  # heavy optional import: loaded only to train

    s = run_settings(name)
    corpus = course_corpus()
    logging.getLogger("gensim").setLevel(logging.ERROR)
    t0 = time.process_time()
    m = Word2Vec([list(x) for x in corpus.sentences], vector_size=s["dim"], window=s["window"],
                 negative=s["negative"], sample=s["sample"], alpha=s["alpha"],
                 min_alpha=s["min_alpha"], epochs=s["epochs"], min_count=s["min_count"], sg=1, hs=0,
                 workers=1, seed=seed)
    cpu = time.process_time() - t0
    W = np.array(m.wv.vectors[[m.wv.key_to_index[w] for w in corpus.vocab.itos]], dtype=np.float32)
    v = evaluate_vectors(W, corpus.vocab, "validation", analogies=False)
    return ({"setting": name, "seed": seed, "settings": s, "valid_wordsim": v["wordsim"],
             "valid_simlex": v["simlex"], "cpu_seconds": cpu}, W)


def compare_with_defaults(runs: list[dict], vectors: list[np.ndarray]) -> dict:
    """{setting: {'mean_valid_wordsim', 'mean_valid_simlex', 'vs_defaults': [[estimate, low,
    high] per seed]}}: each setting minus gensim's defaults of the same seed, paired."""
    vocab = course_corpus().vocab
    base = {r["seed"]: W for r, W in zip(runs, vectors, strict=True)
            if r["setting"] == "gensim defaults"}
    out = {}
    for name in CHANGES:
        mine = [(r, W) for r, W in zip(runs, vectors, strict=True) if r["setting"] == name]
        out[name] = {"mean_valid_wordsim": float(np.mean([r["valid_wordsim"] for r, _ in mine])),
                     "mean_valid_simlex": float(np.mean([r["valid_simlex"] for r, _ in mine])),
                     "vs_defaults": [None if name == "gensim defaults" else
                                     paired_wordsim_difference(W, base[r["seed"]], vocab)
                                     for r, W in mine]}
    return out


def best_setting(record: dict) -> str:
    """The setting with the highest mean validation WordSim-353 ρ over the seeds."""
    return max(record["settings"], key=lambda k: record["settings"][k]["mean_valid_wordsim"])


def main() -> None:
    jobs = int(os.environ.get("NLP_COURSE_WORKERS", os.cpu_count() or 1))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(settings_run, *zip(*RUNS, strict=True)))
    runs, vectors = [r for r, _ in results], [W for _, W in results]
    record = {"what": "gensim skip-gram (one worker) at gensim's defaults and with one change at "
                      "a time, 2 seeds, scored after the last of 5 epochs on the validation half; "
                      "vs_defaults = validation WordSim-353 rho minus that of the defaults' run "
                      "with the same seed, 95 % paired bootstrap over the pairs",
              "command": "python -m training.word2vec_settings", "defaults": DEFAULTS,
              "runs": runs, "settings": compare_with_defaults(runs, vectors)}
    record["best"] = best_setting(record)
    for name, row in record["settings"].items():
        print(f"{name:<26} validation WordSim {row['mean_valid_wordsim']:.3f}, SimLex "
              f"{row['mean_valid_simlex']:.3f}; minus the defaults {row['vs_defaults']}",
              flush=True)
    (model_dir() / FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
