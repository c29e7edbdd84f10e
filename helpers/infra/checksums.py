"""Data-file checksums: the sha256 of a file, and a check that names what is wrong."""
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
    """True when ``path`` is the expected file with every LF turned into CRLF (Git for Windows)."""
    data = Path(path).read_bytes()
    lf = data.replace(b"\r\n", b"\n")
    return b"\r\n" in data and hashlib.sha256(lf).hexdigest() == expected_sha256


def line_endings_fix(git_path: str) -> str:
    """How to get back the committed bytes of ``git_path`` after Git converted its line endings."""
    return ("Git converted its line endings to Windows' CRLF on checkout (core.autocrlf, Git for "
            "Windows' default), which changes its bytes. The repository's .gitattributes tells Git "
            "to keep data files byte for byte: make sure your checkout has it (`git pull`; "
            f"`git check-attr text -- {git_path}` must say 'unset'), then re-create the file from "
            f"the commit: `git rm --cached -- {git_path}` and `git checkout HEAD -- {git_path}` "
            "(or clone the repository again)")


def verify_file(path: Path, expected_sha256: str, how_to_fix: str,
                git_path: str | None = None) -> Path:
    """``path``, checked to exist with the expected sha256; else DataError saying how to fix it."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {path} is missing. {how_to_fix}")
    got = sha256_of(path)
    if got != expected_sha256:
        if has_converted_line_endings(path, expected_sha256):
            fix = line_endings_fix(git_path) if git_path else how_to_fix
            raise DataError(f"data file {path} has Windows line endings (CRLF) where the recorded "
                            f"file has LF (expected sha256 {expected_sha256}, got {got}; with LF "
                            f"line endings it matches). {fix}")
        raise DataError(
            f"data file {path} is corrupt or has been modified: expected sha256 "
            f"{expected_sha256}, got {got}. {how_to_fix}"
        )
    return path
