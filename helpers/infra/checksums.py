"""Data-file checksums: the sha256 of a file, and a check that names what is wrong.

Every data file the course reads is verified against a recorded sha256 before it is read
(the values live in :mod:`helpers.course.data` and ``data/README.md``); a missing or modified
file raises :class:`DataError` with the expected and the actual checksum and how to repair it.
"""
from __future__ import annotations

import hashlib
from pathlib import Path


class DataError(RuntimeError):
    """A data file is missing, corrupt or not in the expected format."""


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def has_converted_line_endings(path: Path, expected_sha256: str) -> bool:
    """True when ``path`` is the expected file with every LF turned into CRLF: what Git for Windows
    does to a file it takes for text when ``core.autocrlf`` is true (its default)."""
    data = Path(path).read_bytes()
    return b"\r\n" in data and hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest() == expected_sha256


def line_endings_fix(git_path: str) -> str:
    """How to get the committed bytes of ``git_path`` (relative to the repository) back after Git
    converted its line endings: check that .gitattributes keeps it byte for byte, then re-create it."""
    return (f"Git converted its line endings to Windows' CRLF on checkout (core.autocrlf, Git for Windows' "
            f"default), which changes its bytes. The repository's .gitattributes tells Git to keep data files "
            f"byte for byte: make sure your checkout has it (`git pull`; `git check-attr text -- {git_path}` must say "
            f"'unset'), then re-create the file from the commit: `git rm --cached -- {git_path}` and "
            f"`git checkout HEAD -- {git_path}` (or clone the repository again)")


def verify_file(path: Path, expected_sha256: str, how_to_fix: str, git_path: str | None = None) -> Path:
    """Check that ``path`` exists and has the expected sha256; return it.

    Raises DataError naming the file, the expected and the actual checksum and ``how_to_fix``.
    When the file is the expected one with Windows line endings (a checkout that converted it),
    the message says so, and for a file of the repository (``git_path``, e.g. ``data/x.tsv``)
    gives :func:`line_endings_fix` instead: ``git checkout`` alone would convert it again when
    the checkout lacks the .gitattributes that stops the conversion.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {path} is missing. {how_to_fix}")
    got = sha256_of(path)
    if got != expected_sha256:
        if has_converted_line_endings(path, expected_sha256):
            fix = line_endings_fix(git_path) if git_path else how_to_fix
            raise DataError(f"data file {path} has Windows line endings (CRLF) where the recorded file has LF "
                            f"(expected sha256 {expected_sha256}, got {got}; with LF line endings it matches). {fix}")
        raise DataError(
            f"data file {path} is corrupt or has been modified: expected sha256 "
            f"{expected_sha256}, got {got}. {how_to_fix}"
        )
    return path
