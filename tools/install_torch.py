"""Install the right build of PyTorch before the other requirements (``make setup`` runs it).

PyPI's torch wheel for Linux is the CUDA build: with its nvidia-* packages about 2.7 GB to
download (measured for torch 2.13.0, Python 3.11). A laptop without an NVIDIA GPU needs only
the CPU build (about 190 MB) from PyTorch's own index. So:

* Linux without an NVIDIA GPU: the CPU build, from https://download.pytorch.org/whl/cpu.
  If that index cannot be reached, a torch wheel that pip's configuration already offers
  locally (``find-links``) is used instead; if there is none, stop and say what to do,
  rather than fall back to the 2.7 GB download.
* Linux with an NVIDIA GPU, macOS, Windows: nothing to do here; ``pip install -r
  requirements.txt`` takes PyPI's default (CUDA on Linux, CPU/MPS on macOS, CPU on Windows).

The torch version range is read from requirements.txt, so it is written in one place. Run it
with the environment's Python: ``.venv/bin/python tools/install_torch.py [--build cpu|pypi]``.
It uses only the standard library.
"""
from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PROBE_TIMEOUT_S = 10   # an index that does not answer in 10 s counts as unreachable
PIP_NETWORK = ["--timeout", "30", "--retries", "2"]   # bounded, so set-up cannot hang on it


def torch_requirement(requirements: Path = ROOT / "requirements.txt") -> str:
    """The torch line of requirements.txt without its comment, e.g. ``torch>=2.2,<2.14``."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        spec = line.split("#", 1)[0].strip()
        if spec.startswith("torch") and not spec[5:6].isalnum():
            return spec
    raise SystemExit(f"install_torch: no torch line in {requirements}")


def nvidia_gpu() -> bool:
    """True if an NVIDIA driver is loaded (Linux), or nvidia-smi lists a GPU (also WSL 2)."""
    if Path("/proc/driver/nvidia/version").exists():
        return True
    smi = shutil.which("nvidia-smi") or ("/usr/lib/wsl/lib/nvidia-smi"
                                         if Path("/usr/lib/wsl/lib/nvidia-smi").exists() else None)
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "GPU" in out


def choose_build(requested: str) -> tuple[str, str]:
    """(``"cpu"`` or ``"pypi"``, the reason in words) for ``requested`` = auto, cpu or pypi."""
    if requested != "auto":
        return requested, f"asked for with --build {requested}"
    system = platform.system()
    if system != "Linux":
        return (
            "pypi",
            f"{system}: PyPI's torch is the CPU{'/MPS' if system == 'Darwin' else ''} build there",
        )
    if nvidia_gpu():
        return "pypi", "Linux with an NVIDIA GPU: PyPI's default torch is the CUDA build"
    return "cpu", "Linux without an NVIDIA GPU"


def reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """(True, "") if ``url`` answers within ``timeout`` seconds, else (False, why not)."""
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url + "/", method="HEAD"), timeout=timeout
        ):
            return True, ""
    except urllib.error.HTTPError:   # the server answered (e.g. 403 to HEAD): pip can ask it
        return True, ""
    except (urllib.error.URLError, OSError, ValueError) as e:
        return False, str(getattr(e, "reason", e))


def pip_install(args: list[str]) -> int:
    cmd = [sys.executable, "-m", "pip", "install", *args]
    print("install_torch:", " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", choices=["auto", "cpu", "pypi"], default="auto",
                        help="auto (default): cpu on Linux without an NVIDIA GPU, else pypi")
    parser.add_argument("--index", default=CPU_INDEX, help=f"the CPU index (default {CPU_INDEX})")
    parser.add_argument(
        "--constraint", metavar="FILE", help="a pip constraints file (constraints.txt)"
    )
    args = parser.parse_args(argv)
    pin = ["--constraint", args.constraint] if args.constraint else []

    build, why = choose_build(args.build)
    spec = torch_requirement()
    if build == "pypi":
        print(f"install_torch: {why}; torch comes from PyPI with the other requirements")
        return 0
    print(f"install_torch: {why}: installing the CPU build of {spec}")
    ok, reason = reachable(args.index)
    if ok:
        rc = pip_install(["--no-deps", *PIP_NETWORK, "--index-url", args.index, spec, *pin])
    else:
        print(
            f"install_torch: {args.index} cannot be reached ({reason}); looking for a torch wheel "
            "in pip's local wheel folders (find-links) instead"
        )
        rc = pip_install(["--no-deps", "--no-index", spec, *pin])
    if rc != 0:
        print(
            f"install_torch: could not install the CPU build of {spec}. Either make "
            f"{args.index} reachable (behind a proxy: set HTTPS_PROXY) and run `make setup` "
            "again, or accept PyPI's default build "
            "(on Linux the CUDA build, about 2.7 GB) with `make setup TORCH=pypi`.",
            file=sys.stderr,
        )
    return rc


if __name__ == "__main__":
    sys.exit(main())
