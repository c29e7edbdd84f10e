"""Tests of helpers.lib.negative_sampling (lesson 07): the noise distribution, its sampler and
table, and the skip-gram and CBOW layers' losses and gradients against finite differences and
PyTorch autograd."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import negative_sampling as NS
from helpers.lib.gradcheck import assert_close_to_torch, check_layer
from helpers.lib.negative_sampling import (
    CBOWNS,
    EmbeddingDot,
    NoiseSampler,
    SkipGramNS,
    unigram_noise,
    unigram_table,
)
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    dims,
    float_arrays,
    inject,
    mask_forms,
    non_finite,
    raises_naming,
)

T = torch.tensor
close = closeness(1e-9)


def ids_of(data, V, n):
    return np.array(
        data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n)), dtype=np.int64
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
    return (
        torch.nn.functional.softplus(-s[:, 0]) + torch.nn.functional.softplus(s[:, 1:]).sum(1)
    ).mean()


def test_fewer_negatives_than_built_use_their_real_count():
    # built with k=5, given one negative column; W_out starts at zero, so both
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
        CBOWNS(5, 2, s, rng=rng).forward(
            np.array([[1, 2]]), np.array([0]), mask=np.zeros((1, 2), bool)
        )
    with pytest.raises(ValueError, match="k .* at least 1"):
        SkipGramNS(5, 2, s, k=0, rng=rng)
    with pytest.raises(IndexError, match="token ids in"):
        SkipGramNS(5, 2, s, rng=rng).forward(np.array([7]), np.array([1]))


def test_cbow_word2vec_update_is_count_times_gradient():
    rng = np.random.default_rng(4)
    V, D = 6, 3
    s = NoiseSampler(np.ones(V), rng=rng)
    exact = CBOWNS(V, D, s, k=2, rng=np.random.default_rng(0))
    w2v = CBOWNS(V, D, s, k=2, rng=np.random.default_rng(0), word2vec_update=True)
    exact.params[1][...] = w2v.params[1][...] = rng.standard_normal((V, D))
    ctx, mask, cen, neg = (
        np.array([[1, 2, 3, 0]]),
        np.array([[1, 1, 1, 0]]),
        np.array([4]),
        np.array([[5, 0]]),
    )
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
    assert np.allclose(share, p, atol=2e-5)  # p_i rounded to multiples of 1/size
    assert share[3] == 0 and share[4] > 0  # never-seen words never drawn; rare ones can be
    assert np.bincount(unigram_table(counts, size=10))[4] == 1   # even when size * p_i rounds to 0
    with pytest.raises(ValueError, match="size must be a positive"):
        unigram_table(counts, size=0)


@pytest.mark.parametrize("model", ["skipgram", "cbow"])
def test_row_gradients_equal_the_dense_gradients(model):
    """scatter='rows' (the trainer's) gives the dense gradient's non-zero rows, repeats summed."""
    V, D = 7, 4
    cls = SkipGramNS if model == "skipgram" else CBOWNS
    dense, rows = (
        cls(V, D, NoiseSampler(np.ones(V)), k=3, rng=np.random.default_rng(0), scatter=sc)
        for sc in ("add.at", "rows")
    )
    rng = np.random.default_rng(1)
    rows.params[1][...] = dense.params[1][...] = rng.standard_normal((V, D))
    neg = np.array([[2, 2, 5], [0, 6, 2], [2, 1, 1]])        # repeated ids within and across rows
    if model == "skipgram":
        args = (np.array([1, 1, 3]), np.array([2, 4, 0]), neg)
    else:
        args = (
            np.array([[1, 3], [1, 1], [0, 5]]),
            np.array([2, 4, 0]),
            np.array([[1, 1], [1, 0], [1, 1]]),
            neg,
        )
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


# ---------------------------------------------------------------- properties
@budget()
@given(st.data())
def test_the_noise_distribution_its_sampler_and_its_table(data):
    counts = np.array(data.draw(st.lists(st.integers(0, 50), min_size=1, max_size=6)), float)
    counts[0] += 1
    power = data.draw(st.sampled_from([0.0, 0.75, 1.0]))
    p = NS.unigram_noise(counts, power)
    ref = np.where(counts > 0, (counts / counts.sum()) ** power, 0)
    close(p, ref / ref.sum())
    draws = NS.NoiseSampler(counts, power, rng=np.random.default_rng(0)).sample((4000,))
    assert set(np.unique(draws)) <= set(np.flatnonzero(p > 0))
    table = NS.unigram_table(counts, power, size=1000)
    close(np.bincount(table, minlength=len(p)) / len(table), p, 2e-3 * len(p) + 1e-3)
    raises_naming(
        lambda: NS.unigram_noise(inject(counts, data.draw(non_finite), 0)), "counts", ValueError
    )
    raises_naming(lambda: NS.unigram_noise(counts * 0), "counts", ValueError)
    raises_naming(lambda: NS.unigram_noise(counts, power=2), "power", ValueError)


@budget(2)
@given(st.data())
def test_skip_gram_and_cbow_losses_and_gradients_are_autograds(data):
    V, D, N, k = (
        data.draw(dims(1, 6)),
        data.draw(dims(1, 3)),
        data.draw(dims(1, 4)),
        data.draw(dims(1, 3)),
    )
    sampler = NS.NoiseSampler(np.ones(V))
    centers, contexts = ids_of(data, V, N), ids_of(data, V, N)
    neg = ids_of(data, V, N * k).reshape(N, k)
    sg = NS.SkipGramNS(V, D, sampler, k=k, rng=np.random.default_rng(0))
    sg.params[1][...] = data.draw(float_arrays((V, D)))
    Win, Wout = (T(p, requires_grad=True) for p in sg.params)
    h = Win[T(centers)]
    s = (Wout[T(np.concatenate([contexts[:, None], neg], 1))] * h[:, None]).sum(-1)
    ref = (F.softplus(-s[:, 0]) + F.softplus(s[:, 1:]).sum(1)).mean()
    ref.backward()
    close(sg.forward(centers, contexts, neg), ref.item())
    sg.backward()
    close(sg.grads[0], Win.grad)
    close(sg.grads[1], Wout.grad)
    check_bad_ids(
        lambda x: sg.forward(x, contexts, neg), centers, V, "ids", data.draw(corrupted(centers, V))
    )
    check_bad_ids(
        lambda x: sg.forward(centers, contexts, x), neg, V, "ids", data.draw(corrupted(neg, V))
    )
    C = data.draw(dims(1, 3))
    ctx = ids_of(data, V, N * C).reshape(N, C)
    mask = data.draw(float_arrays((N, C))) > 0
    mask[:, 0] = True
    cb = NS.CBOWNS(V, D, sampler, k=k, rng=np.random.default_rng(1))
    cb.params[1][...] = sg.params[1]
    Win, Wout = (T(p, requires_grad=True) for p in cb.params)
    w = T(mask / mask.sum(1, keepdims=True))
    hc = (Win[T(ctx)] * w[:, :, None]).sum(1)
    s = (Wout[T(np.concatenate([centers[:, None], neg], 1))] * hc[:, None]).sum(-1)
    ref = (F.softplus(-s[:, 0]) + F.softplus(s[:, 1:]).sum(1)).mean()
    ref.backward()
    for _form, m, expected in mask_forms(mask):
        if expected == "same":
            close(cb.forward(ctx, centers, m, neg), ref.item())
        else:
            raises_naming(lambda m=m: cb.forward(ctx, centers, m, neg), "mask", expected)
    cb.forward(ctx, centers, mask, neg)
    cb.backward()
    close(cb.grads[0], Win.grad)
    dot = NS.EmbeddingDot(V, D, np.random.default_rng(2))
    hh = data.draw(float_arrays((N, D)))
    close(dot.forward(hh, neg), np.einsum("nkd,nd->nk", dot.params[0][neg], hh))
    raises_naming(lambda: dot.forward(inject(hh, np.nan, 0), neg), "h", ValueError)


@budget()
@given(st.data())
def test_the_full_softmax_and_the_sgns_pair_gradients_are_their_formulas(data):
    V, D, N = data.draw(dims(1, 5)), data.draw(dims(1, 3)), data.draw(dims(1, 4))
    Win, Wout = data.draw(float_arrays((V, D))), data.draw(float_arrays((V, D)))
    c, o = ids_of(data, V, N), ids_of(data, V, N)
    close(NS.full_softmax_step(Win, Wout, c, o), F.cross_entropy(T(Win[c] @ Wout.T), T(o)).item())
    check_bad_ids(
        lambda x: NS.full_softmax_step(Win, Wout, x, o), c, V, "centers", data.draw(corrupted(c, V))
    )
    w, cc = data.draw(float_arrays((N, D))), data.draw(float_arrays((N, D)))
    n_pos, n_neg = data.draw(float_arrays((N,), 0, 5)), data.draw(float_arrays((N,), 0, 5))
    tw, tc = T(w, requires_grad=True), T(cc, requires_grad=True)
    x = (tw * tc).sum(1)
    (-(T(n_pos) * F.logsigmoid(x)) - T(n_neg) * F.logsigmoid(-x)).sum().backward()
    dw, dc = NS.sgns_pair_gradients(w, cc, n_pos, n_neg)
    close(dw, tw.grad)
    close(dc, tc.grad)
    raises_naming(lambda: NS.sgns_pair_gradients(w, cc, -n_pos - 1, n_neg), "n_pos", ValueError)
    raises_naming(
        lambda: NS.sgns_pair_gradients(inject(w, np.inf, 0), cc, n_pos, n_neg), "w", ValueError
    )
