"""The course's shipped word vectors (lessons 06-10): trained by ``make models NAME=<name>``,
each to its own validated number of epochs, and loaded with :func:`load_word_vectors`.

Protocol (issue 14), the same for every method:

- the corpus: :func:`helpers.course.word_vectors.course_corpus` (the modern-English sentences,
  min_count 5), one vocabulary shared by every method;
- every setting and the number of epochs are chosen on the **validation half** of the
  benchmarks (:mod:`helpers.course.benchmarks`); the learning rate decays linearly over
  ``max_epochs``, the vectors are scored on the validation half's WordSim-353 after every epoch,
  training stops when that score has not improved by ``min_delta`` for ``patience`` epochs, and
  the best epoch's vectors are kept (early stopping); the length of the schedule (``max_epochs``)
  is chosen on the validation half too (:mod:`helpers.course.word2vec_budget`: the shortest
  schedule within 0.005 of the best measured). gensim's models run their whole schedule
  (``patience`` = ``max_epochs``): with the rate still high early on, their validation score dips
  for more than 5 epochs before it rises again (measured: a patience of 5 would stop the 60-epoch
  skip-gram at epoch 24, with 0.415 kept instead of 0.485);
- the numbers a lesson prints come from the **report half**, with 95 % bootstrap intervals
  (:func:`helpers.course.benchmarks.report_intervals`), computed at training time and stored
  with the vectors (``metadata['records']``), beside the full-set WordSim-353 ρ (labelled so),
  analogy accuracy by category, the rank of *queen* for king − man + woman, the out-of-vocabulary
  counts and the BBC topic accuracy of two classifiers over three seeds;
- a training "step" is one epoch: its loss is the training loss the trainer reports for it.

Shipped: gensim skip-gram, CBOW and fastText, the course's PyTorch and NumPy skip-gram (W; C for
PyTorch and NumPy; fastText's n-gram buckets) and GloVe (W + W~ stored as W, :func:`train_glove_vectors`).
Each model is an entry of :data:`training.registry.MODELS` (``wv_<impl>_<model>``); the
vectors are stored as float16, which moves no report-half score by half a unit of the third decimal
or more (the training records the scores from both, the tests read them; see FLOAT16). The vocabulary is stored with each model as UTF-8 text.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from helpers.course.bbc_topics import bbc_groups, bbc_topic_task
from helpers.course.benchmarks import SPLIT_SEED, evaluate_vectors, report_intervals
from helpers.course.corpus import course_corpus
from helpers.course.data import load_word_similarity
from helpers.infra.artifacts import Artifact
from helpers.infra.early_stopping import EarlyStopping
from helpers.infra.runlog import RunLog
from helpers.lib.extrinsic import extrinsic_classification
from helpers.lib.fasttext import FastTextVectors
from helpers.lib.glove import glove_cooccurrence, train_pairwise
from helpers.lib.metrics import analogy_rank, similarity_correlation
from helpers.lib.text import Vocab
from helpers.lib.word2vec import train_numpy, train_torch

# sample and alpha: gensim's defaults (1e-3, 0.025) changed one at a time, measured on the validation
# half; the record is data/models/logs/wv_settings.json (`python -m helpers.course.word2vec_settings`).
# It supports alpha 0.05 (the best setting); sample 1e-4 is not better than 1e-3 there (with alpha
# 0.05: 0.365 against 0.376, 5-epoch runs, a tie): it is kept because an epoch then trains 57 % of
# the words (lesson 07 says so).
WORD2VEC = dict(dim=100, window=5, negative=5, sample=1e-4, alpha=0.05, min_alpha=1e-4, min_count=5,
                max_epochs=20, patience=5, min_delta=0.0, seed=0)
# The schedules chosen by helpers.course.word2vec_budget (validation WordSim-353, record in
# data/models/logs/wv_budget.json): gensim's skip-gram 60 epochs (80 add 0.002), fastText 40 (60 add
# 0.001); the course's PyTorch and NumPy skip-gram 20, ended earlier by their early stopping;
# gensim's CBOW 20 (best epoch 14; 10 epochs give 0.005 less, 30-60 epochs 0.015-0.020 less).
# gensim runs its whole schedule (patience = max_epochs, see above).
# The course's own trainers run their whole schedule too and keep its LAST epoch (keep="last"): on a
# decaying learning rate the schedule is meant to end there, while the best epoch of the validation
# curve is mostly noise (176 pairs; the PyTorch run's best, epoch 11 of 20, was a snapshot with the rate
# still at half its start, whose neighbours were mostly rare words: lesson 07 shows both).
COURSE_SKIPGRAM = dict(WORD2VEC, patience=WORD2VEC["max_epochs"], keep="last")
GENSIM_SKIPGRAM = dict(WORD2VEC, max_epochs=60, patience=60)
GENSIM_CBOW = dict(WORD2VEC, max_epochs=20, patience=20)
# fastText's validation curve dips during the first, high-lr epochs (measured: WordSim .300 after
# epoch 2, .263 after epoch 5) before it can recover as the rate decays: no early stop, keep the best epoch
FASTTEXT = dict(WORD2VEC, min_n=3, max_n=6, buckets=20_000, max_epochs=40, patience=40)
# GloVe: the reference per-pair AdaGrad (helpers.lib.glove.train_pairwise) in batches of 1,024 pairs,
# harmonic (1/d) counts, the paper's alpha 0.75. The learning rate, x_max, window and dimension were
# chosen on the validation half by a staged search from glove.c's defaults, every run given up to the
# paper's 50 epochs with early stopping (`python -m helpers.course.glove_search`, its record is
# data/models/logs/wv_glove_search.json, lesson 08 plots it): lr 0.2, x_max 10/3 (one step of the
# search's grid below 10), the paper's window of 10 and the course's 100 dimensions. The epochs by early
# stopping, patience 8: the validation WordSim moves by a few hundredths from one epoch to the next
# while the loss still falls.
GLOVE = dict(dim=100, window=10, x_max=10 / 3, alpha=0.75, lr=0.2, batch_size=1024, min_count=5,
             max_epochs=50, patience=8, min_delta=0.0, seed=0)
EXTRINSIC = dict(classifiers=("logreg", "knn"), seeds=(0, 1, 2))
REPLAY_EPOCHS = 2          # the test replays the first 2 epochs (steps) from scratch

SETTINGS = {
    "wv_gensim_skipgram": dict(GENSIM_SKIPGRAM, impl="gensim", model="skipgram"),
    "wv_gensim_cbow": dict(GENSIM_CBOW, impl="gensim", model="cbow"),
    "wv_gensim_fasttext": dict(FASTTEXT, impl="gensim", model="fasttext"),
    "wv_torch_skipgram": dict(COURSE_SKIPGRAM, impl="torch", model="skipgram"),
    # C (the context vectors) is shipped once, with the PyTorch model (lesson 06's SGNS-PMI bridge,
    # lesson 07's W + C): the NumPy model's C would cost 3.3 MB of the 40 MB for no lesson
    "wv_numpy_skipgram": dict(COURSE_SKIPGRAM, impl="numpy", model="skipgram", ship_context=False),
    "wv_glove": dict(GLOVE, impl="glove", model="glove"),
}
NAMES = {"gensim-skipgram": "wv_gensim_skipgram", "gensim-cbow": "wv_gensim_cbow", "fasttext": "wv_gensim_fasttext",
         "torch-skipgram": "wv_torch_skipgram", "numpy-skipgram": "wv_numpy_skipgram", "glove": "wv_glove"}


# ---------------------------------------------------------------- vocabulary as text
def vocab_to_arrays(vocab: Vocab) -> dict:
    """The vocabulary as two compact arrays: 'vocab/utf8' (uint8, the words joined by newlines)
    and 'vocab/counts' (int64)."""
    if any("\n" in w for w in vocab.itos):
        raise ValueError("a vocabulary word contains a newline; it cannot be stored as lines")
    return {"vocab/utf8": np.frombuffer("\n".join(vocab.itos).encode("utf-8"), dtype=np.uint8).copy(),
            "vocab/counts": np.asarray(vocab.counts, dtype=np.int64)}


def vocab_from_arrays(arrays: dict) -> Vocab:
    """The vocabulary stored by :func:`vocab_to_arrays`."""
    itos = arrays["vocab/utf8"].tobytes().decode("utf-8").split("\n")
    return Vocab(itos, arrays["vocab/counts"], ())


# ---------------------------------------------------------------- records for the lessons
RARE_BELOW, PROBE = 20, (50, 550)      # "rare": seen fewer than 20 times; probed: the frequency ranks 51-550


def rare_neighbour_share(W: np.ndarray, counts: np.ndarray, k: int = 10, rare_below: int = RARE_BELOW,
                         probe: tuple[int, int] = PROBE) -> float:
    """Of the ``k`` cosine nearest neighbours of each frequent word (frequency ranks ``probe``,
    the 50 most frequent words skipped), the share that occur fewer than ``rare_below`` times in
    the corpus. W (V, D); counts (V,). A word seen a handful of times has a vector estimated from
    a handful of pairs; neighbour lists made mostly of such words are what "junk neighbours" look
    like (lesson 07 shows them); most of the course vocabulary is that rare."""
    counts = np.asarray(counts)
    ranks = np.argsort(-counts, kind="stable")[probe[0]:probe[1]]
    E = np.asarray(W, dtype=np.float64)
    E = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    sims = E[ranks] @ E.T
    sims[np.arange(len(ranks)), ranks] = -np.inf              # a word is not its own neighbour
    top = np.argpartition(-sims, k, axis=1)[:, :k]
    return float(np.mean(counts[top] < rare_below))


def queen_rank(vectors, vocab) -> int:
    """Rank (1 = first) of *queen* for king − man + woman (3CosAdd, the query words excluded)."""
    return analogy_rank(vectors, vocab, "man", "king", "woman", "queen")


def records(W: np.ndarray, vocab: Vocab, extrinsic: bool = True) -> dict:
    """Everything lessons 07-09 print about vectors W: report-half scores with intervals,
    validation-half scores, the full-set WordSim-353 ρ, queen's rank, the BBC topic accuracy."""
    rep = evaluate_vectors(W, vocab, "report")
    val = evaluate_vectors(W, vocab, "validation")
    full = similarity_correlation(W, vocab, load_word_similarity("wordsim353"), "WordSim-353 (all pairs)")
    out = {"split_seed": SPLIT_SEED, "report": rep, "validation": val, "report_intervals": report_intervals(W, vocab),
           "wordsim_full": full.rho, "wordsim_full_oov": full.n_oov, "queen_rank": queen_rank(W, vocab)}
    if extrinsic:
        docs, labels = bbc_topic_task()
        groups = bbc_groups()          # test articles with a copy among the training ones are not scored
        out["bbc_topic_accuracy"] = {
            c: [extrinsic_classification(W, vocab, docs, labels, classifier=c, seed=s, groups=groups).accuracy
                for s in EXTRINSIC["seeds"]]
            for c in EXTRINSIC["classifiers"]}
        out["bbc_seeds"] = list(EXTRINSIC["seeds"])
    return out


def _final_records(W: np.ndarray, vocab: Vocab, meta: dict, metrics: dict) -> None:
    """Add the records (:func:`records`, the float16 check) to ``meta`` and the headline numbers to ``metrics``."""
    rec = records(W, vocab)
    rec["float16_check"] = _float16_check(W, vocab)
    meta["records"] = rec
    metrics.update(report_wordsim=rec["report"]["wordsim"], report_simlex=rec["report"]["simlex"],
                   report_analogy=rec["report"]["analogy"], wordsim_full=rec["wordsim_full"],
                   queen_rank=rec["queen_rank"])


def _float16_check(W: np.ndarray, vocab: Vocab) -> dict:
    """Report-half scores from float32 and from float16 vectors, and whether they agree at 3 decimals
    (a score on a rounding boundary can differ there by a last-place unit: the tests ask for less
    than half a unit, 5e-4)."""
    a = evaluate_vectors(W, vocab, "report")
    b = evaluate_vectors(W.astype(np.float16).astype(np.float32), vocab, "report")
    keys = ("wordsim", "simlex", "analogy")
    same = all(round(a[k], 3) == round(b[k], 3) for k in keys)
    return {"float32": {k: a[k] for k in keys}, "float16": {k: b[k] for k in keys}, "same_at_3_decimals": same}


# ---------------------------------------------------------------- gensim, one epoch at a time
def _gensim_model(s: dict):
    # heavy optional import: gensim is loaded only to train
    from gensim.models import FastText, Word2Vec
    common = dict(vector_size=s["dim"], window=s["window"], negative=s["negative"], sample=s["sample"],
                  alpha=s["alpha"], min_alpha=s["min_alpha"], hs=0, workers=1, seed=s["seed"],
                  min_count=s["min_count"])
    if s["model"] == "fasttext":
        return FastText(sg=1, min_n=s["min_n"], max_n=s["max_n"], bucket=s["buckets"], **common)
    return Word2Vec(sg=int(s["model"] == "skipgram"), **common)


def epoch_alpha(s: dict, epoch: float, epochs: int) -> float:
    """gensim's learning rate after ``epoch`` of ``epochs`` epochs: linear from ``s['alpha']`` to
    ``s['min_alpha']``, the schedule one call to ``train(epochs=epochs)`` follows, here given to
    one call per epoch (so the vectors can be scored between epochs)."""
    return s["alpha"] - (s["alpha"] - s["min_alpha"]) * epoch / epochs


def train_gensim_vectors(settings: dict, log: RunLog, max_steps: int | None = None,
                         progress: bool = True) -> tuple[dict, dict, dict]:
    """gensim Word2Vec (skip-gram or CBOW) or FastText with one worker (deterministic), trained
    one epoch at a time on the learning-rate schedule of ``max_epochs`` epochs, validated after
    each, early-stopped (see the module docstring). Returns (arrays, meta, metrics)."""
    s = settings
    corpus = course_corpus()
    sents = [list(x) for x in corpus.sentences]
    logging.getLogger("gensim").setLevel(logging.ERROR)
    m = _gensim_model(s)
    m.build_vocab(sents)
    order = np.array([m.wv.key_to_index[w] for w in corpus.vocab.itos])
    if len(m.wv.index_to_key) != len(corpus.vocab):
        raise RuntimeError(f"gensim kept {len(m.wv.index_to_key)} words, the course vocabulary has {len(corpus.vocab)}")
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = {"epoch": [], "valid_wordsim": [], "valid_simlex": [], "train_loss": []}
    epochs = s["max_epochs"] if max_steps is None else min(max_steps, s["max_epochs"])
    reason, t0 = f"the limit of {s['max_epochs']} epochs", time.perf_counter()
    for epoch in range(1, epochs + 1):
        m.train(sents, total_examples=m.corpus_count, epochs=1, start_alpha=epoch_alpha(s, epoch - 1, s["max_epochs"]),
                end_alpha=epoch_alpha(s, epoch, s["max_epochs"]), compute_loss=True)
        W = np.array(m.wv.vectors[order], dtype=np.float32)
        loss = _epoch_loss(m, W)
        log.step(loss)
        v = evaluate_vectors(W, corpus.vocab, "validation", analogies=False)
        stop = stopper.update(v["wordsim"], epoch, snapshot=lambda W=W: (W, _ngrams(m)))
        for k, x in (("epoch", epoch), ("valid_wordsim", v["wordsim"]), ("valid_simlex", v["simlex"]),
                     ("train_loss", loss)):
            curve[k].append(x)
        log.event("eval", epoch=epoch, valid_wordsim=v["wordsim"], valid_simlex=v["simlex"], train_loss=loss,
                  seconds=time.perf_counter() - t0,
                  **{k: x for k, x in stopper.decisions[-1].items() if k != "value"})
        if progress:
            print(f"epoch {epoch}: loss {loss:.4f}, validation WordSim {v['wordsim']:.3f}, SimLex {v['simlex']:.3f} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        if stop:
            reason = f"early stopping: {stopper.summary()}"
            break
    if max_steps is not None:
        reason = f"max_steps={max_steps}"
    log.event("stop", reason=reason, steps=epoch, best_step=stopper.best_step)
    # C (gensim's syn1neg) is not shipped (the size budget): the PyTorch skip-gram ships its C
    W, ngrams = stopper.best_state
    arrays = {"W": W, **vocab_to_arrays(corpus.vocab), **{f"curve/{k}": np.asarray(x) for k, x in curve.items()}}
    if ngrams is not None:
        arrays["ngram_vectors"] = ngrams
    meta = {"settings": dict(s), "stopped_by": reason, "best_epoch": stopper.best_step, "epochs_run": epoch,
            "data": f"course corpus: {len(corpus.sentences):,} sentences, {corpus.n_raw_tokens:,} tokens, "
                    f"{len(corpus.vocab):,} words (min_count {s['min_count']})"}
    metrics = {"best_epoch": stopper.best_step, "valid_wordsim": stopper.best}
    if max_steps is None:
        _final_records(W, corpus.vocab, meta, metrics)
        if ngrams is not None:
            meta["records"]["oov_check"] = _oov_check(m, s)
    return arrays, meta, metrics


def _ngrams(m) -> np.ndarray | None:
    """fastText's n-gram bucket vectors (buckets, D), or None for word2vec."""
    return np.array(m.wv.vectors_ngrams, dtype=np.float32) if hasattr(m.wv, "vectors_ngrams") else None


def _epoch_loss(m, W: np.ndarray) -> float:
    """The epoch's "step value" in the log: gensim's summed training loss per corpus word for
    word2vec; gensim's FastText reports no loss, so for it the mean squared entry of W (a
    number the replay test can still compare exactly)."""
    loss = float(m.get_latest_training_loss())
    if loss:
        return loss / m.corpus_total_words
    return float(np.mean(W.astype(np.float64) ** 2))


OOV_WORDS = ("unkingly", "wordvector", "governmentalise", "footballers'", "téléphone")


def _oov_check(m, s: dict) -> dict:
    """Out-of-vocabulary vectors by the course's own n-gram hashing
    (:meth:`helpers.lib.fasttext.FastTextVectors.vector`) against gensim's ``get_vector``, on
    the model gensim holds at the end of training (the hashing does not depend on the epoch)."""
    ngrams = _ngrams(m)
    empty = np.zeros((0, ngrams.shape[1]), np.float32)
    ft = FastTextVectors([], empty, empty, ngrams, s["min_n"], s["max_n"], 0.0)
    diff = max(float(np.abs(ft.vector(w) - m.wv.get_vector(w)).max()) for w in OOV_WORDS)
    return {"words": list(OOV_WORDS), "max_abs_difference_from_gensim": diff}


# ---------------------------------------------------------------- the course's own trainers (NumPy, PyTorch)
def train_course_word2vec(settings: dict, log: RunLog, max_steps: int | None = None,
                          progress: bool = True) -> tuple[dict, dict, dict]:
    """The course's NumPy or PyTorch word2vec (:func:`helpers.lib.word2vec.train_numpy` /
    :func:`~helpers.lib.word2vec.train_torch`, one thread) on the ``max_epochs`` schedule, validated
    after every epoch through their ``epoch_end`` hook. With ``settings["keep"] == "last"`` (the
    shipped runs: see COURSE_SKIPGRAM) the whole schedule runs and the last epoch's vectors are kept;
    otherwise training is early-stopped and the best epoch kept, as for the gensim models. Either
    way ``best_epoch`` in the metadata is the epoch whose vectors are kept. A step is an epoch;
    its value is the trainer's mean loss of that epoch. Ships W, and C when
    ``settings.get("ship_context", True)``."""
    s = settings
    corpus = course_corpus()
    keep = s.get("keep", "best")
    if keep not in ("best", "last"):
        raise ValueError(f"keep must be 'best' (early stopping) or 'last' (the whole schedule), got {keep!r}")
    if keep == "last" and s["patience"] < s["max_epochs"]:
        raise ValueError(f"keep='last' runs the whole schedule: patience ({s['patience']}) must be max_epochs "
                         f"({s['max_epochs']})")
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = {"epoch": [], "valid_wordsim": [], "valid_simlex": [], "train_loss": [], "rare_neighbours": []}
    last = {}
    t0 = time.perf_counter()

    def epoch_end(epoch, W, C, loss):
        log.step(float(loss))
        W = np.array(W, dtype=np.float32)
        v = evaluate_vectors(W, corpus.vocab, "validation", analogies=False)
        stop = stopper.update(v["wordsim"], epoch, snapshot=lambda: (W, np.array(C, dtype=np.float32)))
        if keep == "last":
            last.update(epoch=epoch, state=(W, np.array(C, dtype=np.float32)), valid=v["wordsim"])
        rare = rare_neighbour_share(W, corpus.vocab.counts)
        for k, x in (("epoch", epoch), ("valid_wordsim", v["wordsim"]), ("valid_simlex", v["simlex"]),
                     ("train_loss", float(loss)), ("rare_neighbours", rare)):
            curve[k].append(x)
        log.event("eval", epoch=epoch, valid_wordsim=v["wordsim"], valid_simlex=v["simlex"], train_loss=float(loss),
                  rare_neighbours=rare, seconds=time.perf_counter() - t0,
                  **{k: x for k, x in stopper.decisions[-1].items() if k != "value"})
        if progress:
            print(f"epoch {epoch}: loss {loss:.4f}, validation WordSim {v['wordsim']:.3f}, SimLex {v['simlex']:.3f}, "
                  f"rare neighbours {rare:.2f} ({time.perf_counter() - t0:.0f} s)", flush=True)
        return stop or (max_steps is not None and epoch >= max_steps)

    trainer = {"numpy": train_numpy, "torch": train_torch}[s["impl"]]
    kw = dict(model=s["model"], dim=s["dim"], window=s["window"], negative=s["negative"], sample=s["sample"],
              epochs=s["max_epochs"], alpha=s["alpha"], min_alpha=s["min_alpha"], seed=s["seed"], progress=False,
              epoch_end=epoch_end)
    tv = trainer(corpus, **kw)
    epochs_run = len(curve["epoch"])
    reason = (f"max_steps={max_steps}" if max_steps is not None else
              f"early stopping: {stopper.summary()}" if stopper.stopped else f"the limit of {s['max_epochs']} epochs")
    if keep == "last":
        reason += "; the last epoch kept (keep='last')"
        (W, C), kept, kept_valid = last["state"], last["epoch"], last["valid"]
    else:
        (W, C), kept, kept_valid = stopper.best_state, stopper.best_step, stopper.best
    log.event("stop", reason=reason, steps=epochs_run, best_step=kept)
    arrays = {"W": W, **({"C": C} if s.get("ship_context", True) else {}), **vocab_to_arrays(corpus.vocab),
              **{f"curve/{k}": np.asarray(x) for k, x in curve.items()}}
    meta = {"settings": dict(s), "stopped_by": reason, "best_epoch": kept, "epochs_run": epochs_run,
            "words_per_second": tv.words_per_second,
            "data": f"course corpus: {len(corpus.sentences):,} sentences, {corpus.n_raw_tokens:,} tokens, "
                    f"{len(corpus.vocab):,} words (min_count {s['min_count']})"}
    metrics = {"best_epoch": kept, "valid_wordsim": kept_valid}
    if max_steps is None:
        _final_records(W, corpus.vocab, meta, metrics)
    return arrays, meta, metrics


# ---------------------------------------------------------------- GloVe
def glove_counts(window: int):
    """The GloVe co-occurrence matrix (V, V) of the course corpus: harmonic 1/d counts within
    ±``window`` words of the same sentence (:func:`helpers.lib.glove.glove_cooccurrence`)."""
    corpus = course_corpus()
    return glove_cooccurrence(corpus.sentence_ids(), len(corpus.vocab), window=window)


def train_glove_vectors(settings: dict, log: RunLog, max_steps: int | None = None,
                        progress: bool = True) -> tuple[dict, dict, dict]:
    """GloVe on the course corpus's co-occurrences (:func:`glove_counts`), fitted by
    :func:`helpers.lib.glove.train_pairwise` (the reference code's per-pair AdaGrad, in small
    batches), validated after every epoch on W + W~, early-stopped like the word2vec models.
    A step is an epoch; its value is the epoch's loss J / P. Ships W + W~ of the best epoch as W."""
    s = settings
    corpus = course_corpus()
    counts = glove_counts(s["window"])
    stopper = EarlyStopping(patience=s["patience"], min_delta=s["min_delta"], mode="max")
    curve = {"epoch": [], "valid_wordsim": [], "valid_simlex": [], "train_loss": []}
    epochs = s["max_epochs"] if max_steps is None else min(max_steps, s["max_epochs"])
    t0 = time.perf_counter()
    diverged = []

    def epoch_end(epoch, vectors, loss):
        log.step(float(loss))
        if not (np.isfinite(loss) and np.isfinite(vectors).all()):      # a learning rate too large
            diverged.append(epoch)
            log.event("diverged", epoch=epoch)
            return True
        v = evaluate_vectors(vectors, corpus.vocab, "validation", analogies=False)
        stop = stopper.update(v["wordsim"], epoch, snapshot=lambda: vectors.copy())
        for k, x in (("epoch", epoch), ("valid_wordsim", v["wordsim"]), ("valid_simlex", v["simlex"]),
                     ("train_loss", float(loss))):
            curve[k].append(x)
        log.event("eval", epoch=epoch, valid_wordsim=v["wordsim"], valid_simlex=v["simlex"], train_loss=float(loss),
                  seconds=time.perf_counter() - t0,
                  **{k: x for k, x in stopper.decisions[-1].items() if k != "value"})
        if progress:
            print(f"epoch {epoch}: loss {loss:.4f}, validation WordSim {v['wordsim']:.3f}, SimLex {v['simlex']:.3f} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        return stop

    g = train_pairwise(counts, dim=s["dim"], epochs=epochs, lr=s["lr"], x_max=s["x_max"], alpha=s["alpha"],
                       batch_size=s["batch_size"], seed=s["seed"], progress=False,
                       epoch_end=epoch_end)
    epochs_run = len(g.epoch_loss)
    if diverged and max_steps is None:
        raise FloatingPointError(f"GloVe diverged in epoch {diverged[0]} (lr {s['lr']}): its vectors are not finite")
    reason = (f"diverged in epoch {diverged[0]}" if diverged else f"max_steps={max_steps}" if max_steps is not None else
              f"early stopping: {stopper.summary()}" if stopper.stopped else f"the limit of {s['max_epochs']} epochs")
    log.event("stop", reason=reason, steps=epochs_run, best_step=stopper.best_step)
    best = stopper.best_state
    arrays = {"W": best, **vocab_to_arrays(corpus.vocab), **{f"curve/{k}": np.asarray(x) for k, x in curve.items()}}
    meta = {"settings": dict(s), "stopped_by": reason, "best_epoch": stopper.best_step, "epochs_run": epochs_run,
            "vectors": "W + W~ (the paper's choice) of the best epoch", "pairs": int(counts.nnz),
            "diverged": bool(diverged),
            "data": f"course corpus: {len(corpus.sentences):,} sentences, {corpus.n_raw_tokens:,} tokens, "
                    f"{len(corpus.vocab):,} words (min_count {s['min_count']}); {counts.nnz:,} co-occurring pairs "
                    f"within ±{s['window']} words"}
    metrics = {"best_epoch": stopper.best_step, "valid_wordsim": stopper.best}
    if max_steps is None:
        _final_records(best, corpus.vocab, meta, metrics)
    return arrays, meta, metrics


# ---------------------------------------------------------------- loading
@dataclass
class ShippedVectors:
    """Shipped word vectors: W (V, D) float32 input vectors, C (V, D) output (context) vectors
    or None, the vocabulary, and ``metadata`` (settings, metrics, records, curve, training time)."""

    W: np.ndarray
    C: np.ndarray | None
    vocab: Vocab
    metadata: dict

    def __iter__(self):             # W, C, vocab, metadata = load_word_vectors(name)
        return iter((self.W, self.C, self.vocab, self.metadata))


def load_vectors_artifact(artifact: Artifact) -> ShippedVectors:
    """The vectors stored by a trainer of this module (read through :func:`helpers.course.models.load_model`)."""
    a = artifact.arrays
    curve = {k.split("/", 1)[1]: a[k].tolist() for k in a if k.startswith("curve/")}
    meta = {**artifact.meta, "curve": curve}
    if "ngram_vectors" in a:
        meta["ngram_vectors"] = a["ngram_vectors"]
    return ShippedVectors(a["W"], a.get("C"), vocab_from_arrays(a), meta)


def report_wordsim_subset(shipped: ShippedVectors) -> tuple[str, float]:
    """('wordsim_report_rho', WordSim-353 ρ on the report half) from the stored vectors."""
    if shipped.vocab.itos != course_corpus().vocab.itos:
        raise ValueError("the shipped vectors' vocabulary differs from the one the current corpus gives "
                         f"(the corpus or the tokeniser changed): rebuild with `make models NAME={_model_name(shipped)}`")
    return "wordsim_report_rho", evaluate_vectors(shipped.W, shipped.vocab, "report", analogies=False)["wordsim"]


def _model_name(shipped: ShippedVectors) -> str:
    return shipped.metadata.get("model", "<name>")


WHAT = {
    "wv_gensim_skipgram": "gensim skip-gram word vectors (W), lessons 07-09",
    "wv_gensim_cbow": "gensim CBOW word vectors (W), lessons 07-09",
    "wv_gensim_fasttext": "gensim fastText word vectors (W) and n-gram buckets, lessons 08-09",
    "wv_torch_skipgram": "the course's PyTorch skip-gram word vectors (W and C), lessons 06-09",
    "wv_numpy_skipgram": "the course's NumPy skip-gram word vectors (W), lessons 07-09",
    "wv_glove": "GloVe word vectors (W + W~ stored as W), lessons 08-09",
}
LESSON = {"wv_gensim_skipgram": "07", "wv_gensim_cbow": "07", "wv_gensim_fasttext": "08", "wv_torch_skipgram": "07",
          "wv_numpy_skipgram": "07", "wv_glove": "08"}
# float16 where it moves no report-half score by half a unit of the third decimal or more
# (_float16_check records both, tests/test_word_vector_models.py checks). One score sits on a rounding
# boundary: the 60-epoch gensim skip-gram's WordSim-353 is 0.56749 from float32 and 0.56770 from float16;
# the lessons print the record (0.567). Storing that W as float32 would cost 3 MB and take data/models
# over its 40 MB.
FLOAT16 = {"wv_gensim_skipgram": ("W",), "wv_gensim_cbow": ("W",), "wv_gensim_fasttext": ("W", "ngram_vectors"),
           "wv_torch_skipgram": ("W", "C"), "wv_numpy_skipgram": ("W",), "wv_glove": ("W",)}
TRAIN = {"gensim": train_gensim_vectors, "torch": train_course_word2vec, "numpy": train_course_word2vec,
         "glove": train_glove_vectors}
REPLAY = {"gensim": REPLAY_EPOCHS, "torch": 1, "numpy": 1, "glove": 1}   # epochs the test replays from scratch


def model_entries(entry_class) -> list:
    """The registry entries (:class:`helpers.course.models.ModelEntry`) of the shipped vectors."""
    return [entry_class(name, WHAT[name], LESSON[name], SETTINGS[name], TRAIN[SETTINGS[name]["impl"]],
                        report_wordsim_subset, float16=FLOAT16[name],
                        replay_steps=REPLAY[SETTINGS[name]["impl"]],
                        # gensim's C loops: the same bytes on an AMD EPYC and an Intel Xeon (measured)
                        any_processor=SETTINGS[name]["impl"] == "gensim")
            for name in SETTINGS]
