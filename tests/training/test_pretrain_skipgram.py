"""training/pretrain_skipgram.py: the static vectors read only the pre-training documents, cover
both word-sense files' words (none skipped silently), and the BBC features average unit vectors."""
from collections import Counter

import numpy as np
import pytest

from helpers.course.bert_finetune import bbc_finetune_data
from helpers.course.data import WSD_FILES, load_wsd_sentences
from helpers.course.models import load_model
from helpers.lessons.lesson10 import static_vectors


def test_the_static_baseline_read_only_the_pre_training_documents_and_feeds_both_sections():
    static = load_model("wv_pretrain_skipgram")
    settings = static.meta["settings"]
    assert "pre-training" in settings["corpus"] and settings["max_sents"] == 5
    missing = {}
    for name in WSD_FILES:
        examples = load_wsd_sentences(name)
        assert all(e.word in static for e in examples)
        missing[name] = Counter()
        X = static_vectors(static, examples, context=True, missing=missing[name])
        assert X.shape == (len(examples), 100) and np.isfinite(X).all()
    assert sum(missing["wsd_sentences.tsv"].values()) > 0          # under min_count: counted
    assert not missing["wsd_shared_words.tsv"]                     # written with known words
    with pytest.raises(KeyError, match="has no static vector"):
        static_vectors(static, load_wsd_sentences("wsd_sentences.tsv"), context=True)
    data = bbc_finetune_data(5, 30, 0)
    X = static.features_of(data.doc_index)
    assert X.shape == (len(data.docs), 100) and np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-3)
    with pytest.raises(KeyError, match="no shipped static vector"):
        static["xylophonist"]
    with pytest.raises(KeyError, match="no static features"):
        static.features_of([0])
