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


def verify_file(path: Path, expected_sha256: str, how_to_fix: str) -> Path:
    """Check that ``path`` exists and has the expected sha256; return it.

    Raises DataError naming the file, the expected and the actual checksum.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {path} is missing. {how_to_fix}")
    got = sha256_of(path)
    if got != expected_sha256:
        raise DataError(
            f"data file {path} is corrupt or has been modified: expected sha256 "
            f"{expected_sha256}, got {got}. {how_to_fix}"
        )
    return path
