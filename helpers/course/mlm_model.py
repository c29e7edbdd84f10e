"""Lesson 10's pre-training data and its shipped small BERT (``load_model("mlm_bert")``); split
by document number k: validation ``k % 20 == 0``, test ``k % 20 == 10``, training the rest."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from helpers.course.corpus import document_groups, document_sentences
from helpers.infra.artifacts import Artifact, arrays_to_curves, arrays_to_state_dict
from helpers.lib.bert import BertConfig, TinyBert
from helpers.lib.bpe import BPETokenizer
from helpers.lib.near_duplicates import without_copies

VALID_SEED, TEST_SEED = 123, 456     # the held-out splits are masked once, with these seeds


def split_of(k: int) -> str:
    """'valid', 'test' or 'train' for document number ``k`` of :func:`document_sentences`."""
    return "valid" if k % 20 == 0 else "test" if k % 20 == 10 else "train"


@lru_cache(maxsize=1)
def held_out_copies() -> frozenset:
    """Numbers k of the held-out documents with a near-duplicate among the training documents."""
    docs, groups = document_sentences(), document_groups()
    if len(docs) != len(groups):
        raise RuntimeError(f"{len(docs)} documents with sentences but {len(groups)} texts: "
                           "the corpus changed")
    train = [k for k in range(len(docs)) if split_of(k) == "train"]
    held_out = [k for k in range(len(docs)) if split_of(k) != "train"]
    return frozenset(held_out) - frozenset(without_copies(held_out, train, groups).tolist())


@lru_cache(maxsize=1)
def mlm_sentences() -> dict:
    """{'train', 'valid', 'test'}: the sentences (lists of words) of each split."""
    out, copies = {"train": [], "valid": [], "test": []}, held_out_copies()
    for k, doc in enumerate(document_sentences()):
        if k not in copies:
            out[split_of(k)] += [list(s) for s in doc]
    return out


def tokenizer_from_arrays(arrays: dict) -> BPETokenizer:
    """The tokenizer ``make models`` stored as arrays ``tok/alphabet`` and ``tok/merges``."""
    return BPETokenizer([str(a) for a in arrays["tok/alphabet"]],
                        [(str(a), str(b)) for a, b in arrays["tok/merges"]])


@dataclass
class ShippedMLM:
    """The shipped small BERT: ``model`` (TinyBert), ``tok``, settings, metrics and ``curve``."""

    model: TinyBert
    tok: BPETokenizer
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    cpu_seconds: float
    stopped_by: str

    @property
    def cfg(self) -> BertConfig:
        return self.model.cfg


def load_mlm_bert(artifact: Artifact) -> ShippedMLM:
    """The shipped model from its checked artefact (the loader of ``load_model("mlm_bert")``)."""
    meta = artifact.meta
    tok = tokenizer_from_arrays(artifact.arrays)
    model = TinyBert(BertConfig(**meta["config"]), tok.pad_id)
    weights = arrays_to_state_dict(artifact.arrays, "model/")
    model.load_state_dict({k: v.float() for k, v in weights.items()})
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedMLM(model.eval(), tok, meta["settings"], meta["metrics"], curve,
                      float(meta.get("train_seconds", math.nan)),
                      float(meta.get("cpu_seconds", math.nan)), meta["stopped_by"])

