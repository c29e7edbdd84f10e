"""The course's one file format for trained models and cached results: no pickle, checksummed.

An **artefact** is two files side by side:

- ``name.npz``: named NumPy arrays, written with ``allow_pickle=False`` (so numbers and
  fixed-width unicode strings only), members sorted by name, deflate-compressed (zlib level 6)
  with a fixed timestamp: the same arrays always give the same bytes with the same zlib build,
  hence the same sha256 (a different zlib build may compress differently: the arrays are the
  same, the checksum is not; rebuilt files are checked against the manifest of the machine that
  built them);
- ``name.json``: what the arrays are and where they came from::

      {"format": "nlp-course-artifact/1",
       "npz": {"file": "name.npz", "sha256": "…", "size": 123456},
       "arrays": {"W": {"dtype": "float32", "shape": [5000, 100], "stored": "float16"}, …},
       "meta": {settings, metrics, training time, versions … (the caller's)},
       "json_sha256": "…"}

  ``json_sha256`` is the sha256 of the same JSON written without that entry, so a changed
  number in the metadata is caught as surely as a changed array.

:func:`load_artifact` checks both checksums *before* it trusts anything it read, and raises
:class:`ArtifactError` (with the expected and the actual checksum) for a missing, truncated,
edited or unreadable file. :func:`save_artifact` writes each file to a temporary name first and
renames it into place (``os.replace``), so an interrupted save never leaves a half-written file.

Helpers convert common objects to arrays and back: strings (a vocabulary), a torch
``state_dict``, a dict of curves, and any nested structure of those (:class:`TreeCodec`).
"""
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
_ZIP_LEVEL = 6                          # zlib's default level (a ZipInfo written with zf.open uses it)


class ArtifactError(RuntimeError):
    """An artefact is missing, unreadable, or not what its metadata says."""


class ChecksumError(ArtifactError):
    """An artefact's bytes do not match the sha256 recorded for them."""


@dataclass
class Artifact:
    """What :func:`load_artifact` returns: ``arrays`` {name: ndarray} (float16-stored arrays
    already cast back to their original dtype), the caller's ``meta`` (plain JSON: dicts, lists,
    str, int, float, bool, None), and the ``info`` of the JSON file (format, npz sha256 and size,
    the array listing)."""

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
    """``x`` as plain JSON values: NumPy scalars become int/float/bool, tuples become lists,
    small NumPy arrays become lists. Non-finite floats and other types are an error naming
    ``where`` (store them as arrays instead)."""
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
                raise TypeError(f"{where} has a key {k!r} of type {type(k).__name__}; JSON keys must be strings")
            out[k] = jsonable(v, f"{where}[{k!r}]")
        return out
    if isinstance(x, (list, tuple)):
        return [jsonable(v, f"{where}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, np.ndarray) and x.size <= 64:
        return jsonable(x.tolist(), where)
    raise TypeError(f"{where} is a {type(x).__name__}, which JSON metadata cannot hold; store it as an array")


# ---------------------------------------------------------------- writing
def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """The .npz file of ``arrays``: one ``<name>.npy`` member per array, sorted by name,
    deflate-compressed at zlib's level 6 (12 % smaller for the course's float16 weights, more for
    vocabularies: 4.9 MB less over data/models/), with a fixed timestamp."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=_ZIP_LEVEL) as zf:
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
    """(arrays as stored, listing for the JSON); float16: True (every floating array) or names."""
    if not isinstance(arrays, Mapping):
        raise TypeError(f"arrays must be a dict of name -> ndarray, got a {type(arrays).__name__}")
    names16 = set(arrays) if float16 is True else set(float16 or ())
    unknown = names16 - set(arrays)
    if unknown:
        raise ValueError(f"float16 names arrays that are not there: {sorted(unknown)}; arrays: {sorted(arrays)}")
    stored, listing = {}, {}
    for name, a in arrays.items():
        if not isinstance(name, str) or not name or name.startswith("/") or ".." in name.split("/"):
            raise ValueError(f"array names must be non-empty relative names, got {name!r}")
        if not isinstance(a, np.ndarray):
            raise TypeError(f"array {name!r} is a {type(a).__name__}, expected a NumPy array")
        if a.dtype.hasobject:
            raise TypeError(f"array {name!r} has dtype object, which cannot be stored without pickle; "
                            "store strings with strings_to_array()")
        entry = {"dtype": a.dtype.str, "shape": list(a.shape)}
        if name in names16 and float16 is not True and not np.issubdtype(a.dtype, np.floating):
            raise TypeError(f"array {name!r} has dtype {a.dtype}; only floating arrays can be stored as float16")
        if name in names16 and np.issubdtype(a.dtype, np.floating) and a.dtype != np.float16:
            if np.any(np.abs(a[np.isfinite(a)]) > np.finfo(np.float16).max):
                raise ValueError(f"array {name!r} has values outside float16's range (±65504)")
            a16 = a.astype(np.float16)
            entry["stored"] = np.dtype(np.float16).str
            a = a16
        stored[name], listing[name] = (a if a.flags.c_contiguous else a.copy(order="C")), entry
    return stored, listing


def save_artifact(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping | None = None,
                  float16: bool | Iterable[str] = ()) -> dict:
    """Write the artefact ``path`` (``path.npz`` + ``path.json``) atomically; return the JSON's dict.

    arrays : {name: ndarray} (numbers or fixed-width unicode; names may contain '/')
    meta   : JSON-able metadata (settings, metrics, seconds, versions ...; NumPy scalars and
             tuples are converted, see :func:`jsonable`)
    float16: names of floating arrays to store as float16 (or True: every floating array);
             they are cast back to their dtype on load. The caller decides, after checking
             that the numbers it prints do not change at their printed precision.
    """
    npz_path, json_path = artifact_paths(path)
    stored, listing = _check_arrays(arrays, float16)
    data = _npz_bytes(stored)
    info = {"format": FORMAT, "npz": {"file": npz_path.name, "sha256": sha256_bytes(data), "size": len(data)},
            "arrays": listing, "meta": jsonable(dict(meta or {}))}
    info["json_sha256"] = sha256_bytes(_canonical_json(info).encode("ascii"))
    npz_path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(npz_path, data)
    _write_atomically(json_path, _canonical_json(info).encode("ascii"))
    return info


# ---------------------------------------------------------------- reading
def _read_bytes(path: Path, what: str) -> bytes:
    """The bytes of an artefact's ``what`` ("metadata" or "array") file; ArtifactError if it is
    missing or cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ArtifactError(f"its {what} file {path} is missing") from None
    except OSError as e:
        raise ArtifactError(f"its {what} file {path} cannot be read ({e})") from None


def read_artifact_info(path: str | Path) -> dict:
    """The verified JSON of the artefact ``path``: parsed, its own checksum checked, and
    written exactly as :func:`save_artifact` writes it. Raises ArtifactError naming the file."""
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
        raise ChecksumError(f"its metadata file {json_path} failed its checksum (expected {claimed}, got {got})")
    info["json_sha256"] = claimed
    if _canonical_json(info) != text:
        raise ChecksumError(f"its metadata file {json_path} was modified (same values, different text)")
    if info.get("format") != FORMAT:
        raise ArtifactError(f"{json_path} has format {info.get('format')!r}, expected {FORMAT!r}")
    return info


def verify_artifact(path: str | Path) -> dict:
    """Check the artefact ``path``'s checksums (the JSON's own, then the .npz's) without reading
    its arrays; return the JSON's dict. Raises ArtifactError / ChecksumError as :func:`load_artifact`."""
    npz_path, _ = artifact_paths(path)
    info = read_artifact_info(path)
    h = hashlib.sha256()
    try:
        with open(npz_path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except FileNotFoundError:
        raise ArtifactError(f"its array file {npz_path} is missing") from None
    except OSError as e:
        raise ArtifactError(f"its array file {npz_path} cannot be read ({e})") from None
    if h.hexdigest() != info["npz"]["sha256"]:
        raise ChecksumError(f"{npz_path} failed its checksum (expected {info['npz']['sha256']}, got {h.hexdigest()})")
    return info


def load_artifact(path: str | Path) -> Artifact:
    """Read the artefact ``path`` after verifying it: the JSON's own checksum, then the sha256
    of the .npz bytes against the one in the JSON, then that the arrays are the ones listed.
    Arrays are read with ``allow_pickle=False``; float16-stored arrays come back in their
    original dtype. Raises ArtifactError (ChecksumError for a checksum) naming the file and,
    for a checksum, the expected and the actual value."""
    npz_path, _ = artifact_paths(path)
    info = read_artifact_info(path)
    data = _read_bytes(npz_path, "array")
    expected, got = info["npz"]["sha256"], sha256_bytes(data)
    if got != expected:
        raise ChecksumError(f"{npz_path} failed its checksum (expected {expected}, got {got})")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:  # checksum fine: a bug, not damage
        raise ArtifactError(f"{npz_path} matches its checksum but cannot be read ({e!r})") from None
    listing = info["arrays"]
    if set(arrays) != set(listing):
        raise ArtifactError(f"{npz_path} holds arrays {sorted(arrays)}, its metadata lists {sorted(listing)}")
    for name, entry in listing.items():
        a = arrays[name]
        if list(a.shape) != entry["shape"] or a.dtype.str != entry.get("stored", entry["dtype"]):
            raise ArtifactError(f"{npz_path}: array {name!r} is {a.dtype.str} {list(a.shape)}, its metadata says "
                                f"{entry.get('stored', entry['dtype'])} {entry['shape']}")
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


def state_dict_to_arrays(state_dict: Mapping[str, torch.Tensor], prefix: str = "") -> dict:
    """A torch ``state_dict`` as {prefix + key: ndarray} (CPU copies, dtypes kept)."""
    return {prefix + k: v.detach().cpu().numpy().copy() for k, v in state_dict.items()}


def arrays_to_state_dict(arrays: Mapping[str, np.ndarray], prefix: str = "") -> dict:
    """The {key: tensor} state_dict stored by :func:`state_dict_to_arrays` under ``prefix``."""
    out = {k[len(prefix):]: torch.from_numpy(np.array(v)) for k, v in arrays.items() if k.startswith(prefix)}
    if not out:
        raise KeyError(f"no arrays start with {prefix!r}; have {sorted(arrays)[:10]}")
    return out


def curves_to_arrays(curves: Mapping[str, Iterable[float]], prefix: str = "curve/") -> dict:
    """{name: list of floats} (loss or metric curves) as {prefix + name: float64 array}."""
    return {prefix + k: np.asarray(list(v), dtype=np.float64) for k, v in curves.items()}


def arrays_to_curves(arrays: Mapping[str, np.ndarray], prefix: str = "curve/") -> dict:
    """The {name: list of floats} stored by :func:`curves_to_arrays` under ``prefix``."""
    return {k[len(prefix):]: v.astype(np.float64).tolist() for k, v in arrays.items() if k.startswith(prefix)}


def timings_to_meta(timings: Mapping[str, np.ndarray]) -> dict:
    """Timing arrays (CPU or wall seconds) as nested lists for an artefact's *metadata* (NaN -> None).

    Times differ from run to run, so they stay out of the ``.npz``: its bytes (sha256) are what a
    rebuild must reproduce, the metadata's are not compared. Read back with :func:`timings_from_meta`."""
    return {"values": {name: [None if np.isnan(v) else float(v) for v in np.asarray(a, dtype=np.float64).reshape(-1)]
                       for name, a in timings.items()},
            "shapes": {name: list(np.shape(a)) for name, a in timings.items()}}


def timings_from_meta(meta_timings: Mapping) -> dict:
    """The arrays :func:`timings_to_meta` stored: {name: float64 array of its shape} (None -> NaN)."""
    values, shapes = meta_timings["values"], meta_timings["shapes"]
    return {name: np.array([np.nan if v is None else v for v in values[name]], dtype=np.float64).reshape(shape)
            for name, shape in shapes.items()}


def prefixed(arrays: Mapping[str, np.ndarray], prefix: str) -> dict:
    """{prefix + name: array}: to store a part's arrays beside others'."""
    return {prefix + k: v for k, v in arrays.items()}


def unprefixed(arrays: Mapping[str, np.ndarray], prefix: str) -> dict:
    """The arrays whose names start with ``prefix``, with the prefix removed."""
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}


class TreeCodec:
    """Any nested structure of dicts (str keys), lists, tuples, ints, floats, bools, str, None,
    NumPy arrays and scalars and torch tensors, as (arrays, meta) and back, exactly.

    Arrays and tensors go into the .npz under their path (``"state_dict/embed.weight"``),
    so does a list of 8 or more floats (or ints), as one float64 (int64) array; everything else
    stays in the JSON. Tuples, tensors and NumPy scalars are tagged (``{"$tuple": [...]}``), so
    they come back as what they were. Used as ``codec=TreeCodec`` by
    :func:`helpers.infra.cache.cached`; a class with ``to_arrays()`` and ``from_arrays()`` can
    be a codec too."""

    TAGS = ("$array", "$tensor", "$scalar", "$floats", "$ints", "$tuple", "$float")

    @staticmethod
    def to_arrays(value) -> tuple[dict, dict]:
        """(arrays, meta) for ``value``; meta = {"tree": the JSON skeleton}."""
        arrays: dict = {}
        return arrays, {"tree": TreeCodec._encode(value, "value", arrays)}

    @staticmethod
    def from_arrays(arrays: Mapping[str, np.ndarray], meta: dict):
        """The value stored by :meth:`to_arrays`."""
        return TreeCodec._decode(meta["tree"], arrays)

    @staticmethod
    def _encode(x, path: str, arrays: dict):
        def put(a):
            if path in arrays:
                raise ValueError(f"two values would be stored under the name {path!r}")
            arrays[path] = a
            return path
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, int):
            return x
        if isinstance(x, float):
            return x if math.isfinite(x) else {"$float": repr(x)}
        if isinstance(x, np.ndarray):
            return {"$array": put(x)}
        if isinstance(x, torch.Tensor):
            return {"$tensor": put(x.detach().cpu().numpy().copy())}
        if isinstance(x, np.generic):
            return {"$scalar": put(np.asarray(x))}
        if isinstance(x, Mapping):
            out = {}
            for k, v in x.items():
                if not isinstance(k, str) or k.startswith("$"):
                    raise TypeError(f"cannot store {path}: keys must be strings not starting with '$', got {k!r}")
                out[k] = TreeCodec._encode(v, f"{path}/{k}", arrays)
            return out
        if isinstance(x, (list, tuple)):
            if len(x) >= 8 and all(type(v) is float for v in x):
                node = {"$floats": put(np.array(x, dtype=np.float64))}
            elif len(x) >= 8 and all(type(v) is int for v in x) and all(-2**63 <= v < 2**63 for v in x):
                node = {"$ints": put(np.array(x, dtype=np.int64))}
            else:
                node = [TreeCodec._encode(v, f"{path}/{i}", arrays) for i, v in enumerate(x)]
            if isinstance(x, tuple):
                return {"$tuple": node}
            return node
        raise TypeError(f"cannot store {path}: a {type(x).__module__}.{type(x).__qualname__} is not a plain "
                        "value; convert it to arrays (give the cache a codec with to_arrays/from_arrays)")

    @staticmethod
    def _decode(node, arrays: Mapping[str, np.ndarray]):
        if isinstance(node, list):
            return [TreeCodec._decode(v, arrays) for v in node]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            (tag, v), = node.items()
            if tag == "$array":
                return np.array(arrays[v])
            if tag == "$tensor":
                return torch.from_numpy(np.array(arrays[v]))
            if tag == "$scalar":
                return arrays[v][()]
            if tag in ("$floats", "$ints"):
                return arrays[v].tolist()
            if tag == "$tuple":
                return tuple(TreeCodec._decode(v, arrays))
            if tag == "$float":
                return float(v)
        return {k: TreeCodec._decode(v, arrays) for k, v in node.items()}
