"""training/bert_finetune.py: the budget rule and the frozen features of the record."""
import numpy as np
import pytest

from helpers.course.bert_finetune import bbc_finetune_data, encode_docs
from helpers.course.models import load_model
from training.bert_finetune import budget_steps, frozen_cell_accuracy, frozen_features


def test_the_budget_grows_with_the_training_set():
    assert budget_steps(25, 6, 16, 200) == 200                # 25 articles: the floor (128 epochs)
    assert budget_steps(1500, 3, 16, 200) == 282              # ceil(3 * 1500 / 16)
    assert budget_steps(1500, 6, 16, 200) == 563
    with pytest.raises(ValueError, match="must be positive, got 0, 3, 16, 200"):
        budget_steps(0, 3, 16, 200)


def test_frozen_features_do_not_depend_on_the_other_articles_and_a_cell_is_recomputed():
    shipped, results = load_model("mlm_bert"), load_model("bert_finetune")
    data = bbc_finetune_data(5, 30, 0)
    ids = encode_docs(shipped.tok, [data.docs[k] for k in data.test[:4]])
    together = frozen_features(shipped.model, shipped.tok, ids, (2,), ("mean",))[2, "mean"]
    alone = frozen_features(shipped.model, shipped.tok, ids[2:3], (2,), ("mean",))[2, "mean"]
    assert np.array_equal(together[2], alone[0])
    i, j = results.sizes.index(25), results.seeds.index(1)
    assert frozen_cell_accuracy(results, 25, 1, shipped) == results.test_acc["frozen"][i, j]
