"""The course's file format for trained models and cached results: ``name.npz`` (arrays, same
arrays, same bytes) and ``name.json`` (metadata and checksums), no pickle."""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import torch

FORMAT = "nlp-course-artifact/1"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)      # a fixed member timestamp: same arrays, same bytes
_ZIP_LEVEL = 6                          # zlib's default level


class ArtifactError(RuntimeError):
    """An artefact is missing, unreadable, or not what its metadata says."""


@dataclass
class Artifact:
    """A loaded artefact: ``arrays`` {name: ndarray}, ``meta``, the JSON's ``info`` and ``path``."""

    arrays: dict
    meta: dict
    info: dict
    path: Path


# ---------------------------------------------------------------- paths and checksums
def artifact_paths(path: str | Path) -> tuple[Path, Path]:
    """(the .npz, the .json) of the artefact ``path`` (given with or without a suffix)."""
    path = Path(path)
    if path.suffix in (".npz", ".json"):
        path = path.with_suffix("")
    return path.with_name(path.name + ".npz"), path.with_name(path.name + ".json")


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _canonical_json(obj: dict) -> str:
    """The one text a metadata dict is written as: sorted keys, one-space indent, ASCII."""
    return json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=True, allow_nan=False) + "\n"


def jsonable(x, where: str = "meta"):
    """``x`` as plain JSON values; a non-finite float or another type is an error."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, np.bool_):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, (float, np.floating)):
        if not math.isfinite(float(x)):
            raise ValueError(f"{where} is {float(x)}: JSON metadata must be finite "
                             "(store non-finite values in an array)")
        return float(x)
    if isinstance(x, Mapping):
        out = {}
        for k, v in x.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} has a key {k!r} of type {type(k).__name__}; "
                                "JSON keys must be strings")
            out[k] = jsonable(v, f"{where}[{k!r}]")
        return out
    if isinstance(x, (list, tuple)):
        return [jsonable(v, f"{where}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, np.ndarray) and x.size <= 64:
        return jsonable(x.tolist(), where)
    raise TypeError(f"{where} is a {type(x).__name__}, which JSON metadata cannot hold; "
                    "store it as an array")


# ---------------------------------------------------------------- writing
def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """The .npz file of ``arrays``: one ``<name>.npy`` member per array, sorted by name."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED,
                         compresslevel=_ZIP_LEVEL) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(name + ".npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, arrays[name], allow_pickle=False)
    return buf.getvalue()


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)          # atomic: readers see the old file or the new one
    finally:
        if tmp.exists():
            tmp.unlink()


def _check_arrays(arrays: Mapping[str, np.ndarray], float16) -> tuple[dict, dict]:
    """(arrays as stored, listing for the JSON); ``float16``: names of arrays stored as float16."""
    if not isinstance(arrays, Mapping):
        raise TypeError(f"arrays must be a dict of name -> ndarray, got a {type(arrays).__name__}")
    unknown = set(float16) - set(arrays)
    if unknown:
        raise ValueError(f"float16 names arrays that are not there: {sorted(unknown)}; "
                         f"arrays: {sorted(arrays)}")
    stored, listing = {}, {}
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray):
            raise TypeError(f"array {name!r} is a {type(a).__name__}, expected a NumPy array")
        if a.dtype.hasobject:
            raise TypeError(f"array {name!r} has dtype object, which cannot be stored without "
                            "pickle; store strings with strings_to_array()")
        entry = {"dtype": a.dtype.str, "shape": list(a.shape)}
        if name in float16 and not np.issubdtype(a.dtype, np.floating):
            raise TypeError(f"array {name!r} has dtype {a.dtype}; only floating arrays can be "
                            "stored as float16")
        if name in float16 and a.dtype != np.float16:
            if np.any(np.abs(a[np.isfinite(a)]) > np.finfo(np.float16).max):
                raise ValueError(f"array {name!r} has values outside float16's range (±65504)")
            entry["stored"] = np.dtype(np.float16).str
            a = a.astype(np.float16)
        stored[name], listing[name] = (a if a.flags.c_contiguous else a.copy(order="C")), entry
    return stored, listing


def save_artifact(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping | None = None,
                  float16: Iterable[str] = ()) -> dict:
    """Write the artefact ``path`` (``path.npz`` + ``path.json``) atomically; return the JSON.
    ``float16``: names of floating arrays stored as float16, cast back on load."""
    npz_path, json_path = artifact_paths(path)
    stored, listing = _check_arrays(arrays, set(float16))
    data = _npz_bytes(stored)
    info = {"format": FORMAT,
            "npz": {"file": npz_path.name, "sha256": sha256_bytes(data), "size": len(data)},
            "arrays": listing, "meta": jsonable(dict(meta or {}))}
    info["json_sha256"] = sha256_bytes(_canonical_json(info).encode("ascii"))
    npz_path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(npz_path, data)
    _write_atomically(json_path, _canonical_json(info).encode("ascii"))
    return info


# ---------------------------------------------------------------- reading
def _read_bytes(path: Path, what: str) -> bytes:
    """The bytes of an artefact's ``what`` ("metadata" or "array") file, or ArtifactError."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ArtifactError(f"its {what} file {path} is missing") from None
    except OSError as e:
        raise ArtifactError(f"its {what} file {path} cannot be read ({e})") from None


def read_artifact_info(path: str | Path) -> dict:
    """The JSON of the artefact ``path``, its own checksum and exact text verified."""
    _, json_path = artifact_paths(path)
    raw = _read_bytes(json_path, "metadata")
    try:
        text = raw.decode("ascii")
        info = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ArtifactError(f"its metadata file {json_path} is not valid JSON ({e})") from None
    if not isinstance(info, dict) or not isinstance(info.get("json_sha256"), str):
        raise ArtifactError(f"its metadata file {json_path} has no json_sha256 entry")
    claimed = info.pop("json_sha256")
    got = sha256_bytes(_canonical_json(info).encode("ascii"))
    if got != claimed:
        raise ArtifactError(f"its metadata file {json_path} failed its checksum "
                            f"(expected {claimed}, got {got})")
    info["json_sha256"] = claimed
    if _canonical_json(info) != text:
        raise ArtifactError(f"its metadata file {json_path} was modified "
                            "(same values, different text)")
    if info.get("format") != FORMAT:
        raise ArtifactError(f"{json_path} has format {info.get('format')!r}, expected {FORMAT!r}")
    return info


def load_artifact(path: str | Path) -> Artifact:
    """Read the artefact ``path`` after verifying both checksums (else ArtifactError)."""
    npz_path, _ = artifact_paths(path)
    info = read_artifact_info(path)
    data = _read_bytes(npz_path, "array")
    expected, got = info["npz"]["sha256"], sha256_bytes(data)
    if got != expected:
        raise ArtifactError(f"{npz_path} failed its checksum (expected {expected}, got {got})")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise ArtifactError(f"{npz_path} matches its checksum but cannot be read ({e!r})") from None
    listing = info["arrays"]
    if set(arrays) != set(listing):
        raise ArtifactError(f"{npz_path} holds arrays {sorted(arrays)}, "
                            f"its metadata lists {sorted(listing)}")
    for name, entry in listing.items():
        a, stored = arrays[name], entry.get("stored", entry["dtype"])
        if list(a.shape) != entry["shape"] or a.dtype.str != stored:
            raise ArtifactError(f"{npz_path}: array {name!r} is {a.dtype.str} {list(a.shape)}, "
                                f"its metadata says {stored} {entry['shape']}")
        if "stored" in entry:
            arrays[name] = a.astype(np.dtype(entry["dtype"]))
    return Artifact(arrays, info["meta"], info, npz_path)


# ---------------------------------------------------------------- common objects <-> arrays
def strings_to_array(strings: Iterable[str]) -> np.ndarray:
    """A list of str (a vocabulary) as a fixed-width unicode array (n,), dtype '<U{longest}'."""
    strings = list(strings)
    bad = next((s for s in strings if not isinstance(s, str)), None)
    if bad is not None:
        raise TypeError(f"expected strings, got a {type(bad).__name__}: {bad!r}")
    if any(s.endswith("\x00") for s in strings):
        raise ValueError("a string ends with NUL, which a fixed-width unicode array cannot keep")
    return np.array(strings, dtype=f"<U{max((len(s) for s in strings), default=1) or 1}")


def array_to_strings(a: np.ndarray) -> list[str]:
    """The list of str stored by :func:`strings_to_array`."""
    if a.ndim != 1 or a.dtype.kind != "U":
        raise TypeError(f"expected a 1-d unicode array, got dtype {a.dtype} and shape {a.shape}")
    return [str(s) for s in a]


def arrays_to_state_dict(arrays: Mapping[str, np.ndarray], prefix: str = "") -> dict:
    """The {key: tensor} state_dict stored under ``prefix`` (``model/``) by ``make models``."""
    out = {k[len(prefix):]: torch.from_numpy(np.array(v))
           for k, v in arrays.items() if k.startswith(prefix)}
    if not out:
        raise KeyError(f"no arrays start with {prefix!r}; have {sorted(arrays)[:10]}")
    return out


def arrays_to_curves(arrays: Mapping[str, np.ndarray], prefix: str = "curve/") -> dict:
    """The {name: list of floats} stored under ``prefix`` by ``make models``."""
    return {k[len(prefix):]: v.astype(np.float64).tolist()
            for k, v in arrays.items() if k.startswith(prefix)}


def timings_from_meta(meta_timings: Mapping) -> dict:
    """The timing arrays stored in an artefact's metadata: {name: float64 array} (None -> NaN)."""
    values, shapes = meta_timings["values"], meta_timings["shapes"]
    return {name: np.array([np.nan if v is None else v for v in values[name]],
                           dtype=np.float64).reshape(shape)
            for name, shape in shapes.items()}


def unprefixed(arrays: Mapping[str, np.ndarray], prefix: str) -> dict:
    """The arrays whose names start with ``prefix``, with the prefix removed."""
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
