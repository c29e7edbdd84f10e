"""The data of the word-level language models of lessons 02-03 (the shipped models:
:mod:`helpers.course.word_lms`)."""
from __future__ import annotations

import numpy as np

from helpers.course.corpus import document_groups, modern_english_documents
from helpers.lib.near_duplicates import split_by_group
from helpers.lib.rnn_lm import EOS, LMData
from helpers.lib.text import UNK, Vocab, split_sentences, tokenize


def lm_data(vocab_size: int = 3000, fractions=(0.9, 0.05, 0.05), seed: int = 0,
            keep_copies_together: bool = True) -> LMData:
    """The course's modern-English corpus (Wikipedia + BBC News, ~1.3M tokens) for language
    modelling. Documents are shuffled with ``seed`` and split by ``fractions``, near-duplicate
    articles kept together (:func:`helpers.course.corpus.document_groups`: the BBC collection files
    some stories twice, and a copy in training would let a 5-gram recite the test text); the
    vocabulary is the ``vocab_size`` most frequent training words, everything else becomes ``<unk>``
    (so perplexities are over this closed vocabulary). ``keep_copies_together=False`` gives the
    plain split by document (the same shuffle, copies on both sides): lesson 02 shows what it leaks.
    """
    docs = [text for _, text in modern_english_documents()]
    order = np.random.default_rng(seed).permutation(len(docs))
    groups = document_groups() if keep_copies_together else list(range(len(docs)))
    splits = split_by_group(groups, order.tolist(), fractions)

    def tokens(idx):
        out = []
        for i in idx:
            for sent in split_sentences(docs[i]):
                toks = tokenize(sent)
                if toks:
                    out += toks + [EOS]
        return out

    train, valid, test = (tokens(s) for s in splits)
    vocab = Vocab.build(train, max_size=vocab_size, specials=(UNK, EOS))
    return LMData(vocab, vocab.encode(train), vocab.encode(valid), vocab.encode(test))
