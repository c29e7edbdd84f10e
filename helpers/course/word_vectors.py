"""The course's trained word vectors (lessons 07-10), each trained once on the shared corpus and
cached: word2vec in three implementations, GloVe, fastText, and the count-based LSA and PPMI-SVD
vectors; and the list of cache jobs that builds whatever is missing, side by side.

Every method is trained on the same sentences (:func:`helpers.course.corpus.modern_english_sentences`)
with the same vocabulary (min_count 5), so lesson 09 can compare them in one table. The cache keys
(names and versions) are part of the course: changing one retrains that entry on every machine.
"""
from __future__ import annotations

import time

import numpy as np

from helpers.course.corpus import course_corpus, modern_english_sentences
from helpers.course.count_records import (  # noqa: F401  (re-exported: lessons 05-09 import them from here)
    VALIDATED_COUNT_SETTINGS,
    CountVectorsCodec,
    validated_count_key,
    validated_count_vectors,
)
from helpers.course.models import load_model, read_manifest
from helpers.course.scaling_grid import course_scaling_grid, course_scaling_key
from helpers.course.word_vector_models import NAMES, ShippedVectors
from helpers.infra.artifacts import array_to_strings, strings_to_array
from helpers.infra.cache import CacheJob, build_missing, cached, settings_version, with_overrides
from helpers.lib.counting import cooccurrence_matrix, ppmi
from helpers.lib.fasttext import FastTextVectors, train_fasttext
from helpers.lib.glove import GloVeVectors, glove_cooccurrence
from helpers.lib.glove import train_torch as train_glove_torch
from helpers.lib.lsa import lsa_word_vectors, svd_vectors
from helpers.lib.word2vec import (
    TrainedVectors,
    train_gensim,
    train_numpy,
    train_torch,
)

# ---------------------------------------------------------------- word2vec (lesson 07)
COURSE_CONFIG = dict(dim=100, window=5, negative=5, sample=1e-3, epochs=5, alpha=0.025, min_alpha=1e-4, seed=0)
COURSE_METHODS = ("numpy-skipgram", "numpy-cbow", "torch-skipgram", "torch-cbow", "gensim-skipgram", "gensim-cbow")
_CACHE_VERSION = "v1-" + "-".join(f"{k}{v}" for k, v in COURSE_CONFIG.items())


def course_vectors(name: str, progress: bool = True) -> TrainedVectors:
    """Vectors of ``name`` (one of COURSE_METHODS: '<numpy|torch|gensim>-<skipgram|cbow>')
    trained on the course corpus with COURSE_CONFIG (100 dims, window 5, 5 negatives,
    subsampling 1e-3, 5 epochs, gensim with 2 workers). Trained once and cached
    (:mod:`helpers.infra.cache`); a missing cache is rebuilt, which says so and takes 10-60 s per model
    on an idle 2-core machine. ``seconds`` and ``words_per_second`` are from that run."""
    key = course_vectors_key(name)   # checks the name
    impl, model = name.split("-")

    def build():
        corpus = course_corpus()
        if impl == "numpy":
            return train_numpy(corpus, model, progress=progress, **COURSE_CONFIG)
        if impl == "torch":
            return train_torch(corpus, model, progress=progress, **COURSE_CONFIG)
        return train_gensim(corpus, model, workers=2, **COURSE_CONFIG)

    return cached(*key, build, codec=TrainedVectors)


def course_vectors_key(name: str) -> tuple[str, str]:
    """The cache entry (name, version) of :func:`course_vectors` for ``name``."""
    if name not in COURSE_METHODS:
        raise ValueError(f"unknown method {name!r}; choose one of {COURSE_METHODS}")
    # '-cbow2': the CBOW runs were rebuilt when their update rule changed to word2vec's;
    # '-table': the NumPy and PyTorch runs were rebuilt when they started drawing negatives from
    # word2vec.c's unigram table (helpers.lib.negative_sampling.unigram_table)
    suffix = ("-cbow2" if name.endswith("cbow") else "") + ("-table" if not name.startswith("gensim") else "")
    return f"word2vec-{name}", _CACHE_VERSION + suffix


# ---------------------------------------------------------------- GloVe (lesson 08)
# 10 epochs: measured on the course corpus, WordSim-353 / SimLex-999 / analogies were
# 0.247 / 0.151 / 2.6 % after 10 epochs and 0.256 / 0.142 / 2.4 % after 15 (a third more time)
COURSE_GLOVE_CONFIG = dict(window=10, dim=100, epochs=10, lr=0.5, x_max=100.0, alpha=0.75, batch_size=65536, seed=0)


def course_glove(progress: bool = True, **overrides) -> GloVeVectors:
    """GloVe (PyTorch, CPU) on the course corpus with the word2vec vocabulary
    (:func:`course_corpus`, min_count 5), trained once with
    COURSE_GLOVE_CONFIG (updated by ``overrides``) and cached (:mod:`helpers.infra.cache`).
    ``seconds`` is the training time of that run (co-occurrence counting not included;
    ``config['count_seconds']`` holds it)."""
    cfg = with_overrides(COURSE_GLOVE_CONFIG, overrides, "GloVe")

    def build():
        corpus = course_corpus()
        t = time.perf_counter()
        sents = np.split(corpus.ids, np.flatnonzero(np.diff(corpus.sentence)) + 1)
        counts = glove_cooccurrence(sents, len(corpus.vocab), window=cfg["window"])
        t_count = time.perf_counter() - t
        kw = {k: v for k, v in cfg.items() if k != "window"}
        gv = train_glove_torch(counts, vocab=corpus.vocab, progress=progress, **kw)
        gv.config.update(window=cfg["window"], count_seconds=t_count, pairs=int(counts.nnz))
        return gv

    return cached(*course_glove_key(**overrides), build, codec=GloVeVectors)


def course_glove_key(**overrides) -> tuple[str, str]:
    """The cache entry (name, version) of :func:`course_glove` with these settings."""
    return "glove-course", settings_version(with_overrides(COURSE_GLOVE_CONFIG, overrides, "GloVe"))


# ---------------------------------------------------------------- fastText (lesson 08)
COURSE_FASTTEXT_CONFIG = dict(dim=100, window=5, min_count=5, epochs=5, min_n=3, max_n=6, buckets=200_000,
                              sg=True, negative=5, sample=1e-3, seed=0, workers=2)


def course_fasttext_key(**overrides) -> tuple[str, str]:
    """The cache entry (name, version) of :func:`course_fasttext` with these settings."""
    return "fasttext-course", settings_version(with_overrides(COURSE_FASTTEXT_CONFIG, overrides, "fastText"))


def course_fasttext(**overrides) -> FastTextVectors:
    """gensim FastText on :func:`helpers.course.corpus.modern_english_sentences` with
    COURSE_FASTTEXT_CONFIG (updated by ``overrides``), trained once and cached."""
    cfg = with_overrides(COURSE_FASTTEXT_CONFIG, overrides, "fastText")
    return cached(*course_fasttext_key(**overrides), lambda: train_fasttext(modern_english_sentences(), **cfg),
                  codec=FastTextVectors)


# ---------------------------------------------------------------- LSA and PPMI-SVD (lessons 05-06)
def count_based_vectors(k: int = 100, window: int = 5) -> dict:
    """LSA and PPMI-SVD vectors on the course corpus, with the word2vec vocabulary
    (:func:`course_corpus`), built by :mod:`helpers.lib.lsa` and :mod:`helpers.lib.counting` and cached.

    LSA: TF-IDF word-document matrix (10 sentences per document) -> truncated SVD, U_k Σ_k.
    PPMI-SVD: co-occurrences within ±``window`` words in a sentence -> PPMI with context
    smoothing 0.75 -> truncated SVD, U_k Σ_k^1/2. Returns {name: (vectors (V, k), vocab, seconds)}.
    """

    def build():
        corpus = course_corpus()
        t = time.perf_counter()
        lsa = lsa_word_vectors(corpus.sentences, corpus.vocab, k).astype(np.float32)
        t_lsa = time.perf_counter() - t
        t = time.perf_counter()
        sents = np.split(corpus.ids, np.flatnonzero(np.diff(corpus.sentence)) + 1)
        counts = cooccurrence_matrix(sents, len(corpus.vocab), window=window)
        vec = svd_vectors(ppmi(counts, alpha=0.75), k, weighting="sqrtS").astype(np.float32)
        t_ppmi = time.perf_counter() - t
        return {"LSA": (lsa, corpus.vocab, t_lsa), "PPMI-SVD": (vec, corpus.vocab, t_ppmi)}

    return cached(*count_based_key(k, window), build, codec=CountVectorsCodec)


def count_based_key(k: int = 100, window: int = 5) -> tuple[str, str]:
    """The cache entry (name, version) of :func:`count_based_vectors`."""
    return "count-vectors", f"v1-k{k}-w{window}"


class KeyedVectorsCodec:
    """How a gensim ``KeyedVectors`` (e.g. lesson 10's static word2vec baseline) is stored in
    the cache without pickle: its words and its (V, D) vectors; read back into a KeyedVectors
    (``most_similar``, ``similarity``, ``kv[word]`` and ``word in kv`` work as before)."""

    @staticmethod
    def to_arrays(kv) -> tuple[dict, dict]:
        return {"words": strings_to_array(kv.index_to_key), "vectors": kv.vectors}, {}

    @staticmethod
    def from_arrays(arrays: dict, meta: dict):
        # heavy optional import: loaded only when gensim is used
        from gensim.models import KeyedVectors
        kv = KeyedVectors(vector_size=arrays["vectors"].shape[1], count=0, dtype=arrays["vectors"].dtype)
        kv.add_vectors(array_to_strings(arrays["words"]), arrays["vectors"])
        return kv


# ---------------------------------------------------------------- all of them
def course_cache_jobs(scaling_grid: bool = True) -> list:
    """The cached trainings behind lessons 07-09 as :class:`helpers.infra.cache.CacheJob`s, the
    longest first (seconds measured alone on an idle 2-core machine): NumPy skip-gram
    (~75 s), GloVe (~60 s), PyTorch skip-gram (~35 s), NumPy CBOW (~30 s), fastText (~20 s,
    2 threads), PyTorch CBOW (~15 s), gensim skip-gram (~10 s, 2 threads), LSA + PPMI-SVD
    (~3 s), gensim CBOW (~3 s); and, if ``scaling_grid``, lesson 09's corpus-size x dimension
    grid of gensim CBOW runs (~35 s, 2 threads)."""

    def w2v(name):
        return CacheJob(f"word2vec {name}", *course_vectors_key(name), course_vectors,
                        {"name": name, "progress": False})

    grid = [CacheJob("word2vec scaling grid", *course_scaling_key(), course_scaling_grid, {"progress": False})]
    return [w2v("numpy-skipgram"),
            CacheJob("GloVe", *course_glove_key(), course_glove, {"progress": False}),
            w2v("torch-skipgram"), w2v("numpy-cbow"),
            CacheJob("fastText", *course_fasttext_key(), course_fasttext),
            *(grid if scaling_grid else []),
            w2v("torch-cbow"), w2v("gensim-skipgram"),
            CacheJob("LSA and PPMI-SVD", *count_based_key(), count_based_vectors),
            w2v("gensim-cbow")]


def prepare_course_vectors(workers: int | None = None, scaling_grid: bool = True) -> dict:
    """Train whatever lessons 07-09 need that is not cached yet, ``workers`` trainings
    at a time (default: one per CPU core) — see :func:`helpers.infra.cache.build_missing`.
    ``scaling_grid=False`` leaves out lesson 09's corpus-size x dimension grid.
    Returns {label: seconds} of what was built."""
    return build_missing(course_cache_jobs(scaling_grid), workers=workers)


def course_embeddings() -> dict:
    """{name: (vectors, vocab, training seconds)} for every method of the course trained on
    the shared corpus: LSA, PPMI-SVD and the six word2vec runs of lesson 07 (input vectors
    W). Everything comes from (or is built into) the cache. Add a method with one line:
    ``methods['GloVe'] = (vectors, vocab, seconds)``."""
    out = dict(count_based_vectors())
    for name in COURSE_METHODS:
        tv = course_vectors(name)
        impl, model = name.split("-")
        label = {"numpy": "NumPy", "torch": "PyTorch", "gensim": "gensim"}[impl] + " " + \
            {"skipgram": "skip-gram", "cbow": "CBOW"}[model]
        out[label] = (tv.W, tv.vocab, tv.seconds)
    return out


# ---------------------------------------------------------------- the shipped vectors (data/models/)
def load_word_vectors(name: str) -> ShippedVectors:
    """The shipped, checksum-verified vectors ``name`` — one of SHIPPED_VECTORS (e.g.
    'gensim-skipgram') or its model name ('wv_gensim_skipgram'):
    ``W, C, vocab, metadata = load_word_vectors(name)``. W (V, D) float32 input vectors, C the
    output (context) vectors or None where they are not shipped, the vocabulary shared by all
    of them, and ``metadata`` (settings, metrics, 'records': report-half scores with intervals,
    analogy accuracy by category, queen's rank, BBC topic accuracy; 'curve': validation score
    per epoch; 'train_seconds'; for fastText 'ngram_vectors'). Trained by
    ``make models NAME=<model name>`` (:mod:`helpers.course.word_vector_models`)."""
    model = NAMES.get(name, name)
    if model not in NAMES.values():
        raise KeyError(f"no shipped word vectors named {name!r}; the course has {sorted(NAMES)}")
    return load_model(model)


SHIPPED_VECTORS = tuple(NAMES)


def load_shipped_fasttext() -> FastTextVectors:
    """The shipped fastText vectors (``make models NAME=wv_gensim_fasttext``) as a
    :class:`helpers.lib.fasttext.FastTextVectors`: ``.vector(word)`` works for any word — an
    unseen one gets the mean of its n-gram bucket vectors, hashed by the course's
    :func:`helpers.lib.fasttext.ngram_buckets` (checked against gensim at training time:
    ``metadata['records']['oov_check']``). The words' own vectors are not shipped, so
    ``word_vectors`` holds W (the vocabulary vectors, own vector and n-grams averaged) too."""
    W, _, vocab, meta = load_word_vectors("fasttext")
    s = meta["settings"]
    return FastTextVectors(vocab.itos, W, W, meta["ngram_vectors"], s["min_n"], s["max_n"], meta["train_seconds"], s)


SHIPPED_LABELS = {"gensim-skipgram": "gensim skip-gram", "gensim-cbow": "gensim CBOW", "fasttext": "fastText",
                  "torch-skipgram": "PyTorch skip-gram", "numpy-skipgram": "NumPy skip-gram", "glove": "GloVe"}


def shipped_embeddings(count_based: bool = True) -> dict:
    """{label: (W, vocab, training seconds)} for every shipped method (:func:`load_word_vectors`)
    and, with ``count_based``, PPMI-SVD and LSA at their validated settings
    (:func:`validated_count_vectors`) — lesson 09's table, one shared vocabulary. The records
    each method was shipped with are in ``load_word_vectors(name).metadata['records']``."""
    shipped = read_manifest()["models"]
    out = dict(validated_count_vectors()) if count_based else {}
    for name, label in SHIPPED_LABELS.items():
        if NAMES[name] in shipped:
            W, _, vocab, meta = load_word_vectors(name)
            out[label] = (W, vocab, meta["train_seconds"])
    return out
