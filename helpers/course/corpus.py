"""The course's shared modern-English corpus for the word-level lessons (02-03, 05-10).

Wikipedia (105 articles, ~420k words) + BBC News (2,225 articles, ~850k words):
about 1.3M tokens of modern English, the same text for every word-vector method so
their scores can be compared in one table.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from helpers.course.data import load_bbc_news, load_wikipedia
from helpers.infra.cache import cached
from helpers.infra.checksums import DataError
from helpers.lib.near_duplicates import near_duplicate_groups
from helpers.lib.text import split_sentences, tokenize
from helpers.lib.word2vec import Corpus, prepare_corpus


@lru_cache(maxsize=2)
def modern_english_documents() -> tuple[tuple[str, str], ...]:
    """(source, text) for every document: ('wikipedia', ...) then ('bbc:<topic>', ...)."""
    docs = [("wikipedia", text) for text in load_wikipedia().values()]
    docs += [(f"bbc:{a.topic}", f"{a.title}.\n{a.text}") for a in load_bbc_news()]
    return tuple(docs)


GROUPS_VERSION = "v1-n12-t0.5"     # near_duplicate_groups' defaults; the data files are checksummed on load


@lru_cache(maxsize=1)
def document_groups() -> tuple[int, ...]:
    """The near-duplicate group of every document of :func:`modern_english_documents` (same order):
    :func:`helpers.lib.near_duplicates.near_duplicate_groups` over their word tokens (12-grams, half of
    the shorter document shared). The BBC News collection files 341 of its articles more than once
    (170 groups, mostly a story and its later version); split by these groups, no held-out document
    has a copy in the training text. About 4 s the first time, then read from the cache
    (:func:`helpers.infra.cache.cached`) by every later process."""
    def build():
        return {"groups": np.array(near_duplicate_groups([tokenize(text) for _, text in modern_english_documents()]))}

    return tuple(int(g) for g in cached("corpus-document-groups", GROUPS_VERSION, build, verbose=False)["groups"])


@lru_cache(maxsize=2)
def modern_english_sentences(min_tokens: int = 3) -> tuple[tuple[str, ...], ...]:
    """The corpus as tokenised sentences (lower-case word tokens, no punctuation).

    Sentences shorter than ``min_tokens`` tokens (headings, debris) are dropped.
    Returns a tuple of tuples so the cached value cannot be modified by accident.
    """
    out = []
    for _, text in modern_english_documents():
        for sent in split_sentences(text):
            toks = tokenize(sent)
            if len(toks) >= min_tokens:
                out.append(tuple(toks))
    _check_not_empty(out, min_tokens)
    return tuple(out)


def _check_not_empty(sentences, min_tokens: int) -> None:
    if not sentences:
        n = len(modern_english_documents())
        raise DataError(f"the corpus has no tokens: tokenize() found no sentence of {min_tokens} or more "
                        f"words (letters or digits) in its {n} texts. Run `make doctor` to check the data files")


@lru_cache(maxsize=2)
def document_sentences(min_tokens: int = 3) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """The shared corpus as documents of tokenised sentences.

    The same sentences as :func:`helpers.course.corpus.modern_english_sentences`, grouped by
    document, in the same order: needed to keep held-out text in other documents than
    the training text, and for next-sentence pairs (consecutive sentences of a document).
    """
    docs = []
    for _, text in modern_english_documents():
        sents = tuple(tuple(t) for t in (tokenize(s) for s in split_sentences(text)) if len(t) >= min_tokens)
        if sents:
            docs.append(sents)
    _check_not_empty(docs, min_tokens)
    return tuple(docs)


@lru_cache(maxsize=1)
def course_corpus() -> Corpus:
    """The shared modern-English corpus prepared with min_count=5: the vocabulary and id
    stream of every word-vector method of the course (:func:`helpers.lib.word2vec.prepare_corpus`)."""
    return prepare_corpus(modern_english_sentences(), min_count=5)
