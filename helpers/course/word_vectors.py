"""The course's word vectors (lessons 07-10), as the lessons read them: the shipped, checksum-verified
vectors of ``data/models/`` (word2vec in three implementations, gensim CBOW, fastText, GloVe;
trained by ``make models``, :mod:`helpers.course.word_vector_models`) and the count-based LSA and
PPMI-SVD vectors at their validated settings (:mod:`helpers.course.count_records`, cached: they
rebuild in seconds).

Every method is trained on the same sentences (:func:`helpers.course.corpus.modern_english_sentences`)
with the same vocabulary (min_count 5), so lesson 09 can compare them in one table.
"""
from __future__ import annotations

from helpers.course.count_records import (  # noqa: F401  (re-exported: lessons 05-09 import them from here)
    VALIDATED_COUNT_SETTINGS,
    CountVectorsCodec,
    validated_count_key,
    validated_count_vectors,
)
from helpers.course.models import load_model, read_manifest
from helpers.course.word_vector_models import NAMES, ShippedVectors
from helpers.lib.fasttext import FastTextVectors


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
