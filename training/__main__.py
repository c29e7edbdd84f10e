"""Train the course's shipped models: ``make models`` / ``python -m training``.

    python -m training --all              # every model of training.registry.MODELS
    python -m training ffnn_lm            # one (or several) by name
    python -m training --all --jobs 1     # one at a time
    python -m training --list             # what there is, and what is shipped now

Each model trains in its own process, started with ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and
``OPENBLAS_NUM_THREADS`` set to the model's thread count (normally 1) in its environment — so
they hold before NumPy or torch is imported — plus ``torch.set_num_threads`` and
``torch.use_deterministic_algorithms(True)`` inside it. Every trainer is seeded, so running
two side by side cannot change a result. ``--jobs`` trainings run at once (default: one per CPU
core), the longest first. Each writes ``data/models/<name>.npz`` and ``.json`` and its log
``data/models/logs/<name>.jsonl.gz``; then this process records it in ``manifest.json`` and
regenerates ``README.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm

from helpers.course.models import loader, model_dir, read_manifest
from helpers.infra.artifacts import load_artifact, save_artifact
from training.registry import MODELS, entry, write_manifest
from training.runlog import RunLog, run_environment

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


# ---------------------------------------------------------------- one model, in a worker process
def train_one(name: str, root: Path | None = None, progress: bool = True) -> dict:
    """Train ``name`` in this process and write its artefact and log; return its manifest record.

    Called by the worker process that :func:`main` starts with the thread variables set; the
    variables must already hold the entry's thread count (they only act before NumPy and
    torch are imported)."""
    e = entry(name)
    wrong = {v: os.environ.get(v) for v in THREAD_VARIABLES if os.environ.get(v) != str(e.threads)}
    if wrong:
        raise RuntimeError(
            f"{name} trains with {e.threads} thread(s), but this process has {wrong}: start it "
            f"with `python -m training {name}`, which sets them before NumPy is "
            "imported"
        )
    root = Path(root or model_dir())
    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(e.threads)
    torch.use_deterministic_algorithms(True)
    try:
        return _train_and_store(e, root, progress)
    finally:                                 # when called in-process (tests), leave torch as it was
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1])


def _train_and_store(e, root: Path, progress: bool) -> dict:
    name = e.name
    log, environment = RunLog(), run_environment()
    log.event(
        "start",
        model=name,
        settings=e.settings,
        deterministic=e.deterministic,
        environment=environment,
    )
    wall, cpu = time.perf_counter(), time.process_time()
    arrays, meta, metrics = e.train(dict(e.settings), log, progress=progress)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    info = save_artifact(
        root / name,
        arrays,
        {
            **meta,
            "model": name,
            "train_seconds": wall,
            "cpu_seconds": cpu,
            "environment": environment,
        },
        float16=e.float16,
    )
    sub_name, sub_value = e.subset_metric(
        loader(name)(load_artifact(root / name))
    )  # from the stored file
    log.event(
        "end",
        wall_seconds=wall,
        cpu_seconds=cpu,
        metrics=metrics,
        subset_metric={sub_name: sub_value},
        sha256=info["npz"]["sha256"],
        size=info["npz"]["size"],
    )
    log.write(root / "logs" / f"{name}.jsonl.gz")
    return {
        "file": f"{name}.npz",
        "metadata": f"{name}.json",
        "log": f"logs/{name}.jsonl.gz",
        "sha256": info["npz"]["sha256"],
        "size": info["npz"]["size"],
        "what": e.what,
        "lesson": e.lesson,
        "settings": e.settings,
        "metrics": metrics,
        "subset_metric": {"name": sub_name, "value": sub_value},
        "train_seconds": wall,
        "cpu_seconds": cpu,
        "threads": e.threads,
        "deterministic": e.deterministic,
        "float16": list(e.float16),
        "steps": log.steps,
        "versions": environment["versions"],
        "cpu": environment["cpu"],
        "git": environment["git"],
        "command": e.command,
    }


# ---------------------------------------------------------------- several, side by side
def worker_command(name: str, result: Path, root: Path) -> list[str]:
    """The command line of the worker process that trains ``name``."""
    return [sys.executable, "-m", "training", "--worker", name, "--result", str(result),
            "--root", str(root)]


def _order(names: list[str], root: Path) -> list[str]:
    """Longest first (by the manifest's last training time), so the slowest start first."""
    shipped = read_manifest(root)["models"]
    return sorted(names, key=lambda n: -shipped.get(n, {}).get("train_seconds", float("inf")))


def run(names: list[str], jobs: int, root: Path | None = None) -> int:
    """Train ``names`` ``jobs`` at a time in worker processes, writing to ``root`` (default
    ``data/models``); record each in the manifest as it finishes. Returns the number that failed."""
    root = Path(root or model_dir())
    names, jobs = _order(names, root), max(1, min(jobs, len(names)))
    quiet = jobs > 1          # side by side, the workers' progress bars would overwrite each other
    tmp = Path(tempfile.mkdtemp(prefix="nlp-course-train-"))
    waiting, running, failed, t0 = list(names), {}, [], time.perf_counter()
    print(f"training {len(names)} model(s), {jobs} at a time: {', '.join(names)}", flush=True)
    bar = tqdm(total=len(names), desc="models", unit="model", disable=not quiet)
    while waiting or running:
        while waiting and len(running) < jobs:
            name = waiting.pop(0)
            e = entry(name)
            env = {**os.environ, **{v: str(e.threads) for v in THREAD_VARIABLES}}
            out = open(tmp / f"{name}.out", "w", encoding="utf-8") if quiet else None
            running[name] = (
                subprocess.Popen(
                    worker_command(name, tmp / f"{name}.json", root),
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT if quiet else None,
                ),
                out,
            )
        time.sleep(0.5)
        for name, (proc, out) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[name]
            if out:
                out.close()
            if proc.returncode == 0:
                record = json.loads((tmp / f"{name}.json").read_text(encoding="utf-8"))
                manifest = read_manifest(root)
                manifest["models"][name] = record
                write_manifest(manifest, root)
                bar.write(f"{name}: {record['train_seconds']:.0f} s, {record['steps']:,} steps, "
                          f"{record['metrics']}; sha256 {record['sha256']}")
            else:
                failed.append(name)
                tail = (tmp / f"{name}.out").read_text(encoding="utf-8")[-3000:] if quiet else ""
                bar.write(f"{name}: FAILED (exit code {proc.returncode})\n{tail}")
            bar.update(1)
    bar.close()
    print(
        f"done in {time.perf_counter() - t0:.0f} s" + (f"; failed: {failed}" if failed else ""),
        flush=True,
    )
    return len(failed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("names", nargs="*", help=f"models to train: {', '.join(sorted(MODELS))}")
    parser.add_argument("--all", action="store_true", help="train every model")
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="trainings at once (default: CPU cores)",
    )
    parser.add_argument("--list", action="store_true", help="list the models and what is shipped")
    parser.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        record = train_one(args.worker, args.root)
        args.result.write_text(json.dumps(record), encoding="utf-8")
        return 0
    if args.list:
        shipped = read_manifest()["models"]
        for name, e in sorted(MODELS.items()):
            r = shipped.get(name)
            state = (
                f"shipped, {r['size']:,} bytes, trained in {r['train_seconds']:.0f} s"
                if r
                else "not trained yet"
            )
            print(f"{name:20s} lesson {e.lesson}: {e.what} [{state}]")
        return 0
    if args.all == bool(args.names):
        parser.error(
            f"name the models to train ({', '.join(sorted(MODELS))}) or give --all, not both"
        )
    unknown = sorted(set(args.names) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s) {unknown}; the course has {sorted(MODELS)}")
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    return (
        1 if run(sorted(MODELS) if args.all else list(dict.fromkeys(args.names)), args.jobs) else 0
    )


if __name__ == "__main__":
    sys.exit(main())
