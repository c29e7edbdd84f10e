"""The BBC News topic task (business, entertainment, politics, sport, tech; 2,225 articles):
the labelled data of lesson 01's classifier and of the downstream evaluations of lesson 09."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import train_test_split

from helpers.course.corpus import document_groups, modern_english_documents
from helpers.course.data import load_bbc_news
from helpers.lib.batching import train_valid_test_split
from helpers.lib.near_duplicates import without_copies
from helpers.lib.text import tokenize


def bbc_groups() -> np.ndarray:
    """(2,225,) int: the near-duplicate group of every BBC article, in :func:`load_bbc_news` order
    (:func:`helpers.course.corpus.document_groups`; the collection files 341 articles more than once).
    Articles of one group share a story, so a held-out article with a copy in training is text seen with its label."""
    sources = [src for src, _ in modern_english_documents()]
    groups = np.array(document_groups())[[i for i, src in enumerate(sources) if src.startswith("bbc:")]]
    if len(groups) != len(load_bbc_news()):
        raise RuntimeError(f"{len(groups)} BBC documents in the corpus but {len(load_bbc_news())} articles: the data changed")
    return groups



@dataclass
class TopicData:
    """BBC News split into train/valid/test documents with integer labels."""

    topics: list[str]
    docs: list[str]
    labels: np.ndarray  # (n_docs,) int64
    train: np.ndarray   # index arrays into docs
    valid: np.ndarray
    test: np.ndarray


def bbc_topic_data(seed: int = 0, fractions=(0.7, 0.15, 0.15)) -> TopicData:
    """All 2,225 BBC articles (headline + body), shuffled into three splits with ``seed``; validation and
    test leave out the articles with a copy in the training split (:func:`bbc_groups`)."""
    articles = load_bbc_news()
    topics = sorted({a.topic for a in articles})
    docs = [f"{a.title}\n{a.text}" for a in articles]
    labels = np.array([topics.index(a.topic) for a in articles], dtype=np.int64)
    tr, va, te = train_valid_test_split(len(docs), fractions, np.random.default_rng(seed))
    groups = bbc_groups()
    return TopicData(topics, docs, labels, tr, without_copies(va, tr, groups), without_copies(te, tr, groups))


def bbc_topic_task() -> tuple[list[list[str]], list[str]]:
    """BBC News articles as token lists and their topics (the course's extrinsic task)."""
    arts = load_bbc_news()
    return [tokenize(a.title + " " + a.text) for a in arts], [a.topic for a in arts]


def bbc_split(test_fraction: float = 0.3, seed: int = 0):
    """BBC News articles (title + text, tokenised) split into a stratified training pool and a
    fixed test set, less the test articles with a copy in the pool (:func:`bbc_groups`).
    Returns (pool_docs, pool_labels (N,) int64, test_docs, test_labels, topics)."""

    docs, topics = bbc_topic_task()
    names = sorted(set(topics))
    y = np.array([names.index(t) for t in topics], dtype=np.int64)
    idx_pool, idx_test = train_test_split(np.arange(len(y)), test_size=test_fraction, random_state=seed, stratify=y)
    idx_test = without_copies(idx_test, idx_pool, bbc_groups())
    return ([docs[i] for i in idx_pool], y[idx_pool], [docs[i] for i in idx_test], y[idx_test], names)
