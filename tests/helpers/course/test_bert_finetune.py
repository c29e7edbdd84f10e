"""helpers.course.bert_finetune: the split (no test article or copy pre-trained on), stratified
training sets, pooling, the run's errors, and the shipped record."""
import numpy as np
import pytest
import torch

from helpers.course import bert_finetune as bf
from helpers.course.corpus import document_groups
from helpers.course.mlm_model import split_of
from helpers.course.models import load_model
from helpers.lib.stats import bootstrap_mean
from training.bert_finetune import budget_steps


@pytest.fixture(scope="module")
def results():
    return load_model("bert_finetune")


@pytest.fixture(scope="module")
def data(results):
    s = results.settings
    return bf.bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])


@pytest.fixture(scope="module")
def shipped():
    return load_model("mlm_bert")


def test_the_split_is_disjoint_and_keeps_the_test_articles_and_their_copies_out(data):
    parts = [set(data.pool), set(data.valid), set(data.test)]
    assert not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])
    # the encoder was pre-trained on the documents with split_of(k) == 'train' only
    assert all(split_of(int(k)) != "train" for k in data.doc_index[data.test])
    trained_on = data.doc_index[np.concatenate([data.pool, data.valid])]
    assert all(split_of(int(k)) == "train" for k in trained_on)
    # no test article has a near-duplicate among the pre-training documents
    groups = document_groups()
    seen = {groups[k] for k in range(len(groups)) if split_of(k) == "train"}
    assert not any(groups[int(k)] in seen for k in data.doc_index[data.test])
    # what is left out is exactly the held-out articles that have such a copy (34 of the 222)
    left_out = sorted(set(range(len(data.docs))) - set.union(*parts))
    assert len(data.docs) == 2225 and len(left_out) == 34 and len(data.test) == 188
    assert all(split_of(int(k)) != "train" and groups[int(k)] in seen
               for k in data.doc_index[left_out])
    assert all(len(d) <= 5 for d in data.docs)


def test_validation_and_training_subsets_are_stratified(data, results):
    assert np.bincount(data.labels[data.valid]).tolist() == [30] * len(data.topics)
    y = data.labels[data.pool]
    share = np.bincount(y) / len(y)
    for n in results.sizes:
        for seed in results.seeds:
            idx = bf.training_subset(y, n, seed)
            assert len(idx) == len(set(idx)) == n and np.all(np.diff(idx) > 0)
            assert np.all(np.abs(np.bincount(y[idx], minlength=len(share)) - n * share) <= 1)
    a, b = bf.training_subset(y, 100, 0), bf.training_subset(y, 100, 1)
    assert np.array_equal(a, bf.training_subset(y, 100, 0)) and not np.array_equal(a, b)
    assert np.array_equal(bf.training_subset(y, len(y), 0), np.arange(len(y)))


def test_pooling_matches_a_direct_computation(shipped):
    tok = shipped.tok
    docs = [[("the", "bank", "raised", "rates"), ("shares", "fell")], [("the", "match", "ended")]]
    ids, att, owner = bf.doc_batch(tok, bf.encode_docs(tok, docs))
    assert ids.shape[0] == 3 and owner.tolist() == [0, 0, 1]
    h = torch.randn(*ids.shape, 8, dtype=torch.float64)
    mean = bf.pool_articles(h, ids, att, owner, 2, len(tok.special_ids), "mean")
    cls = bf.pool_articles(h, ids, att, owner, 2, len(tok.special_ids), "cls")
    for j in range(2):
        rows = [h[r, c] for r in range(3) if owner[r] == j for c in range(ids.shape[1])
                if att[r, c] and ids[r, c] >= len(tok.special_ids)]
        torch.testing.assert_close(mean[j], torch.stack(rows).mean(0))
        torch.testing.assert_close(cls[j], h[owner == j, 0].mean(0))


def test_bad_inputs_raise_clear_errors(shipped, data, results):
    y = data.labels[data.pool]
    with pytest.raises(ValueError, match="one of each of the 5 topics"):
        bf.training_subset(y, 3, 0)
    with pytest.raises(ValueError, match="fit in the pool"):
        bf.training_subset(y, len(y) + 1, 0)
    with pytest.raises(TypeError, match="n must be an integer, got float"):
        bf.training_subset(y, 100.0, 0)
    with pytest.raises(ValueError, match="max_sents must be at least 1, got 0"):
        bf.bbc_finetune_data(0)
    with pytest.raises(ValueError, match="article 1 of the batch has no sentence"):
        bf.doc_batch(shipped.tok, [[np.array([2, 10, 3])], []])
    with pytest.raises(ValueError, match="pooling must be one of"):
        bf.ArticleClassifier(shipped.model, 5, len(shipped.tok.special_ids), "max")
    with pytest.raises(ValueError, match="got 'first'"):
        bf.pool_articles(torch.zeros(1, 3, 4), torch.ones(1, 3, dtype=torch.long),
                         torch.ones(1, 3, dtype=torch.bool), torch.zeros(1, dtype=torch.long), 1, 4,
                         "first")
    with pytest.raises(ValueError, match="3 training articles but 2 labels"):
        bf.finetune_run(shipped, [[np.array([2, 10, 3])]] * 3, np.zeros(2, dtype=np.int64), [],
                        np.zeros(0), results.settings, 1e-4, "mean", 0, 5)


def test_the_shipped_results_are_complete_and_chosen_on_validation(results):
    s = results.settings
    shape = (len(s["sizes"]), len(s["seeds"]))
    for m in bf.METHODS:
        a = results.test_acc[m]
        assert a.shape == shape and np.all((a > 0.2) & (a <= 1))       # above chance (5 topics)
        assert np.all(results.cpu_seconds[m] > 0)
    g = results.grid_valid                           # lr and pooling: the first best of the grid
    pi, li = np.unravel_index(int(np.argmax(g)), g.shape)
    ev, grid = results.epoch_valid, s["epoch_grid"]  # the epochs: the best (ties: the fewer)
    epochs = min(e for e, v in zip(grid, ev) if v == ev.max())
    assert results.chosen == {"lr": s["grid_lrs"][li], "pooling": s["grid_poolings"][pi],
                              "epochs": epochs}
    for i, n in enumerate(s["sizes"]):             # the budget follows the rule
        assert np.all(results.steps[i] == budget_steps(n, epochs, s["batch_size"], s["min_steps"]))
    i, j = s["sizes"].index(s["epoch_size"]), s["seeds"].index(s["epoch_seed"])
    assert results.valid_acc["fine-tuned"][i, j] == ev[grid.index(epochs)]
    assert results.best_step[i, j] == results.epoch_best_step[grid.index(epochs)]
    for (i, j), total in np.ndenumerate(results.steps):    # the kept step is an evaluation's
        evals = {max(1, round(total * q / s["n_evals"])) for q in range(1, s["n_evals"] + 1)}
        assert results.best_step[i, j] in evals
    np.testing.assert_allclose(results.valid_acc["fine-tuned"], results.valid_curves.max(-1))
    assert set(results.frozen["layer"].ravel()) <= set(s["frozen_layers"])
    assert set(results.frozen["C"].ravel()) | set(results.static_C.ravel()) <= set(s["Cs"])
    assert results.meta["n_articles"] == {"pool": 1853, "valid": 150, "test": 188}


def test_comparisons_are_paired_over_the_test_articles(results):
    s = results.settings
    for m in bf.METHODS:
        assert results.test_right[m].shape == (len(s["sizes"]), len(s["seeds"]), 188)
        np.testing.assert_allclose(results.test_right[m].mean(-1), results.test_acc[m], atol=1e-12)
    d, lo, hi = results.paired_difference("fine-tuned", "frozen", 0)
    assert lo <= d <= hi
    assert d == pytest.approx(results.test_acc["fine-tuned"][0].mean()
                              - results.test_acc["frozen"][0].mean())
    assert results.paired_difference("static", "static", 2) == (0.0, 0.0, 0.0)
    assert results.compare("static", "static", 2) == "tie"
    # resampling the articles together: two methods whose answers differ on few articles
    right = {k: v.copy() for k, v in results.test_right.items()}
    right["frozen"] = right["fine-tuned"].copy()
    always = np.flatnonzero(right["fine-tuned"][0].min(0) == 1)[:8]   # always right when fine-tuned
    assert len(always) == 8
    right["frozen"][0][:, always] = 0
    changed = bf.FinetuneResults(**{**vars(results), "test_right": right})
    d, lo, hi = changed.paired_difference("fine-tuned", "frozen", 0)
    assert 0 < lo <= d <= hi and changed.compare("fine-tuned", "frozen", 0) == "win"


def test_paired_difference_is_the_bootstrap_mean_of_the_per_article_differences(results):
    for a, b in [("fine-tuned", "frozen"), ("fine-tuned", "static"), ("static", "frozen")]:
        for i in range(len(results.sizes)):
            d = results.test_right[a][i].mean(0) - results.test_right[b][i].mean(0)
            boot = d[np.random.default_rng(0).integers(0, len(d), (10_000, len(d)))].mean(1)
            old = (d.mean(), np.percentile(boot, 2.5), np.percentile(boot, 97.5))
            assert results.paired_difference(a, b, i) == old       # the numbers lesson 10 prints
            # lib.stats takes the 2.500000000000002 percentile: the same interval to 1e-15
            mean = bootstrap_mean(d, n_boot=10_000, seed=0)
            np.testing.assert_allclose(tuple(mean), old, rtol=0, atol=1e-15)
