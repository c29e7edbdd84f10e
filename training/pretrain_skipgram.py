"""Recipe of ``wv_pretrain_skipgram``: lesson 10's static baseline, skip-gram vectors trained on
the masked-LM pre-training documents only, so that no static vector has read a held-out document.

Settings: lesson 07's shipped gensim skip-gram (100 dimensions, window 5, 5 negatives,
subsampling 1e-4, learning rate 0.05 decaying linearly over 60 epochs, min_count 5, one worker),
one epoch at a time, validated after each on the validation half of WordSim-353, the best epoch
kept. What ships is what lesson 10 reads, not the whole table (the size budget of
``data/models``): the vectors of the words of the labelled sentences (both word-sense files;
a word under min_count has none, and the lesson counts it), and every BBC article's
average unit vector over its first ``max_sents`` sentences (the fine-tuning experiment's static
features). The subset metric is the nearest-sense accuracy of the context-mean vectors.
"""
from __future__ import annotations

import logging
from collections import Counter

import numpy as np

from helpers.course.benchmarks import evaluate_vectors
from helpers.course.bert_finetune import static_features
from helpers.course.contextual_studies import PretrainStatic
from helpers.course.corpus import document_sentences, modern_english_documents
from helpers.course.data import WSD_FILE, WSD_FILES, load_wsd_sentences
from helpers.course.mlm_model import mlm_sentences
from helpers.infra.artifacts import strings_to_array
from helpers.infra.seeding import make_rng
from helpers.lessons.lesson10 import static_vectors
from helpers.lib.contextual import nearest_sense_accuracy
from helpers.lib.text import Vocab
from training.loop import train_steps
from training.runlog import RunLog
from training.word_vector_models import GENSIM_SKIPGRAM, epoch_alpha

SETTINGS = dict(GENSIM_SKIPGRAM, impl="gensim", model="skipgram",
                corpus="mlm pre-training documents", max_sents=5)
FLOAT16 = ("wsd/W", "bbc/features")


def bbc_articles(max_sents: int) -> tuple[np.ndarray, list]:
    """(document indices, the first ``max_sents`` sentences) of every non-empty BBC article."""
    sources = [s for s, _ in modern_english_documents()]
    docs = document_sentences()
    keep = [k for k, (src, d) in enumerate(zip(sources, docs, strict=True))
            if src.startswith("bbc:") and len(d)]
    return np.array(keep, dtype=np.int64), [[tuple(s) for s in docs[k][:max_sents]] for k in keep]


def train(settings: dict, log: RunLog, max_steps: int | None = None,
          progress: bool = True) -> tuple[dict, dict, dict]:
    """gensim skip-gram on the pre-training sentences; return (arrays, meta, metrics). A step of
    the log is an epoch (gensim's loss per word); ``max_steps``: that many epochs."""
    from gensim.models import Word2Vec  # heavy optional import: gensim is loaded only to train
    s = settings
    sents = [list(x) for x in mlm_sentences()["train"]]
    logging.getLogger("gensim").setLevel(logging.ERROR)
    m = Word2Vec(sg=1, vector_size=s["dim"], window=s["window"], negative=s["negative"],
                 sample=s["sample"], alpha=s["alpha"], min_alpha=s["min_alpha"], hs=0, workers=1,
                 seed=s["seed"], min_count=s["min_count"])
    m.build_vocab(sents)
    itos = list(m.wv.index_to_key)
    vocab = Vocab(itos, [m.wv.get_vecattr(w, "count") for w in itos], ())
    vectors = {}

    def step(epoch):
        m.train(sents, total_examples=m.corpus_count, epochs=1,
                start_alpha=epoch_alpha(s, epoch - 1, s["max_epochs"]),
                end_alpha=epoch_alpha(s, epoch, s["max_epochs"]), compute_loss=True)
        vectors["W"] = np.array(m.wv.vectors, dtype=np.float32)
        return float(m.get_latest_training_loss()) / m.corpus_total_words

    def evaluate(epoch):
        v = evaluate_vectors(vectors["W"], vocab, "validation", analogies=False)
        return {"epoch": epoch, "valid_wordsim": v["wordsim"], "valid_simlex": v["simlex"]}

    run = train_steps(step, s["max_epochs"], log, evaluate=evaluate, eval_every=1,
                      curve=("epoch", "valid_wordsim", "valid_simlex", "train_loss"),
                      metric="valid_wordsim", mode="max", patience=s["patience"],
                      min_delta=s["min_delta"], snapshot=lambda: vectors["W"],
                      restore=lambda W: vectors.update(W=W), limit=max_steps,
                      cap_reason=f"the limit of {s['max_epochs']} epochs",
                      desc="skip-gram (pre-training documents)", progress=progress)
    W = vectors["W"]
    stoi = {w: i for i, w in enumerate(itos)}
    words = sorted({w for name in WSD_FILES for e in load_wsd_sentences(name) for w in e.tokens
                    if w in stoi})
    doc_index, articles = bbc_articles(s["max_sents"])
    arrays = {"wsd/words": strings_to_array(words), "wsd/W": W[[stoi[w] for w in words]],
              "bbc/doc_index": doc_index, "bbc/features": static_features(W, stoi, articles),
              **{f"curve/{k}": np.asarray(x) for k, x in run.curve.items()}}
    meta = {"settings": dict(s), "stopped_by": run.stopped_by, "best_epoch": run.best_step,
            "epochs_run": run.steps, "vocabulary_size": len(vocab),
            "data": f"the masked-LM training documents: {len(sents):,} sentences, {len(vocab):,} "
                    f"words (min_count {s['min_count']})"}
    metrics = {"best_epoch": run.best_step, "valid_wordsim": run.best}
    if max_steps is None:
        meta["valid_scores"] = evaluate_vectors(W, vocab, "validation", analogies=False)
    return arrays, meta, metrics


def subset_metric(static: PretrainStatic) -> tuple[str, float]:
    """('wsd_context_mean_accuracy', the nearest-sense accuracy of the context-mean vectors on
    ``wsd_sentences.tsv``, the mean over its six words: 3 labelled sentences per sense, 200 draws
    with seed 0; context words under min_count are left out of the mean)."""
    examples = load_wsd_sentences(WSD_FILE)
    accs = []
    for w in sorted({e.word for e in examples}):
        exs = [e for e in examples if e.word == w]
        X = static_vectors(static, exs, context=True, missing=Counter())
        acc = nearest_sense_accuracy(X, [e.sense for e in exs], 3, make_rng(0), 200)
        accs.append(acc["accuracy"])
    return "wsd_context_mean_accuracy", float(np.mean(accs))
