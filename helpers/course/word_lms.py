"""The shipped word-level LMs of lessons 02-03 (``load_model("lstm_lm")``, ``"gru_lm"``,
``"rnn_lm"``) and the stored Kneser-Ney baselines they are compared with.

The models are trained by ``make models`` (``training/word_lms.py``) on
:func:`helpers.course.recurrent_lms.lm_data`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from helpers.course.data import DATA_DIR
from helpers.infra.artifacts import (
    Artifact,
    ArtifactError,
    arrays_to_curves,
    arrays_to_state_dict,
    load_artifact,
    unprefixed,
)
from helpers.lib.batching import bptt_batches
from helpers.lib.rnn_lm import RecurrentLM
from helpers.lib.text import Vocab


@dataclass
class ShippedWordLM:
    """A shipped word-level LM: ``model`` (eval mode), ``vocab``, ``settings``, ``metrics``
    (valid_ppl, test_ppl, steps ...), the ``curve`` {'step', 'valid_ppl', 'train_loss'} (one
    point per evaluation of the whole validation split), ``train_seconds`` and ``stopped_by``."""

    model: RecurrentLM
    vocab: Vocab
    settings: dict
    metrics: dict
    curve: dict
    train_seconds: float
    stopped_by: str


def load_word_lm(artifact: Artifact) -> ShippedWordLM:
    """A shipped model from its checked artefact (the loader of ``load_model("lstm_lm")``)."""
    s = artifact.meta["settings"]
    vocab = Vocab.from_arrays(unprefixed(artifact.arrays, "vocab/"), artifact.meta["vocab"])
    model = RecurrentLM(len(vocab), s["kind"], s["emb_dim"], s["hidden"], seed=s["seed"])
    weights = arrays_to_state_dict(artifact.arrays, "model/")
    model.load_state_dict({k: v.float() for k, v in weights.items()})
    curve = arrays_to_curves(artifact.arrays)
    curve["step"] = [int(x) for x in curve["step"]]
    return ShippedWordLM(model.eval(), vocab, s, artifact.meta["metrics"], curve,
                         float(artifact.meta.get("train_seconds", math.nan)),
                         artifact.meta["stopped_by"])


def kn_path():
    """``data/models/baselines/word_kn``: the stored Kneser-Ney baselines of the word-level LMs."""
    return DATA_DIR / "models" / "baselines" / "word_kn"


@dataclass
class KNBaselines:
    """The stored Kneser-Ney baselines: ``orders``, ``ppl[split][n]``, and ``nll['test'][n]``, the
    per-token test NLLs (nats, float64) of the order chosen on validation, without the first
    ``skipped`` tokens of the test split."""

    orders: list
    nll: dict
    ppl: dict
    skipped: int

    def best_order(self) -> int:
        """The order with the lowest validation perplexity."""
        return min(self.orders, key=lambda n: self.ppl["valid"][n])


def load_kn_baselines() -> KNBaselines:
    """The baselines ``python -m training.word_lms kn`` stored (checksums verified)."""
    try:
        art = load_artifact(kn_path())
    except ArtifactError as e:
        raise ArtifactError(f"the Kneser-Ney baselines {kn_path()}: {e}. Rebuild them with "
                            f"`python -m training.word_lms kn` (about a minute)") from None
    orders, best = [int(n) for n in art.meta["orders"]], int(art.meta["best_order"])
    m = art.meta["metrics"]
    nll = {"test": {best: art.arrays[f"test/{best}"].astype(np.float64)}}
    ppl = {split: {n: float(m[f"{split}_ppl_{n}"]) for n in orders} for split in ("valid", "test")}
    return KNBaselines(orders, nll, ppl, int(art.meta["skipped_tokens"]))


@torch.no_grad()
def token_nlls(model: RecurrentLM, ids: np.ndarray, batch_size: int = 16,
               seq_len: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Per-token NLL (nats) of a recurrent LM over a stream, the state carried across windows:
    (nll (n,) float64, the positions in ``ids`` of the scored tokens). The stream is read as
    ``batch_size`` rows, so the last ``(len(ids) - 1) % batch_size`` tokens are not scored."""
    model.eval()
    rows, state = [], None
    for x, y in bptt_batches(ids, batch_size, seq_len):
        logits, state = model(torch.as_tensor(x), state)
        loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), torch.as_tensor(y),
                                                 reduction="none")
        rows.append(loss.double().numpy())
    nll = np.concatenate(rows, axis=1)                          # (batch_size, n_cols)
    return nll.reshape(-1), 1 + np.arange(batch_size * nll.shape[1])
