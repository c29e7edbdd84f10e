"""The log of one training run: what was trained, how, on what, and how it went.

A log is a list of events, written as gzip-compressed JSON lines (``<name>.jsonl.gz``), one
event per line, in order::

    {"event": "start", "model": "ffnn_lm", "settings": {...}, "environment": {...}}
    {"event": "steps", "first": 1, "loss": [7.61, 7.58, ...]}       # the loss of every step
    {"event": "eval", "step": 500, "valid_nll": 4.21, "improved": true, "best_step": 500, ...}
    {"event": "stop", "reason": "no improvement larger than 0.001 in 4 evaluations", ...}
    {"event": "end", "wall_seconds": 412.5, "cpu_seconds": 405.1, "metrics": {...}}

Consecutive step losses are grouped into one ``steps`` event (up to 1,000 per line) to keep the
file small; :meth:`RunLog.step_losses` gives them back as one list. :func:`run_environment`
records the library versions, the thread settings, the processor and the git commit.

Bit-for-bit reproducibility needs the same library versions *and* the same kind of processor:
numpy's and PyTorch's kernels pick their SIMD code (AVX2, AVX-512, ...) and BLAS kernels by CPU,
and a different choice sums floats in a different order. :func:`replays_exactly` says whether
this machine should reproduce a recorded run to the last bit.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from helpers.infra.artifacts import jsonable

_CHUNK = 1000
LIBRARIES = ("numpy", "torch", "scipy", "gensim", "scikit-learn")


class RunLog:
    """Events of one training run, kept in memory and written by :meth:`write`."""

    def __init__(self):
        self.events: list[dict] = []
        self._pending: list[float] = []
        self._pending_first = 1
        self._steps = 0

    def step(self, loss: float) -> None:
        """Record the training loss of the next step (steps are numbered from 1)."""
        if not self._pending:
            self._pending_first = self._steps + 1
        self._pending.append(float(loss))
        self._steps += 1
        if len(self._pending) >= _CHUNK:
            self._flush()

    def event(self, event: str, **fields) -> None:
        """Record an event (``start``, ``eval``, ``stop``, ``end`` ...) with JSON-able fields."""
        self._flush()
        self.events.append({"event": event, **jsonable(fields, where=f"log event {event!r}")})

    def _flush(self) -> None:
        if self._pending:
            self.events.append({"event": "steps", "first": self._pending_first,
                                "loss": self._pending})
            self._pending = []

    @property
    def steps(self) -> int:
        """Number of steps recorded."""
        return self._steps

    def step_losses(self) -> list[float]:
        """The loss of every recorded step, in order."""
        return step_losses(self.all_events())

    def all_events(self) -> list[dict]:
        """Every event, including the steps not yet grouped into a line."""
        if not self._pending:
            return list(self.events)
        return self.events + [{"event": "steps", "first": self._pending_first,
                               "loss": list(self._pending)}]

    def write(self, path: str | Path) -> Path:
        """Write the log to ``path`` (gzip, one JSON object per line; replaced atomically)."""
        self._flush()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
            for e in self.events:
                gz.write((json.dumps(e, allow_nan=False) + "\n").encode("utf-8"))
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(buf.getvalue())
        os.replace(tmp, path)
        return path


def read_log(path: str | Path) -> list[dict]:
    """The events of a log written by :meth:`RunLog.write`."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def step_losses(events: list[dict]) -> list[float]:
    """The per-step losses of a log's events, checked to be consecutive from step 1."""
    out: list[float] = []
    for e in events:
        if e["event"] == "steps":
            if e["first"] != len(out) + 1:
                raise ValueError(f"the log's steps jump from {len(out)} to {e['first']}")
            out += e["loss"]
    return out


def _git(*args: str, root: Path | None = None) -> str | None:
    root = root or Path(__file__).resolve().parents[1]     # the checkout: training/ is at its top
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def library_versions() -> dict:
    """{'python': ..., 'numpy': ..., 'torch': ..., 'scipy': ..., 'gensim': ..., 'scikit-learn': ...}
    of this environment (None for a library that is not installed)."""
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


# what training writes: a change there does not make the code or data that trained a model differ
# from the commit (``make models`` trains one model after another in the same checkout)
TRAINING_OUTPUTS = "data/models"


def tree_is_dirty(root: Path | None = None) -> bool | None:
    """Whether the checkout has uncommitted changes to tracked files outside ``data/models`` (the
    training outputs); None outside a git checkout."""
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".",
                  f":(exclude){TRAINING_OUTPUTS}", root=root)
    return None if status is None else bool(status)


def cpu_description() -> dict:
    """The processor this runs on: {'vendor': 'GenuineIntel' | 'AuthenticAMD' | ..., 'model': its
    name, 'torch': PyTorch's SIMD level ('AVX2', 'AVX512', ...; only when torch is imported)}.
    Read from ``/proc/cpuinfo`` on Linux; elsewhere from :func:`platform.processor`."""
    out = {"vendor": platform.processor() or None, "model": platform.processor() or None}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "vendor_id":
            out["vendor"] = value.strip()
        elif key == "model name":
            out["model"] = value.strip()
            break
    if "torch" in sys.modules:
        out["torch"] = sys.modules["torch"].backends.cpu.get_cpu_capability()
    return out


def replays_exactly(versions: dict, cpu: dict | None) -> bool:
    """Whether a run recorded with library ``versions`` on processor ``cpu`` (a
    :func:`cpu_description`, or a part of one) should be reproduced bit for bit here: the same
    versions, and the same value for every processor field the record has (the torch field only
    compared when torch is imported here). ``cpu`` None (not recorded): False; ``cpu`` {} (a run
    whose result does not depend on the processor): the versions alone decide."""
    if versions != library_versions() or cpu is None:
        return False
    here = cpu_description()
    return all(here.get(k) == v for k, v in cpu.items() if k in here)


# a replay on another processor or library version: the same run, to this relative rounding
REPLAY_RTOL = 1e-4


def run_environment() -> dict:
    """Where a run happens: library versions, thread settings (``OMP_NUM_THREADS`` ... and
    torch's), the platform, the processor (:func:`cpu_description`) and CPU count, and the git
    commit with whether the tree had uncommitted changes outside the training outputs
    (``dirty``, :func:`tree_is_dirty`; None outside a git checkout)."""
    variables = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    threads = {k: os.environ.get(k) for k in variables}
    if "torch" in sys.modules:
        threads["torch"] = sys.modules["torch"].get_num_threads()
    return {"versions": library_versions(), "threads": threads, "platform": platform.platform(),
            "machine": platform.machine(), "cpu": cpu_description(), "cpu_count": os.cpu_count(),
            "git": {"commit": _git("rev-parse", "HEAD"), "dirty": tree_is_dirty()}}
