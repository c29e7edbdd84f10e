"""Properties of helpers.lib.recurrent_lm and recurrent_tasks: the NumPy RNN and LSTM functions are
torch.nn's (weights copied in, forward and backward through time), Adam and clipping are
torch.optim.Adam's and clip_grad_norm_'s, the language model's loss and gradients are autograd's,
ids outside the vocabulary are refused by name, and the small trainers are seeded, finite and learn."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from helpers.lib import recurrent_lm as RLM
from helpers.lib import recurrent_tasks as RT
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


close = closeness(1e-9)


def ids_of(data, V, shape):
    n = int(np.prod(shape))
    return np.array(data.draw(st.lists(st.integers(0, V - 1), min_size=n, max_size=n)), np.int64).reshape(shape)


# ---------------------------------------------------------------- the tanh RNN and the LSTM
@covers("recurrent_lm.rnn_forward", "recurrent_lm.rnn_bptt")
@budget(0.5)
@given(st.data())
def test_the_rnn_and_its_bptt_are_torchs_rnn_and_autograd(data):
    B, Tn, D, H = (data.draw(dims(1, 3)) for _ in range(4))
    torch.manual_seed(data.draw(st.integers(0, 3)))
    rnn = torch.nn.RNN(D, H, batch_first=True).double()
    Wx, Wh = rnn.weight_ih_l0.detach().numpy().T.copy(), rnn.weight_hh_l0.detach().numpy().T.copy()
    b = (rnn.bias_ih_l0 + rnn.bias_hh_l0).detach().numpy()
    xs, h0, dhs = data.draw(float_arrays((B, Tn, D))), data.draw(float_arrays((B, H))), data.draw(float_arrays((B, Tn, H)))
    hs = RLM.rnn_forward(xs, h0, Wx, Wh, b)
    tx, th = T(xs, requires_grad=True), T(h0[None], requires_grad=True)
    out, _ = rnn(tx, th)
    assert hs.shape == (B, Tn + 1, H)
    close(hs[:, 0], h0)
    close(hs[:, 1:], out.detach())
    grads = torch.autograd.grad((out * T(dhs)).sum(), (tx, th, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0))
    dxs, dh0, dWx, dWh, db = RLM.rnn_bptt(dhs, xs, hs, Wx, Wh)
    for ours, ref in zip((dxs, dh0, dWx, dWh, db), (grads[0], grads[1][0], grads[2].T, grads[3].T, grads[4]),
                         strict=True):
        close(ours, ref)


@covers("recurrent_lm.lstm_step", "recurrent_lm.lstm_step_backward")
@budget(0.5)
@given(st.data())
def test_one_lstm_step_and_its_backward_are_torchs_lstm_cell(data):
    B, D, H = (data.draw(dims(1, 3)) for _ in range(3))
    torch.manual_seed(data.draw(st.integers(0, 3)))
    cell = torch.nn.LSTMCell(D, H).double()
    Wx, Wh = cell.weight_ih.detach().numpy().T.copy(), cell.weight_hh.detach().numpy().T.copy()
    b = (cell.bias_ih + cell.bias_hh).detach().numpy()
    x, h, c = (data.draw(float_arrays(s)) for s in ((B, D), (B, H), (B, H)))
    dh, dc = data.draw(float_arrays((B, H))), data.draw(float_arrays((B, H)))
    h2, c2, cache = RLM.lstm_step(x, h, c, Wx, Wh, b)
    tx, th, tc = (T(a, requires_grad=True) for a in (x, h, c))
    th2, tc2 = cell(tx, (th, tc))
    close(h2, th2.detach())
    close(c2, tc2.detach())
    ref = torch.autograd.grad((th2 * T(dh) + tc2 * T(dc)).sum(), (tx, th, tc, cell.weight_ih, cell.weight_hh,
                                                                   cell.bias_ih))
    ours = RLM.lstm_step_backward(dh, dc, cache, Wx, Wh)
    for a, r in zip(ours, (ref[0], ref[1], ref[2], ref[3].T, ref[4].T, ref[5]), strict=True):
        close(a, r)


@covers("recurrent_lm.lstm_forward", "recurrent_lm.lstm_bptt")
@budget(0.5)
@given(st.data())
def test_the_lstm_over_time_and_its_bptt_are_torchs_lstm_and_autograd(data):
    B, Tn, D, H = (data.draw(dims(1, 3)) for _ in range(4))
    torch.manual_seed(data.draw(st.integers(0, 3)))
    lstm = torch.nn.LSTM(D, H, batch_first=True).double()
    Wx, Wh = lstm.weight_ih_l0.detach().numpy().T.copy(), lstm.weight_hh_l0.detach().numpy().T.copy()
    b = (lstm.bias_ih_l0 + lstm.bias_hh_l0).detach().numpy()
    xs, h0, c0 = data.draw(float_arrays((B, Tn, D))), data.draw(float_arrays((B, H))), data.draw(float_arrays((B, H)))
    dhs = data.draw(float_arrays((B, Tn, H)))
    hs, cs, caches = RLM.lstm_forward(xs, h0, c0, Wx, Wh, b)
    tx, th, tc = T(xs, requires_grad=True), T(h0[None], requires_grad=True), T(c0[None], requires_grad=True)
    out, (_, tcT) = lstm(tx, (th, tc))
    assert hs.shape == cs.shape == (B, Tn + 1, H) and len(caches) == Tn
    close(hs[:, 1:], out.detach())
    close(cs[:, -1], tcT[0].detach())
    close(cs[:, 0], c0)
    ref = torch.autograd.grad((out * T(dhs)).sum(), (tx, th, tc, lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_hh_l0))
    ours = RLM.lstm_bptt(dhs, caches, Wx, Wh)
    for a, r in zip(ours, (ref[0], ref[1][0], ref[2][0], ref[3].T, ref[4].T, ref[5]), strict=True):
        close(a, r)


# ---------------------------------------------------------------- the training step's pieces
@covers("recurrent_lm.clip_gradients")
@budget(0.5)
@given(st.data())
def test_clipping_is_torchs_clip_grad_norm(data):
    shapes = data.draw(st.lists(st.tuples(dims(1, 3), dims(1, 3)), min_size=1, max_size=3))
    grads = [data.draw(float_arrays(s, -5, 5)) for s in shapes]
    max_norm = data.draw(st.sampled_from([0.1, 1.0, 100.0]))
    tensors = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in shapes]
    for t, g in zip(tensors, grads, strict=True):
        t.grad = T(g)
    ref_norm = torch.nn.utils.clip_grad_norm_(tensors, max_norm)
    mine = [g.copy() for g in grads]
    out, norm = RLM.clip_gradients(mine, max_norm)
    assert out is mine
    close(norm, float(ref_norm))
    scale = min(1.0, max_norm / (norm + 1e-12))
    for g, g0, t in zip(mine, grads, tensors, strict=True):
        close(g, t.grad, 1e-5)             # torch adds 1e-6 to the norm, the course 1e-12
        close(g, g0 * scale, 1e-12)
    raises_naming(lambda: RLM.clip_gradients(mine, 0.0), "max_norm", ValueError)
    raises_naming(lambda: RLM.clip_gradients([inject(grads[0], data.draw(non_finite), 0)], 1.0), "gradient",
                  ValueError)


@covers("recurrent_lm.adam_update")
@budget(0.5)
@given(st.data())
def test_the_in_place_adam_step_is_torch_optim_adams(data):
    shapes = data.draw(st.lists(st.tuples(dims(1, 3), dims(1, 3)), min_size=1, max_size=2))
    params = [data.draw(float_arrays(s)) for s in shapes]
    lr, beta1, beta2 = data.draw(st.sampled_from([(3e-3, 0.9, 0.999), (0.1, 0.5, 0.9)]))
    tensors = [T(p.copy(), requires_grad=True) for p in params]
    opt = torch.optim.Adam(tensors, lr=lr, betas=(beta1, beta2), eps=1e-8)
    m, v = [np.zeros_like(p) for p in params], [np.zeros_like(p) for p in params]
    for t in range(1, data.draw(dims(1, 3)) + 1):
        grads = [data.draw(float_arrays(s)) for s in shapes]
        for tt, g in zip(tensors, grads, strict=True):
            tt.grad = T(g)
        opt.step()
        out, m2, v2 = RLM.adam_update(params, grads, m, v, t, lr, beta1, beta2)
        assert out is params and m2 is m and v2 is v
        for p, tt in zip(params, tensors, strict=True):
            close(p, tt.detach(), 1e-9)


# ---------------------------------------------------------------- the language model
def lm_in_torch(model, ids, targets):
    """The NumPy model's loss in PyTorch autograd, from its own weights (float64)."""
    E, Wx, Wh, b, Wy, by = (T(p.astype(np.float64), requires_grad=True) for p in model.params)
    xs = E[T(ids)]
    H = model.H
    h = torch.zeros(len(ids), H, dtype=torch.float64)
    c = torch.zeros_like(h)
    outs = []
    for t in range(ids.shape[1]):
        a = xs[:, t] @ Wx + h @ Wh + b
        if model.kind == "rnn":
            h = torch.tanh(a)
        else:
            i, f, g, o = torch.sigmoid(a[:, :H]), torch.sigmoid(a[:, H:2 * H]), torch.tanh(a[:, 2 * H:3 * H]), \
                torch.sigmoid(a[:, 3 * H:])
            c = f * c + i * g
            h = o * torch.tanh(c)
        outs.append(h)
    logits = torch.stack(outs, 1) @ Wy + by
    loss = F.cross_entropy(logits.reshape(-1, model.V), T(targets).reshape(-1))
    loss.backward()
    return float(loss.detach()), [p.grad.numpy() for p in (E, Wx, Wh, b, Wy, by)]


@covers("recurrent_lm.NumpyLM")
@budget(0.75)
@given(st.data())
def test_the_numpy_lm_is_its_autograd_and_refuses_ids_outside_the_vocabulary(data):
    kind = data.draw(st.sampled_from(["rnn", "lstm"]))
    V, D, H, B, Tn = data.draw(dims(2, 6)), data.draw(dims(1, 3)), data.draw(dims(1, 3)), data.draw(dims(1, 3)), \
        data.draw(dims(1, 4))
    model = RLM.NumpyLM(V, D, H, kind, np.random.default_rng(data.draw(st.integers(0, 3))), dtype=np.float64,
                        forget_bias=1.0 if kind == "lstm" else None)
    assert model.n_params() == sum(p.size for p in model.params)
    ids, targets = ids_of(data, V, (B, Tn)), ids_of(data, V, (B, Tn))
    ids.reshape(-1)[0], targets.reshape(-1)[-1] = 0, V - 1            # both ends of the vocabulary
    ref_loss, ref_grads = lm_in_torch(model, ids, targets)
    close(model.loss(ids, targets), ref_loss)
    close(model.train_loss(ids, targets), ref_loss)
    for g, r in zip(model.grads, ref_grads, strict=True):
        close(g, r)
    # the state carried: two halves read one after the other are the whole sequence
    whole = model.forward(ids)
    if Tn > 1:
        first = model.forward(ids[:, :1])
        second = model.forward(ids[:, 1:], model.last_state)
        close(np.concatenate([first, second], 1), whole)
    out = model.sample([0], 5, rng=np.random.default_rng(0), banned=[V - 1])
    assert out.shape == (5,) and out.dtype == np.int64 and np.all((out >= 0) & (out < V - 1))
    assert np.array_equal(out, model.sample([0], 5, rng=np.random.default_rng(0), banned=[V - 1]))
    check_bad_ids(lambda x: model.loss(x, targets), ids, V, "ids", data.draw(corrupted(ids, V)))
    check_bad_ids(lambda y: model.train_loss(ids, y), targets, V, "targets", data.draw(corrupted(targets, V)))
    raises_naming(lambda: model.sample([0], 2, banned=[-1]), "banned", ValueError)
    raises_naming(lambda: model.sample([0], 2, banned=range(V)), "banned", ValueError)
    raises_naming(lambda: model.sample([V], 2), "start", ValueError)
    raises_naming(lambda: model.sample([0], 2, temperature=0.0), "temperature", ValueError)
    raises_naming(lambda: model.loss(ids, targets[:, :0] if Tn else targets), "targets", ValueError)
    raises_naming(lambda: RLM.NumpyLM(V, D, H, "gru"), "kind", ValueError)
    raises_naming(lambda: RLM.NumpyLM(0, D, H), "vocab_size", ValueError)


@covers("recurrent_lm.stream_nll")
@budget(0.5)
@given(st.data())
def test_the_stream_nll_is_the_mean_over_the_whole_stream_with_the_state_carried(data):
    V = data.draw(dims(2, 5))
    model = RLM.NumpyLM(V, 2, 3, data.draw(st.sampled_from(["rnn", "lstm"])), dtype=np.float64)
    batch, seq = data.draw(dims(1, 3)), data.draw(dims(1, 4))
    n = data.draw(st.integers(batch * seq + 1, batch * seq * 3 + 1))
    ids = ids_of(data, V, (n,))
    # the reference: the stream cut into `batch` rows, each row read in one go from a zero state
    cols = (len(ids) - 1) // batch
    x, y = ids[:cols * batch].reshape(batch, cols), ids[1:cols * batch + 1].reshape(batch, cols)
    close(RLM.stream_nll(model, ids, batch, seq), model.loss(x, y), 1e-9)
    raises_naming(lambda: RLM.stream_nll(model, ids[:batch], batch, seq), "batch_size", ValueError)
    bad = ids.copy()
    bad[0] = V
    raises_naming(lambda: RLM.stream_nll(model, bad, batch, seq), "ids", ValueError)


# ---------------------------------------------------------------- recurrent_tasks
@covers("recurrent_tasks.recall_task", "recurrent_tasks.long_range_batch")
@budget(0.5)
@given(n=dims(1, 4), Tn=dims(1, 6), data=st.data())
def test_the_toy_tasks_are_what_they_promise(n, Tn, data):
    lag = data.draw(st.integers(0, Tn - 1))
    x, y = RT.recall_task(n, Tn, lag, np.random.default_rng(0), dim=2)
    assert x.shape == (n, Tn, 2) and y.shape == (n, Tn)
    assert np.all(y[:, :lag] == 0) and np.array_equal(y[:, lag:], x[:, :Tn - lag, 0])
    too_far = data.draw(st.sampled_from([Tn, Tn + 1, 2 * Tn, 3 * Tn + 1, -1]))   # the target would be all 0
    raises_naming(lambda: RT.recall_task(n, Tn, too_far, np.random.default_rng(0)), "lag", ValueError)
    k = data.draw(st.integers(3, 6))
    ids, labels = RT.long_range_batch(n, Tn, np.random.default_rng(1), k)
    assert ids.shape == (n, Tn + 1) and np.array_equal(ids[:, 0], labels) and set(labels) <= {0, 1}
    assert np.all((ids[:, 1:] >= 2) & (ids[:, 1:] < k))
    raises_naming(lambda: RT.long_range_batch(n, 0, np.random.default_rng(1)), "distance", ValueError)
    raises_naming(lambda: RT.long_range_batch(n, Tn, np.random.default_rng(1), 2), "n_symbols", ValueError)


@covers("recurrent_tasks.MarkovSource", "recurrent_tasks.exposure_gap")
@budget(0.25)
@given(V=dims(2, 5), seed=st.integers(0, 3))
def test_the_markov_source_and_the_exposure_gap_of_a_perfect_model(V, seed):
    src = RT.MarkovSource(V, 0.5, seed)
    close(src.table.sum(axis=2), np.ones((V, V)), 1e-12)
    a = np.arange(V)
    close(src.probs(a, a[::-1]), src.table[a, a[::-1]], 0)
    seqs = src.sample(400, 12, np.random.default_rng(seed))
    assert seqs.shape == (400, 12) and seqs.min() >= 0 and seqs.max() < V
    # the empirical next-symbol distribution after the most frequent context is the table's row
    ctx = seqs[:, :-2].reshape(-1) * V + seqs[:, 1:-1].reshape(-1)
    top = np.bincount(ctx).argmax()
    nxt = seqs[:, 2:].reshape(-1)[ctx == top]
    assert np.abs(np.bincount(nxt, minlength=V) / len(nxt) - src.table[top // V, top % V]).max() < 5 / math.sqrt(len(nxt))
    perfect = RT.exposure_gap(src, None, n=20, horizon=3, seed=seed)
    assert all(np.array_equal(perfect[k], np.zeros(3)) for k in ("data_kl", "own_kl", "gap"))
    model = RLM.NumpyLM(V, 2, 3, "rnn", dtype=np.float64)
    gap = RT.exposure_gap(src, model, n=20, horizon=3, seed=seed)
    assert np.all(gap["data_kl"] >= 0) and np.all(gap["own_kl"] >= 0) and np.all(np.isfinite(gap["gap"]))
    close(gap["gap"], gap["own_kl"] - gap["data_kl"], 0)
    raises_naming(lambda: RT.MarkovSource(1), "V", ValueError)
    raises_naming(lambda: src.probs(np.array([-1]), np.array([0])), "a", ValueError)
    raises_naming(lambda: src.probs(np.array([0]), np.array([V])), "b", ValueError)


@covers("recurrent_tasks.train_recall")
@budget(0.1)
@given(scale=st.sampled_from([0.5, 1.0]), clip=st.sampled_from([None, 1.0]), seed=st.integers(0, 2))
def test_train_recall_is_seeded_finite_and_learns(scale, clip, seed):
    run = RT.train_recall(scale, clip, steps=30, lr=0.1, T=6, lag=1, hidden=8, seed=seed)
    again = RT.train_recall(scale, clip, steps=30, lr=0.1, T=6, lag=1, hidden=8, seed=seed)
    assert all(np.array_equal(run[k], again[k]) for k in ("loss", "grad_norm"))
    assert np.all(np.isfinite(run["loss"])) and np.all(run["grad_norm"] > 0)
    assert run["loss"][-5:].mean() < run["loss"][:5].mean()
    norms = []
    RT.train_recall(scale, 1e-3, steps=2, T=4, hidden=4, seed=seed, clip_fn=lambda g, c: norms.append(c))
    assert norms == [1e-3, 1e-3]


@covers("recurrent_tasks.train_on_source")
@budget(0.1)
@given(seed=st.integers(0, 2))
def test_train_on_source_is_seeded_and_beats_the_untrained_model(seed):
    src = RT.MarkovSource(4, 0.3, seed)
    model = RT.train_on_source(src, steps=40, seed=seed, hidden=8, length=500, lr=3e-2)
    again = RT.train_on_source(src, steps=40, seed=seed, hidden=8, length=500, lr=3e-2)
    assert all(np.array_equal(a, b) for a, b in zip(model.params, again.params, strict=True))
    test = src.sample(8, 21, np.random.default_rng(99))
    untrained = RLM.NumpyLM(4, 16, 8, "rnn", np.random.default_rng(seed), dtype=np.float64)
    assert np.isfinite(model.loss(test[:, :-1], test[:, 1:]))
    assert model.loss(test[:, :-1], test[:, 1:]) < untrained.loss(test[:, :-1], test[:, 1:])


@covers("recurrent_tasks.train_long_range")
@budget(0.1)
@given(kind=st.sampled_from(["rnn", "lstm", "gru"]), seed=st.integers(0, 2))
def test_train_long_range_is_seeded_and_learns_a_short_distance(kind, seed):
    acc = RT.train_long_range(kind, 1, hidden=8, steps=60, batch=16, lr=3e-2, seed=seed, n_test=100)
    RT.train_long_range.cache_clear()
    assert acc == RT.train_long_range(kind, 1, hidden=8, steps=60, batch=16, lr=3e-2, seed=seed, n_test=100)
    assert 0.0 <= acc <= 1.0 and acc > 0.8          # the cue is one step back: any recurrence learns it
    raises_naming(lambda: RT.train_long_range("transformer", 1), "kind", ValueError)
    raises_naming(lambda: RT.train_long_range("rnn", 1, rnn_init="orthogonal"), "rnn_init", ValueError)
    raises_naming(lambda: RT.train_long_range("rnn", 1, steps=0), "steps", ValueError)
    raises_naming(lambda: RT.train_long_range("rnn", 0, steps=1), "distance", ValueError)
