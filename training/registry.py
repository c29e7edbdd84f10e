"""The registry of the course's shipped models: how to train, load and check each one.

**Adding a model** takes one entry in :data:`MODELS` (a name, what it is, the lesson, its settings,
``train(settings, log, max_steps=None, progress=True) -> (arrays, meta, metrics)`` and
``subset_metric(loaded) -> (name, value)``) and its loader in :data:`helpers.course.models.LOADERS`.
``python -m training`` trains them (``make models``)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from helpers.course.models import LOADERS, load_model, model_dir, model_info
from training import (
    bert_finetune,
    bert_nsp,
    char_lms,
    count_records,
    ffnn_lm,
    gpt_contrast,
    mlm_bert,
    pretrain_skipgram,
    scaling_grid,
    word2vec_tricks,
    word_lms,
    word_vector_models,
)
from training.runlog import replays_exactly

SIZE_LIMIT_BYTES = 40_000_000     # all shipped .npz files together


@dataclass(frozen=True)
class ModelEntry:
    """One shipped model: how to train it, load it and check it.

    name          : file stem, ``data/models/<name>.npz``, and the ``make models NAME=`` value what
    : one line for the README (what it is, which lesson uses it) lesson        : the lesson that
    loads it, e.g. "01" settings      : every hyperparameter (stored with the model and in its log)
    train         : ``train(settings, log, max_steps=None, progress=True) -> (arrays, meta,
    metrics)`` subset_metric : ``subset_metric(loaded) -> (name, value)``, ``loaded`` as
                    :func:`helpers.course.models.load_model` returns it, a held-out metric on a
                    fixed subset
    deterministic : same settings, same library versions -> the same bytes (False for e.g.
                    gensim with several workers: then metrics are compared, not bytes)
    threads       : torch/BLAS threads it trains with (recorded in the log) float16       : names of
    arrays stored as float16 (checked to leave the printed numbers unchanged) replay_steps  : how
    many first steps the tests replay from scratch (12; fewer where a step
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


CHAR_LMS = (("char_transformer", "decoder-only Transformer"),
            ("char_lstm", "LSTM, same budget"),
            ("char_lstm_matched", "LSTM with the Transformer's parameter count, same budget"))


def _reading_shipped(module):
    """``module.train`` given the loader of the shipped models it starts from."""
    return lambda settings, log, **kw: module.train(settings, log, load=load_model, **kw)


MODELS: dict[str, ModelEntry] = {
    e.name: e
    for e in [
        ModelEntry(
            "ffnn_lm",
            "Bengio-style feed-forward language model (4-token window, dropout) on "
            "Wikipedia, lesson 01",
            "01",
            ffnn_lm.SETTINGS,
            ffnn_lm.train,
            ffnn_lm.subset_metric,
        ),
        *(
            ModelEntry(
                f"{kind}_lm",
                f"word-level {name} language model on the modern-English corpus, lessons 02-03",
                "02",
                word_lms.SETTINGS[kind],
                word_lms.train,
                word_lms.subset_metric,
                float16=word_lms.FLOAT16,
            )
            for kind, name in (("rnn", "simple (tanh) RNN"), ("gru", "GRU"), ("lstm", "LSTM"))
        ),
        *word_vector_models.model_entries(ModelEntry),
        *(
            ModelEntry(
                name,
                f"character-level {what} on Shakespeare (train 40 works, validation Othello, test "
                "Hamlet), lesson 04",
                "04",
                char_lms.SETTINGS[name],
                char_lms.train,
                char_lms.subset_metric,
                float16=char_lms.float16_names(name),
                replay_steps=10,
            )
            for name, what in CHAR_LMS
        ),
        ModelEntry(
            "wv_scaling_grid",
            "scores (no vectors) of gensim CBOW on 1/8-1 of the corpus x 10-200 "
            "dims, 3 seeds, with the equal-updates control, lesson 09",
            "09",
            scaling_grid.SHIPPED,
            scaling_grid.train_grid_results,
            scaling_grid.grid_subset_metric,
            replay_steps=2,
        ),
        ModelEntry(
            "wv_tricks",
            "scores (no vectors) of gensim skip-gram with and without subsampling and the "
            "dynamic window, one factor at a time, 3 seeds, quality after every epoch, lesson 07",
            "07",
            word2vec_tricks.SETTINGS,
            word2vec_tricks.train_tricks,
            word2vec_tricks.tricks_subset_metric,
            replay_steps=2,
        ),
        ModelEntry(
            "wv_count_records",
            "records (no vectors) of LSA and PPMI-SVD at their validated settings: report-half "
            "scores with intervals, queen's rank, BBC topic accuracy, lesson 09",
            "09",
            count_records.SETTINGS,
            count_records.train_count_records,
            count_records.count_subset_metric,
            replay_steps=1,
        ),
        ModelEntry(
            "mlm_bert",
            "small BERT (2 layers, 128 wide, tied embeddings, 4,000 BPE pieces) "
            "pre-trained by masked language modelling on the modern-English corpus, lesson 10",
            "10",
            mlm_bert.SETTINGS,
            mlm_bert.train,
            mlm_bert.subset_metric,
            float16=mlm_bert.float16_names(),
        ),
        ModelEntry(
            "bert_finetune",
            "scores (no weights) of the small BERT fine-tuned on BBC News topics vs its frozen "
            "features vs static skip-gram vectors, 25-1,500 training articles x 3 seeds, lesson "
            "10",
            "10",
            bert_finetune.SETTINGS,
            _reading_shipped(bert_finetune),  # it reads mlm_bert and the skip-gram vectors
            lambda results: bert_finetune.subset_metric(results, load_model("mlm_bert")),
            replay_steps=10,
        ),
        ModelEntry(
            "wv_pretrain_skipgram",
            "gensim skip-gram trained on the masked-LM pre-training documents "
            "only (lesson 07's settings), shipped as what lesson 10 reads: the vectors of the "
            "labelled sentences' words and the BBC articles' static features",
            "10",
            pretrain_skipgram.SETTINGS,
            pretrain_skipgram.train,
            pretrain_skipgram.subset_metric,
            float16=pretrain_skipgram.FLOAT16,
            replay_steps=1,
            any_processor=True,
        ),
        ModelEntry(
            "gpt_contrast",
            "scores (no weights) of a causal (GPT-style) LM with the small BERT's blocks, data and "
            "tokeniser at the same CPU time: next-piece NLL, blanks filled from the left, word "
            "senses, samples, lesson 10",
            "10",
            gpt_contrast.SETTINGS,
            _reading_shipped(gpt_contrast),
            gpt_contrast.subset_metric,
            replay_steps=10,
        ),
        ModelEntry(
            "bert_nsp",
            "scores (no weights) of two small BERTs pre-trained on the same sentence pairs, with "
            "and without the next-sentence-prediction loss: masked-token accuracy, word senses, "
            "topics, NSP, lesson 10",
            "10",
            bert_nsp.SETTINGS,
            _reading_shipped(bert_nsp),
            bert_nsp.subset_metric,
            replay_steps=10,
        ),
    ]
}




def write_manifest(manifest: dict, root: Path | None = None) -> Path:
    """Write ``manifest.json`` (sorted keys; replaced atomically) and regenerate ``README.md``."""
    root = Path(root or model_dir())
    root.mkdir(parents=True, exist_ok=True)
    for name, text in (
        (
            "manifest.json",
            json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
        ),
        ("README.md", render_readme(manifest)),
    ):
        tmp = root / f".{name}.{os.getpid()}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, root / name)
    return root / "manifest.json"


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(
        value, dict
    ):  # keys sorted: the same text before and after the manifest's JSON round trip
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def render_readme(manifest: dict) -> str:
    """``data/models/README.md``: the table of shipped models, generated from the manifest."""
    models = manifest["models"]
    total = sum(r["size"] for r in models.values())
    lines = [
        "# Trained models shipped with the course",
        "",
        "<!-- Generated by `python -m training` from manifest.json: do not edit by hand. -->",
        "",
        "Each model is a `.npz` of named arrays (read with `allow_pickle=False`) and a `.json` "
        "beside it (settings, metrics, library versions, the checksums). The lessons load them "
        "with `helpers.course.models.load_model(name)`, which checks the sha256 below first. `make "
        "models` retrains all of them (one training per CPU core, one thread each), `make models "
        "NAME=<name>` one; the training log of each is in `logs/<name>.jsonl.gz` (settings, the "
        "loss of every step, each validation and early-stopping decision, times, library versions, "
        "processor, git commit). Trainers marked deterministic rebuild the same bytes with the "
        "same library versions on the same kind of processor (the manifest's `cpu`): NumPy's and "
        "PyTorch's kernels choose their SIMD and BLAS code by processor, and another choice rounds "
        "sums differently (PyTorch does not promise reproducibility across platforms: "
        "<https://docs.pytorch.org/docs/2.13/notes/randomness.html>). On another processor a "
        "rebuild gives the same training to rounding, not the same bytes; "
        "`tests/training/test_registry.py` compares the first steps' losses to rounding instead of "
        "exactly (gensim's models excepted: they gave the same bytes on an AMD EPYC and an Intel "
        "Xeon, and are compared exactly on any processor). So that one `make models` rebuilds "
        "every file, all of them come from one kind of processor (the `cpu` of each row's record); "
        "the word2vec models (NumPy, PyTorch, gensim) and the count-based records also gave the "
        "same bytes on an AMD EPYC, GloVe and the PyTorch language models do not.",
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
        training = (
            f"{r['train_seconds']:.0f} s wall, {r['cpu_seconds']:.0f} s CPU, {r['threads']} thread"
            f"{'s' if r['threads'] != 1 else ''}; "
            f"{'deterministic' if r['deterministic'] else 'not deterministic'}"
        )
        lines.append(
            f"| `{r['file']}` | {r['what']} | {r['size']:,} | `{r['sha256']}` | {settings} | "
            f"{training} | {metrics}; subset: `{sub['name']}={_cell(sub['value'])}` | `"
            f"{r['command']}` |"
        )
    lines += [
        "",
        "Versions and commit of each training run are in the `.json` files and the logs.",
        "",
    ]
    return "\n".join(lines)




def replays_exactly_here(name: str, root: Path | None = None) -> bool:
    """Whether retraining ``name`` here should reproduce its training log bit for bit: a
    deterministic trainer, the recorded library versions and the recorded kind of processor
    (:func:`training.runlog.replays_exactly`; any processor for an entry marked
    ``any_processor``). Otherwise a replay agrees to rounding only."""
    record = model_info(name, root)
    cpu = {} if entry(name).any_processor else record.get("cpu")      # {}: no processor to match
    return bool(record["deterministic"]) and replays_exactly(record["versions"], cpu)




def entry(name: str) -> ModelEntry:
    """The registry entry ``name``; an unknown name is an error listing the known ones."""
    if name not in MODELS:
        raise KeyError(f"no shipped model named {name!r}; the course has {sorted(MODELS)}")
    return MODELS[name]


if set(MODELS) != set(LOADERS):
    raise RuntimeError(f"the registry and helpers.course.models.LOADERS disagree: "
                       f"{sorted(set(MODELS) ^ set(LOADERS))}")
