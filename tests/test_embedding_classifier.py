"""Tests of helpers.lib.embedding_classifier: padding (padding_idx and the mask), frozen vs trainable
embeddings, training, errors; and lesson 09's frozen/fine-tuned/random experiment and its explorer."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.infra.widgets import Explorer, slider
from helpers.lessons.lesson09 import (
    embedding_experiment,
    make_size_render,
    plot_accuracy_vs_size,
    summarise_experiment,
)
from helpers.lib.embedding_classifier import (
    MeanEmbeddingClassifier,
    encode_documents,
    train_classifier,
    vocab_with_specials,
)

WORDS = ["good", "great", "fine", "bad", "awful", "poor", "the", "a"]


def _vectors(seed=0, D=6):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((len(WORDS), D)).astype(np.float32)


def test_vocab_with_specials_and_encoding():
    E, vocab = vocab_with_specials(_vectors(), WORDS)
    assert E.shape == (len(WORDS) + 2, 6) and vocab.pad_id == 0 and vocab.unk_id == 1
    assert np.all(E[0] == 0) and np.allclose(E[1], _vectors().mean(0))
    assert np.array_equal(E[vocab.index("bad")], _vectors()[3])
    ids = encode_documents([["good", "zzz"], ["the"], []], vocab, max_len=5)
    assert ids.dtype == torch.int64 and ids.shape == (3, 2)                 # T = longest document
    assert ids.tolist() == [[vocab.index("good"), 1], [vocab.index("the"), 0], [0, 0]]
    assert encode_documents([["a"] * 9], vocab, max_len=4).shape == (1, 4)  # truncated
    with pytest.raises(ValueError, match="V = 8"):
        vocab_with_specials(np.ones((3, 2)), WORDS)
    with pytest.raises(ValueError, match="<pad>"):
        vocab_with_specials(np.ones((2, 2)), ["<pad>", "x"])
    with pytest.raises(TypeError, match="token lists"):
        encode_documents(["good", "bad"], vocab)


def test_padding_gets_no_gradient_and_is_masked():
    E, vocab = vocab_with_specials(_vectors(), WORDS)
    E[0] = 5.0                                   # a non-zero pad row: only the mask can hide it
    model = MeanEmbeddingClassifier(2, embeddings=E, freeze=False, hidden=4, seed=0)
    short = encode_documents([["good", "the"]], vocab)
    padded = torch.cat([short, torch.zeros((1, 3), dtype=torch.int64)], dim=1)
    assert torch.allclose(model(short), model(padded), atol=1e-6)            # padding changes nothing
    assert torch.allclose(model.document_vectors(padded)[0], torch.from_numpy(E[short[0]].mean(0)), atol=1e-6)
    loss = F.cross_entropy(model(padded), torch.tensor([1]))
    loss.backward()
    g = model.embedding.weight.grad
    assert torch.all(g[0] == 0)                                               # padding_idx: no gradient
    assert torch.any(g[short[0, 0]] != 0)
    assert torch.all(g[vocab.index("awful")] == 0)                           # unused row: none either
    # an all-padding document gives the zero vector, not NaN
    assert torch.all(model.document_vectors(torch.zeros((1, 3), dtype=torch.int64)) == 0)


def _toy_task(n=60, seed=0):
    rng = np.random.default_rng(seed)
    pos, neg, filler = WORDS[:3], WORDS[3:6], WORDS[6:]
    docs, y = [], []
    for i in range(n):
        lab = i % 2
        words = list(rng.choice(pos if lab else neg, 2)) + list(rng.choice(filler, rng.integers(1, 5)))
        docs.append(list(rng.permutation(words)))
        y.append(lab)
    return docs, np.array(y)


def test_frozen_stays_fine_tuned_moves_and_training_fits():
    E, vocab = vocab_with_specials(_vectors(), WORDS)
    docs, y = _toy_task()
    X, yt = encode_documents(docs, vocab), torch.from_numpy(y)
    frozen = MeanEmbeddingClassifier(2, embeddings=E, freeze=True)
    tuned = MeanEmbeddingClassifier(2, embeddings=E, freeze=False)
    head0 = frozen.head[0].weight.detach().clone()
    h = train_classifier(frozen, X, yt, epochs=15, lr=0.05, progress=False, valid=(X, yt))
    ht = train_classifier(tuned, X, yt, epochs=15, lr=0.05, progress=False)
    assert torch.equal(frozen.embedding.weight, torch.from_numpy(E))         # frozen: unchanged
    assert not frozen.embedding.weight.requires_grad
    assert not torch.equal(frozen.head[0].weight, head0)                      # ... but the head learned
    moved = (tuned.embedding.weight - torch.from_numpy(E)).abs().sum(1)
    assert moved[0] == 0 and moved[2:].min() > 0                              # pad row fixed, words moved
    assert len(h.epochs) == 15 and "valid_acc" in h.epochs[-1] and "valid_acc" not in ht.epochs[-1]
    assert h.epochs[-1]["train_loss"] < h.epochs[0]["train_loss"]
    assert ht.epochs[-1]["train_acc"] == 1.0                                  # fine-tuning fits the toy task


def test_random_init_is_seeded_and_pad_is_zero():
    a = MeanEmbeddingClassifier(3, vocab_size=10, dim=4, init_std=0.5, seed=3)
    b = MeanEmbeddingClassifier(3, vocab_size=10, dim=4, init_std=0.5, seed=3)
    assert torch.equal(a.embedding.weight, b.embedding.weight) and torch.equal(a.head[0].weight, b.head[0].weight)
    assert torch.all(a.embedding.weight[0] == 0)
    assert 0.3 < float(a.embedding.weight[1:].detach().std()) < 0.7


def test_bad_input():
    model = MeanEmbeddingClassifier(2, vocab_size=5, dim=3)
    with pytest.raises(ValueError, match=r"ids must be token ids in \[0, 5\), got 7 at index \(0, 1\)"):
        model(torch.tensor([[1, 7]]))
    with pytest.raises(ValueError, match="batch, length"):
        model(torch.tensor([1, 2]))
    with pytest.raises(TypeError, match="integer"):
        model(torch.tensor([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="at least 2 classes"):
        MeanEmbeddingClassifier(1, vocab_size=5, dim=3)
    with pytest.raises(ValueError, match="vocab_size and dim"):
        MeanEmbeddingClassifier(2)
    with pytest.raises(ValueError, match="3 documents but 2 labels"):
        train_classifier(model, torch.zeros((3, 2), dtype=torch.int64), torch.tensor([0, 1]), progress=False)


def _toy_split():
    docs, y = _toy_task(120, seed=1)
    return docs[:80], y[:80], docs[80:], y[80:], ["neg", "pos"]


def test_experiment_rows_and_plot():
    rows = embedding_experiment(_vectors(), WORDS, train_sizes=(4, 40), epochs=10, split=_toy_split(),
                                seeds=(0, 1), progress=False)
    assert len(rows) == 2 * 2 * 3
    assert {r["mode"] for r in rows} == {"frozen", "fine-tuned", "random"}
    assert all(0 <= r["test_acc"] <= 1 for r in rows)
    big = [r["test_acc"] for r in rows if r["n_train"] == 40 and r["mode"] == "fine-tuned"]
    assert np.mean(big) > 0.75                                # chance is 0.5; the toy task is easy with 40 documents
    summ = summarise_experiment(rows)
    assert len(summ) == 6 and all(s["runs"] == 2 for s in summ)
    ax = plot_accuracy_vs_size(rows)
    assert ax.get_xscale() == "log" and len(ax.get_lines()) == 3
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "40"]     # the measured sizes label the axis
    with pytest.raises(ValueError, match="unknown mode"):
        embedding_experiment(_vectors(), WORDS, modes=("thawed",), split=_toy_split())
    with pytest.raises(ValueError, match="training pool"):
        embedding_experiment(_vectors(), WORDS, train_sizes=(500,), split=_toy_split(), progress=False)


def test_size_explorer_trains_on_change():
    render = make_size_render(_vectors(), WORDS, epochs=5, split=_toy_split())
    ex = Explorer(render, {"n_train": slider(10, 4, 80, 2, "training documents")}, "sizes")
    n0, s0 = ex.renders, ex.summary
    assert "10 training documents" in s0 and ex.png
    ex.controls["n_train"].value = 40
    assert ex.renders == n0 + 1 and ex.summary != s0 and "40 training documents" in ex.summary
    assert len(render.rows) == 6                              # 2 sizes x 3 modes measured so far
