"""Properties of helpers.lib.bert, pretraining and contextual: the NumPy masked LM equals its
autograd reference for every mask form, the encoder ignores whatever sits in padding, and ids,
segments and labels outside their ranges are refused naming the argument."""
import math

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import bert as BE
from helpers.lib import contextual as CX
from helpers.lib import pretraining as PT
from helpers.lib.bpe import BPETokenizer
from helpers.lib.mlm import IGNORE, encode_sentence, pad_batch
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    covers,
    dims,
    float_arrays,
    mask_forms,
    raises_naming,
)

T = torch.tensor
SENTS = [["the", "river", "bank"], ["the", "money", "bank"], ["a", "river", "of", "money"], ["the", "bank", "sat"]]
TOK = BPETokenizer.train([w for s in SENTS for w in s] * 3, vocab_size=40)
CFG = BE.BertConfig(vocab_size=len(TOK), dim=8, n_layers=1, n_heads=2, ff_dim=16, max_len=8, dropout=0.0)


close = closeness(1e-9)


@st.composite
def mlm_batch(draw, V):
    B, L = draw(dims(1, 3)), draw(dims(2, 5))
    ids = np.array(draw(st.lists(st.integers(0, V - 1), min_size=B * L, max_size=B * L))).reshape(B, L)
    lengths = [draw(st.integers(1, L)) for _ in range(B)]
    att = np.arange(L)[None, :] < np.array(lengths)[:, None]
    labels = np.where(att & (draw(float_arrays((B, L))) > 0), ids, IGNORE)
    labels[0, 0] = ids[0, 0]
    return ids, labels, att


@covers("bert.NumpyMaskedLM", "bert.numpy_mlm_torch_reference", "bert.mlm_loss_numpy")
@budget(2)
@given(st.data())
def test_the_numpy_masked_lm_is_its_autograd_reference_for_every_mask_form(data):
    V, D = data.draw(dims(2, 8)), data.draw(dims(1, 3))
    model = BE.NumpyMaskedLM(V, D, np.random.default_rng(data.draw(st.integers(0, 3))))
    ids, labels, att = data.draw(mlm_batch(V))
    ref_loss, ref_params = BE.numpy_mlm_torch_reference(model.params, ids, labels, att)
    for _form, m, expected in mask_forms(att):
        if expected == "same":
            close(model.forward(ids, labels, m), ref_loss.item())
        else:
            raises_naming(lambda m=m: model.forward(ids, labels, m), "attention_mask", expected)
    model.forward(ids, labels, att)
    model.backward()
    for g, p in zip(model.grads, ref_params, strict=True):
        close(g, p.grad)
    check_bad_ids(lambda x: model.forward(x, labels, att), ids, V, "ids", data.draw(corrupted(ids, V)))
    padded = labels.copy()
    if (~att).any():
        padded[~att] = 0
        raises_naming(lambda: model.forward(ids, padded, att), "labels", ValueError)
    logits = data.draw(float_arrays((3, V)))
    t = np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=3, max_size=3)))
    close(BE.mlm_loss_numpy(logits, t), torch.nn.functional.cross_entropy(T(logits), T(t)).item())
    check_bad_ids(lambda x: BE.mlm_loss_numpy(logits, x), t, V, "targets", data.draw(corrupted(t, V)))


@covers("bert.BertConfig", "bert.TinyBert", "bert.mlm_loss", "bert.masked_lm_loss", "bert.tying_saving")
@budget(2)
@given(st.data())
def test_the_encoder_ignores_padding_and_refuses_bad_ids_segments_and_masks(data):
    torch.manual_seed(0)
    model = BE.TinyBert(CFG, TOK.pad_id).eval()
    B, L = data.draw(dims(1, 3)), data.draw(dims(2, 6))
    ids = np.array(data.draw(st.lists(st.integers(5, len(TOK) - 1), min_size=B * L, max_size=B * L))).reshape(B, L)
    att = np.ones((B, L), bool)
    att[0, 1:] = data.draw(float_arrays((L - 1,))) > 0
    seg = np.array(data.draw(st.lists(st.integers(0, 1), min_size=B * L, max_size=B * L))).reshape(B, L)
    other = np.where(att, ids, (ids + 3) % len(TOK))                 # different tokens where there is padding
    with torch.no_grad():
        h = model(T(ids), T(att), T(seg))
        h2 = model(T(other), T(att.astype(np.int64)), T(seg))
        close(h[T(att)].numpy(), h2[T(att)].numpy(), 1e-5)           # real positions never see padding
        hidden, attn = model.layers_and_attention(T(ids), T(att), T(seg))
    close(hidden[-1].numpy(), h.numpy(), 1e-5)
    assert np.allclose(attn[0].numpy()[..., ~att[0]][0], 0)
    for _form, m, expected in mask_forms(att):
        if expected != "same":
            raises_naming(lambda m=m: model(T(ids), torch.as_tensor(m), T(seg)), "attention_mask", expected)
    check_bad_ids(lambda x: model(torch.as_tensor(x)), ids, len(TOK), "ids", data.draw(corrupted(ids, len(TOK))))
    check_bad_ids(lambda x: model(T(ids), T(att), torch.as_tensor(x)), seg, 2, "segments", data.draw(corrupted(seg, 2)))
    raises_naming(lambda: model(T(np.zeros((1, 9), np.int64))), "max_len", ValueError)
    labels = np.where(att, ids, IGNORE)
    with torch.no_grad():
        logits = model.mlm_logits(h)
        ref = torch.nn.functional.cross_entropy(logits[T(att)], T(ids)[T(att)])
        close(BE.mlm_loss(logits, T(labels)).item(), ref.item(), 1e-6)
        h0 = model(T(ids), T(att))                                       # masked_lm_loss: segments 0
        ref0 = torch.nn.functional.cross_entropy(model.mlm_logits(h0)[T(att)], T(ids)[T(att)])
        close(BE.masked_lm_loss(model, T(ids), T(labels), T(att)).item(), ref0.item(), 1e-5)
    raises_naming(lambda: BE.mlm_loss(logits, T(labels).double()), "labels", TypeError)
    raises_naming(lambda: BE.mlm_loss(logits, T(np.full((B, L), IGNORE))), "masked", ValueError)
    bad = labels.copy()
    bad[0, 0] = len(TOK)
    raises_naming(lambda: BE.mlm_loss(logits, T(bad)), "labels", ValueError)
    saving = BE.tying_saving(CFG)
    assert saving["saved"] == saving["V_times_d"] == CFG.vocab_size * CFG.dim


@covers("pretraining.encode_corpus", "pretraining.batch_to_torch", "pretraining.fixed_eval_batches",
        "pretraining.evaluate_mlm", "pretraining.unigram_baseline", "pretraining.next_masked_batch",
        "pretraining.mlm_update", "pretraining.pretrain_mlm", "pretraining.PretrainResult",
        "pretraining.load_pretrained", "pretraining.piece_word2vec")
@budget(0.3)
@given(seed=st.integers(0, 3), max_len=st.integers(3, 8))
def test_pre_training_a_tiny_bert_runs_end_to_end_and_is_seeded(seed, max_len):
    seqs = PT.encode_corpus(TOK, SENTS, max_len)
    assert all(len(s) <= max_len and s[0] == TOK.cls_id for s in seqs)
    batches = PT.fixed_eval_batches(TOK, seqs, seed=seed, batch_size=2)
    assert sum(b.inputs.shape[0] for b in batches) == len(seqs)
    assert all(np.all(b.inputs[b.chosen] == TOK.mask_id) for b in batches)        # p_mask = 1: all [MASK]
    if not any(b.chosen.any() for b in batches):
        raises_naming(lambda: PT.unigram_baseline(TOK, seqs, batches), "masked", ValueError)
        return
    base = PT.unigram_baseline(TOK, seqs, batches)
    assert 0 <= base["accuracy"] <= 1 and base["nll"] > 0
    E = PT.piece_word2vec(TOK, seqs, dim=CFG.dim, epochs=1, seed=seed)
    assert E.shape == (len(TOK), CFG.dim) and np.isclose(E.std(), 0.1, rtol=0.5)
    runs = [PT.pretrain_mlm(TOK, seqs, batches, CFG, steps=4, batch_size=2, warmup=1, n_evals=2, seed=seed,
                            init_embeddings=E, progress=False) for _ in range(2)]
    assert runs[0].history.step_loss == runs[1].history.step_loss and runs[0].steps == 4
    back = PT.PretrainResult.from_arrays(*runs[0].to_arrays())
    model = PT.load_pretrained(back)
    m = PT.evaluate_mlm(model, batches)
    assert 0 <= m["accuracy"] <= 1 and math.isfinite(m["nll"]) and m["n_masked"] == base["n_masked"]
    x, y, att = PT.batch_to_torch(batches[0], "cpu")
    assert x.dtype == torch.int64 and att.dtype == torch.bool
    queue = []
    b = PT.next_masked_batch(seqs, [len(s) for s in seqs], queue, 2, TOK, np.random.default_rng(seed))
    assert b.inputs.shape[0] <= 2 and np.all(b.labels[~b.attention_mask] == IGNORE)
    raises_naming(lambda: PT.encode_corpus(TOK, [], max_len), "corpus", ValueError)
    raises_naming(lambda: PT.pretrain_mlm(TOK, seqs, batches, CFG, steps=1, n_evals=2, progress=False), "steps",
                  ValueError)
    raises_naming(lambda: PT.pretrain_mlm(TOK, seqs, batches, CFG, steps=2, n_evals=1, progress=False,
                                          init_embeddings=E[:, :1]), "init_embeddings", ValueError)


@covers("contextual.word_vectors", "contextual.find_word", "contextual.contextual_vector", "contextual.nearest_sense",
        "contextual.nearest_sense_accuracy")
@budget()
@given(st.data())
def test_a_words_vector_is_the_mean_of_its_pieces_and_senses_go_to_the_nearest_centroid(data):
    torch.manual_seed(0)
    model = BE.TinyBert(CFG, TOK.pad_id).eval()
    k = data.draw(st.integers(0, len(SENTS) - 1))
    words = SENTS[k]
    pos = data.draw(st.integers(0, len(words) - 1))
    layer = data.draw(st.integers(-2, 1))
    v = CX.word_vectors(model, TOK, [words], [pos], layer=layer)[0]
    ids, att = pad_batch([encode_sentence(TOK, words, CFG.max_len)], TOK.pad_id)
    with torch.no_grad():
        hidden, _ = model.layers_and_attention(T(ids), T(att))
    _, owner = TOK.encode_words(words)
    close(v, hidden[layer][0, np.flatnonzero(owner == pos) + 1].mean(0).numpy(), 1e-6)
    assert CX.find_word(words, words[pos]) == words.index(words[pos])
    close(CX.contextual_vector(model, TOK, " ".join(words), words[pos], layer=layer),
          CX.word_vectors(model, TOK, [words], [words.index(words[pos])], layer=layer)[0], 1e-6)
    raises_naming(lambda: CX.word_vectors(model, TOK, [words], [len(words)]), "position", ValueError)
    raises_naming(lambda: CX.word_vectors(model, TOK, [words], [0.5]), "position", TypeError)
    raises_naming(lambda: CX.word_vectors(model, TOK, [words], [0], layer=5), "layer", ValueError)
    raises_naming(lambda: CX.find_word(words, "zebra"), "zebra", ValueError)
    X = data.draw(float_arrays((6, 3)))
    X[:, 0] += np.array([5, 5, 5, -5, -5, -5])
    senses = ["x", "x", "x", "y", "y", "y"]
    best, scores = CX.nearest_sense(X[0], X[1:], senses[1:])
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    cent = {s: unit[1:][np.array(senses[1:]) == s].mean(0) for s in "xy"}
    ref = {s: cent[s] / np.linalg.norm(cent[s]) @ unit[0] for s in "xy"}
    close([scores[s] for s in "xy"], [ref[s] for s in "xy"])
    assert best == max("xy", key=lambda s: (round(ref[s], 12), -"xy".index(s)))
    acc = CX.nearest_sense_accuracy(X, senses, 1, np.random.default_rng(0), repeats=3)
    assert 0 <= acc["accuracy"] <= 1 and acc["per_round"].shape == (3,)
    raises_naming(lambda: CX.nearest_sense_accuracy(X, senses, 3, np.random.default_rng(0)), "n_support", ValueError)
