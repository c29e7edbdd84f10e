"""The course's shipped models: read ``data/models/`` and check each file against
``manifest.json`` before loading it (:class:`ModelFileError` names the command that rebuilds it)."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

from helpers.course.data import DATA_DIR
from helpers.infra.artifacts import ArtifactError, load_artifact
from helpers.infra.checksums import DataError, line_endings_fix, sha256_of

MANIFEST_FORMAT = "nlp-course-models/1"

_VECTORS = "helpers.course.shipped_vectors:load_vectors_artifact"
# name: "module:function" turning the checked artefact into what a lesson uses (imported on use)
LOADERS = {
    "ffnn_lm": "helpers.course.ffnn_lm:load_ffnn_lm",
    "rnn_lm": "helpers.course.word_lms:load_word_lm",
    "gru_lm": "helpers.course.word_lms:load_word_lm",
    "lstm_lm": "helpers.course.word_lms:load_word_lm",
    "char_transformer": "helpers.course.char_lms:load_char_lm",
    "char_lstm": "helpers.course.char_lms:load_char_lm",
    "char_lstm_matched": "helpers.course.char_lms:load_char_lm",
    "wv_numpy_skipgram": _VECTORS,
    "wv_torch_skipgram": _VECTORS,
    "wv_gensim_skipgram": _VECTORS,
    "wv_gensim_cbow": _VECTORS,
    "wv_gensim_fasttext": _VECTORS,
    "wv_glove": _VECTORS,
    "wv_scaling_grid": "helpers.course.vector_studies:load_grid_artifact",
    "wv_tricks": "helpers.course.vector_studies:load_tricks",
    "wv_count_records": "helpers.course.vector_studies:load_count_records",
    "mlm_bert": "helpers.course.mlm_model:load_mlm_bert",
    "bert_finetune": "helpers.course.bert_finetune:load_finetune_results",
    "wv_pretrain_skipgram": "helpers.course.contextual_studies:load_pretrain_static",
    "gpt_contrast": "helpers.course.contextual_studies:load_gpt_contrast",
    "bert_nsp": "helpers.course.contextual_studies:load_nsp_study",
}


class ModelFileError(DataError):
    """A shipped model file is missing, modified or unreadable (the message says how to fix it)."""


def model_dir() -> Path:
    """``data/models`` of this checkout (``$NLP_COURSE_DATA/models`` when that is set)."""
    return DATA_DIR / "models"


def check_name(name: str) -> str:
    """``name`` if the course ships a model of that name; else a KeyError listing the known ones."""
    if name not in LOADERS:
        raise KeyError(f"no shipped model named {name!r}; the course has {sorted(LOADERS)}")
    return name


def loader(name: str):
    """The function that turns model ``name``'s artefact into the object a lesson uses."""
    module, function = LOADERS[check_name(name)].split(":")
    return getattr(importlib.import_module(module), function)


MANIFEST_FIX = ("Restore the committed one with `git checkout -- data/models/manifest.json` (and "
                "`git checkout -- data/models/` for the model files it describes)")


def rebuild_hint(name: str) -> str:
    """How to rebuild or restore the files of model ``name``."""
    return (f"Rebuild it with `make models NAME={name}` (or `python -m training {name}`), "
            "or restore the committed file with "
            f"`git checkout -- data/models/{name}.npz data/models/{name}.json`")


# ---------------------------------------------------------------- the manifest
def read_manifest(root: Path | None = None) -> dict:
    """The manifest of ``root`` (default :func:`model_dir`): {'format', 'models': {name: ...}}."""
    path = Path(root or model_dir()) / "manifest.json"
    if not path.exists():
        return {"format": MANIFEST_FORMAT, "models": {}}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelFileError(f"{path} is not valid JSON ({e}): it has been damaged or edited "
                             f"by hand. {MANIFEST_FIX}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("models"), dict):
        raise ModelFileError(f"{path} is not a models manifest (a JSON object with 'format' and "
                             f"'models'). {MANIFEST_FIX}")
    if manifest.get("format") != MANIFEST_FORMAT:
        raise ModelFileError(f"{path} has format {manifest.get('format')!r}, "
                             f"expected {MANIFEST_FORMAT!r}")
    return manifest


# ---------------------------------------------------------------- loading
def verify_model_file(name: str, root: Path | None = None) -> Path:
    """The path of ``data/models/<name>.npz``, checked against the manifest."""
    check_name(name)
    root = Path(root or model_dir())
    manifest = root / "manifest.json"
    if not manifest.is_file():
        raise ModelFileError(f"{manifest} is missing: it lists the shipped models and their "
                             f"checksums, so {name!r} cannot be checked. {MANIFEST_FIX}; or train "
                             f"the model with `make models NAME={name}`")
    record = read_manifest(root)["models"].get(name)
    if record is None:
        raise ModelFileError(f"model {name!r} is not in {manifest} (it has not been trained yet). "
                             f"Train it with `make models NAME={name}` "
                             f"(or `python -m training {name}`)")
    path, expected = root / record["file"], record["sha256"]
    if not path.is_file():
        raise ModelFileError(f"model file {path} is missing (expected sha256 {expected}). "
                             f"{rebuild_hint(name)}")
    got = sha256_of(path)
    if got != expected:
        raise ModelFileError(f"model file {path} is corrupt or has been modified: expected sha256 "
                             f"{expected} (manifest.json), got {got}. {rebuild_hint(name)}")
    return path


def load_model(name: str, root: Path | None = None):
    """The shipped model ``name`` as its loader returns it, checked first by verify_model_file."""
    path = verify_model_file(name, root)
    try:
        artifact = load_artifact(path)
    except ArtifactError as e:
        meta = path.with_suffix(".json")
        if meta.is_file() and b"\r\n" in meta.read_bytes():     # a Windows checkout converted it
            fix = line_endings_fix(f"data/models/{meta.name}")
            raise ModelFileError(f"model {name!r}: {e}: {meta.name} has Windows line endings "
                                 f"(CRLF). {fix}") from None
        raise ModelFileError(f"model {name!r}: {e}. {rebuild_hint(name)}") from None
    return loader(name)(artifact)


def model_info(name: str, root: Path | None = None) -> dict:
    """The manifest's record of ``name`` (settings, metrics, training time, versions, command)."""
    check_name(name)
    record = read_manifest(root)["models"].get(name)
    if record is None:
        raise ModelFileError(f"model {name!r} is not in the manifest; "
                             f"train it with `make models NAME={name}`")
    return record
