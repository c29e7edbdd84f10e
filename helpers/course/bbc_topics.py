"""The BBC News topic task (business, entertainment, politics, sport, tech; 2,225 articles): lesson
01's classifier and the downstream evaluations of lesson 09."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.course.corpus import document_groups, modern_english_documents
from helpers.course.data import load_bbc_news
from helpers.lib.near_duplicates import without_copies
from helpers.lib.text import tokenize


def bbc_groups() -> np.ndarray:
    """(2,225,) int: each BBC article's near-duplicate group."""
    sources = [src for src, _ in modern_english_documents()]
    bbc = [i for i, src in enumerate(sources) if src.startswith("bbc:")]
    groups = np.array(document_groups())[bbc]
    if len(groups) != len(load_bbc_news()):
        raise RuntimeError(f"{len(groups)} BBC documents in the corpus but {len(load_bbc_news())} "
                           "articles: the data changed")
    return groups


@dataclass
class TopicData:
    """The articles (headline and body), their topics as ints, and three index arrays into them."""

    topics: list[str]
    docs: list[str]
    labels: np.ndarray
    train: np.ndarray
    valid: np.ndarray
    test: np.ndarray


def bbc_topic_data(seed: int = 0) -> TopicData:
    """All articles shuffled with ``seed`` into 70/15/15 % splits, copies of training held out."""
    articles = load_bbc_news()
    topics = sorted({a.topic for a in articles})
    labels = np.array([topics.index(a.topic) for a in articles], dtype=np.int64)
    order = np.random.default_rng(seed).permutation(len(articles))
    a = round(0.7 * len(order))
    b = a + round(0.15 * len(order))
    train, groups = order[:a], bbc_groups()
    valid, test = (without_copies(split, train, groups) for split in (order[a:b], order[b:]))
    return TopicData(topics, [f"{x.title}\n{x.text}" for x in articles], labels, train, valid, test)


def bbc_topic_task() -> tuple[list[list[str]], list[str]]:
    """The articles as token lists (headline and body) and their topics (lesson 09's task)."""
    articles = load_bbc_news()
    return [tokenize(a.title + " " + a.text) for a in articles], [a.topic for a in articles]
