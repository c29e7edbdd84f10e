"""The course's shipped models: read ``data/models/`` and check each file before loading it.

Each trained model ships as an artefact (:mod:`helpers.infra.artifacts`): ``data/models/<name>.npz``
(the arrays) and ``<name>.json`` (settings, metrics, versions). ``data/models/manifest.json`` lists
every model with the sha256 of its .npz. :func:`load_model` checks the file against the manifest
first; a missing or modified file raises :class:`ModelFileError` naming the command that rebuilds
it. Training lives outside the package, in ``training/`` (``make models``).
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path

from helpers.course.data import DATA_DIR
from helpers.infra.artifacts import ArtifactError, load_artifact
from helpers.infra.checksums import DataError, line_endings_fix, sha256_of

MANIFEST_FORMAT = "nlp-course-models/1"

_VECTORS = "helpers.course.word_vectors:load_vectors_artifact"
# name: "module:function" that turns the checked artefact into what a lesson uses. Imported only
# when that model is loaded, so loading one model does not import the others' code.
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
    "wv_scaling_grid": "helpers.course.scaling_grid:load_grid_artifact",
    "wv_tricks": "helpers.course.study_records:load_tricks",
    "wv_count_records": "helpers.course.study_records:load_count_records",
    "mlm_bert": "helpers.course.mlm_model:load_mlm_bert",
    "bert_finetune": "helpers.course.bert_finetune:load_finetune_results",
    "wv_pretrain_skipgram": "helpers.course.contextual_studies:load_pretrain_static",
    "gpt_contrast": "helpers.course.contextual_studies:load_gpt_contrast",
    "bert_nsp": "helpers.course.contextual_studies:load_nsp_study",
}


class ModelFileError(DataError):
    """A shipped model file is missing, modified or unreadable; the message names the rebuild command."""


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
    return (f"Rebuild it with `make models NAME={name}` (or `python -m training {name}`), "
            f"or restore the committed file with `git checkout -- data/models/{name}.npz data/models/{name}.json`")


# ---------------------------------------------------------------- the manifest
def read_manifest(root: Path | None = None) -> dict:
    """The manifest of ``root`` (default :func:`model_dir`): {'format', 'models': {name: record}}."""
    path = Path(root or model_dir()) / "manifest.json"
    if not path.exists():
        return {"format": MANIFEST_FORMAT, "models": {}}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelFileError(f"{path} is not valid JSON ({e}): it has been damaged or edited by hand. {MANIFEST_FIX}") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("models"), dict):
        raise ModelFileError(f"{path} is not a models manifest (a JSON object with 'format' and 'models'). {MANIFEST_FIX}")
    if manifest.get("format") != MANIFEST_FORMAT:
        raise ModelFileError(f"{path} has format {manifest.get('format')!r}, expected {MANIFEST_FORMAT!r}")
    return manifest


# ---------------------------------------------------------------- loading
def verify_model_file(name: str, root: Path | None = None) -> Path:
    """Check ``data/models/<name>.npz`` against the manifest; return its path.

    Raises ModelFileError naming the file, the expected and the actual sha256 and the command
    that rebuilds it, when the model is not in the manifest or its file is missing or modified."""
    check_name(name)
    root = Path(root or model_dir())
    if not (root / "manifest.json").is_file():
        raise ModelFileError(f"{root / 'manifest.json'} is missing: it lists the shipped models and their checksums, "
                             f"so {name!r} cannot be checked. {MANIFEST_FIX}; or train the model with "
                             f"`make models NAME={name}`")
    record = read_manifest(root)["models"].get(name)
    if record is None:
        raise ModelFileError(f"model {name!r} is not in {root / 'manifest.json'} (it has not been trained yet). "
                             f"Train it with `make models NAME={name}` (or `python -m training {name}`)")
    path = root / record["file"]
    if not path.is_file():
        raise ModelFileError(f"model file {path} is missing (expected sha256 {record['sha256']}). {rebuild_hint(name)}")
    got = sha256_of(path)
    if got != record["sha256"]:
        raise ModelFileError(f"model file {path} is corrupt or has been modified: expected sha256 {record['sha256']} "
                             f"(manifest.json), got {got}. {rebuild_hint(name)}")
    return path


def load_model(name: str, root: Path | None = None):
    """The shipped model ``name``, checked against the manifest, as its loader returns
    it (e.g. :class:`helpers.course.ffnn_lm.ShippedFFNNLM`). See :func:`verify_model_file` for the errors."""
    path = verify_model_file(name, root)
    try:
        artifact = load_artifact(path)
    except ArtifactError as e:
        meta = path.with_suffix(".json")
        if meta.is_file() and b"\r\n" in meta.read_bytes():          # a Windows checkout converted it
            raise ModelFileError(f"model {name!r}: {e}: {meta.name} has Windows line endings (CRLF). "
                                 f"{line_endings_fix(f'data/models/{meta.name}')}") from None
        raise ModelFileError(f"model {name!r}: {e}. {rebuild_hint(name)}") from None
    return loader(name)(artifact)


def model_info(name: str, root: Path | None = None) -> dict:
    """The manifest's record of ``name``: settings, metrics, subset metric, training time,
    library versions, commit, command."""
    check_name(name)
    record = read_manifest(root)["models"].get(name)
    if record is None:
        raise ModelFileError(f"model {name!r} is not in the manifest; train it with `make models NAME={name}`")
    return record
