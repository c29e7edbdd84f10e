"""Tests of helpers.lib.negative_sampling and helpers.lib.word2vec: gradients (finite differences and PyTorch), the noise
sampler's distribution, the data preparation, the trainers on a tiny corpus."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.lib.gradcheck import assert_close_to_torch, check_layer
from helpers.lib.layers import Embedding, SigmoidCrossEntropy
from helpers.lib.negative_sampling import (
    CBOWNS,
    EmbeddingDot,
    NoiseSampler,
    SkipGramNS,
    unigram_noise,
    unigram_table,
)
from helpers.lib.word2vec import (
    _torch_batches,
    cbow_examples,
    keep_probabilities,
    prepare_corpus,
    skipgram_pairs,
    train_numpy,
    train_torch,
)


def test_notes_power_example():
    # the notes: [0.8, 0.15, 0.05] ** 0.75, renormalised, printed rounded as [0.709, 0.202, 0.089]
    p = unigram_noise([0.8, 0.15, 0.05], 0.75)
    assert np.allclose(np.round(p, 3), [0.709, 0.202, 0.089], atol=1e-12)
    assert p.sum() == pytest.approx(1.0)
    assert np.allclose(unigram_noise([3, 1], 1.0), [0.75, 0.25])
    assert np.allclose(unigram_noise([3, 1], 0.0), [0.5, 0.5])


def test_noise_sampler_empirical_distribution():
    counts = np.array([50, 30, 10, 5, 4, 1, 0])
    s = NoiseSampler(counts, 0.75, rng=np.random.default_rng(1))
    draws = s.sample((200_000,))
    freq = np.bincount(draws, minlength=len(counts)) / draws.size
    expected = unigram_noise(counts)
    # 200k draws: standard error <= sqrt(.25/2e5) ~ 0.0011; allow 4 sigma
    assert np.max(np.abs(freq - expected)) < 0.0045
    assert freq[-1] == 0              # a word with count 0 is never drawn
    assert s.sample((3, 4)).shape == (3, 4)
    # reseeding repeats a draw
    a = NoiseSampler(counts, rng=np.random.default_rng(5)).sample(10)
    b = NoiseSampler(counts, rng=np.random.default_rng(5)).sample(10)
    assert np.array_equal(a, b)


def test_noise_bad_input():
    with pytest.raises(ValueError, match="non-empty"):
        unigram_noise([])
    with pytest.raises(ValueError, match="non-negative"):
        unigram_noise([1, -1])
    with pytest.raises(ValueError, match="power"):
        unigram_noise([1, 2], 2.0)


def test_embedding_dot_gradients_and_torch():
    rng = np.random.default_rng(0)
    for n, k in ((1, None), (4, None), (3, 5), (1, 1)):
        layer = EmbeddingDot(7, 4, rng)
        layer.params[0][...] = rng.standard_normal((7, 4))
        h = rng.standard_normal((n, 4))
        ids = rng.integers(0, 7, size=(n,) if k is None else (n, k))
        ids.flat[0] = 2
        if ids.size > 1:
            ids.flat[-1] = 2                # a repeated id: its gradients must add up
        report = check_layer(layer, h, ids)
        assert report.ok, report
        # PyTorch
        W = torch.tensor(layer.params[0], requires_grad=True)
        ht = torch.tensor(h, requires_grad=True)
        out_t = (W[torch.tensor(ids)] * (ht if k is None else ht[:, None, :])).sum(-1)
        dout = rng.standard_normal(out_t.shape)
        out = layer.forward(h, ids)
        dh = layer.backward(dout)
        out_t.backward(torch.tensor(dout))
        assert_close_to_torch(out, out_t, "EmbeddingDot output")
        assert_close_to_torch(dh, ht.grad, "EmbeddingDot dh")
        assert_close_to_torch(layer.grads[0], W.grad, "EmbeddingDot dW")


def test_embedding_dot_bad_shapes():
    layer = EmbeddingDot(5, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="h must be"):
        layer.forward(np.zeros((2, 4)), np.array([0, 1]))
    with pytest.raises(ValueError, match="ids must be"):
        layer.forward(np.zeros((2, 3)), np.array([0, 1, 2]))


def test_sigmoid_cross_entropy_gradient_is_y_minus_t():
    s = np.array([[-2.0, 0.5, 3.0]])
    t = np.array([[1.0, 0.0, 1.0]])
    layer = SigmoidCrossEntropy()
    layer.forward(s, t)
    y = 1 / (1 + np.exp(-s))
    assert np.allclose(layer.backward() * s.size, y - t)


def _sampled_check(model, *inputs, seed=3):
    """Gradient check of a sampled loss: reset the sampler's generator before each forward."""
    def reset():
        model.ns.sampler.rng = np.random.default_rng(seed)
    return check_layer(model, *inputs, reset=reset)


@pytest.mark.parametrize("n", [1, 6])
def test_skipgram_gradients(n):
    rng = np.random.default_rng(0)
    V, D = 9, 4
    m = SkipGramNS(V, D, NoiseSampler(np.arange(1, V + 1), rng=rng), k=3, rng=rng)
    m.params[1][...] = rng.standard_normal((V, D)) * 0.5      # non-zero output vectors
    centers = rng.integers(0, V, n)
    contexts = rng.integers(0, V, n)
    centers[0] = contexts[0] = 4
    report = _sampled_check(m, centers, contexts)
    assert report.ok, report
    assert set(report.errors) == {"param[0]", "param[1]"}


@pytest.mark.parametrize("n", [1, 5])
def test_cbow_gradients_with_mask(n):
    rng = np.random.default_rng(1)
    V, D, Cw = 8, 3, 4
    m = CBOWNS(V, D, NoiseSampler(np.ones(V), rng=rng), k=2, rng=rng)
    m.params[1][...] = rng.standard_normal((V, D)) * 0.5
    ctx = rng.integers(0, V, (n, Cw))
    ctx[0, :2] = 5                                                # repeated context word
    mask = np.ones((n, Cw), bool)
    mask[0, -1] = False
    centers = rng.integers(0, V, n)
    report = _sampled_check(m, ctx, centers, mask)
    assert report.ok, report


def _torch_ns_loss(W, C, h_ids, targets, negatives, weights=None):
    if weights is None:
        h = W[h_ids]
    else:
        h = (W[h_ids] * weights[..., None]).sum(1)
    ids = torch.cat([targets[:, None], negatives], 1)
    s = (C[ids] * h[:, None, :]).sum(-1)
    return (torch.nn.functional.softplus(-s[:, 0]) + torch.nn.functional.softplus(s[:, 1:]).sum(1)).mean()


def test_skipgram_and_cbow_match_torch():
    rng = np.random.default_rng(2)
    V, D, k = 11, 5, 4
    for n in (1, 7):
        sampler = NoiseSampler(np.arange(1, V + 1), rng=rng)
        sg = SkipGramNS(V, D, sampler, k=k, rng=rng)
        sg.params[1][...] = rng.standard_normal((V, D))
        c, o, neg = rng.integers(0, V, n), rng.integers(0, V, n), rng.integers(0, V, (n, k))
        loss = sg.forward(c, o, neg)
        sg.backward()
        W, C = (torch.tensor(p, requires_grad=True) for p in sg.params)
        lt = _torch_ns_loss(W, C, torch.tensor(c), torch.tensor(o), torch.tensor(neg))
        lt.backward()
        assert loss == pytest.approx(float(lt.detach()), rel=1e-10)
        assert_close_to_torch(sg.grads[0], W.grad, "skip-gram dW_in")
        assert_close_to_torch(sg.grads[1], C.grad, "skip-gram dW_out")

        cb = CBOWNS(V, D, sampler, k=k, rng=rng)
        cb.params[1][...] = rng.standard_normal((V, D))
        ctx = rng.integers(0, V, (n, 4))
        mask = rng.random((n, 4)) < 0.7
        mask[:, 0] = True
        loss = cb.forward(ctx, o, mask, neg)
        cb.backward()
        W, C = (torch.tensor(p, requires_grad=True) for p in cb.params)
        wts = torch.tensor(mask / mask.sum(1, keepdims=True))
        lt = _torch_ns_loss(W, C, torch.tensor(ctx), torch.tensor(o), torch.tensor(neg), wts)
        lt.backward()
        assert loss == pytest.approx(float(lt.detach()), rel=1e-10)
        assert_close_to_torch(cb.grads[0], W.grad, "CBOW dW_in")
        assert_close_to_torch(cb.grads[1], C.grad, "CBOW dW_out")


def test_issue_example_uses_the_negatives_real_count():
    # issue 13, defect 1: built with k=5, given one negative column; W_out starts at zero, so both
    # scores are 0 and the loss is -log s(0) - log s(-0) = 2 ln 2 (it was 6/2 times that, 4.159)
    m = SkipGramNS(5, 3, NoiseSampler(np.ones(5)), k=5)
    loss = m.forward(np.array([0]), np.array([1]), np.array([[2]]))
    assert loss == pytest.approx(2 * np.log(2), rel=1e-12)
    m.backward()
    # dL/ds = sigmoid(0) - t = -1/2 for the context word, +1/2 for the negative; W_out is zero,
    # so only W_out's rows 1 and 2 get a gradient: -+ h / 2, with h = W_in[0]
    h = m.params[0][0]
    assert np.allclose(m.grads[1][1], -h / 2) and np.allclose(m.grads[1][2], h / 2)
    assert np.allclose(m.grads[0], 0)


@pytest.mark.parametrize("k_given", [1, 2, 8])
def test_negatives_of_another_k_match_torch(k_given):
    rng = np.random.default_rng(7)
    V, D, k_built, n = 10, 4, 5, 6
    sampler = NoiseSampler(np.arange(1, V + 1), rng=rng)
    c, o = rng.integers(0, V, n), rng.integers(0, V, n)
    neg = rng.integers(0, V, (n, k_given))
    ctx = rng.integers(0, V, (n, 3))
    mask = np.ones((n, 3), bool)
    mask[0, 2] = False
    for model in ("skipgram", "cbow"):
        cls = SkipGramNS if model == "skipgram" else CBOWNS
        m = cls(V, D, sampler, k=k_built, rng=np.random.default_rng(1))
        m.params[1][...] = rng.standard_normal((V, D))
        args = (c, o, neg) if model == "skipgram" else (ctx, o, mask, neg)
        loss = m.forward(*args)
        m.backward()
        W, C = (torch.tensor(p, requires_grad=True) for p in m.params)
        if model == "skipgram":
            lt = _torch_ns_loss(W, C, torch.tensor(c), torch.tensor(o), torch.tensor(neg))
        else:
            wts = torch.tensor(mask / mask.sum(1, keepdims=True))
            lt = _torch_ns_loss(W, C, torch.tensor(ctx), torch.tensor(o), torch.tensor(neg), wts)
        lt.backward()
        assert loss == pytest.approx(float(lt.detach()), rel=1e-10), model
        assert_close_to_torch(m.grads[0], W.grad, f"{model} dW_in, k'={k_given}")
        assert_close_to_torch(m.grads[1], C.grad, f"{model} dW_out, k'={k_given}")
        # and the finite-difference check with those negatives
        report = check_layer(m, *args)
        assert report.ok, report


def test_negatives_bad_shape():
    rng = np.random.default_rng(0)
    m = SkipGramNS(5, 2, NoiseSampler(np.ones(5), rng=rng), k=2, rng=rng)
    for bad in (np.array([1, 2]), np.zeros((2, 0), int), np.zeros((3, 2), int)):
        with pytest.raises(ValueError, match=r"negatives must be an \(N, k'\) array with N=2"):
            m.forward(np.array([0, 1]), np.array([1, 2]), bad)


def test_model_bad_input():
    rng = np.random.default_rng(0)
    s = NoiseSampler(np.ones(5), rng=rng)
    with pytest.raises(ValueError, match="equal length"):
        SkipGramNS(5, 2, s, rng=rng).forward(np.array([1, 2]), np.array([1]))
    with pytest.raises(ValueError, match="at least one context word"):
        CBOWNS(5, 2, s, rng=rng).forward(np.array([[1, 2]]), np.array([0]), mask=np.zeros((1, 2), bool))
    with pytest.raises(ValueError, match="k .* at least 1"):
        SkipGramNS(5, 2, s, k=0, rng=rng)
    with pytest.raises(IndexError, match="token ids in"):
        SkipGramNS(5, 2, s, rng=rng).forward(np.array([7]), np.array([1]))


def test_duplicate_index_accumulates():
    emb = Embedding(5, 2, np.random.default_rng(0))
    emb.forward(np.array([0, 2, 0, 4]))
    emb.backward(np.ones((4, 2)))
    assert np.array_equal(emb.grads[0][0], [2.0, 2.0])           # row 0 used twice
    # the bug the notes warn about: plain assignment keeps only one contribution
    wrong = np.zeros((5, 2))
    wrong[np.array([0, 2, 0, 4])] = np.ones((4, 2))
    assert np.array_equal(wrong[0], [1.0, 1.0])


def test_skipgram_pairs_window_and_sentences():
    ids = np.array([10, 11, 12, 13, 20, 21])
    sent = np.array([0, 0, 0, 0, 1, 1])

    class Fixed:                                      # b = window for every centre
        def integers(self, lo, hi, size):
            return np.full(size, hi - 1)
    c, o = skipgram_pairs(ids, sent, 2, Fixed())
    pairs = set(zip(c.tolist(), o.tolist(), strict=True))
    assert (10, 12) in pairs and (12, 10) in pairs and (10, 13) not in pairs
    assert (13, 20) not in pairs and (20, 13) not in pairs  # never across a sentence
    assert len(c) == 2 * (3 + 2) + 2                  # offsets 1 and 2 in sentence 0, offset 1 in sentence 1
    # dynamic window: on average b = (w+1)/2 so pairs ~ 2 * mean(b) per centre (long sentence)
    rng = np.random.default_rng(0)
    c, _ = skipgram_pairs(np.arange(10000), np.zeros(10000, int), 5, rng)
    assert len(c) / 10000 == pytest.approx(6.0, rel=0.03)
    ctx, mask, cen = cbow_examples(ids, sent, 2, Fixed())
    assert ctx.shape == (6, 4) and mask.sum(1).tolist() == [2, 3, 3, 2, 1, 1]
    assert set(ctx[0][mask[0]].tolist()) == {11, 12}


def test_keep_probabilities():
    p = keep_probabilities(np.array([1000, 10, 1]), sample=1e-2)
    t = 1e-2 * 1011
    assert p[0] == pytest.approx((np.sqrt(1000 / t) + 1) * t / 1000)
    assert p[2] == 1.0 and np.all(keep_probabilities(np.array([5, 5]), 0) == 1)


def _toy_corpus():
    # two "topics" whose words co-occur only within their topic
    rng = np.random.default_rng(0)
    a, b = ["cat", "dog", "pet", "fur"], ["stock", "bank", "money", "trade"]
    sents = [tuple(rng.choice(a if i % 2 else b, 8)) for i in range(400)]
    return prepare_corpus(sents, min_count=1)


@pytest.mark.parametrize("trainer", [train_numpy, train_torch])
@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_trainers_learn_topics(trainer, model):
    corpus = _toy_corpus()
    tv = trainer(corpus, model, dim=10, window=2, negative=3, sample=0, epochs=3, alpha=0.05,
                 batch_size=64, progress=False)
    assert tv.W.shape == (8, 10) and tv.words_per_second > 0
    E = tv.W / np.linalg.norm(tv.W, axis=1, keepdims=True)
    s = corpus.vocab.stoi
    within = E[s["cat"]] @ E[s["dog"]]
    across = E[s["cat"]] @ E[s["bank"]]
    assert within > across + 0.3, (within, across)
    assert tv.epoch_loss[-1] < tv.epoch_loss[0]


def test_prepare_corpus_errors_and_counts():
    with pytest.raises(ValueError, match="empty corpus"):
        prepare_corpus([])
    c = prepare_corpus([("a", "b", "a"), ("a", "c")], min_count=2)
    assert c.vocab.itos == ["a"] and c.n_raw_tokens == 5 and c.sentence.tolist() == [0, 0, 1]
    c = prepare_corpus([("a", "b", "a"), ("b",), ("c", "a")], min_count=1)
    assert [s.tolist() for s in c.sentence_ids()] == [[c.vocab.index(w) for w in s] for s in (("a", "b", "a"), ("b",),
                                                                                             ("c", "a"))]


def test_fixed_window_pairs_every_neighbour():
    ids, sent = np.arange(6), np.array([0, 0, 0, 0, 1, 1])
    c, o = skipgram_pairs(ids, sent, 2, np.random.default_rng(0), dynamic=False)
    pairs = set(zip(c.tolist(), o.tolist()))
    assert pairs == {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2), (0, 2), (2, 0), (1, 3), (3, 1), (4, 5), (5, 4)}


def test_cbow_word2vec_update_is_count_times_gradient():
    rng = np.random.default_rng(4)
    V, D = 6, 3
    s = NoiseSampler(np.ones(V), rng=rng)
    exact = CBOWNS(V, D, s, k=2, rng=np.random.default_rng(0))
    w2v = CBOWNS(V, D, s, k=2, rng=np.random.default_rng(0), word2vec_update=True)
    exact.params[1][...] = w2v.params[1][...] = rng.standard_normal((V, D))
    ctx, mask, cen, neg = np.array([[1, 2, 3, 0]]), np.array([[1, 1, 1, 0]]), np.array([4]), np.array([[5, 0]])
    for m in (exact, w2v):
        m.forward(ctx, cen, mask, neg)
        m.backward()
    assert np.allclose(w2v.grads[0], 3 * exact.grads[0])      # three context words
    assert np.allclose(w2v.grads[1], exact.grads[1])


def test_unigram_table_matches_the_noise_distribution():
    counts = np.array([1000, 300, 20, 0, 1])
    p = unigram_noise(counts)
    table = unigram_table(counts, size=100_000)
    share = np.bincount(table, minlength=len(counts)) / len(table)
    assert np.allclose(share, p, atol=2e-5)                  # p_i rounded to multiples of 1/size
    assert share[3] == 0 and share[4] > 0                    # never-seen words never drawn; rare ones can be
    assert np.bincount(unigram_table(counts, size=10))[4] == 1   # even when size * p_i rounds to 0
    with pytest.raises(ValueError, match="size must be a positive"):
        unigram_table(counts, size=0)


@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_row_gradients_equal_the_dense_gradients(model):
    """scatter='rows' (the trainer's) gives the dense gradient's non-zero rows, duplicates summed."""
    V, D = 7, 4
    cls = SkipGramNS if model == "skipgram" else CBOWNS
    dense, rows = (cls(V, D, NoiseSampler(np.ones(V)), k=3, rng=np.random.default_rng(0), scatter=sc)
                   for sc in ("add.at", "rows"))
    rng = np.random.default_rng(1)
    rows.params[1][...] = dense.params[1][...] = rng.standard_normal((V, D))
    neg = np.array([[2, 2, 5], [0, 6, 2], [2, 1, 1]])        # repeated ids within and across rows
    if model == "skipgram":
        args = (np.array([1, 1, 3]), np.array([2, 4, 0]), neg)
    else:
        args = (np.array([[1, 3], [1, 1], [0, 5]]), np.array([2, 4, 0]), np.array([[1, 1], [1, 0], [1, 1]]), neg)
    assert dense.forward(*args) == rows.forward(*args)
    dense.backward()
    rows.backward()
    for layer, dW in ((rows.embed, dense.grads[0]), (rows.ns.dot.embed, dense.grads[1])):
        r, grad = layer.row_grad
        assert np.array_equal(r, np.flatnonzero(np.any(dW != 0, axis=1)))
        assert np.allclose(grad, dW[r])
    # the upstream-gradient check of every Layer still applies to the 'rows' path
    rows.ns.dot.forward(np.ones((3, D)), neg)
    with pytest.raises(ValueError, match=r"EmbeddingDot.backward: dout must have shape \(3, 3\)"):
        rows.ns.dot.backward(np.ones((3, 2)))


@pytest.mark.parametrize("trainer", [train_numpy, train_torch])
@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_trainers_are_deterministic_for_a_seed(trainer, model):
    corpus = _toy_corpus()
    runs = [trainer(corpus, model, dim=8, window=2, negative=3, sample=1e-2, epochs=2, batch_size=64, seed=3,
                    progress=False) for _ in range(2)]
    assert np.array_equal(runs[0].W, runs[1].W) and np.array_equal(runs[0].C, runs[1].C)   # bit-identical
    other = trainer(corpus, model, dim=8, window=2, negative=3, sample=1e-2, epochs=2, batch_size=64, seed=4,
                    progress=False)
    assert not np.array_equal(runs[0].W, other.W)


@pytest.mark.parametrize("cbow", [False, True])
def test_torch_closed_form_step_equals_autograd(cbow):
    """One batch of the PyTorch trainer (closed-form gradients, embedding_bag, index_add_) is the SGD
    step autograd takes on the summed negative-sampling loss, with the same negatives."""
    V, D, k, m, lr = 9, 5, 3, 6, 0.1
    g = torch.Generator().manual_seed(0)
    W0, C0 = torch.randn(V, D, generator=g), torch.randn(V, D, generator=g)
    table = torch.from_numpy(unigram_table(np.arange(1, V + 1), size=1000).astype(np.int64))
    t = torch.tensor([1, 2, 2, 0, 8, 4])
    if cbow:
        inp = torch.tensor([[3, 4, 0], [5, 5, 1], [2, 3, 6], [7, 7, 7], [0, 1, 2], [6, 3, 3]])
        msk = torch.tensor([[1, 1, 0], [1, 1, 1], [1, 0, 0], [1, 1, 1], [0, 1, 1], [1, 1, 0]], dtype=torch.float32)
    else:
        inp, msk = torch.tensor([3, 5, 5, 7, 0, 6]), None
    W, C = W0.clone(), C0.clone()
    list(_torch_batches(W, C, table, inp, t, msk, [0], m, lambda start: lr, torch.Generator().manual_seed(7), k, None))

    neg = table[torch.randint(len(table), (m * k,), generator=torch.Generator().manual_seed(7))].view(m, k)
    keep = (neg != t[:, None]).float()                       # a negative equal to the word is skipped
    Wr, Cr = W0.clone().requires_grad_(), C0.clone().requires_grad_()
    h = Wr[inp] if msk is None else (Wr[inp] * (msk / msk.sum(1, keepdim=True))[:, :, None]).sum(1)
    h.retain_grad()
    loss = F.softplus(-(Cr[t] * h).sum(1)) + (F.softplus((Cr[neg] * h[:, None, :]).sum(2)) * keep).sum(1)
    loss.sum().backward()                                    # summed over the batch, as the trainer does
    assert torch.allclose(C, C0 - lr * Cr.grad, atol=1e-6)
    if msk is None:
        assert torch.allclose(W, W0 - lr * Wr.grad, atol=1e-6)
    else:   # word2vec.c / gensim: each real context word gets the full dL/dh (the exact gradient is dL/dh / count)
        dx = msk[:, :, None] * h.grad[:, None, :]
        assert torch.allclose(W, W0.index_add(0, inp.reshape(-1), -lr * dx.reshape(-1, D)), atol=1e-6)
