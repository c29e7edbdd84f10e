"""Lesson 10: helpers.lib.bert (the NumPy tied MLM: gradients, PyTorch; TinyBert: padding, attention,
tying; the MLM loss), helpers.lib.pretraining, helpers.lib.contextual, the word-sense data and the
explorer."""
from functools import partial

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from helpers.course.data import SHA256, load_wsd_sentences, parse_wsd_lines
from helpers.infra.checksums import DataError
from helpers.infra.widgets import Explorer, slider
from helpers.lessons.lesson10 import example_vectors, pca_2d, render_sense_explorer, static_vectors
from helpers.lib.bert import (
    BertConfig,
    NumpyMaskedLM,
    TinyBert,
    masked_lm_loss,
    mlm_loss,
    mlm_loss_numpy,
    numpy_mlm_torch_reference,
    tying_saving,
)
from helpers.lib.bpe import BPETokenizer
from helpers.lib.contextual import (
    contextual_vector,
    nearest_sense,
    nearest_sense_accuracy,
    word_vectors,
)
from helpers.lib.gradcheck import check_function
from helpers.lib.language_models import count_parameters
from helpers.lib.mlm import IGNORE, encode_sentence
from helpers.lib.pretraining import evaluate_mlm, fixed_eval_batches, pretrain_mlm, unigram_baseline


# ---------------------------------------------------------------- NumPy tied MLM
def _numpy_case(B, L, V=11, d=4, seed=0):
    rng = np.random.default_rng(seed)
    model = NumpyMaskedLM(V, d, rng)
    ids = rng.integers(1, V, (B, L))
    att = np.ones((B, L), bool)
    if L > 2:
        att[0, -2:] = False
        ids[0, -2:] = 0  # padding
    labels = np.full((B, L), IGNORE)
    labels[:, 0] = rng.integers(1, V, B)
    if L > 3:
        labels[-1, 2] = 3
    return model, ids, labels, att


@pytest.mark.parametrize("B,L", [(1, 1), (2, 5), (3, 7)])
def test_numpy_mlm_gradients_match_finite_differences(B, L):
    model, ids, labels, att = _numpy_case(B, L)
    model.forward(ids, labels, att)
    model.backward()
    report = check_function(lambda: model.forward(ids, labels, att), model.params,
                            [g.copy() for g in model.grads], names=["E (tied)", "W", "b", "b_out"])
    assert report.ok, report


@pytest.mark.parametrize("B,L", [(1, 1), (2, 5), (3, 7)])
def test_numpy_mlm_matches_torch(B, L):
    model, ids, labels, att = _numpy_case(B, L, seed=1)
    loss = model.forward(ids, labels, att)
    model.backward()
    t_loss, t_params = numpy_mlm_torch_reference(model.params, ids, labels, att)
    assert np.isclose(loss, t_loss.item(), rtol=1e-10)
    for name, g, tp in zip(["E", "W", "b", "b_out"], model.grads, t_params, strict=True):
        np.testing.assert_allclose(g, tp.grad.numpy(), rtol=1e-8, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("window", [1, 2])
@pytest.mark.parametrize("B,L", [(1, 1), (2, 5), (3, 7)])
def test_numpy_window_mlm_gradients_match_finite_differences_and_torch(window, B, L):
    rng = np.random.default_rng(window + B)
    model = NumpyMaskedLM(11, 4, rng, window=window)
    _, ids, labels, att = _numpy_case(B, L, seed=window)
    labels[0, min(1, L - 1)] = 5                   # the neighbours of this one reach beyond the sentence
    loss = model.forward(ids, labels, att)
    model.backward()
    report = check_function(lambda: model.forward(ids, labels, att), model.params,
                            [g.copy() for g in model.grads], names=["E (tied)", "W", "b", "b_out"])
    assert report.ok, report
    t_loss, t_params = numpy_mlm_torch_reference(model.params, ids, labels, att, window=window)
    assert np.isclose(loss, t_loss.item(), rtol=1e-10)
    for name, g, tp in zip(["E", "W", "b", "b_out"], model.grads, t_params, strict=True):
        np.testing.assert_allclose(g, tp.grad.numpy(), rtol=1e-8, atol=1e-12, err_msg=name)


def test_the_window_reads_the_neighbours_and_nothing_beyond_the_sentence():
    rng = np.random.default_rng(0)
    model = NumpyMaskedLM(9, 3, rng, window=1)
    ids = np.array([[2, 5, 6, 3, 0, 0]])
    att = ids != 0
    labels = np.full(ids.shape, IGNORE)
    labels[0, 3] = 3                               # the last real token: its right neighbour is padding
    base = model.forward(ids, labels, att)
    other = ids.copy()
    other[0, 4] = 7                                # a different id at the padded position changes nothing
    assert model.forward(other, labels, att) == base
    other = ids.copy()
    other[0, 2] = 7                                # the left neighbour does
    assert model.forward(other, labels, att) != base
    with pytest.raises(ValueError, match="window must be a non-negative integer"):
        NumpyMaskedLM(9, 3, rng, window=-1)


def test_window_zero_is_the_token_and_the_sentence_mean():
    """window=0: h_i = tanh([x_i, c] W + b) at the masked positions, written out here."""
    model, ids, labels, att = _numpy_case(3, 7, seed=4)
    E, W, b, b_out = model.params
    x = E[ids] * att[..., None]
    c = x.sum(1) / att.sum(1, keepdims=True)
    r, k = np.nonzero(labels != IGNORE)
    h = np.tanh(np.concatenate([x[r, k], c[r]], axis=1) @ W + b)
    logits = h @ E.T + b_out
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    assert np.isclose(model.forward(ids, labels, att), -logp[np.arange(len(r)), labels[r, k]].mean(), rtol=1e-12)


def test_tied_gradient_is_the_sum_of_both_uses():
    model, ids, labels, att = _numpy_case(2, 5)
    model.forward(ids, labels, att)
    model.backward()
    unused = np.setdiff1d(np.arange(11), ids)  # rows never looked up still get the output gradient
    assert len(unused) and np.abs(model.grads[0][unused]).max() > 0
    # and padding rows get nothing through the lookup or the context mean
    model2, ids2, labels2, att2 = _numpy_case(2, 5)
    ids2[0, -2:] = 10
    model2.params = [p.copy() for p in model.params]
    assert np.isclose(model2.forward(ids2, labels2, att2), model.forward(ids, labels, att))


def test_mlm_loss_worked_numbers_and_errors():
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.2, 0.2, 0.6]]))
    assert np.isclose(mlm_loss_numpy(logits, np.array([0, 2])), -(np.log(0.1) + np.log(0.6)) / 2)
    with pytest.raises(ValueError, match="empty set"):
        mlm_loss_numpy(logits[:0], np.array([], int))
    with pytest.raises(ValueError, match="expected logits"):
        mlm_loss_numpy(logits, np.array([0]))


def test_torch_mlm_loss_counts_masked_positions_only():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 6, 9, generator=g)
    labels = torch.full((2, 6), IGNORE)
    labels[0, 1], labels[1, 4], labels[1, 5] = 3, 8, 0
    ours = mlm_loss(logits, labels)
    ref = F.cross_entropy(logits.reshape(-1, 9), labels.reshape(-1), ignore_index=IGNORE)
    assert torch.allclose(ours, ref)
    assert np.isclose(ours.item(), mlm_loss_numpy(logits[labels != IGNORE].numpy().astype(float),
                                                  labels[labels != IGNORE].numpy()), rtol=1e-6)
    with pytest.raises(ValueError, match="no masked positions"):
        mlm_loss(logits, torch.full((2, 6), IGNORE))


# ---------------------------------------------------------------- TinyBert
@pytest.fixture(scope="module")
def small():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=50, dim=16, n_layers=2, n_heads=2, ff_dim=32, max_len=12, dropout=0.0)
    return TinyBert(cfg).eval()


def test_shapes_and_layers(small):
    ids = torch.randint(5, 50, (3, 7))
    out = small(ids)
    assert out.shape == (3, 7, 16) and out.dtype == torch.float32
    hidden, attn = small.layers_and_attention(ids)
    assert hidden.shape == (3, 3, 7, 16) and attn.shape == (2, 3, 2, 7, 7)
    assert torch.allclose(hidden[-1], out, atol=1e-5)
    assert torch.allclose(attn.sum(-1), torch.ones(2, 3, 2, 7), atol=1e-5)
    one = small(ids[:1, :1])
    assert one.shape == (1, 1, 16)


def test_padding_is_never_attended_to(small):
    ids = torch.randint(5, 50, (2, 8))
    ids[1, 5:] = 0
    att = ids != 0
    out = small(ids, att)
    ids2 = ids.clone()
    ids2[1, 5:] = 17  # different tokens at padded positions
    out2 = small(ids2, att)
    assert torch.allclose(out[1, :5], out2[1, :5], atol=1e-6)
    assert torch.allclose(out[1, :5], small(ids[1:, :5])[0], atol=1e-5)  # as if there were no padding
    _, attn = small.layers_and_attention(ids, att)
    assert attn[:, 1, :, :, 5:].abs().max() == 0


def test_weight_tying_and_the_saving():
    cfg = BertConfig(vocab_size=300, dim=24, n_layers=1, n_heads=2, ff_dim=48, max_len=16)
    tied, untied = TinyBert(cfg), TinyBert(BertConfig(**{**cfg.__dict__, "tie_weights": False}))
    assert tied.output_matrix() is tied.tok_emb.weight
    assert untied.output_matrix() is not untied.tok_emb.weight
    s = tying_saving(cfg)
    assert s["saved"] == s["V_times_d"] == 300 * 24
    assert (s["tied"], s["untied"]) == (count_parameters(tied), count_parameters(untied))
    # the tied matrix receives gradient from the output even for tokens absent from the input
    ids = torch.full((1, 4), 7)
    labels = torch.tensor([[IGNORE, 9, IGNORE, IGNORE]])
    masked_lm_loss(tied, ids, labels, ids != 0).backward()
    assert tied.tok_emb.weight.grad[100].abs().sum() > 0


def test_bert_base_parameter_count():
    s = tying_saving(BertConfig(vocab_size=30522, dim=768, n_layers=12, n_heads=12, ff_dim=3072, max_len=512))
    # BERT-base encoder 108,891,648 (109,482,240 with the pooler, which we do not have)
    # + the final LayerNorm of a Pre-LN stack 1,536 + MLM head transform 590,592 + its LayerNorm 1,536
    # + output bias 30,522
    assert s["tied"] == 108_891_648 + 1_536 + 590_592 + 1_536 + 30_522
    assert s["saved"] == 30522 * 768


def test_bad_input(small):
    with pytest.raises(ValueError, match="exceeds max_len=12"):
        small(torch.randint(5, 50, (1, 13)))
    with pytest.raises(ValueError, match=r"shape \(B, L\)"):
        small(torch.randint(5, 50, (13,)))


# ---------------------------------------------------------------- training and vectors
TEXT = [s.split() for s in [
    "the bank raised its interest rates", "we sat on the river bank", "the bank lent money to the firm",
    "the river flooded the bank", "she keeps her money in the bank", "fish swim in the river",
    "the firm pays interest on the loan", "the grassy bank of the river"]] * 6


@pytest.fixture(scope="module")
def trained():
    tok = BPETokenizer.train([w for s in TEXT for w in s], vocab_size=60)
    seqs = [encode_sentence(tok, s, 16) for s in TEXT]
    eb = fixed_eval_batches(tok, seqs[:16], seed=1)
    cfg = BertConfig(vocab_size=len(tok), dim=16, n_layers=2, n_heads=2, ff_dim=32, max_len=16, dropout=0.0)
    res = pretrain_mlm(tok, seqs, eb, cfg, steps=60, batch_size=16, lr=3e-3, warmup=5, n_evals=3, progress=False)
    return tok, seqs, eb, cfg, res


def test_training_reduces_loss_and_is_reproducible(trained):
    tok, seqs, eb, cfg, res = trained
    losses = res.history.step_loss
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) - 0.5
    assert res.history.epochs[-1]["accuracy"] > unigram_baseline(tok, seqs, eb)["accuracy"]
    again = pretrain_mlm(tok, seqs, eb, cfg, steps=6, batch_size=16, lr=3e-3, warmup=5, n_evals=3, progress=False)
    again2 = pretrain_mlm(tok, seqs, eb, cfg, steps=6, batch_size=16, lr=3e-3, warmup=5, n_evals=3, progress=False)
    assert all(torch.equal(again.state_dict[k], again2.state_dict[k]) for k in again.state_dict)


def test_unigram_baseline_and_evaluation_agree_with_hand_counts(trained):
    tok, seqs, eb, cfg, res = trained
    base = unigram_baseline(tok, seqs, eb)
    targets = np.concatenate([b.labels[b.labels != IGNORE] for b in eb])
    counts = np.bincount(np.concatenate(seqs), minlength=len(tok))
    counts[:5] = 0
    assert base["accuracy"] == np.mean(targets == counts.argmax()) and base["n_masked"] == len(targets)
    model = TinyBert(cfg).eval()
    model.load_state_dict(res.state_dict)
    ev = evaluate_mlm(model, eb)
    assert ev["n_masked"] == len(targets) and 0 <= ev["accuracy"] <= 1
    assert np.all([np.all(b.inputs[b.labels != IGNORE] == tok.mask_id) for b in eb])


def test_device_argument():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        pretrain_mlm(BPETokenizer.train(["ab"], 10), [np.array([2, 5, 3])], [], BertConfig(10), steps=10,
                     device="cuda")


def test_contextual_vectors_depend_on_context(trained):
    tok, seqs, eb, cfg, res = trained
    model = TinyBert(cfg).eval()
    model.load_state_dict(res.state_dict)
    v1 = contextual_vector(model, tok, "the bank raised its interest rates", "bank")
    v2 = contextual_vector(model, tok, "we sat on the river bank", "bank")
    assert v1.shape == (16,) and not np.allclose(v1, v2, atol=1e-3)
    # the embedding layer without position differences is context-free: same word, same slot
    e1 = word_vectors(model, tok, [["the", "bank", "lent"]], [1], layer=0)
    e2 = word_vectors(model, tok, [["the", "bank", "river"]], [1], layer=0)
    assert np.allclose(e1, e2)
    with pytest.raises(ValueError, match="'vault' occurs 0 time"):
        contextual_vector(model, tok, "the bank raised rates", "vault")
    with pytest.raises(ValueError, match="layer must be in"):
        word_vectors(model, tok, [["the", "bank"]], [1], layer=5)


# ---------------------------------------------------------------- word senses
def test_wsd_file_loads_and_is_balanced():
    ex = load_wsd_sentences()
    assert len(ex) == 144
    words = sorted({e.word for e in ex})
    assert words == ["bank", "court", "interest", "light", "plant", "star"]
    for w in words:
        senses = [e.sense for e in ex if e.word == w]
        assert len(set(senses)) == 2 and all(senses.count(s) == 12 for s in set(senses))
    assert all(e.tokens[e.position] == e.word for e in ex)


def test_wsd_checksum_and_format_errors(monkeypatch):
    monkeypatch.setitem(SHA256, "wsd_sentences.tsv", "0" * 64)
    with pytest.raises(DataError, match="corrupt or has been modified"):
        load_wsd_sentences()
    head = "word\tsense\tsentence"
    with pytest.raises(DataError, match="line 2: the word 'bank' occurs 2 times"):
        parse_wsd_lines([head, "bank\triver\tThe bank by the bank."])
    with pytest.raises(DataError, match="line 2: expected 3 tab-separated fields"):
        parse_wsd_lines([head, "bank\tThe bank."])
    with pytest.raises(DataError, match="header"):
        parse_wsd_lines(["bank\triver\tThe bank."])


def test_nearest_sense_accuracy_extremes():
    rng = np.random.default_rng(0)
    senses = np.array(["a"] * 6 + ["b"] * 6)
    same = np.ones((12, 3))  # static vectors: one vector for every occurrence
    assert nearest_sense_accuracy(same, senses, 2, rng, repeats=20)["accuracy"] == 0.5
    apart = np.concatenate([rng.normal([4, 0, 0], 0.5, (6, 3)), rng.normal([0, 4, 0], 0.5, (6, 3))])
    assert nearest_sense_accuracy(apart, senses, 2, rng, repeats=20)["accuracy"] == 1.0
    assert nearest_sense(np.array([0.0, 1.0, 0.0]), apart, senses)[0] == "b"
    with pytest.raises(ValueError, match="more than n_support=6"):
        nearest_sense_accuracy(apart, senses, 6, rng)


def test_static_vectors_target_and_context():
    ex = parse_wsd_lines(["word\tsense\tsentence", "bank\triver\tthe river bank", "bank\tmoney\tthe bank vault"])
    kv = {"the": np.array([1.0, 0.0]), "river": np.array([0.0, 2.0]), "bank": np.array([5.0, 5.0])}
    assert np.array_equal(static_vectors(kv, ex), [[5, 5], [5, 5]])
    assert np.allclose(static_vectors(kv, ex, context=True), [[0.5, 1.0], [1.0, 0.0]])  # 'vault' unknown


def test_pca_2d():
    X = np.random.default_rng(0).normal(size=(20, 5)) * [5, 1, 0.1, 0.1, 0.1]
    P = pca_2d(X)
    assert P.shape == (20, 2) and np.var(P[:, 0]) > np.var(P[:, 1])
    assert np.allclose(P, pca_2d(X))


def test_sense_explorer_render_and_widget(trained):
    tok0, *_ = trained
    ex = load_wsd_sentences()
    tok = BPETokenizer.train([w for e in ex for w in e.tokens], vocab_size=200)
    torch.manual_seed(0)
    model = TinyBert(BertConfig(len(tok), dim=16, n_layers=2, n_heads=2, ff_dim=32, max_len=32)).eval()
    fig, summary = render_sense_explorer(model, tok, ex, sentence=0, word="bank", layer=1)
    assert max(map(len, summary.splitlines())) <= 96            # wrapped: an HTML export never breaks a word
    summary = " ".join(summary.split())
    assert "labelled: finance" in summary and "nearest sense at layer 1" in summary
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels[0] == "[CLS]" and labels[-1] == "[SEP]" and "bank" in labels
    with pytest.raises(ValueError, match="no examples for the word 'vault'"):
        render_sense_explorer(model, tok, ex, word="vault")
    explorer = Explorer(partial(render_sense_explorer, model, tok, ex),
                        {"sentence": slider(0, 0, 23, 1, "sentence"), "layer": slider(2, 1, 2, 1, "layer")})
    before, renders = explorer.summary, explorer.renders
    explorer.controls["sentence"].value = 15
    assert explorer.renders == renders + 1 and explorer.summary != before
    assert "labelled: river" in " ".join(explorer.summary.split())
    assert example_vectors(model, tok, ex[:3]).shape == (3, 16)


def test_piece_word2vec_initialises_the_tied_table(trained):
    from helpers.lib.pretraining import piece_word2vec
    tok, seqs, eb, cfg, res = trained
    E = piece_word2vec(tok, seqs, dim=cfg.dim, scale=0.1, epochs=1)
    assert E.shape == (len(tok), cfg.dim) and E.dtype == np.float32
    assert abs(E[5:].std() - 0.1) < 0.02
    r = pretrain_mlm(tok, seqs, eb, cfg, steps=3, batch_size=8, n_evals=1, warmup=1, lr=0.0, init_embeddings=E,
                     progress=False)
    assert np.allclose(r.state_dict["tok_emb.weight"].numpy(), E)  # lr 0: still the initial table
    with pytest.raises(ValueError, match="init_embeddings has shape"):
        pretrain_mlm(tok, seqs, eb, cfg, steps=3, n_evals=1, init_embeddings=E[:, :3], progress=False)
