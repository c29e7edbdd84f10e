"""Lesson 10's static baseline: skip-gram vectors trained on the masked-LM **pre-training documents
only** (``make models NAME=wv_pretrain_skipgram``), so that no static vector has read a held-out
document's text — the same text the small BERT was trained on, and nothing else.

Settings: those of lesson 07's shipped gensim skip-gram (``training.word_vector_models.GENSIM_SKIPGRAM``:
100 dimensions, window 5, 5 negatives, subsampling 1e-4, learning rate 0.05 decaying linearly over 60
epochs, min_count 5, one worker), validated after every epoch on the validation half of WordSim-353
(:func:`helpers.course.benchmarks.evaluate_vectors`), the best epoch kept — the protocol of lesson 07,
on the training documents of :func:`helpers.course.mlm_model.mlm_sentences`.

What ships is what lesson 10 reads, not the 15,000 × 100 table (the size budget of ``data/models``):

- ``wsd/words`` and ``wsd/W``: the vectors of every word of the 144 labelled sentences;
- ``bbc/doc_index`` and ``bbc/features``: for every BBC article, the average of the unit-length vectors
  of the words of its first ``max_sents`` sentences (:func:`helpers.course.bert_finetune.static_features`),
  the static features of the fine-tuning experiment (``helpers.course.bert_finetune``);
- the validation curve, and in the metadata the best epoch's validation scores beside those of lesson
  07's vectors (trained on the whole corpus).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.bert_finetune import static_features
from helpers.course.corpus import document_sentences, modern_english_documents
from helpers.course.data import load_wsd_sentences
from helpers.course.mlm_model import mlm_sentences
from helpers.infra.artifacts import Artifact, array_to_strings, strings_to_array
from helpers.infra.early_stopping import EarlyStopping
from helpers.infra.runlog import RunLog
from helpers.infra.seeding import make_rng
from helpers.lib.contextual import nearest_sense_accuracy
from helpers.lib.text import Vocab

# lesson 07's shipped gensim skip-gram (training.word_vector_models.GENSIM_SKIPGRAM), copied
# because helpers may not import training; the copy goes when this recipe moves to training/
GENSIM_SKIPGRAM = dict(dim=100, window=5, negative=5, sample=1e-4, alpha=0.05, min_alpha=1e-4,
                       min_count=5, max_epochs=60, patience=60, min_delta=0.0, seed=0)


def epoch_alpha(s: dict, epoch: float, epochs: int) -> float:
    """gensim's learning rate after ``epoch`` of ``epochs`` (training.word_vector_models')."""
    return s["alpha"] - (s["alpha"] - s["min_alpha"]) * epoch / epochs


SETTINGS = dict(GENSIM_SKIPGRAM, impl="gensim", model="skipgram", corpus="mlm pre-training documents", max_sents=5)
FLOAT16 = ("wsd/W", "bbc/features")


@dataclass
class PretrainStatic:
    """The shipped static baseline: ``vectors`` {word: (100,) float32} for the words of the labelled
    sentences, ``bbc_features`` (N, 100) float32 with ``bbc_doc_index`` (N,) (the article's index in
    :func:`helpers.course.corpus.document_sentences`), and ``meta`` (settings, curve, scores)."""

    vectors: dict
    bbc_doc_index: np.ndarray
    bbc_features: np.ndarray
    meta: dict

    def __contains__(self, word: str) -> bool:
        return word in self.vectors

    def __getitem__(self, word: str) -> np.ndarray:
        if word not in self.vectors:
            raise KeyError(f"{word!r} has no shipped static vector (only the words of the labelled sentences ship)")
        return self.vectors[word]

    def features_of(self, doc_index) -> np.ndarray:
        """(n, 100) features of the BBC articles whose document indices are ``doc_index``."""
        row = {int(k): i for i, k in enumerate(self.bbc_doc_index)}
        missing = [int(k) for k in doc_index if int(k) not in row]
        if missing:
            raise KeyError(f"no static features for documents {missing[:5]} (not BBC articles?)")
        return self.bbc_features[[row[int(k)] for k in doc_index]]


def bbc_articles(max_sents: int) -> tuple[np.ndarray, list]:
    """(document indices, the articles' first ``max_sents`` sentences) of every non-empty BBC article."""
    sources = [s for s, _ in modern_english_documents()]
    docs = document_sentences()
    keep = [k for k, (src, d) in enumerate(zip(sources, docs, strict=True)) if src.startswith("bbc:") and len(d)]
    return np.array(keep, dtype=np.int64), [[tuple(s) for s in docs[k][:max_sents]] for k in keep]


def train_pretrain_static(settings: dict, log: RunLog, max_steps: int | None = None,
                          progress: bool = True) -> tuple[dict, dict, dict]:
    """gensim skip-gram on the pre-training sentences, one epoch at a time on the schedule of
    ``max_epochs`` epochs, scored on the validation half after each, the best epoch kept.
    Returns (arrays, meta, metrics); a step of the log is an epoch (gensim's loss per word)."""
    from gensim.models import Word2Vec  # heavy optional import: gensim is loaded only to train
    s = settings
    sents = [list(x) for x in mlm_sentences()["train"]]
    logging.getLogger("gensim").setLevel(logging.ERROR)
    m = Word2Vec(sg=1, vector_size=s["dim"], window=s["window"], negative=s["negative"], sample=s["sample"],
                 alpha=s["alpha"], min_alpha=s["min_alpha"], hs=0, workers=1, seed=s["seed"], min_count=s["min_count"])
    m.build_vocab(sents)
    itos = list(m.wv.index_to_key)
    vocab = Vocab(itos, [m.wv.get_vecattr(w, "count") for w in itos], ())
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = {"epoch": [], "valid_wordsim": [], "valid_simlex": [], "train_loss": []}
    epochs = s["max_epochs"] if max_steps is None else min(max_steps, s["max_epochs"])
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        m.train(sents, total_examples=m.corpus_count, epochs=1, start_alpha=epoch_alpha(s, epoch - 1, s["max_epochs"]),
                end_alpha=epoch_alpha(s, epoch, s["max_epochs"]), compute_loss=True)
        W = np.array(m.wv.vectors, dtype=np.float32)
        loss = float(m.get_latest_training_loss()) / m.corpus_total_words
        log.step(loss)
        v = evaluate_vectors(W, vocab, "validation", analogies=False)
        stopper.update(v["wordsim"], epoch, snapshot=lambda W=W: W)
        for k, x in (("epoch", epoch), ("valid_wordsim", v["wordsim"]), ("valid_simlex", v["simlex"]),
                     ("train_loss", loss)):
            curve[k].append(x)
        log.event("eval", epoch=epoch, valid_wordsim=v["wordsim"], valid_simlex=v["simlex"], train_loss=loss,
                  seconds=time.perf_counter() - t0, **{k: x for k, x in stopper.decisions[-1].items() if k != "value"})
        if progress:
            print(f"epoch {epoch}: loss {loss:.4f}, validation WordSim {v['wordsim']:.3f} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    reason = f"max_steps={max_steps}" if max_steps is not None else f"the limit of {s['max_epochs']} epochs"
    log.event("stop", reason=reason, steps=epochs, best_step=stopper.best_step)
    W = stopper.best_state
    stoi = {w: i for i, w in enumerate(itos)}
    words = sorted({w for e in load_wsd_sentences() for w in e.tokens if w in stoi})
    doc_index, articles = bbc_articles(s["max_sents"])
    arrays = {"wsd/words": strings_to_array(words), "wsd/W": W[[stoi[w] for w in words]],
              "bbc/doc_index": doc_index, "bbc/features": static_features(W, stoi, articles),
              **{f"curve/{k}": np.asarray(x) for k, x in curve.items()}}
    meta = {"settings": dict(s), "stopped_by": reason, "best_epoch": stopper.best_step, "epochs_run": epochs,
            "data": f"the masked-LM training documents: {len(sents):,} sentences, {len(vocab):,} words "
                    f"(min_count {s['min_count']})", "vocabulary_size": len(vocab)}
    metrics = {"best_epoch": stopper.best_step, "valid_wordsim": stopper.best}
    if max_steps is None:
        meta["valid_scores"] = evaluate_vectors(W, vocab, "validation", analogies=False)
    return arrays, meta, metrics


def load_pretrain_static(artifact: Artifact) -> PretrainStatic:
    """The vectors and features stored by :func:`train_pretrain_static` (via ``load_model``)."""
    a = artifact.arrays
    words = array_to_strings(a["wsd/words"])
    curve = {k.split("/", 1)[1]: a[k].tolist() for k in a if k.startswith("curve/")}
    return PretrainStatic({w: np.asarray(v, dtype=np.float32) for w, v in zip(words, a["wsd/W"], strict=True)},
                          np.asarray(a["bbc/doc_index"]), np.asarray(a["bbc/features"], dtype=np.float32),
                          {**artifact.meta, "curve": curve})


def context_mean_vectors(static: PretrainStatic, examples) -> np.ndarray:
    """(n, 100) float64: for each labelled sentence, the mean static vector of its other words
    (words without a vector skipped), the static baseline of lesson 10's section 4."""
    out = []
    for e in examples:
        ctx = [static[w] for i, w in enumerate(e.tokens) if i != e.position and w in static]
        if not ctx:
            raise ValueError(f"no context word of {e.sentence!r} has a static vector")
        out.append(np.mean(ctx, axis=0))
    return np.asarray(out, dtype=np.float64)


def static_subset_metric(static: PretrainStatic) -> tuple[str, float]:
    """('wsd_context_mean_accuracy', the nearest-sense accuracy of the context-mean vectors, mean over
    the six words, 3 labelled sentences per sense, 200 draws with seed 0), from the stored vectors."""
    examples = load_wsd_sentences()
    accs = []
    for w in sorted({e.word for e in examples}):
        exs = [e for e in examples if e.word == w]
        X = context_mean_vectors(static, exs)
        accs.append(nearest_sense_accuracy(X, [e.sense for e in exs], 3, make_rng(0), 200)["accuracy"])
    return "wsd_context_mean_accuracy", float(np.mean(accs))
