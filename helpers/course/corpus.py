"""The course's shared modern-English corpus for the word-level lessons (02-03, 05-10):
Wikipedia (105 articles) and BBC News (2,225 articles), about 1.3M tokens."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from helpers.course.data import load_bbc_news, load_wikipedia
from helpers.infra.cache import cached
from helpers.infra.checksums import DataError
from helpers.lib.near_duplicates import near_duplicate_groups
from helpers.lib.text import split_sentences, tokenize
from helpers.lib.word2vec import Corpus, prepare_corpus

GROUPS_VERSION = "v2-n12-t0.5"     # near_duplicate_groups' defaults; the data are checksummed


@lru_cache(maxsize=2)
def modern_english_documents() -> tuple[tuple[str, str], ...]:
    """(source, text) for every document: ('wikipedia', ...) then ('bbc:<topic>', ...)."""
    docs = [("wikipedia", text) for text in load_wikipedia().values()]
    docs += [(f"bbc:{a.topic}", f"{a.title}.\n{a.text}") for a in load_bbc_news()]
    return tuple(docs)


@lru_cache(maxsize=1)
def document_groups() -> tuple[int, ...]:
    """The near-duplicate group of every modern-English document (cached)."""
    def build():
        texts = [tokenize(text) for _, text in modern_english_documents()]
        return {"groups": np.array(near_duplicate_groups(texts))}

    groups = cached("corpus-document-groups", GROUPS_VERSION, build, verbose=False)["groups"]
    return tuple(int(g) for g in groups)


@lru_cache(maxsize=2)
def document_sentences(min_tokens: int = 3) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """The corpus as documents of tokenised sentences of at least ``min_tokens`` word tokens."""
    docs = []
    for _, text in modern_english_documents():
        tokens = (tuple(tokenize(s)) for s in split_sentences(text))
        sents = tuple(t for t in tokens if len(t) >= min_tokens)
        if sents:
            docs.append(sents)
    if not docs:
        raise DataError(f"the corpus has no tokens: tokenize() found no sentence of {min_tokens} "
                        "or more words (letters or digits) in its "
                        f"{len(modern_english_documents())} texts. Run `make doctor` to check the "
                        "data files")
    return tuple(docs)


@lru_cache(maxsize=2)
def modern_english_sentences(min_tokens: int = 3) -> tuple[tuple[str, ...], ...]:
    """The sentences of :func:`document_sentences`, in order, as one tuple."""
    return tuple(s for doc in document_sentences(min_tokens) for s in doc)


@lru_cache(maxsize=1)
def course_corpus() -> Corpus:
    """The corpus prepared with min_count=5: every word-vector method's vocabulary and ids."""
    return prepare_corpus(modern_english_sentences(), min_count=5)
