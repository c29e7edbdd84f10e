"""training/pretrain_skipgram.py and its record: the static vectors read only the pre-training
documents, the context means of the subset metric are the lesson's, and the BBC features are
averages of unit vectors."""
import numpy as np
import pytest

from helpers.course.bert_finetune import bbc_finetune_data
from helpers.course.data import load_wsd_sentences
from helpers.course.models import load_model
from helpers.lessons.lesson10 import static_vectors
from training.pretrain_skipgram import context_mean_vectors


def test_the_static_baseline_read_only_the_pre_training_documents_and_feeds_both_sections():
    static = load_model("wv_pretrain_skipgram")
    settings = static.meta["settings"]
    assert "pre-training" in settings["corpus"] and settings["max_sents"] == 5
    examples = load_wsd_sentences()
    assert all(e.word in static for e in examples)
    np.testing.assert_allclose(context_mean_vectors(static, examples[:24]),
                               static_vectors(static, examples[:24], context=True))
    data = bbc_finetune_data(5, 30, 0)
    X = static.features_of(data.doc_index)
    assert X.shape == (len(data.docs), 100) and np.all(np.linalg.norm(X, axis=1) <= 1 + 1e-3)
    with pytest.raises(KeyError, match="no shipped static vector"):
        static["xylophonist"]
    with pytest.raises(KeyError, match="no static features"):
        static.features_of([0])
