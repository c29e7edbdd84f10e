"""Properties of helpers.lib.recurrent, gradient_flow, rnn_lm and language_models: the NumPy
layers are torch.nn's (weights copied in, biases or none), states and upstream gradients of a
wrong shape or holding nan are refused, and the language models refuse ids outside the vocabulary."""
import math

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import gradient_flow as GF
from helpers.lib import language_models as LM
from helpers.lib import recurrent as R
from helpers.lib import rnn_lm as RL
from helpers.lib.text import Vocab
from tests.props import (
    budget,
    check_bad_ids,
    closeness,
    corrupted,
    covers,
    dims,
    float_arrays,
    inject,
    non_finite,
    raises_naming,
)

T = torch.tensor
TIME = {"rnn": (R.TimeRNN, torch.nn.RNN), "lstm": (R.TimeLSTM, torch.nn.LSTM), "gru": (R.TimeGRU, torch.nn.GRU)}
CELL = {"rnn": (R.RNNCell, torch.nn.RNNCell), "lstm": (R.LSTMCell, torch.nn.LSTMCell),
        "gru": (R.GRUCell, torch.nn.GRUCell)}


close = closeness(1e-9)


@covers("recurrent.TimeRNN", "recurrent.TimeLSTM", "recurrent.TimeGRU", "recurrent.copy_from_torch",
        "recurrent.fast_sigmoid")
@budget(3)
@given(st.data())
def test_time_layers_are_torchs_forward_and_backward_with_or_without_biases(data):
    kind = data.draw(st.sampled_from(sorted(TIME)))
    B, Tn, D, H = (data.draw(dims(1, 3)) for _ in range(4))
    ours_cls, torch_cls = TIME[kind]
    torch.manual_seed(data.draw(st.integers(0, 3)))
    module = torch_cls(D, H, batch_first=True, bias=data.draw(st.booleans())).double()
    layer = R.copy_from_torch(ours_cls(D, H, np.random.default_rng(0)), module)
    xs = data.draw(float_arrays((B, Tn, D)))
    h0 = data.draw(float_arrays((B, H)))
    tx, th = T(xs, requires_grad=True), T(h0[None], requires_grad=True)
    if kind == "lstm":
        c0 = data.draw(float_arrays((B, H)))
        tc = T(c0[None], requires_grad=True)
        ths, (_, tcT) = module(tx, (th, tc))
        hs = layer.forward(xs, h0, c0)
    else:
        ths, _ = module(tx, th)
        hs = layer.forward(xs, h0)
    close(hs, ths.detach())
    dhs = data.draw(float_arrays((B, Tn, H)))
    loss = (ths * T(dhs)).sum()
    if kind == "lstm":
        dcT = data.draw(float_arrays((B, H)))
        loss = loss + (tcT[0] * T(dcT)).sum()
        dx = layer.backward(dhs, dcT)
        close(layer.dc0, torch.autograd.grad(loss, tc, retain_graph=True)[0][0])
        raises_naming(lambda: layer.backward(dhs, np.ones((B, H + 1))), "dc_T", ValueError)
    else:
        dx = layer.backward(dhs)
    gx, gh = torch.autograd.grad(loss, (tx, th))
    close(dx, gx)
    close(layer.dh0, gh[0])
    close(R.fast_sigmoid(xs), torch.sigmoid(T(xs)), 1e-12)
    bad = inject(xs, data.draw(non_finite), data.draw(st.integers(0, 30)))
    raises_naming(lambda: layer.forward(bad), "xs", ValueError)
    raises_naming(lambda: layer.forward(xs, inject(h0, np.nan, 0), *(() if kind != "lstm" else (h0,))), "h0",
                  ValueError)
    raises_naming(lambda: layer.forward(xs, h0[:, :0] if H > 0 else h0, *(() if kind != "lstm" else (h0,))), "h0",
                  ValueError)
    raises_naming(lambda: layer.backward(dhs[:, :, :0]), "dhs", ValueError)
    raises_naming(lambda: layer.forward(xs[:, :, :0] if D else xs), "input", ValueError)


@covers("recurrent.RNNCell", "recurrent.LSTMCell", "recurrent.GRUCell")
@budget(2)
@given(st.data())
def test_cells_are_torchs_and_accumulate_their_gradients(data):
    kind = data.draw(st.sampled_from(sorted(CELL)))
    B, D, H = (data.draw(dims(1, 3)) for _ in range(3))
    ours_cls, torch_cls = CELL[kind]
    torch.manual_seed(0)
    module = torch_cls(D, H).double()
    cell = R.copy_from_torch(ours_cls(D, H, np.random.default_rng(0)), module)
    x, h = data.draw(float_arrays((B, D))), data.draw(float_arrays((B, H)))
    tx, th = T(x, requires_grad=True), T(h, requires_grad=True)
    dh = data.draw(float_arrays((B, H)))
    if kind == "lstm":
        c = data.draw(float_arrays((B, H)))
        tc = T(c, requires_grad=True)
        th2, tc2 = module(tx, (th, tc))
        h2, c2 = cell.forward(x, h, c)
        close(c2, tc2.detach())
        dc = data.draw(float_arrays((B, H)))
        (th2 * T(dh) + tc2 * T(dc)).sum().backward()
        dx, dhp, dcp = cell.backward(dh, dc)
        close(dcp, tc.grad)
    else:
        th2 = module(tx, th)
        h2 = cell.forward(x, h)
        (th2 * T(dh)).sum().backward()
        dx, dhp = cell.backward(dh)
    close(h2, th2.detach())
    close(dx, tx.grad)
    close(dhp, th.grad)
    close(cell.grads[0], module.weight_ih.grad.T)
    first = cell.grads[0].copy()
    cell.forward(x, h, *((c,) if kind == "lstm" else ()))
    cell.backward(dh, *((dc,) if kind == "lstm" else ()))
    close(cell.grads[0], 2 * first)                      # a cell accumulates until zero_grad
    cell.zero_grad()
    assert all(np.all(g == 0) for g in cell.grads)
    raises_naming(lambda: cell.forward(x, h[:1] if B > 1 else h[:, :0], *((c,) if kind == "lstm" else ())), "h_prev",
                  ValueError)
    raises_naming(lambda: cell.forward(inject(x, np.inf, 0), h, *((c,) if kind == "lstm" else ())), "x", ValueError)


@covers("recurrent.lstm_param_count", "recurrent.gru_param_count", "recurrent.rnn_param_count")
@budget()
@given(D=dims(1, 30), H=dims(1, 30))
def test_parameter_counts_are_the_layers_and_torchs(D, H):
    for count, kind in ((R.rnn_param_count, "rnn"), (R.lstm_param_count, "lstm"), (R.gru_param_count, "gru")):
        layer = TIME[kind][0](D, H, np.random.default_rng(0))
        assert count(D, H) == layer.n_params()
    assert R.lstm_param_count(D, H) == sum(p.numel() for p in torch.nn.LSTM(D, H).parameters()) - 4 * H
    assert R.gru_param_count(D, H) == sum(p.numel() for p in torch.nn.GRU(D, H).parameters()) - 2 * H


@covers("gradient_flow.random_recurrent_layer", "gradient_flow.gradient_norms_through_time",
        "gradient_flow.clipped_profile", "gradient_flow.lm_gradient_flow")
@budget(0.5)
@given(kind=st.sampled_from(["rnn", "lstm", "gru"]), scale=st.sampled_from([0.5, 1.0, 2.0]), Tn=dims(1, 8))
def test_gradient_flow_measures_the_backward_of_the_layer(kind, scale, Tn):
    layer = GF.random_recurrent_layer(kind, scale, input_size=3, hidden=4)
    Wh = layer.params[1][:, :4]
    close(np.linalg.svd(Wh, compute_uv=False).max(), scale)
    norms = GF.gradient_norms_through_time(layer, T=Tn, batch=2)
    assert norms.shape == (Tn,) and np.all(np.isfinite(norms)) and np.isclose(
        norms[0], np.linalg.norm(layer.dh_all[:, -1], axis=1).mean())
    before, after, norm = GF.clipped_profile(layer, 0.01, T=Tn)
    close(before, GF.gradient_norms_through_time(layer, T=Tn))
    assert np.all(after <= before + 1e-12) and norm >= 0
    E, W_out, b_out = np.ones((5, 3)), np.ones((5, 4)), np.zeros(5)
    ids = np.array([[0, 1, 2, 3][:max(2, min(4, Tn))]])
    g = GF.lm_gradient_flow(E, layer, W_out, b_out, ids)
    assert g.shape == (ids.shape[1] - 1,)


# ---------------------------------------------------------------- the PyTorch language models
@covers("rnn_lm.RecurrentLM", "rnn_lm.to_numpy_layers", "rnn_lm.detach_state")
@budget()
@given(st.data())
def test_the_recurrent_lm_is_its_numpy_layers_and_refuses_bad_ids(data):
    kind = data.draw(st.sampled_from(["rnn", "lstm", "gru"]))
    model = RL.RecurrentLM(6, kind, emb_dim=3, hidden=4, seed=data.draw(st.integers(0, 2))).double()
    ids = np.array(data.draw(st.lists(st.integers(0, 5), min_size=2, max_size=6)))[None]
    with torch.no_grad():
        logits, state = model(T(ids))
    E, layer, W_out, b_out = RL.to_numpy_layers(model)
    close(layer.forward(E[ids]) @ W_out.T + b_out, logits, 1e-6)
    assert RL.detach_state(state) is not None and RL.detach_state(None) is None
    check_bad_ids(lambda x: model(torch.as_tensor(x)), ids, 6, "ids", data.draw(corrupted(ids, 6)))
    raises_naming(lambda: RL.RecurrentLM(6, "transformer"), "kind", ValueError)


def _lm_data():
    vocab = Vocab(["<unk>", "<eos>", "a", "b", "c"], specials=("<unk>", "<eos>"))
    rng = np.random.default_rng(0)
    return RL.LMData(vocab, rng.integers(1, 5, 400), rng.integers(1, 5, 120), rng.integers(1, 5, 120))


@covers("rnn_lm.LMData", "rnn_lm.unigram_perplexity", "rnn_lm.evaluate_nll", "rnn_lm.endless_batches",
        "rnn_lm.train_lm")
@budget(0.3)
@given(st.data())
def test_training_and_evaluating_a_recurrent_lm(data):
    lm = _lm_data()
    assert "vocabulary 5 types" in lm.describe()
    counts = np.bincount(lm.train, minlength=5) + 1.0
    close(RL.unigram_perplexity(lm.train, lm.valid, 5), math.exp(-np.log(counts / counts.sum())[lm.valid].mean()))
    check_bad_ids(lambda x: RL.unigram_perplexity(lm.train, x, 5), lm.valid[:6], 5, "eval_ids",
                  data.draw(corrupted(lm.valid[:6], 5)))
    x, y, fresh = next(RL.endless_batches(lm.train, 4, 5))
    assert fresh and x.shape == (4, 5) and np.array_equal(x[:, 1:], y[:, :-1])
    model = RL.RecurrentLM(5, data.draw(st.sampled_from(["rnn", "gru"])), emb_dim=3, hidden=4)
    hist = RL.train_lm(model, lm, steps=6, eval_every=3, batch_size=4, seq_len=5, eval_tokens=60, progress=False)
    assert hist.steps == 6 and all(math.isfinite(x) for x in hist.step_loss)
    assert math.isfinite(RL.evaluate_nll(model, lm.valid, batch_size=2, seq_len=5))
    raises_naming(lambda: RL.train_lm(model, lm), "steps", ValueError)
    raises_naming(lambda: next(RL.endless_batches(lm.train[:8], 4, 5)), "batch_size", ValueError)


@covers("rnn_lm.temperature_probs", "rnn_lm.generate", "rnn_lm.next_word_logits", "rnn_lm.frequency_profile",
        "rnn_lm.exposure_bias")
@budget()
@given(st.data())
def test_generation_reads_the_softmax_at_its_temperature(data):
    logits = data.draw(float_arrays((2, 5), -10, 10))
    temp = data.draw(st.sampled_from([0.25, 1.0, 4.0]))
    close(RL.temperature_probs(logits, temp), torch.softmax(T(logits) / temp, -1))
    raises_naming(lambda: RL.temperature_probs(logits, 0), "temperature", ValueError)
    lm = _lm_data()
    model = RL.RecurrentLM(5, "gru", emb_dim=3, hidden=4)
    words = RL.generate(model, lm.vocab, ["a", "zzz"], n_words=3, greedy=True)
    assert len(words) == 3 and "<unk>" not in words
    assert RL.next_word_logits(model, lm.vocab, ["a"]).shape == (5,)
    raises_naming(lambda: RL.generate(model, lm.vocab, ["a"], n_words=1), "rng", ValueError)
    raises_naming(lambda: RL.generate(model, lm.vocab, "a b", n_words=1, greedy=True), "prompt", TypeError)
    vocab = Vocab.build("a a a b b c".split())
    prof = RL.frequency_profile(["a", "b", "c", "zz"], vocab, top=1)
    close(prof["top_share"], 1 / 3)
    raises_naming(lambda: RL.frequency_profile(["zz"], vocab), "tokens", ValueError)
    res = RL.exposure_bias(model, lm.valid, n_starts=3, prefix=2, horizon=2)
    assert res["teacher_nll"].shape == (2,) and np.isclose(res["teacher_nll"][0], res["free_nll"][0])


@covers("language_models.perplexity", "language_models.FeedForwardLM", "language_models.mean_nll",
        "language_models.parameter_table", "language_models.count_parameters")
@budget()
@given(st.data())
def test_perplexity_and_the_feed_forward_lm(data):
    nll = data.draw(st.floats(0, 700))
    close(LM.perplexity(nll), math.exp(nll))
    for bad in (-0.1, math.nan):
        raises_naming(lambda bad=bad: LM.perplexity(bad), "perplexity", ValueError)
    raises_naming(lambda: LM.perplexity([1.0, 2.0]), "mean_nll", TypeError)
    model = LM.FeedForwardLM(6, context=2, emb_dim=3, hidden=4)
    X = np.array(data.draw(st.lists(st.integers(0, 5), min_size=4, max_size=4))).reshape(2, 2)
    y = np.array(data.draw(st.lists(st.integers(0, 5), min_size=2, max_size=2)))
    with torch.no_grad():
        ref = torch.nn.functional.cross_entropy(model(T(X)), T(y)).item()
    close(LM.mean_nll(model, X, y, batch_size=1), ref, 1e-6)
    check_bad_ids(lambda x: model(torch.as_tensor(x)), X, 6, "ctx", data.draw(corrupted(X, 6)))
    check_bad_ids(lambda t: LM.mean_nll(model, X, t), y, 6, "y", data.draw(corrupted(y, 6)))
    table = LM.parameter_table(model)
    assert sum(n for _, _, n in table) == LM.count_parameters(model) == 6 * 3 + 6 * 4 + 4 + 4 * 6 + 6
