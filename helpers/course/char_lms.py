"""Lesson 04's shipped character LMs: a Transformer and two LSTMs given the same compute
(``load_model("char_transformer")``, ``"char_lstm"``, ``"char_lstm_matched"``)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from torch import nn

from helpers.infra.artifacts import Artifact, arrays_to_curves, arrays_to_state_dict, unprefixed
from helpers.lib.text import Vocab
from helpers.lib.transformer import LSTMLM, DecoderLM, TransformerConfig

EVAL_TOKENS = 32_768     # validation predictions scored at every evaluation (the curve's points)


def build_char_lm(settings: dict, vocab_size: int) -> nn.Module:
    """The model of ``settings``: kind 'transformer' -> DecoderLM, 'lstm' -> LSTMLM (seeded)."""
    s = settings
    if s["kind"] == "transformer":
        cfg = TransformerConfig(vocab_size, d_model=s["d_model"], n_heads=s["n_heads"],
                                n_layers=s["n_layers"], max_len=s["ctx"], norm=s["norm"],
                                positions=s["positions"])
        return DecoderLM(cfg, seed=s["seed"])
    if s["kind"] == "lstm":
        return LSTMLM(vocab_size, emb_dim=s["emb_dim"], hidden=s["hidden"], seed=s["seed"])
    raise ValueError(f"kind must be 'transformer' or 'lstm', got {s['kind']!r}")


@dataclass
class ShippedCharLM:
    """A shipped character LM (eval mode), its vocabulary, settings, metrics and ``curve``."""


    model: nn.Module
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    cpu_seconds: float
    stopped_by: str


def load_char_lm(artifact: Artifact) -> ShippedCharLM:
    """A shipped model from its checked artefact (the loader of ``load_model("char_lstm")``)."""
    s = artifact.meta["settings"]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    model = build_char_lm(s, len(vocab))
    weights = arrays_to_state_dict(artifact.arrays, "model/")
    model.load_state_dict({k: v.float() for k, v in weights.items()})
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedCharLM(model.eval(), vocab, s, artifact.meta["metrics"], curve,
                         float(artifact.meta.get("train_seconds", math.nan)),
                         float(artifact.meta.get("cpu_seconds", math.nan)),
                         artifact.meta["stopped_by"])
