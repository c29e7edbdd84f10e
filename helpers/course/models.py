"""The course's shipped models: a registry, the manifest of ``data/models/``, and loading with a check.

Each trained model ships as an artefact (:mod:`helpers.infra.artifacts`): ``data/models/<name>.npz``
(the arrays) and ``<name>.json`` (settings, metrics, versions). ``data/models/manifest.json`` lists
every model with the sha256 of its .npz, its size, settings, training time, final metrics and
the *subset metric* (a held-out number recomputed from the stored file at training time, which
``tests/test_models.py`` recomputes); ``data/models/README.md`` is generated from it
(:func:`render_readme`), never edited by hand. ``logs/<name>.jsonl.gz`` holds each training log.

:func:`load_model` checks the file against the manifest before reading it; a missing or modified
file raises :class:`ModelFileError` naming the file, both checksums and the command that
rebuilds it. ``make models`` (all) or ``make models NAME=<name>`` trains
(:mod:`helpers.course.train`).

**Adding a model** takes one entry in :data:`MODELS`: a name, what it is, the lesson, its
settings, and four functions — ``train(settings, log, max_steps=None, progress=True) -> (arrays,
meta, metrics)``, ``load(artifact) -> the object a lesson uses``, ``subset_metric(loaded) ->
(name, value)`` — see :mod:`helpers.course.ffnn_lm` for a complete one.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from helpers.course import (
    bert_finetune,
    causal_lm,
    char_lms,
    count_records,
    ffnn_lm,
    mlm_model,
    nsp_study,
    scaling_grid,
    static_pretrain,
    word2vec_tricks,
    word_lms,
    word_vector_models,
)
from helpers.course.data import DATA_DIR
from helpers.infra.artifacts import ArtifactError, load_artifact
from helpers.infra.checksums import DataError, line_endings_fix, sha256_of
from helpers.infra.runlog import replays_exactly

MANIFEST_FORMAT = "nlp-course-models/1"
SIZE_LIMIT_BYTES = 40_000_000     # all shipped .npz files together (issue 14)


@dataclass(frozen=True)
class ModelEntry:
    """One shipped model: how to train it, load it and check it.

    name          : file stem, ``data/models/<name>.npz``, and the ``make models NAME=`` value
    what          : one line for the README (what it is, which lesson uses it)
    lesson        : the lesson that loads it, e.g. "01"
    settings      : every hyperparameter (stored with the model and in its log)
    train         : ``train(settings, log, max_steps=None, progress=True) -> (arrays, meta, metrics)``
    load          : ``load(artifact) -> model object``
    subset_metric : ``subset_metric(loaded) -> (name, value)``, a held-out metric on a fixed subset
    deterministic : same settings, same library versions -> the same bytes (False for e.g.
                    gensim with several workers: then metrics are compared, not bytes)
    threads       : torch/BLAS threads it trains with (recorded in the log)
    float16       : names of arrays stored as float16 (checked to leave the printed numbers unchanged)
    replay_steps  : how many first steps the tests replay from scratch (12; fewer where a step
                    is a whole epoch, as for the word vectors)
    any_processor : its bytes do not depend on the kind of processor (measured for gensim: the same
                    sha256 from an AMD EPYC and an Intel Xeon), so a replay must be exact on any
                    processor with the recorded library versions
    """

    name: str
    what: str
    lesson: str
    settings: dict
    train: Callable
    load: Callable
    subset_metric: Callable
    deterministic: bool = True
    threads: int = 1
    float16: tuple = field(default_factory=tuple)
    replay_steps: int = 12
    any_processor: bool = False

    @property
    def command(self) -> str:
        """The command that rebuilds this model."""
        return f"make models NAME={self.name}"


MODELS: dict[str, ModelEntry] = {e.name: e for e in [
    ModelEntry("ffnn_lm", "Bengio-style feed-forward language model (4-token window, dropout) on Wikipedia, lesson 01",
               "01", ffnn_lm.SETTINGS, ffnn_lm.train_ffnn_lm, ffnn_lm.load_ffnn_lm, ffnn_lm.ffnn_subset_metric),
    *(ModelEntry(f"{kind}_lm", f"word-level {name} language model on the modern-English corpus, lessons 02-03",
                 "02", word_lms.SETTINGS[kind], word_lms.train_word_lm, word_lms.load_word_lm,
                 word_lms.word_lm_subset_metric, float16=word_lms.FLOAT16)
      for kind, name in (("rnn", "simple (tanh) RNN"), ("gru", "GRU"), ("lstm", "LSTM"))),
    *word_vector_models.model_entries(ModelEntry),
    *(ModelEntry(name, f"character-level {what} on Shakespeare (train 40 works, validation Othello, test Hamlet), lesson 04",
                 "04", char_lms.SETTINGS[name], char_lms.train_char_lm, char_lms.load_char_lm,
                 char_lms.char_lm_subset_metric, float16=char_lms.float16_names(name), replay_steps=steps)
      for name, what, steps in (("char_transformer", "decoder-only Transformer", 10),
                                ("char_lstm", "LSTM, same budget", 10),
                                ("char_lstm_matched", "LSTM with the Transformer's parameter count, same budget", 10))),
    ModelEntry("wv_scaling_grid", "scores (no vectors) of gensim CBOW on 1/8-1 of the corpus x 10-200 dims, "
               "3 seeds, with the equal-updates control, lesson 09", "09", scaling_grid.SHIPPED,
               scaling_grid.train_grid_results, scaling_grid.load_grid_artifact, scaling_grid.grid_subset_metric,
               replay_steps=2),
    ModelEntry("wv_tricks", "scores (no vectors) of gensim skip-gram with and without subsampling and the dynamic "
               "window, one factor at a time, 3 seeds, quality after every epoch, lesson 07", "07",
               word2vec_tricks.SETTINGS, word2vec_tricks.train_tricks, word2vec_tricks.load_tricks,
               word2vec_tricks.tricks_subset_metric, replay_steps=2),
    ModelEntry("wv_count_records", "records (no vectors) of LSA and PPMI-SVD at their validated settings: report-half "
               "scores with intervals, queen's rank, BBC topic accuracy, lesson 09", "09", count_records.SETTINGS,
               count_records.train_count_records, count_records.load_count_records, count_records.count_subset_metric,
               replay_steps=1),
    ModelEntry("mlm_bert", "small BERT (2 layers, 128 wide, tied embeddings, 4,000 BPE pieces) pre-trained by masked "
               "language modelling on the modern-English corpus, lesson 10", "10", mlm_model.SETTINGS,
               mlm_model.train_mlm_bert, mlm_model.load_mlm_bert, mlm_model.mlm_subset_metric,
               float16=mlm_model.FLOAT16),
    ModelEntry("bert_finetune", "scores (no weights) of the small BERT fine-tuned on BBC News topics vs its frozen "
               "features vs static skip-gram vectors, 25-1,500 training articles x 3 seeds, lesson 10", "10",
               bert_finetune.SETTINGS, lambda settings, log, **kw: bert_finetune.train_finetune_results(
                   settings, log, load=load_model, **kw),     # it reads mlm_bert and the skip-gram vectors
               bert_finetune.load_finetune_results,
               lambda results: bert_finetune.finetune_subset_metric(results, load_model("mlm_bert")), replay_steps=10),
    ModelEntry("wv_pretrain_skipgram", "gensim skip-gram trained on the masked-LM pre-training documents only (lesson "
               "07's settings), shipped as what lesson 10 reads: the vectors of the labelled sentences' words and "
               "the BBC articles' static features", "10", static_pretrain.SETTINGS, static_pretrain.train_pretrain_static,
               static_pretrain.load_pretrain_static, static_pretrain.static_subset_metric,
               float16=static_pretrain.FLOAT16, replay_steps=1, any_processor=True),
    ModelEntry("gpt_contrast", "scores (no weights) of a causal (GPT-style) LM with the small BERT's blocks, data and "
               "tokeniser at the same CPU time: next-piece NLL, blanks filled from the left, word senses, "
               "samples, lesson 10", "10", causal_lm.SETTINGS,
               lambda settings, log, **kw: causal_lm.train_gpt_contrast(settings, log, load=load_model, **kw),
               causal_lm.load_gpt_contrast, causal_lm.gpt_subset_metric, replay_steps=10),
    ModelEntry("bert_nsp", "scores (no weights) of two small BERTs pre-trained on the same sentence pairs, with and "
               "without the next-sentence-prediction loss: masked-token accuracy, word senses, topics, NSP, lesson 10",
               "10", nsp_study.SETTINGS,
               lambda settings, log, **kw: nsp_study.train_nsp_study(settings, log, load=load_model, **kw),
               nsp_study.load_nsp_study, nsp_study.nsp_subset_metric, replay_steps=10),
]}


class ModelFileError(DataError):
    """A shipped model file is missing, modified or unreadable; the message names the rebuild command."""


def model_dir() -> Path:
    """``data/models`` of this checkout (``$NLP_COURSE_DATA/models`` when that is set)."""
    return DATA_DIR / "models"


def entry(name: str) -> ModelEntry:
    """The registry entry ``name``; an unknown name is an error listing the known ones."""
    if name not in MODELS:
        raise KeyError(f"no shipped model named {name!r}; the course has {sorted(MODELS)}")
    return MODELS[name]


MANIFEST_FIX = ("Restore the committed one with `git checkout -- data/models/manifest.json` (and "
                "`git checkout -- data/models/` for the model files it describes)")


def rebuild_hint(name: str) -> str:
    return (f"Rebuild it with `make models NAME={name}` (or `python -m helpers.course.train {name}`), "
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


def write_manifest(manifest: dict, root: Path | None = None) -> Path:
    """Write ``manifest.json`` (sorted keys; replaced atomically) and regenerate ``README.md``."""
    root = Path(root or model_dir())
    root.mkdir(parents=True, exist_ok=True)
    for name, text in (("manifest.json", json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n"),
                       ("README.md", render_readme(manifest))):
        tmp = root / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, root / name)
    return root / "manifest.json"


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):     # keys sorted: the same text before and after the manifest's JSON round trip
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def render_readme(manifest: dict) -> str:
    """``data/models/README.md``: the table of shipped models, generated from the manifest."""
    models = manifest["models"]
    total = sum(r["size"] for r in models.values())
    lines = [
        "# Trained models shipped with the course",
        "",
        "<!-- Generated by `python -m helpers.course.train` from manifest.json: do not edit by hand. -->",
        "",
        "Each model is a `.npz` of named arrays (read with `allow_pickle=False`) and a `.json` beside it "
        "(settings, metrics, library versions, the checksums). The lessons load them with "
        "`helpers.course.models.load_model(name)`, which checks the sha256 below first. "
        "`make models` retrains all of them (one training per CPU core, one thread each), "
        "`make models NAME=<name>` one; the training log of each is in `logs/<name>.jsonl.gz` "
        "(settings, the loss of every step, each validation and early-stopping decision, times, "
        "library versions, processor, git commit). Trainers marked deterministic rebuild the same bytes "
        "with the same library versions on the same kind of processor (the manifest's `cpu`): NumPy's and "
        "PyTorch's kernels choose their SIMD and BLAS code by processor, and another choice rounds sums "
        "differently (PyTorch does not promise reproducibility across platforms: "
        "<https://docs.pytorch.org/docs/2.13/notes/randomness.html>). On another processor a rebuild "
        "gives the same training to rounding, not the same bytes; `tests/test_models.py` then compares "
        "the first steps' losses to rounding instead of exactly (gensim's models excepted: they gave the "
        "same bytes on an AMD EPYC and an Intel Xeon, and are compared exactly on any processor). So that "
        "one `make models` rebuilds every file, all of them come from one kind of processor (the `cpu` of "
        "each row's record); the word2vec models (NumPy, PyTorch, gensim) and the count-based records also "
        "gave the same bytes on an AMD EPYC, GloVe and the PyTorch language models do not.",
        "",
        f"In all: {len(models)} model{'s' if len(models) != 1 else ''}, {total:,} bytes "
        f"(limit {SIZE_LIMIT_BYTES:,}).",
        "",
        "| file | what | size (bytes) | sha256 | settings | training | final metrics | command |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in sorted(models):
        r = models[name]
        settings = ", ".join(f"`{k}={_cell(v)}`" for k, v in sorted(r["settings"].items()))
        metrics = ", ".join(f"`{k}={_cell(v)}`" for k, v in sorted(r["metrics"].items()))
        sub = r["subset_metric"]
        training = (f"{r['train_seconds']:.0f} s wall, {r['cpu_seconds']:.0f} s CPU, {r['threads']} thread"
                    f"{'s' if r['threads'] != 1 else ''}; {'deterministic' if r['deterministic'] else 'not deterministic'}")
        lines.append(f"| `{r['file']}` | {r['what']} | {r['size']:,} | `{r['sha256']}` | {settings} | {training} | "
                     f"{metrics}; subset: `{sub['name']}={_cell(sub['value'])}` | `{r['command']}` |")
    lines += ["", "Versions and commit of each training run are in the `.json` files and the logs.", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- loading
def verify_model_file(name: str, root: Path | None = None) -> Path:
    """Check ``data/models/<name>.npz`` against the manifest; return its path.

    Raises ModelFileError naming the file, the expected and the actual sha256 and the command
    that rebuilds it, when the model is not in the manifest or its file is missing or modified."""
    entry(name)
    root = Path(root or model_dir())
    if not (root / "manifest.json").is_file():
        raise ModelFileError(f"{root / 'manifest.json'} is missing: it lists the shipped models and their checksums, "
                             f"so {name!r} cannot be checked. {MANIFEST_FIX}; or train the model with "
                             f"`make models NAME={name}`")
    record = read_manifest(root)["models"].get(name)
    if record is None:
        raise ModelFileError(f"model {name!r} is not in {root / 'manifest.json'} (it has not been trained yet). "
                             f"Train it with `make models NAME={name}` (or `python -m helpers.course.train {name}`)")
    path = root / record["file"]
    if not path.is_file():
        raise ModelFileError(f"model file {path} is missing (expected sha256 {record['sha256']}). {rebuild_hint(name)}")
    got = sha256_of(path)
    if got != record["sha256"]:
        raise ModelFileError(f"model file {path} is corrupt or has been modified: expected sha256 {record['sha256']} "
                             f"(manifest.json), got {got}. {rebuild_hint(name)}")
    return path


def load_model(name: str, root: Path | None = None):
    """The shipped model ``name``, checked against the manifest, as its entry's ``load`` returns
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
    return entry(name).load(artifact)


def replays_exactly_here(name: str, root: Path | None = None) -> bool:
    """Whether retraining ``name`` here should reproduce its training log bit for bit: a
    deterministic trainer, the recorded library versions and the recorded kind of processor
    (:func:`helpers.infra.runlog.replays_exactly`; any processor for an entry marked
    ``any_processor``). Otherwise a replay agrees to rounding only."""
    record = model_info(name, root)
    cpu = {} if entry(name).any_processor else record.get("cpu")      # {}: no processor to match
    return bool(record["deterministic"]) and replays_exactly(record["versions"], cpu)


def model_info(name: str, root: Path | None = None) -> dict:
    """The manifest's record of ``name``: settings, metrics, subset metric, training time,
    library versions, commit, command."""
    entry(name)
    record = read_manifest(root)["models"].get(name)
    if record is None:
        raise ModelFileError(f"model {name!r} is not in the manifest; train it with `make models NAME={name}`")
    return record
