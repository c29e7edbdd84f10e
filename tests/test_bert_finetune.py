"""Lesson 10's fine-tuning experiment (helpers.course.bert_finetune, shipped as bert_finetune).

- the data split: pool / validation / test disjoint; test = the BBC articles of the
  masked-LM validation and test documents (never pre-trained on) without a near-duplicate among
  the pre-training documents, pool and validation from the
  masked-LM training documents; validation and training subsets stratified;
- pooling and batching do what they say (checked against a direct computation);
- bad inputs raise errors that name the problem;
- the shipped results are consistent (shapes, choices made on validation) and a frozen cell's
  test accuracy is recomputed from the shipped encoder (the registry tests recompute another,
  and replay the first fine-tuning steps);
- the live fine-tuning runs and is deterministic.
"""
import numpy as np
import pytest
import torch

from helpers.course import bert_finetune as bf
from helpers.course.corpus import document_groups
from helpers.course.mlm_model import split_of
from helpers.course.models import load_model
from helpers.lessons.lesson10 import (
    finetune_table,
    live_finetune,
    plot_finetune,
    render_live_finetune,
    static_whole_articles,
)

S = bf.SETTINGS


@pytest.fixture(scope="module")
def data():
    return bf.bbc_finetune_data(S["max_sents"], S["n_valid_per_topic"], S["valid_seed"])


@pytest.fixture(scope="module")
def shipped():
    return load_model("mlm_bert")


@pytest.fixture(scope="module")
def results():
    return load_model("bert_finetune")


# ---------------------------------------------------------------- the data split
def test_the_split_is_disjoint_and_keeps_the_test_articles_and_their_copies_out_of_pre_training(data):
    parts = [set(data.pool), set(data.valid), set(data.test)]
    assert not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])
    # the encoder was pre-trained on the documents with split_of(k) == 'train' only
    assert all(split_of(int(k)) != "train" for k in data.doc_index[data.test])
    assert all(split_of(int(k)) == "train" for k in data.doc_index[np.concatenate([data.pool, data.valid])])
    # no test article has a near-duplicate among the pre-training documents (so none in pool or validation)
    groups = document_groups()
    seen = {groups[k] for k in range(len(groups)) if split_of(k) == "train"}
    assert not any(groups[int(k)] in seen for k in data.doc_index[data.test])
    # what is left out is exactly the held-out articles that have such a copy (34 of the 222)
    left_out = sorted(set(range(len(data.docs))) - set.union(*parts))
    assert len(data.docs) == 2225 and len(left_out) == 34 and len(data.test) == 188
    assert all(split_of(int(data.doc_index[i])) != "train" and groups[int(data.doc_index[i])] in seen for i in left_out)
    assert all(len(d) <= S["max_sents"] for d in data.docs)


def test_validation_and_training_subsets_are_stratified(data):
    assert np.bincount(data.labels[data.valid]).tolist() == [S["n_valid_per_topic"]] * len(data.topics)
    y = data.labels[data.pool]
    share = np.bincount(y) / len(y)
    for n in S["sizes"]:
        for seed in S["seeds"]:
            idx = bf.training_subset(y, n, seed)
            assert len(idx) == len(set(idx)) == n and np.all(np.diff(idx) > 0)
            assert np.all(np.abs(np.bincount(y[idx], minlength=len(share)) - n * share) <= 1)
    a, b = bf.training_subset(y, 100, 0), bf.training_subset(y, 100, 1)
    assert np.array_equal(a, bf.training_subset(y, 100, 0)) and not np.array_equal(a, b)
    assert np.array_equal(bf.training_subset(y, len(y), 0), np.arange(len(y)))


# ---------------------------------------------------------------- pooling and batches
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


def test_frozen_features_do_not_depend_on_the_other_articles(shipped, data):
    ids = bf.encode_docs(shipped.tok, [data.docs[k] for k in data.test[:4]])
    together = bf.frozen_features(shipped.model, shipped.tok, ids, (2,), ("mean",))[2, "mean"]
    alone = bf.frozen_features(shipped.model, shipped.tok, ids[2:3], (2,), ("mean",))[2, "mean"]
    assert np.array_equal(together[2], alone[0])


# ---------------------------------------------------------------- bad inputs
def test_the_budget_grows_with_the_training_set():
    assert bf.budget_steps(25, 6, 16, 200) == 200                # 25 articles: the floor (128 epochs)
    assert bf.budget_steps(1500, 3, 16, 200) == 282              # ceil(3 * 1500 / 16)
    assert bf.budget_steps(1500, 6, 16, 200) == 563


def test_bad_inputs_raise_clear_errors(shipped, data):
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
    h = torch.zeros(1, 3, 4)
    with pytest.raises(ValueError, match="got 'first'"):
        bf.pool_articles(h, torch.ones(1, 3, dtype=torch.long), torch.ones(1, 3, dtype=torch.bool),
                         torch.zeros(1, dtype=torch.long), 1, 4, "first")
    with pytest.raises(ValueError, match="must be positive, got 0, 3, 16, 200"):
        bf.budget_steps(0, 3, 16, 200)
    with pytest.raises(ValueError, match="3 training articles but 2 labels"):
        bf.finetune_run(shipped, [[np.array([2, 10, 3])]] * 3, np.zeros(2, dtype=np.int64), [], np.zeros(0), S,
                        1e-4, "mean", 0, 5)


def test_live_finetune_refuses_a_bad_step_count(shipped, results):
    with pytest.raises(ValueError, match="steps must be between 1 and 1,000, got 0"):
        live_finetune(shipped, results, steps=0)


# ---------------------------------------------------------------- the shipped results
def test_the_shipped_results_are_complete_and_chosen_on_validation(results):
    shape = (len(S["sizes"]), len(S["seeds"]))
    for m in bf.METHODS:
        a = results.test_acc[m]
        assert a.shape == shape and np.all((a > 0.2) & (a <= 1))          # above chance (5 topics) everywhere
        assert np.all(results.cpu_seconds[m] > 0)
    assert results.sizes == S["sizes"] and results.seeds == S["seeds"] and results.settings == S
    # the learning rate and pooling: the first best of the validation grid
    g = results.grid_valid
    pi, li = np.unravel_index(int(np.argmax(g)), g.shape)
    # the epochs of the budget: the best of the validation runs at epoch_size (ties: the fewer epochs)
    ev, grid = results.epoch_valid, S["epoch_grid"]
    epochs = min(e for e, v in zip(grid, ev) if v == ev.max())
    assert results.chosen == {"lr": S["grid_lrs"][li], "pooling": S["grid_poolings"][pi], "epochs": epochs}
    # the budget follows the rule, and the chosen run is the epoch_size / epoch_seed cell
    for i, n in enumerate(S["sizes"]):
        assert np.all(results.steps[i] == bf.budget_steps(n, epochs, S["batch_size"], S["min_steps"]))
    i, j = S["sizes"].index(S["epoch_size"]), S["seeds"].index(S["epoch_seed"])
    assert results.valid_acc["fine-tuned"][i, j] == ev[grid.index(epochs)]
    assert results.best_step[i, j] == results.epoch_best_step[grid.index(epochs)]
    # the kept step is one of the evaluations, and its validation accuracy is the best of the curve
    for (i, j), total in np.ndenumerate(results.steps):
        evals = {max(1, round(total * q / S["n_evals"])) for q in range(1, S["n_evals"] + 1)}
        assert results.best_step[i, j] in evals
    np.testing.assert_allclose(results.valid_acc["fine-tuned"], results.valid_curves.max(-1))
    assert set(results.frozen["layer"].ravel()) <= set(S["frozen_layers"])
    assert set(results.frozen["C"].ravel()) | set(results.static_C.ravel()) <= set(S["Cs"])
    assert results.meta["n_articles"] == {"pool": 1853, "valid": 150, "test": 188}


def test_a_frozen_cell_is_recomputed_from_the_shipped_encoder(results, shipped):
    """Another cell than the registry's subset metric (n=100, seed 0)."""
    i, j = results.sizes.index(25), results.seeds.index(1)
    assert bf.frozen_cell_accuracy(results, 25, 1, shipped) == results.test_acc["frozen"][i, j]


def test_the_table_and_the_figure(results):
    table = finetune_table(results).splitlines()
    assert len(table) == 1 + len(S["sizes"]) and "1,500" in table[-1]
    ax = plot_finetune(results, {"n": 100, "test_acc": 0.5, "steps": 20})
    assert ax.get_xscale() == "log" and len(ax.get_legend().get_texts()) == 4


def test_whole_articles_use_the_recorded_choice_and_the_same_subsets(results):
    """The lesson's check of lesson 09's number: the static method on whole articles, one value
    per seed, with the C recorded for the cell; the same code on cut articles gives the shipped row."""
    whole = static_whole_articles(results, 1500)
    assert whole.shape == (len(S["seeds"]),) and np.all((whole > 0.2) & (whole <= 1))
    data = bf.bbc_finetune_data(S["max_sents"], S["n_valid_per_topic"], S["valid_seed"])
    W, stoi = bf.static_vectors_of(load_model(S["static"]))
    X, y, i = bf.static_features(W, stoi, data.docs), data.labels, results.sizes.index(1500)
    for j, seed in enumerate(S["seeds"]):
        idx = data.pool[bf.training_subset(y[data.pool], 1500, seed)]
        assert bf.logreg_test_accuracy(X[idx], y[idx], X[data.test], y[data.test], results.static_C[i, j]) == \
            results.test_acc["static"][i, j]
        pred = bf.logreg_test_predictions(X[idx], y[idx], X[data.test], results.static_C[i, j])
        np.testing.assert_array_equal(pred == y[data.test], results.test_right["static"][i, j].astype(bool))


def test_comparisons_are_paired_over_the_test_articles(results):
    for m in bf.METHODS:
        assert results.test_right[m].shape == (len(S["sizes"]), len(S["seeds"]), 188)
        np.testing.assert_allclose(results.test_right[m].mean(-1), results.test_acc[m], atol=1e-12)
    d, lo, hi = results.paired_difference("fine-tuned", "frozen", 0)
    assert lo <= d <= hi
    assert d == pytest.approx(results.test_acc["fine-tuned"][0].mean() - results.test_acc["frozen"][0].mean())
    assert results.paired_difference("static", "static", 2) == (0.0, 0.0, 0.0)
    assert results.compare("static", "static", 2) == "tie"
    # resampling the articles together: two methods whose answers differ on few articles
    right = {k: v.copy() for k, v in results.test_right.items()}
    right["frozen"] = right["fine-tuned"].copy()
    always = np.flatnonzero(right["fine-tuned"][0].min(0) == 1)[:8]   # articles every fine-tuned run gets right
    assert len(always) == 8
    right["frozen"][0][:, always] = 0
    changed = bf.FinetuneResults(**{**vars(results), "test_right": right})
    d, lo, hi = changed.paired_difference("fine-tuned", "frozen", 0)
    assert 0 < lo <= d <= hi and changed.compare("fine-tuned", "frozen", 0) == "win"


# ---------------------------------------------------------------- the live run
def test_the_live_run_is_deterministic_and_its_summary_reports_it(shipped, results):
    a = live_finetune(shipped, results, steps=6, progress=False)
    b = live_finetune(shipped, results, steps=6, progress=False)
    assert a["losses"] == b["losses"] and a["test_acc"] == b["test_acc"] and len(a["losses"]) == 6
    fig, summary = render_live_finetune(6, shipped=shipped, results=results)
    assert f"test accuracy {a['test_acc']:.1%}" in summary
