"""The shipped word vectors (``make models NAME=wv_<impl>_<model>``): settings, trainers, records.

One protocol for every method:

- the corpus is :func:`helpers.course.corpus.course_corpus` (min_count 5), one vocabulary;
- settings and the length of the learning-rate schedule (``max_epochs``) are chosen on the
  **validation half** of the benchmarks (:mod:`helpers.course.benchmarks`); the vectors are
  scored there after every epoch. gensim's models and GloVe keep their best epoch (early
  stopping), the course's NumPy and PyTorch skip-grams their schedule's last (``keep="last"``);
- a log step is one epoch, its value the trainer's training loss of that epoch;
- the records the lessons print (:func:`records`) are computed from the **report half**, with
  bootstrap intervals, and stored with the vectors (``metadata['records']``);
- the vectors are stored as float16, which moves no report-half score by half a unit of the
  third decimal (:func:`float16_check` records both).
"""
from __future__ import annotations

import logging
import time

import numpy as np

from helpers.course.bbc_topics import bbc_groups, bbc_topic_task
from helpers.course.benchmarks import (
    SPLIT_SEED,
    benchmark_halves,
    evaluate_vectors,
)
from helpers.course.corpus import course_corpus
from helpers.course.data import load_word_similarity
from helpers.course.shipped_vectors import ShippedVectors
from helpers.course.word_vectors import glove_counts, rare_neighbour_share
from helpers.lib.extrinsic import held_out_split, make_classifier
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.metrics import (
    analogy_hits,
    analogy_rank,
    document_vectors,
    similarity_correlation,
    similarity_interval,
)
from helpers.lib.stats import bootstrap_interval
from helpers.lib.text import Vocab
from training.early_stopping import EarlyStopping
from training.glove_torch import train_pairwise
from training.runlog import RunLog
from training.word2vec_trainers import train_numpy, train_torch

# gensim's defaults with two changes chosen on the validation half (alpha 0.05, sample 1e-4; the
# record is data/models/logs/wv_settings.json, made by training.word2vec_settings)
WORD2VEC = dict(dim=100, window=5, negative=5, sample=1e-4, alpha=0.05, min_alpha=1e-4,
                min_count=5, max_epochs=20, patience=5, min_delta=0.0, seed=0)
# the schedules chosen by training.word2vec_budget (record data/models/logs/wv_budget.json);
# every run runs its whole schedule (patience = max_epochs)
COURSE_SKIPGRAM = dict(WORD2VEC, patience=WORD2VEC["max_epochs"], keep="last")
GENSIM_SKIPGRAM = dict(WORD2VEC, max_epochs=60, patience=60)
GENSIM_CBOW = dict(WORD2VEC, max_epochs=20, patience=20)
FASTTEXT = dict(WORD2VEC, min_n=3, max_n=6, buckets=20_000, max_epochs=40, patience=40)
# GloVe: glove.c's per-pair AdaGrad in batches of 1,024 pairs, harmonic counts, alpha 0.75; lr,
# x_max, window and dimension chosen by training.glove_search
# (data/models/logs/wv_glove_search.json)
GLOVE = dict(dim=100, window=10, x_max=10 / 3, alpha=0.75, lr=0.2, batch_size=1024, min_count=5,
             max_epochs=50, patience=8, min_delta=0.0, seed=0)
EXTRINSIC = dict(classifiers=("logreg", "knn"), seeds=(0, 1, 2))

SETTINGS = {
    "wv_gensim_skipgram": dict(GENSIM_SKIPGRAM, impl="gensim", model="skipgram"),
    "wv_gensim_cbow": dict(GENSIM_CBOW, impl="gensim", model="cbow"),
    "wv_gensim_fasttext": dict(FASTTEXT, impl="gensim", model="fasttext"),
    "wv_torch_skipgram": dict(COURSE_SKIPGRAM, impl="torch", model="skipgram"),
    # C is shipped once, with the PyTorch model (lessons 06 and 07 read it)
    "wv_numpy_skipgram": dict(COURSE_SKIPGRAM, impl="numpy", model="skipgram", ship_context=False),
    "wv_glove": dict(GLOVE, impl="glove", model="glove"),
}
WHAT = {
    "wv_gensim_skipgram": "gensim skip-gram word vectors (W), lessons 07-09",
    "wv_gensim_cbow": "gensim CBOW word vectors (W), lessons 07-09",
    "wv_gensim_fasttext": "gensim fastText word vectors (W) and n-gram buckets, lessons 08-09",
    "wv_torch_skipgram": "the course's PyTorch skip-gram word vectors (W and C), lessons 06-09",
    "wv_numpy_skipgram": "the course's NumPy skip-gram word vectors (W), lessons 07-09",
    "wv_glove": "GloVe word vectors (W + W~ stored as W), lessons 08-09",
}
LESSON = {"wv_gensim_skipgram": "07", "wv_gensim_cbow": "07", "wv_gensim_fasttext": "08",
          "wv_torch_skipgram": "07", "wv_numpy_skipgram": "07", "wv_glove": "08"}
# float16 moves no report-half score by half a unit of the third decimal (float16_check)
FLOAT16 = {"wv_gensim_skipgram": ("W",), "wv_gensim_cbow": ("W",),
           "wv_gensim_fasttext": ("W", "ngram_vectors"), "wv_torch_skipgram": ("W", "C"),
           "wv_numpy_skipgram": ("W",), "wv_glove": ("W",)}
REPLAY = {"gensim": 2, "torch": 1, "numpy": 1, "glove": 1}   # epochs the tests replay from scratch
OOV_WORDS = ("unkingly", "wordvector", "governmentalise", "footballers'", "téléphone")


def vocab_to_arrays(vocab: Vocab) -> dict:
    """The vocabulary as 'vocab/utf8' (uint8: the words joined by newlines) and 'vocab/counts'."""
    if any("\n" in w for w in vocab.itos):
        raise ValueError("a vocabulary word contains a newline; it cannot be stored as lines")
    data = "\n".join(vocab.itos).encode("utf-8")
    return {"vocab/utf8": np.frombuffer(data, dtype=np.uint8).copy(),
            "vocab/counts": np.asarray(vocab.counts, dtype=np.int64)}


# ---------------------------------------------------------------- records
def report_intervals(vectors, vocab, n_boot: int = 1000, seed: int = 0) -> dict:
    """95 % bootstrap intervals on the report half: {'wordsim', 'simlex', 'analogy'}, each
    [estimate, low, high] (pairs or answerable questions resampled)."""
    h = benchmark_halves()["report"]
    out = {}
    for key in ("wordsim", "simlex"):
        iv = similarity_interval(vectors, vocab, getattr(h, key), n_boot=n_boot, seed=seed)
        out[key] = [iv.estimate, iv.low, iv.high]
    iv = bootstrap_interval(np.mean, analogy_hits(vectors, vocab, h.analogies), n_boot=n_boot,
                            seed=seed)
    out["analogy"] = [iv.estimate, iv.low, iv.high]
    return out


def topic_accuracy(W, vocab, documents, labels, classifier: str, seed: int, groups=None) -> float:
    """Held-out topic accuracy of scikit-learn's ``classifier`` on averaged unit word vectors, on
    :func:`helpers.lib.extrinsic.held_out_split`'s split (lesson 09 §5)."""
    if len(documents) != len(labels):
        raise ValueError(f"{len(documents)} documents but {len(labels)} labels")
    X, _ = document_vectors(W, vocab, documents)
    y = np.asarray(labels)
    train, test = held_out_split(y, seed, groups)
    guess = make_classifier(classifier).fit(X[train], y[train]).predict(X[test])
    return float(np.mean(guess == y[test]))


def records(W: np.ndarray, vocab: Vocab, extrinsic: bool = True) -> dict:
    """What lessons 07-09 print about vectors W: report-half scores with intervals, validation
    scores, the full-set WordSim-353 ρ, queen's rank and the BBC topic accuracy."""
    full = similarity_correlation(W, vocab, load_word_similarity("wordsim353"),
                                  "WordSim-353 (all pairs)")
    out = {"split_seed": SPLIT_SEED, "report": evaluate_vectors(W, vocab, "report"),
           "validation": evaluate_vectors(W, vocab, "validation"),
           "report_intervals": report_intervals(W, vocab), "wordsim_full": full.rho,
           "wordsim_full_oov": full.n_oov,
           "queen_rank": analogy_rank(W, vocab, "man", "king", "woman", "queen")}
    if extrinsic:
        docs, labels = bbc_topic_task()
        groups = bbc_groups()     # test articles with a copy among the training ones: not scored
        out["bbc_topic_accuracy"] = {
            c: [topic_accuracy(W, vocab, docs, labels, c, s, groups) for s in EXTRINSIC["seeds"]]
            for c in EXTRINSIC["classifiers"]}
        out["bbc_seeds"] = list(EXTRINSIC["seeds"])
    return out


def float16_check(W: np.ndarray, vocab: Vocab) -> dict:
    """Report-half scores from float32 and from float16 vectors, and whether they agree at 3
    decimals."""
    a = evaluate_vectors(W, vocab, "report")
    b = evaluate_vectors(W.astype(np.float16).astype(np.float32), vocab, "report")
    keys = ("wordsim", "simlex", "analogy")
    return {"float32": {k: a[k] for k in keys}, "float16": {k: b[k] for k in keys},
            "same_at_3_decimals": all(round(a[k], 3) == round(b[k], 3) for k in keys)}


def _final_records(W: np.ndarray, vocab: Vocab, meta: dict, metrics: dict) -> None:
    """Add the records to ``meta`` and the headline numbers to ``metrics``."""
    rec = records(W, vocab)
    rec["float16_check"] = float16_check(W, vocab)
    meta["records"] = rec
    metrics.update(report_wordsim=rec["report"]["wordsim"], report_simlex=rec["report"]["simlex"],
                   report_analogy=rec["report"]["analogy"], wordsim_full=rec["wordsim_full"],
                   queen_rank=rec["queen_rank"])


def _corpus_line(corpus, s: dict) -> str:
    return (f"course corpus: {len(corpus.sentences):,} sentences, {corpus.n_raw_tokens:,} tokens, "
            f"{len(corpus.vocab):,} words (min_count {s['min_count']})")


def _score_epoch(log: RunLog, stopper: EarlyStopping, curve: dict, vocab, epoch: int, W,
                 loss: float, snapshot, t0: float, progress: bool, **extra) -> bool:
    """One epoch: its loss as the log's step, its validation scores, the early-stopping decision
    (True: stop), appended to ``curve`` and logged."""
    log.step(loss)
    v = evaluate_vectors(W, vocab, "validation", analogies=False)
    stop = stopper.update(v["wordsim"], epoch, snapshot=snapshot)
    row = dict(epoch=epoch, valid_wordsim=v["wordsim"], valid_simlex=v["simlex"], train_loss=loss,
               **extra)
    for k in curve:
        curve[k].append(row[k])
    decision = {k: x for k, x in stopper.decisions[-1].items() if k != "value"}
    log.event("eval", **row, seconds=time.perf_counter() - t0, **decision)
    if progress:
        more = "".join(f", {k.replace('_', ' ')} {x:.2f}" for k, x in extra.items())
        print(f"epoch {epoch}: loss {loss:.4f}, validation WordSim {v['wordsim']:.3f}, SimLex "
              f"{v['simlex']:.3f}{more} ({time.perf_counter() - t0:.0f} s)", flush=True)
    return stop


def _new_curve(*extra: str) -> dict:
    return {k: [] for k in ("epoch", "valid_wordsim", "valid_simlex", "train_loss", *extra)}


def _curve_arrays(curve: dict) -> dict:
    return {f"curve/{k}": np.asarray(x) for k, x in curve.items()}


# ---------------------------------------------------------------- gensim, one epoch at a time
def gensim_model(s: dict):
    """An untrained gensim Word2Vec (skip-gram or CBOW) or FastText with one worker."""
    from gensim.models import FastText, Word2Vec  # heavy optional import: loaded only to train
    common = dict(vector_size=s["dim"], window=s["window"], negative=s["negative"],
                  sample=s["sample"], alpha=s["alpha"], min_alpha=s["min_alpha"], hs=0, workers=1,
                  seed=s["seed"], min_count=s["min_count"])
    if s["model"] == "fasttext":
        return FastText(sg=1, min_n=s["min_n"], max_n=s["max_n"], bucket=s["buckets"], **common)
    return Word2Vec(sg=int(s["model"] == "skipgram"), **common)


def epoch_alpha(s: dict, epoch: float, epochs: int) -> float:
    """gensim's learning rate after ``epoch`` of ``epochs``: linear from ``alpha`` to
    ``min_alpha``, given to one ``train`` call per epoch so the vectors can be scored between."""
    return s["alpha"] - (s["alpha"] - s["min_alpha"]) * epoch / epochs


def _ngrams(m) -> np.ndarray | None:
    """fastText's n-gram bucket vectors (buckets, D), or None for word2vec."""
    if hasattr(m.wv, "vectors_ngrams"):
        return np.array(m.wv.vectors_ngrams, dtype=np.float32)
    return None


def _epoch_loss(m, W: np.ndarray) -> float:
    """gensim's summed training loss per corpus word; gensim's FastText reports none, so for it
    the mean squared entry of W (a number a replay can still compare exactly)."""
    loss = float(m.get_latest_training_loss())
    if loss:
        return loss / m.corpus_total_words
    return float(np.mean(W.astype(np.float64) ** 2))


def oov_check(m, s: dict) -> dict:
    """Vectors of unseen words by the course's n-gram hashing against gensim's ``get_vector``."""
    ngrams = _ngrams(m)
    empty = np.zeros((0, ngrams.shape[1]), np.float32)
    ft = FastTextVectors([], empty, empty, ngrams, s["min_n"], s["max_n"], 0.0)
    diff = max(float(np.abs(ft.vector(w) - m.wv.get_vector(w)).max()) for w in OOV_WORDS)
    return {"words": list(OOV_WORDS), "max_abs_difference_from_gensim": diff}


def train_gensim_vectors(settings: dict, log: RunLog, max_steps: int | None = None,
                         progress: bool = True) -> tuple[dict, dict, dict]:
    """gensim Word2Vec or FastText (one worker: deterministic), one epoch at a time on the
    schedule of ``max_epochs``, validated after each, the best epoch kept."""
    s = settings
    corpus = course_corpus()
    sents = [list(x) for x in corpus.sentences]
    logging.getLogger("gensim").setLevel(logging.ERROR)
    m = gensim_model(s)
    m.build_vocab(sents)
    if len(m.wv.index_to_key) != len(corpus.vocab):
        raise RuntimeError(f"gensim kept {len(m.wv.index_to_key)} words, the course vocabulary "
                           f"has {len(corpus.vocab)}")
    order = np.array([m.wv.key_to_index[w] for w in corpus.vocab.itos])
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = _new_curve()
    epochs = s["max_epochs"] if max_steps is None else min(max_steps, s["max_epochs"])
    reason, t0 = f"the limit of {s['max_epochs']} epochs", time.perf_counter()
    for epoch in range(1, epochs + 1):
        m.train(sents, total_examples=m.corpus_count, epochs=1, compute_loss=True,
                start_alpha=epoch_alpha(s, epoch - 1, s["max_epochs"]),
                end_alpha=epoch_alpha(s, epoch, s["max_epochs"]))
        W = np.array(m.wv.vectors[order], dtype=np.float32)
        if _score_epoch(log, stopper, curve, corpus.vocab, epoch, W, _epoch_loss(m, W),
                        lambda W=W: (W, _ngrams(m)), t0, progress):
            reason = f"early stopping: {stopper.summary()}"
            break
    if max_steps is not None:
        reason = f"max_steps={max_steps}"
    log.event("stop", reason=reason, steps=epoch, best_step=stopper.best_step)
    W, ngrams = stopper.best_state
    arrays = {"W": W, **vocab_to_arrays(corpus.vocab), **_curve_arrays(curve)}
    if ngrams is not None:
        arrays["ngram_vectors"] = ngrams
    meta = {"settings": dict(s), "stopped_by": reason, "best_epoch": stopper.best_step,
            "epochs_run": epoch, "data": _corpus_line(corpus, s)}
    metrics = {"best_epoch": stopper.best_step, "valid_wordsim": stopper.best}
    if max_steps is None:
        _final_records(W, corpus.vocab, meta, metrics)
        if ngrams is not None:
            meta["records"]["oov_check"] = oov_check(m, s)
    return arrays, meta, metrics


# ---------------------------------------------------------------- the course's NumPy and PyTorch
def train_course_word2vec(settings: dict, log: RunLog, max_steps: int | None = None,
                          progress: bool = True) -> tuple[dict, dict, dict]:
    """The course's NumPy or PyTorch skip-gram (one thread) on the ``max_epochs`` schedule,
    validated after every epoch. ``keep="last"`` runs the whole schedule and keeps its last
    epoch; otherwise early stopping keeps the best. Ships W, and C unless ``ship_context`` is
    False."""
    s = settings
    corpus = course_corpus()
    keep = s.get("keep", "best")
    if keep not in ("best", "last"):
        raise ValueError(f"keep must be 'best' (early stopping) or 'last' (the whole schedule), "
                         f"got {keep!r}")
    if keep == "last" and s["patience"] < s["max_epochs"]:
        raise ValueError(f"keep='last' runs the whole schedule: patience ({s['patience']}) must be "
                         f"max_epochs ({s['max_epochs']})")
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = _new_curve("rare_neighbours")
    last = {}
    t0 = time.perf_counter()

    def epoch_end(epoch, W, C, loss):
        W = np.array(W, dtype=np.float32)
        state = (W, np.array(C, dtype=np.float32))
        stop = _score_epoch(log, stopper, curve, corpus.vocab, epoch, W, float(loss),
                            lambda: state, t0, progress,
                            rare_neighbours=rare_neighbour_share(W, corpus.vocab.counts))
        last.update(epoch=epoch, state=state, valid=curve["valid_wordsim"][-1])
        return stop or (max_steps is not None and epoch >= max_steps)

    trainer = {"numpy": train_numpy, "torch": train_torch}[s["impl"]]
    tv = trainer(corpus, model=s["model"], dim=s["dim"], window=s["window"],
                 negative=s["negative"], sample=s["sample"], epochs=s["max_epochs"],
                 alpha=s["alpha"], min_alpha=s["min_alpha"], seed=s["seed"], progress=False,
                 epoch_end=epoch_end)
    epochs_run = len(curve["epoch"])
    reason = (f"max_steps={max_steps}" if max_steps is not None else
              f"early stopping: {stopper.summary()}" if stopper.stopped else
              f"the limit of {s['max_epochs']} epochs")
    if keep == "last":
        reason += "; the last epoch kept (keep='last')"
        (W, C), kept, kept_valid = last["state"], last["epoch"], last["valid"]
    else:
        (W, C), kept, kept_valid = stopper.best_state, stopper.best_step, stopper.best
    log.event("stop", reason=reason, steps=epochs_run, best_step=kept)
    arrays = {"W": W, **({"C": C} if s.get("ship_context", True) else {}),
              **vocab_to_arrays(corpus.vocab), **_curve_arrays(curve)}
    meta = {"settings": dict(s), "stopped_by": reason, "best_epoch": kept,
            "epochs_run": epochs_run, "words_per_second": tv.words_per_second,
            "data": _corpus_line(corpus, s)}
    metrics = {"best_epoch": kept, "valid_wordsim": kept_valid}
    if max_steps is None:
        _final_records(W, corpus.vocab, meta, metrics)
    return arrays, meta, metrics


# ---------------------------------------------------------------- GloVe
def train_glove_vectors(settings: dict, log: RunLog, max_steps: int | None = None,
                        progress: bool = True) -> tuple[dict, dict, dict]:
    """GloVe on the course corpus's harmonic co-occurrences, fitted by glove.c's per-pair AdaGrad
    in batches (:func:`training.glove_torch.train_pairwise`), validated on W + W~ after every epoch,
    early-stopped. A step's value is the epoch's loss J / P. Ships the best epoch's W + W~ as W."""
    s = settings
    corpus = course_corpus()
    counts = glove_counts(s["window"])
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = _new_curve()
    epochs = s["max_epochs"] if max_steps is None else min(max_steps, s["max_epochs"])
    t0 = time.perf_counter()
    diverged = []

    def epoch_end(epoch, vectors, loss):
        if not (np.isfinite(loss) and np.isfinite(vectors).all()):      # a rate too large
            log.step(float(loss))
            diverged.append(epoch)
            log.event("diverged", epoch=epoch)
            return True
        return _score_epoch(log, stopper, curve, corpus.vocab, epoch, vectors, float(loss),
                            lambda: vectors.copy(), t0, progress)

    g = train_pairwise(counts, dim=s["dim"], epochs=epochs, lr=s["lr"], x_max=s["x_max"],
                       alpha=s["alpha"], batch_size=s["batch_size"], seed=s["seed"],
                       progress=False, epoch_end=epoch_end)
    epochs_run = len(g.epoch_loss)
    if diverged and max_steps is None:
        raise FloatingPointError(f"GloVe diverged in epoch {diverged[0]} (lr {s['lr']}): its "
                                 "vectors are not finite")
    reason = (f"diverged in epoch {diverged[0]}" if diverged else
              f"max_steps={max_steps}" if max_steps is not None else
              f"early stopping: {stopper.summary()}" if stopper.stopped else
              f"the limit of {s['max_epochs']} epochs")
    log.event("stop", reason=reason, steps=epochs_run, best_step=stopper.best_step)
    best = stopper.best_state
    arrays = {"W": best, **vocab_to_arrays(corpus.vocab), **_curve_arrays(curve)}
    meta = {"settings": dict(s), "stopped_by": reason, "best_epoch": stopper.best_step,
            "epochs_run": epochs_run, "vectors": "W + W~ (the paper's choice) of the best epoch",
            "pairs": int(counts.nnz), "diverged": bool(diverged),
            "data": f"{_corpus_line(corpus, s)}; {counts.nnz:,} co-occurring pairs within "
                    f"±{s['window']} words"}
    metrics = {"best_epoch": stopper.best_step, "valid_wordsim": stopper.best}
    if max_steps is None:
        _final_records(best, corpus.vocab, meta, metrics)
    return arrays, meta, metrics


# ---------------------------------------------------------------- registry entries
TRAIN = {"gensim": train_gensim_vectors, "torch": train_course_word2vec,
         "numpy": train_course_word2vec, "glove": train_glove_vectors}


def report_wordsim_subset(shipped: ShippedVectors) -> tuple[str, float]:
    """('wordsim_report_rho', the report-half WordSim-353 ρ of the stored vectors)."""
    if shipped.vocab.itos != course_corpus().vocab.itos:
        name = shipped.metadata.get("model", "<name>")
        raise ValueError("the shipped vectors' vocabulary differs from the one the current corpus "
                         f"gives (the corpus or the tokeniser changed): rebuild with "
                         f"`make models NAME={name}`")
    scores = evaluate_vectors(shipped.W, shipped.vocab, "report", analogies=False)
    return "wordsim_report_rho", scores["wordsim"]


def model_entries(entry_class) -> list:
    """The registry entries (:class:`training.registry.ModelEntry`) of the shipped vectors."""
    return [entry_class(name, WHAT[name], LESSON[name], SETTINGS[name],
                        TRAIN[SETTINGS[name]["impl"]], report_wordsim_subset,
                        float16=FLOAT16[name], replay_steps=REPLAY[SETTINGS[name]["impl"]],
                        # gensim's C loops gave the same bytes on an AMD EPYC and an Intel Xeon
                        any_processor=SETTINGS[name]["impl"] == "gensim")
            for name in SETTINGS]
