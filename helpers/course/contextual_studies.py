"""The committed records of lesson 10's studies, read through ``load_model``: ``gpt_contrast``,
``bert_nsp`` and ``wv_pretrain_skipgram`` (made by ``make models``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.infra.artifacts import Artifact, array_to_strings

NSP_ARMS = ("mlm", "mlm+nsp")


@dataclass
class GPTContrast:
    """The causal LM's scores: ``metrics``, ``fill_right`` / ``fill_count`` (n,) per test
    sentence, ``wsd`` {word: (layers, repeats)}, ``samples``, ``curve``, ``meta``."""

    metrics: dict
    fill_right: np.ndarray
    fill_count: np.ndarray
    wsd: dict
    samples: list
    curve: dict
    meta: dict


def load_gpt_contrast(artifact: Artifact) -> GPTContrast:
    """The record of ``gpt_contrast`` from its checked artefact."""
    a = artifact.arrays
    return GPTContrast(dict(artifact.meta["metrics"]), np.asarray(a["fill/right"]),
                       np.asarray(a["fill/count"]),
                       {k.split("/", 1)[1]: np.asarray(v) for k, v in a.items()
                        if k.startswith("wsd/")},
                       array_to_strings(a["samples"]),
                       {k.split("/", 1)[1]: np.asarray(v).tolist() for k, v in a.items()
                        if k.startswith("curve/")},
                       dict(artifact.meta))


@dataclass
class NSPStudy:
    """Both arms of the next-sentence-prediction study ('mlm', 'mlm+nsp'): ``arrays[arm]``,
    ``overlap_right`` (the piece-overlap baseline), ``metrics`` and ``meta``."""

    arrays: dict
    overlap_right: np.ndarray
    metrics: dict
    meta: dict

    def mlm_accuracy(self, arm: str) -> float:
        """The arm's masked-token accuracy on the test split."""
        a = self.arrays[arm]
        return float(a["mlm_right"].sum() / a["mlm_count"].sum())

    def wsd_rounds(self, arm: str) -> np.ndarray:
        """(repeats,) nearest-sense accuracy per round, the mean over the words (final layer)."""
        a = self.arrays[arm]
        return np.mean([a[k] for k in sorted(a) if k.startswith("wsd/")], axis=0)


def load_nsp_study(artifact: Artifact) -> NSPStudy:
    """The record of ``bert_nsp`` from its checked artefact."""
    a = artifact.arrays
    arms = {arm: {k[len(arm) + 1:]: np.asarray(v) for k, v in a.items() if k.startswith(arm + "/")}
            for arm in NSP_ARMS}
    return NSPStudy(arms, np.asarray(a["overlap/nsp_right"]), dict(artifact.meta["metrics"]),
                    dict(artifact.meta))


@dataclass
class PretrainStatic:
    """Skip-gram vectors of the pre-training documents only: ``vectors`` {word: (100,)},
    ``bbc_features`` (N, 100) of the BBC articles ``bbc_doc_index`` (N,), and ``meta``."""

    vectors: dict
    bbc_doc_index: np.ndarray
    bbc_features: np.ndarray
    meta: dict

    def __contains__(self, word: str) -> bool:
        return word in self.vectors

    def __getitem__(self, word: str) -> np.ndarray:
        if word not in self.vectors:
            raise KeyError(f"{word!r} has no shipped static vector (only the words of the labelled "
                           "sentences ship)")
        return self.vectors[word]

    def features_of(self, doc_index) -> np.ndarray:
        """(n, 100) features of the BBC articles with document indices ``doc_index``."""
        row = {int(k): i for i, k in enumerate(self.bbc_doc_index)}
        missing = [int(k) for k in doc_index if int(k) not in row]
        if missing:
            raise KeyError(f"no static features for documents {missing[:5]} (not BBC articles?)")
        return self.bbc_features[[row[int(k)] for k in doc_index]]


def load_pretrain_static(artifact: Artifact) -> PretrainStatic:
    """The record of ``wv_pretrain_skipgram`` from its checked artefact."""
    a = artifact.arrays
    words = array_to_strings(a["wsd/words"])
    curve = {k.split("/", 1)[1]: a[k].tolist() for k in a if k.startswith("curve/")}
    vectors = {w: np.asarray(v, dtype=np.float32) for w, v in zip(words, a["wsd/W"], strict=True)}
    return PretrainStatic(vectors, np.asarray(a["bbc/doc_index"]),
                          np.asarray(a["bbc/features"], dtype=np.float32),
                          {**artifact.meta, "curve": curve})
