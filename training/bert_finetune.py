"""Recipe of ``bert_finetune``: lesson 10's fine-tuning experiment (scores only, no weights).

For every training-set size x seed, on the split of
:func:`helpers.course.bert_finetune.bbc_finetune_data`:

- ``fine-tuned``: the shipped encoder plus a new linear head, every weight trained
  (:func:`helpers.course.bert_finetune.finetune_run`) over a budget of
  ``max(min_steps, ceil(epochs * n / batch_size))`` steps (:func:`budget_steps`), the best of
  ``n_evals`` validation measurements kept;
- ``frozen``: one layer's vectors pooled over the article, fixed, and logistic regression;
- ``static``: the shipped skip-gram's unit vectors averaged over the article's words, and
  logistic regression.

Validation chooses, once each, the learning rate and pooling (at n = ``grid_size``) and the epochs
of the budget (at n = ``epoch_size``), and per cell the frozen layer and pooling and every C.
Every method's answer on every test article is kept, so methods are compared by a paired
bootstrap over the test articles. The subset metric recomputes one frozen-feature cell.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from helpers.course.bert_finetune import (
    METHODS,
    POOLINGS,
    FinetuneResults,
    bbc_finetune_data,
    choose_logreg,
    classifier_predictions,
    doc_batch,
    encode_docs,
    finetune_run,
    fit_logreg,
    logreg_test_predictions,
    pool_articles,
    static_features,
    static_vectors_of,
    training_subset,
)
from helpers.infra.progress import progress_bar
from helpers.lib.bert import TinyBert
from helpers.lib.bpe import BPETokenizer
from training.loop import timings_to_meta

SETTINGS = dict(sizes=[25, 100, 400, 1500], seeds=[0, 1, 2], max_sents=5, max_len=64,
                n_valid_per_topic=30, valid_seed=0, batch_size=16, min_steps=200,
                epoch_grid=[3, 6], epoch_size=1500, epoch_seed=0, n_evals=8, warmup=0.1,
                head_lr=3e-3, weight_decay=0.01, head_dropout=0.1, grid_lrs=[1e-4, 3e-4, 1e-3],
                grid_poolings=["mean", "cls"], grid_size=100, grid_seed=0,
                Cs=[0.01, 0.1, 1.0, 10.0], frozen_layers=[0, 1, 2], static="wv_gensim_skipgram")
SUBSET = dict(n=100, seed=0)        # the frozen-feature cell the subset metric recomputes


def budget_steps(n: int, epochs: float, batch_size: int, min_steps: int) -> int:
    """The fine-tuning budget for ``n`` training articles: ``max(min_steps, ceil(epochs * n /
    batch_size))`` steps, at least ``epochs`` passes over the training set."""
    if n < 1 or epochs <= 0 or batch_size < 1 or min_steps < 1:
        raise ValueError(f"n, epochs, batch_size and min_steps must be positive, got {n}, "
                         f"{epochs}, {batch_size}, {min_steps}")
    return max(int(min_steps), math.ceil(epochs * n / batch_size))


@torch.no_grad()
def frozen_features(model: TinyBert, tok: BPETokenizer, docs_ids, layers=(0, 1, 2),
                    poolings=POOLINGS) -> dict:
    """{(layer, pooling): (N, d) float32}: each article's vectors of ``layers`` (0 = the
    embeddings), pooled; one article per forward pass, so that an article's features never
    depend on the other articles computed with it."""
    was = model.training
    model.eval()
    out = {(layer, p): [] for layer in layers for p in poolings}
    for d in docs_ids:
        ids, att, owner = doc_batch(tok, [d])
        hidden, _ = model.layers_and_attention(ids, att)
        for layer in layers:
            for p in poolings:
                out[layer, p].append(pool_articles(hidden[layer], ids, att, owner, 1,
                                                   len(tok.special_ids), p)[0])
    model.train(was)
    return {k: torch.stack(v).numpy() for k, v in out.items()}


def train(settings: dict, log, max_steps: int | None = None, progress: bool = True, *, load=None):
    """Run the whole experiment; return (arrays, meta, metrics). ``load(name)``: the registry's
    ``load_model`` (the encoder ``mlm_bert`` and the static vectors ``settings['static']``).

    1. Learning rate x pooling, chosen on validation at n = grid_size, seed grid_seed (the budget
       of the fewest epochs of ``epoch_grid``).
    2. The epochs of the budget, chosen among ``epoch_grid`` at n = epoch_size (ties: fewer).
    3. Every size x seed: fine-tuning (a run of 1-2 with the same n, seed and budget is reused),
       frozen features + logistic regression, static vectors + logistic regression.

    A step of the log is one fine-tuning step; ``max_steps`` runs only the first grid run, for
    that many steps (a replay of the first steps)."""
    s = settings
    if load is None:
        raise TypeError("bert_finetune's train needs load=helpers.course.models.load_model")
    data = bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    shipped = load("mlm_bert")
    tok, y, K = shipped.tok, data.labels, len(data.topics)
    c0 = time.process_time()
    ids = encode_docs(tok, data.docs, s["max_len"])
    pool_ids, valid_ids, test_ids = ([ids[i] for i in part]
                                     for part in (data.pool, data.valid, data.test))
    y_pool, y_valid, y_test = y[data.pool], y[data.valid], y[data.test]
    encode_cpu = time.process_time() - c0

    def steps_for(n, epochs):
        return budget_steps(n, epochs, s["batch_size"], s["min_steps"])

    runs = {}                   # (n, seed, lr, pooling, steps) -> run (deterministic: reused)

    def run(n, seed, lr, pooling, epochs, steps_cap=None, desc="fine-tuning"):
        key = (n, seed, lr, pooling, steps_for(n, epochs))
        if key in runs:
            return runs[key]
        idx = training_subset(y_pool, n, seed)
        r = finetune_run(shipped, [pool_ids[i] for i in idx], y_pool[idx], valid_ids, y_valid,
                         {**s, "steps": key[-1]}, lr, pooling, seed, K, log=log,
                         max_steps=steps_cap, progress=progress, desc=desc)
        if steps_cap is None:
            runs[key] = r
        return r

    # 1. the grid
    grid = [(lr, p) for p in s["grid_poolings"] for lr in s["grid_lrs"]]
    e0 = min(s["epoch_grid"])
    if max_steps is not None:
        run(s["grid_size"], s["grid_seed"], grid[0][0], grid[0][1], e0, steps_cap=max_steps)
        log.event("stop", reason=f"max_steps={max_steps} (replay: the first grid run only)",
                  steps=max_steps)
        return {}, {"settings": dict(s)}, {}
    grid_valid = np.zeros((len(s["grid_poolings"]), len(s["grid_lrs"])))
    grid_runs = {}
    for lr, p in grid:
        r = run(s["grid_size"], s["grid_seed"], lr, p, e0, desc=f"grid lr={lr:g} {p}")
        grid_valid[s["grid_poolings"].index(p), s["grid_lrs"].index(lr)] = r["valid_acc"]
        grid_runs[lr, p] = r
        log.event("eval", part="grid", n=s["grid_size"], seed=s["grid_seed"], lr=lr, pooling=p,
                  valid_acc=r["valid_acc"], best_step=r["best_step"], curve=r["curve"],
                  cpu_seconds=r["cpu_seconds"])
    pi, li = np.unravel_index(int(np.argmax(grid_valid)), grid_valid.shape)   # first best
    lr, pooling = s["grid_lrs"][li], s["grid_poolings"][pi]
    log.event("eval", part="grid choice", lr=lr, pooling=pooling,
              valid_acc=float(grid_valid[pi, li]))

    # 2. the epochs of the budget
    epoch_valid, epoch_cpu, epoch_best = [], [], []
    for e in s["epoch_grid"]:
        r = run(s["epoch_size"], s["epoch_seed"], lr, pooling, e,
                desc=f"epochs={e:g} n={s['epoch_size']} ({steps_for(s['epoch_size'], e)} steps)")
        epoch_valid.append(r["valid_acc"])
        epoch_cpu.append(r["cpu_seconds"])
        epoch_best.append(r["best_step"])
        log.event("eval", part="epochs", n=s["epoch_size"], seed=s["epoch_seed"], epochs=e,
                  steps=steps_for(s["epoch_size"], e), valid_acc=r["valid_acc"],
                  best_step=r["best_step"], curve=r["curve"], cpu_seconds=r["cpu_seconds"])
    k = max(range(len(s["epoch_grid"])), key=lambda k: (epoch_valid[k], -s["epoch_grid"][k]))
    epochs = s["epoch_grid"][k]
    rule = f"steps = max({s['min_steps']}, ceil({epochs} * n / {s['batch_size']}))"
    log.event("eval", part="epochs choice", epochs=epochs, valid_acc=float(epoch_valid[k]),
              rule=rule, steps={str(n): steps_for(n, epochs) for n in s["sizes"]})

    # 3. frozen and static features (once for every article)
    c0 = time.process_time()
    feats = frozen_features(shipped.model, tok, ids, tuple(s["frozen_layers"]), POOLINGS)
    feats = {k: v for k, v in feats.items() if k != (0, "cls")}    # layer-0 [CLS]: a constant
    frozen_feature_cpu = time.process_time() - c0
    c0 = time.process_time()
    W, stoi = static_vectors_of(load(s["static"]))
    X_static = static_features(W, stoi, data.docs)
    static_feature_cpu = time.process_time() - c0

    S, N = len(s["sizes"]), len(s["seeds"])
    test_acc = {m: np.full((S, N), np.nan) for m in METHODS}
    test_right = {m: np.zeros((S, N, len(data.test)), dtype=np.uint8) for m in METHODS}
    valid_acc = {m: np.full((S, N), np.nan) for m in METHODS}
    cpu = {m: np.full((S, N), np.nan) for m in METHODS}
    best_step = np.zeros((S, N), dtype=np.int64)
    budget = np.array([[steps_for(n, epochs)] * N for n in s["sizes"]], dtype=np.int64)
    curves = np.full((S, N, s["n_evals"]), np.nan)
    frozen_layer, frozen_pool = np.zeros((S, N), dtype=np.int64), np.zeros((S, N), dtype="<U4")
    frozen_C, static_C = np.zeros((S, N)), np.zeros((S, N))
    cells = [(i, j) for i in range(S) for j in range(N)]
    bar = progress_bar(total=len(cells), desc="sizes x seeds", unit="cell", disable=not progress)
    for i, j in cells:
        n, seed = s["sizes"][i], s["seeds"][j]
        r = run(n, seed, lr, pooling, epochs,
                desc=f"fine-tuning n={n} seed={seed} ({budget[i, j]} steps)")
        test_right["fine-tuned"][i, j] = classifier_predictions(r["model"], tok, test_ids) == y_test
        valid_acc["fine-tuned"][i, j], best_step[i, j] = r["valid_acc"], r["best_step"]
        curves[i, j, :len(r["curve"]["valid_acc"])] = r["curve"]["valid_acc"]
        cpu["fine-tuned"][i, j] = r["cpu_seconds"]
        idx = training_subset(y_pool, n, seed)
        c0 = time.process_time()
        candidates = {k: (v[data.pool][idx], v[data.valid]) for k, v in feats.items()}
        key, C, va = choose_logreg(candidates, y_pool[idx], y_valid, s["Cs"])
        pred = logreg_test_predictions(feats[key][data.pool][idx], y_pool[idx],
                                       feats[key][data.test], C)
        test_right["frozen"][i, j] = pred == y_test
        valid_acc["frozen"][i, j], frozen_layer[i, j], frozen_pool[i, j] = va, key[0], key[1]
        frozen_C[i, j] = C
        cpu["frozen"][i, j] = time.process_time() - c0
        c0 = time.process_time()
        _, C, va = choose_logreg({"static": (X_static[data.pool][idx], X_static[data.valid])},
                                 y_pool[idx], y_valid, s["Cs"])
        test_right["static"][i, j] = logreg_test_predictions(X_static[data.pool][idx], y_pool[idx],
                                                             X_static[data.test], C) == y_test
        for m in METHODS:
            test_acc[m][i, j] = float(test_right[m][i, j].mean())
        valid_acc["static"][i, j], static_C[i, j] = va, C
        cpu["static"][i, j] = time.process_time() - c0
        log.event("eval", part="cell", n=n, seed=seed,
                  **{f"{m}_test_acc": test_acc[m][i, j] for m in METHODS},
                  **{f"{m}_valid_acc": valid_acc[m][i, j] for m in METHODS},
                  best_step=int(best_step[i, j]), steps=int(budget[i, j]),
                  frozen_layer=int(frozen_layer[i, j]), frozen_pooling=str(frozen_pool[i, j]),
                  frozen_C=float(frozen_C[i, j]), static_C=float(static_C[i, j]),
                  finetune_cpu_seconds=float(cpu["fine-tuned"][i, j]))
        bar.update(1)
    bar.close()
    log.event("stop", reason=f"every cell trained; fine-tuning keeps the best of its validation "
              f"evaluations (a budget of {rule.removeprefix('steps = ')} steps, the epochs chosen "
              "on validation)", steps=log.steps)
    arrays = {**{f"test_acc/{m}": test_acc[m] for m in METHODS},
              **{f"valid_acc/{m}": valid_acc[m] for m in METHODS},
              **{f"test_right/{m}": test_right[m] for m in METHODS},
              "best_step": best_step, "steps": budget, "valid_curves": curves,
              "frozen/layer": frozen_layer, "frozen/pooling": frozen_pool, "frozen/C": frozen_C,
              "static/C": static_C, "grid/valid_acc": grid_valid,
              "epochs/valid_acc": np.array(epoch_valid),
              "epochs/best_step": np.array(epoch_best, dtype=np.int64)}
    timings = {**{f"cpu_seconds/{m}": cpu[m] for m in METHODS},
               "epochs/cpu_seconds": np.array(epoch_cpu),
               "grid/cpu_seconds": np.array([[grid_runs[g, p]["cpu_seconds"] for g in s["grid_lrs"]]
                                             for p in s["grid_poolings"]])}
    meta = {"settings": dict(s), "topics": data.topics,
            "chosen": {"lr": lr, "pooling": pooling, "epochs": epochs},
            "budget_rule": f"{rule}; epochs chosen among {s['epoch_grid']} on validation at "
                           f"n = {s['epoch_size']}, seed {s['epoch_seed']}",
            "n_articles": {"pool": len(data.pool), "valid": len(data.valid),
                           "test": len(data.test)},
            "timings": timings_to_meta(timings),
            "cpu_seconds_parts": {"encode": encode_cpu, "frozen_features": frozen_feature_cpu,
                                  "static_features": static_feature_cpu},
            "data": "BBC articles of the course corpus, first max_sents sentences; test = the "
                    "articles of the masked-LM validation/test documents (never pre-trained on) "
                    "without a near-duplicate among the pre-training documents"}
    metrics = {"chosen_lr": lr, "chosen_pooling": pooling, "chosen_epochs": epochs,
               **{f"{m}_test_acc_n{n}": float(np.mean(test_acc[m][i])) for m in METHODS
                  for i, n in enumerate(s["sizes"])}}
    return arrays, meta, metrics


def frozen_cell_accuracy(results: FinetuneResults, n: int, seed: int, shipped) -> float:
    """The frozen-feature test accuracy of one cell recomputed from scratch: the ``shipped``
    encoder's features of the cell's training articles and of the test articles, logistic
    regression with the layer, pooling and C recorded for the cell."""
    s = results.settings
    i, j = results.sizes.index(n), results.seeds.index(seed)
    data = bbc_finetune_data(s["max_sents"], s["n_valid_per_topic"], s["valid_seed"])
    idx = data.pool[training_subset(data.labels[data.pool], n, seed)]
    layer, pooling = int(results.frozen["layer"][i, j]), str(results.frozen["pooling"][i, j])
    train_X, test_X = (
        frozen_features(shipped.model, shipped.tok,
                        encode_docs(shipped.tok, [data.docs[k] for k in part], s["max_len"]),
                        (layer,), (pooling,))[layer, pooling]
        for part in (idx, data.test))
    sc, clf = fit_logreg(train_X, data.labels[idx], float(results.frozen["C"][i, j]))
    return float(clf.score(sc.transform(test_X), data.labels[data.test]))


def subset_metric(results: FinetuneResults, shipped) -> tuple[str, float]:
    """('frozen_test_acc_n100_seed0', that cell's frozen-feature test accuracy recomputed with
    the ``shipped`` encoder)."""
    return (f"frozen_test_acc_n{SUBSET['n']}_seed{SUBSET['seed']}",
            frozen_cell_accuracy(results, SUBSET["n"], SUBSET["seed"], shipped))
