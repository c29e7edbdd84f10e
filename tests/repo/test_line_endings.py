""".gitattributes keeps every data file byte for byte in a Windows checkout (a clone with
``core.autocrlf=true``), and a converted file gets a message with the fix that works."""
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.course import data
from helpers.course.models import ModelFileError, load_model
from helpers.infra.checksums import DataError, verify_file

ROOT = Path(__file__).resolve().parents[2]
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
       "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
TSV, JSON = "data/wsd_sentences.tsv", "data/models/ffnn_lm.json"


def git(*args, cwd):
    done = subprocess.run([GIT, *args], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _origin(tmp_path: Path, attributes: bool) -> Path:
    """A repository of the real data file, a model's JSON and (maybe) the .gitattributes."""
    origin = tmp_path / "origin"
    (origin / "data" / "models").mkdir(parents=True)
    shutil.copy(ROOT / "data" / "wsd_sentences.tsv", origin / "data")
    shutil.copy(ROOT / "data" / "models" / "ffnn_lm.json", origin / "data" / "models")
    if attributes:
        shutil.copy(ROOT / ".gitattributes", origin)
    git("init", "-q", cwd=origin)
    git("add", "-A", cwd=origin)
    git("commit", "-qm", "data", cwd=origin)
    return origin


def _windows_clone(origin: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "windows"
    git("-c", "core.autocrlf=true", "clone", "-q", str(origin), str(clone), cwd=tmp_path)
    git("config", "core.autocrlf", "true", cwd=clone)     # as Git for Windows sets it
    return clone


def test_the_attributes_keep_every_data_file_and_figure_byte_for_byte():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    files = [f for f in git("ls-files", "data", "notebooks/figures", cwd=ROOT).splitlines() if f]
    out = git("check-attr", "text", "--", *files, cwd=ROOT)
    not_binary = [line for line in out.splitlines() if not line.endswith(": text: unset")]
    assert len(files) > 40 and not not_binary, f"files Git may convert: {not_binary}"


def test_a_windows_clone_keeps_the_checksums(tmp_path):
    clone = _windows_clone(_origin(tmp_path, attributes=True), tmp_path)
    verify_file(clone / TSV, data.SHA256["wsd_sentences.tsv"], "")
    assert (clone / JSON).read_bytes() == (ROOT / JSON).read_bytes()


def test_without_the_attributes_the_message_gives_the_fix_that_works(tmp_path):
    origin = _origin(tmp_path, attributes=False)
    clone = _windows_clone(origin, tmp_path)
    tsv, expected = clone / TSV, data.SHA256["wsd_sentences.tsv"]
    assert b"\r\n" in tsv.read_bytes() and sha(tsv) != expected
    with pytest.raises(DataError) as err:
        verify_file(tsv, expected, f"Restore it with `git checkout -- {TSV}`.", git_path=TSV)
    message = str(err.value)
    assert "Windows line endings (CRLF)" in message and "with LF line endings it matches" in message
    git("checkout", "--", TSV, cwd=clone)           # the old advice re-creates the converted file
    assert sha(tsv) != expected
    shutil.copy(ROOT / ".gitattributes", origin)    # the upstream fix arrives with `git pull`
    git("add", ".gitattributes", cwd=origin)
    git("commit", "-qm", "attributes", cwd=origin)
    git("pull", "-q", cwd=clone)
    assert git("check-attr", "text", "--", TSV, cwd=clone).strip().endswith("text: unset")
    for command in (f"git rm --cached -- {TSV}", f"git checkout HEAD -- {TSV}"):
        assert f"`{command}`" in message
        git(*command.split()[1:], cwd=clone)
    assert sha(tsv) == expected
    # the same two commands restore the converted model JSON (as its loader prints them)
    for command in (f"git rm -q --cached -- {JSON}", f"git checkout HEAD -- {JSON}"):
        git(*command.split()[1:], cwd=clone)
    assert (clone / JSON).read_bytes() == (ROOT / JSON).read_bytes()
    assert git("status", "--porcelain", cwd=clone) == ""


def test_a_converted_model_json_names_the_line_endings(tmp_path):
    models = tmp_path / "models"
    shutil.copytree(ROOT / "data" / "models", models,
                    ignore=shutil.ignore_patterns("logs", "baselines"))
    meta = models / "ffnn_lm.json"
    meta.write_bytes(meta.read_bytes().replace(b"\n", b"\r\n"))
    with pytest.raises(ModelFileError, match=r"ffnn_lm.json has Windows line endings \(CRLF\).*"
                                             rf"git checkout HEAD -- {JSON}"):
        load_model("ffnn_lm", models)
