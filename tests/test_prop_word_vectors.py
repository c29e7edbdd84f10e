"""Properties of helpers.lib.negative_sampling, word2vec, hsoftmax, glove and fasttext: losses and
gradients equal to PyTorch autograd's, samplers and tables equal to their distributions, trainers
that run on any tiny corpus or say why they cannot, and errors naming the argument."""

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import fasttext as FT
from helpers.lib import glove as G
from helpers.lib import hsoftmax as HS
from helpers.lib import negative_sampling as NS
from helpers.lib import word2vec as W2V
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    covers,
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
    return np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n)), dtype=np.int64)


# ---------------------------------------------------------------- negative sampling
@covers("negative_sampling.unigram_noise", "negative_sampling.NoiseSampler", "negative_sampling.unigram_table")
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
    raises_naming(lambda: NS.unigram_noise(inject(counts, data.draw(non_finite), 0)), "counts", ValueError)
    raises_naming(lambda: NS.unigram_noise(counts * 0), "counts", ValueError)
    raises_naming(lambda: NS.unigram_noise(counts, power=2), "power", ValueError)


@covers("negative_sampling.EmbeddingDot", "negative_sampling.SkipGramNS", "negative_sampling.CBOWNS")
@budget(2)
@given(st.data())
def test_skip_gram_and_cbow_losses_and_gradients_are_autograds(data):
    V, D, N, k = data.draw(dims(1, 6)), data.draw(dims(1, 3)), data.draw(dims(1, 4)), data.draw(dims(1, 3))
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
    check_bad_ids(lambda x: sg.forward(x, contexts, neg), centers, V, "ids", data.draw(corrupted(centers, V)))
    check_bad_ids(lambda x: sg.forward(centers, contexts, x), neg, V, "ids", data.draw(corrupted(neg, V)))
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


@covers("negative_sampling.full_softmax_step", "negative_sampling.sgns_pair_gradients")
@budget()
@given(st.data())
def test_the_full_softmax_and_the_sgns_pair_gradients_are_their_formulas(data):
    V, D, N = data.draw(dims(1, 5)), data.draw(dims(1, 3)), data.draw(dims(1, 4))
    Win, Wout = data.draw(float_arrays((V, D))), data.draw(float_arrays((V, D)))
    c, o = ids_of(data, V, N), ids_of(data, V, N)
    close(NS.full_softmax_step(Win, Wout, c, o), F.cross_entropy(T(Win[c] @ Wout.T), T(o)).item())
    check_bad_ids(lambda x: NS.full_softmax_step(Win, Wout, x, o), c, V, "centers", data.draw(corrupted(c, V)))
    w, cc = data.draw(float_arrays((N, D))), data.draw(float_arrays((N, D)))
    n_pos, n_neg = data.draw(float_arrays((N,), 0, 5)), data.draw(float_arrays((N,), 0, 5))
    tw, tc = T(w, requires_grad=True), T(cc, requires_grad=True)
    x = (tw * tc).sum(1)
    (-(T(n_pos) * F.logsigmoid(x)) - T(n_neg) * F.logsigmoid(-x)).sum().backward()
    dw, dc = NS.sgns_pair_gradients(w, cc, n_pos, n_neg)
    close(dw, tw.grad)
    close(dc, tc.grad)
    raises_naming(lambda: NS.sgns_pair_gradients(w, cc, -n_pos - 1, n_neg), "n_pos", ValueError)
    raises_naming(lambda: NS.sgns_pair_gradients(inject(w, np.inf, 0), cc, n_pos, n_neg), "w", ValueError)


# ---------------------------------------------------------------- word2vec data and trainers
SENTS = st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=0, max_size=6), min_size=1, max_size=5)


@covers("word2vec.Corpus", "word2vec.prepare_corpus", "word2vec.keep_probabilities", "word2vec.skipgram_pairs",
        "word2vec.cbow_examples")
@budget()
@given(st.data())
def test_pairs_and_examples_stay_inside_sentences_and_windows(data):
    sents = data.draw(SENTS)
    if not any(sents):
        raises_naming(lambda: W2V.prepare_corpus(sents, min_count=1), "corpus", ValueError)
        return
    corpus = W2V.prepare_corpus(sents, min_count=1)
    assert corpus.n_raw_tokens == sum(map(len, sents)) and len(corpus.ids) == len(corpus.sentence)
    window = data.draw(dims(1, 3))
    c, o = W2V.skipgram_pairs(corpus.ids, corpus.sentence, window, np.random.default_rng(0), dynamic=False)
    ref = [(s[i], s[j]) for s in (corpus.vocab.encode(x) for x in sents) for i in range(len(s))
           for j in range(len(s)) if 0 < abs(i - j) <= window]
    assert sorted(zip(c.tolist(), o.tolist(), strict=True)) == sorted((int(a), int(b)) for a, b in ref)
    ctx, mask, cen = W2V.cbow_examples(corpus.ids, corpus.sentence, window, np.random.default_rng(0))
    assert mask.dtype == bool and mask.any(1).all() and len(cen) == len(ctx)
    p = W2V.keep_probabilities(corpus.vocab.counts, 1e-3)
    assert np.all((0 < p) & (p <= 1)) and np.all(W2V.keep_probabilities(corpus.vocab.counts, 0) == 1)
    raises_naming(lambda: W2V.skipgram_pairs(corpus.ids, corpus.sentence, 0, np.random.default_rng(0)), "window",
                  ValueError)
    raises_naming(lambda: W2V.skipgram_pairs(corpus.ids.astype(float), corpus.sentence, 1, np.random.default_rng(0)),
                  "ids", TypeError)
    raises_naming(lambda: W2V.cbow_examples(corpus.ids, corpus.sentence.astype(float), 1, np.random.default_rng(0)),
                  "sentence", TypeError)


@covers("word2vec.train_numpy", "word2vec.train_torch", "word2vec.train_gensim", "word2vec.TrainedVectors")
@budget(0.3)
@given(sents=SENTS, model=st.sampled_from(["skipgram", "cbow"]), sample=st.sampled_from([0.0, 1e-3]))
def test_every_trainer_trains_a_tiny_corpus_or_says_why_it_cannot(sents, model, sample):
    if not any(sents):
        return
    corpus = W2V.prepare_corpus(sents, min_count=1)
    for train in (W2V.train_numpy, W2V.train_torch):
        try:
            tv = train(corpus, model=model, dim=3, window=2, epochs=2, sample=sample, progress=False)
        except ValueError as e:
            assert "has no training" in str(e) and ("sample=0" in str(e) or "more text" in str(e))
            continue
        assert tv.W.shape == tv.C.shape == (len(corpus.vocab), 3) and np.all(np.isfinite(tv.W))
        assert len(tv.epoch_loss) == 2 and tv.vectors("W+C").shape == tv.W.shape
        back = W2V.TrainedVectors.from_arrays(*tv.to_arrays())
        np.testing.assert_array_equal(back.W, tv.W)
    tv = W2V.train_gensim(corpus, model=model, dim=3, window=2, epochs=1, sample=sample, workers=1, min_count=1)
    assert tv.W.shape == (len(corpus.vocab), 3)
    raises_naming(lambda: W2V.train_numpy(corpus, model="glove"), "model", ValueError)


# ---------------------------------------------------------------- hierarchical softmax
@covers("hsoftmax.HuffmanTree", "hsoftmax.huffman_tree", "hsoftmax.hs_loss_and_grads", "hsoftmax.hs_probabilities",
        "hsoftmax.HierarchicalSoftmax")
@budget(2)
@given(st.data())
def test_the_huffman_tree_is_a_prefix_code_and_the_loss_is_autograds(data):
    counts = np.array(data.draw(st.lists(st.integers(1, 40), min_size=2, max_size=7)), float)
    tree = HS.huffman_tree(counts)
    V = len(counts)
    codes = ["".join(map(str, tree.codes[w, :tree.depth[w]])) for w in range(V)]
    assert not any(a != b and b.startswith(a) for a in codes for b in codes)      # prefix-free
    close(sum(2.0 ** -d for d in tree.depth), 1.0)                                # a full binary tree
    D, N = data.draw(dims(1, 3)), data.draw(dims(1, 4))
    h, U = data.draw(float_arrays((N, D))), data.draw(float_arrays((V - 1, D)))
    close(HS.hs_probabilities(h, U, tree).sum(1), np.ones(N))
    t = ids_of(data, V, N)
    th, tU = T(h, requires_grad=True), T(U, requires_grad=True)
    s = (tU[T(tree.nodes[t])] * th[:, None]).sum(-1)
    sign = T(1.0 - 2.0 * tree.codes[t])
    ref = (T(tree.mask[t].astype(float)) * F.softplus(-sign * s)).sum(1).mean()
    ref.backward()
    loss, dh, nodes, dU_rows = HS.hs_loss_and_grads(h, U, tree, t)
    close(loss, ref.item())
    close(dh, th.grad)
    dU = np.zeros_like(U)
    np.add.at(dU, nodes.reshape(-1), dU_rows.reshape(-1, D))
    close(dU, tU.grad)
    close(loss, -np.log(HS.hs_probabilities(h, U, tree)[np.arange(N), t]).mean(), 1e-8)
    check_bad_ids(lambda x: HS.hs_loss_and_grads(h, U, tree, x), t, V, "targets", data.draw(corrupted(t, V)))
    layer = HS.HierarchicalSoftmax(tree, D, np.random.default_rng(0))
    c = ids_of(data, V, N)
    layer.forward(c, t)
    layer.backward()
    check_bad_ids(lambda x: layer.forward(x, t), c, V, "centers", data.draw(corrupted(c, V)))
    check_bad_ids(lambda x: layer.forward(c, x), t, V, "contexts", data.draw(corrupted(t, V)))
    raises_naming(lambda: HS.hs_loss_and_grads(inject(h, np.nan, 0), U, tree, t), "h", ValueError)
    raises_naming(lambda: HS.huffman_tree([3]), "counts", ValueError)


# ---------------------------------------------------------------- GloVe
@st.composite
def cooccurrences(draw, V):
    X = np.array(draw(st.lists(st.integers(0, 30), min_size=V * V, max_size=V * V)), float).reshape(V, V)
    X[0, V - 1] += 1
    return X


@covers("glove.glove_weight", "glove.glove_cooccurrence", "glove.cooccurrence_entries")
@budget()
@given(st.data())
def test_the_glove_weighting_and_entries_are_their_formulas(data):
    x = data.draw(float_arrays((5,), 0, 300))
    x_max, alpha = data.draw(st.sampled_from([1.0, 100.0])), data.draw(st.sampled_from([0.5, 0.75]))
    close(G.glove_weight(x, x_max, alpha), np.where(x < x_max, (x / x_max) ** alpha, 1.0))
    raises_naming(lambda: G.glove_weight(inject(x, data.draw(non_finite), 0)), "counts", ValueError)
    raises_naming(lambda: G.glove_weight(x, x_max=0), "x_max", ValueError)
    V = data.draw(dims(1, 4))
    X = data.draw(cooccurrences(V))
    for m in (X, sp.csr_matrix(X)):
        r, c, v = G.cooccurrence_entries(m)
        close(sorted(zip(r, c, v)), sorted((i, j, X[i, j]) for i, j in zip(*np.nonzero(X), strict=True)))
    raises_naming(lambda: G.cooccurrence_entries(np.zeros((V, V + 1))), "square", ValueError)
    ids = [np.array([0, V - 1, 0])]
    close(G.glove_cooccurrence(ids, V, window=2).toarray(),
          __import__("helpers.lib.counting", fromlist=["x"]).cooccurrence_matrix(ids, V, 2, "harmonic").toarray())


@covers("glove.GloVeNumpy", "glove.GloVeTorch")
@budget(2)
@given(st.data())
def test_the_glove_layer_is_the_torch_models_loss_and_gradient(data):
    V, D, P = data.draw(dims(1, 5)), data.draw(dims(1, 3)), data.draw(dims(1, 6))
    layer = G.GloVeNumpy(V, D, np.random.default_rng(0))
    rows, cols = ids_of(data, V, P), ids_of(data, V, P)
    x = data.draw(float_arrays((P,), 0.5, 200))
    model = G.GloVeTorch(V, D).double().load_numpy(layer.params)
    J = model(T(rows), T(cols), T(np.log(x)), T(G.glove_weight(x)))
    J.backward()
    close(layer.forward(rows, cols, x), J.item())
    layer.backward()
    close(layer.grads[0], model.W.weight.grad)
    close(layer.grads[3], model.b_tilde.weight.grad[:, 0])
    check_bad_ids(lambda r: layer.forward(r, cols, x), rows, V, "rows", data.draw(corrupted(rows, V)))
    check_bad_ids(lambda c: model(torch.as_tensor(c), T(rows), T(np.log(x)), T(x)), cols, V, "rows",
                  data.draw(corrupted(cols, V)))
    raises_naming(lambda: layer.forward(rows, cols, inject(x, data.draw(non_finite), 0)), "x", ValueError)
    raises_naming(lambda: layer.forward(rows, cols, -x), "x", ValueError)


@covers("glove.train_numpy", "glove.train_torch", "glove.train_pairwise", "glove.GloVeVectors")
@budget(0.3)
@given(st.data())
def test_every_glove_trainer_fits_a_tiny_matrix_and_checks_its_vocabulary(data):
    V = data.draw(dims(1, 4))
    X = data.draw(cooccurrences(V))
    for train in (G.train_numpy, G.train_torch, G.train_pairwise):
        gv = train(sp.csr_matrix(X), dim=2, epochs=2, vocab=[f"w{i}" for i in range(V)], progress=False)
        assert gv.vectors().shape == (V, 2) and len(gv.epoch_loss) == 2 and np.all(np.isfinite(gv.W))
        back = G.GloVeVectors.from_arrays(*gv.to_arrays())
        np.testing.assert_array_equal(back.W, gv.W)
        assert back.vocab == gv.vocab
        raises_naming(lambda train=train: train(X, dim=2, epochs=1, vocab=["x"] * (V + 1), progress=False), "vocab",
                      ValueError)
        raises_naming(lambda train=train: train(X, dim=0, progress=False), "dim", ValueError)


# ---------------------------------------------------------------- fastText
@covers("fasttext.char_ngrams", "fasttext.fnv1a_32", "fasttext.ngram_buckets")
@budget()
@given(word=st.text(alphabet="abcéü한", min_size=1, max_size=8), lo=dims(1, 3), extra=st.integers(0, 3))
def test_ngrams_and_hashes_are_fasttexts(word, lo, extra):
    from gensim.models.fasttext import ft_ngram_hashes
    from gensim.models.fasttext_inner import compute_ngrams, ft_hash_bytes
    hi = lo + extra
    assert FT.char_ngrams(word, lo, hi) == compute_ngrams(word, lo, hi)
    assert FT.fnv1a_32(word) == ft_hash_bytes(word.encode("utf-8"))
    # the same multiset of buckets (a word vector is their mean; gensim lists them position by position)
    assert sorted(FT.ngram_buckets(word, 1000, lo, hi)) == sorted(ft_ngram_hashes(word, lo, hi, 1000))
    raises_naming(lambda: FT.char_ngrams(word, hi + 1, lo), "min_n", ValueError)
    raises_naming(lambda: FT.char_ngrams(3), "word", TypeError)
    raises_naming(lambda: FT.ngram_buckets(word, 0), "buckets", ValueError)


@covers("fasttext.SubwordEmbedding", "fasttext.FastTextVectors", "fasttext.misspell")
@budget()
@given(st.data())
def test_a_word_vector_is_the_mean_of_its_rows_and_its_gradient_is_their_share(data):
    vocab = ["bank", "river"]
    emb = FT.SubwordEmbedding(3, buckets=50, vocab=vocab, combine=data.draw(st.sampled_from(["mean", "sum"])))
    words = data.draw(st.lists(st.sampled_from(["bank", "river", "banks", "rivers"]), min_size=1, max_size=3))
    out = emb.forward(words)
    for k, w in enumerate(words):
        own, grams = emb.rows(w)
        rows = np.concatenate([emb.params[0][own], emb.params[1][grams]])
        close(out[k], rows.mean(0) if emb.combine == "mean" else rows.sum(0))
    dout = data.draw(float_arrays(out.shape))
    emb.backward(dout)
    close(emb.grads[1].sum(0) + emb.grads[0].sum(0),
          sum(dout[k] * (1 if emb.combine == "mean" else sum(map(len, emb.rows(w))))
              for k, w in enumerate(words)))
    raises_naming(lambda: emb.backward(dout[:, :1] if dout.shape[1] > 1 else dout[:0]), "dout", ValueError)
    raises_naming(lambda: emb.forward("bank"), "words", TypeError)
    rng = np.random.default_rng(data.draw(st.integers(0, 9)))
    m = FT.misspell("riverbank", rng)
    assert m != "riverbank" and m[0] == "r" and m[-1] == "k" and abs(len(m) - 9) <= 1
    raises_naming(lambda: FT.misspell("abc", rng), "misspell", ValueError)
    ftv = FT.FastTextVectors(vocab, np.ones((2, 3), np.float32), np.ones((2, 3), np.float32),
                             emb.params[1].astype(np.float32), 3, 6, 0.0)
    close(ftv.vector("zzzz"), emb.params[1][FT.ngram_buckets("zzzz", 50)].mean(0), 1e-6)
    raises_naming(lambda: FT.FastTextVectors(vocab, np.ones((3, 3)), np.ones((2, 3)), emb.params[1], 3, 6, 0.0), "W",
                  ValueError)


@covers("fasttext.train_fasttext", "fasttext.misspelling_test")
@budget(0.2)
@given(seed=st.integers(0, 2))
def test_gensims_fasttext_trains_and_the_misspelling_test_scores_it(seed):
    sents = [["the", "river", "bank"], ["the", "money", "bank"], ["river", "water"]] * 5
    ftv = FT.train_fasttext(sents, dim=4, min_count=1, epochs=1, buckets=100, seed=seed, workers=1)
    assert "bank" in ftv and ftv.vector("bannk").shape == (4,)
    res = FT.misspelling_test(ftv, ["river", "money"], k=2, seed=seed)
    assert res["hits"].shape == (2,) and set(res["hits"]) <= {0.0, 1.0}
    raises_naming(lambda: FT.train_fasttext([[]]), "corpus", ValueError)
